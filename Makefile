# Thin wrapper over CMake and the pytest driver.  Every target installs what is
# missing first (ci/deps.sh) and builds what it needs.
#   make            build the library, harness and tests (build/)
#   make test       the whole suite through pytest (unit, scenarios, sanitizers,
#                   self-heal-off, Windows under Wine, workflow lint, sabotage sweep, fuzz)
#   make stress     the main job: seeded controlled + free-running runs over the corpus
#                   (STRESS_SECONDS=60 SEED=... SHARD=i/n SANITIZE=address|thread)
#   make windows    cross-build with mingw-w64 and run the tests under Wine
#   make stress-windows  the stress job on that build under Wine: controlled and
#                   free-running runs, the real Windows pool included (SEED, SHARD,
#                   STRESS_SECONDS as for make stress)
#   make sabotage   the sabotage sweep (SHARD=i/n)
#   make matrix     the toolchain matrix (docs/toolchain-matrix.md): the Linux gate
#                   jobs on Debian 12 and in a Debian sid chroot, Release/Debug/
#                   RelWithDebInfo, gcc and clang, the clang MSVC-mode pass, and the
#                   README's two commands in a fresh clone on a bare Debian 12
#   make soak       the flake hunt: make test SOAK_RUNS times (5), each beside
#                   SOAK_LOAD stress-ng CPU hogs (3: load 5 on 2 cores), in a fresh clone of HEAD; runs, failures, causes
#                   (docs/stress.md, "Soak"; build/soak/soak.json)
SHELL := /bin/bash
PYTEST := /usr/bin/python3 -m pytest
JOBS ?= 2
BUILD ?= build
STRESS_SECONDS ?= 60
SEED ?=
SHARD ?=
SANITIZE ?=
PYTEST_ARGS ?=
TEST_JOBS ?= 2
SOAK_RUNS ?= 5
SOAK_LOAD ?= 3

.PHONY: all deps build build-asan build-tsan build-noheal test stress stress-windows windows sabotage fuzz matrix soak clean

all: build

deps:
	@ci/deps.sh

# $(call configure,dir,extra cmake args)
define configure
	@if [ ! -f $(1)/CMakeCache.txt ]; then \
	  cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPHEAL_WERROR=ON $(2) >/dev/null; fi
	@cmake --build $(1) -j$(JOBS) -- --no-print-directory -s
endef

build: deps
	$(call configure,$(BUILD),)

build-asan: deps
	$(call configure,$(BUILD)/asan,-DTPHEAL_SANITIZE=address -DCMAKE_C_COMPILER=clang)

build-tsan: deps
	$(call configure,$(BUILD)/tsan,-DTPHEAL_SANITIZE=thread -DCMAKE_C_COMPILER=clang)

build-noheal: deps
	$(call configure,$(BUILD)/noheal,-DTPHEAL_SELF_HEAL=OFF)

# TEST_JOBS pytest workers (ci/conftest.py says how the modules are shared out); 1: none
test: deps build build-asan build-tsan build-noheal
	@ci/deps.sh windows node browser
	TPHEAL_BUILD_DIR=$(abspath $(BUILD)) $(PYTEST) -c pyproject.toml \
	  $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadgroup) $(PYTEST_ARGS)

stress: deps build $(if $(filter address,$(SANITIZE)),build-asan) $(if $(filter thread,$(SANITIZE)),build-tsan)
	/usr/bin/python3 ci/stress.py --build $(BUILD) --seconds $(STRESS_SECONDS) \
	  $(if $(SEED),--seed $(SEED)) $(if $(SHARD),--shard $(SHARD)) $(if $(SANITIZE),--sanitize $(SANITIZE))

windows:
	@ci/deps.sh windows
	ci/windows/run.sh

# The first time, `make windows` configures, builds and tests build-win.
stress-windows:
	@ci/deps.sh windows
	@[ -f build-win/CMakeCache.txt ] || ci/windows/run.sh build-win
	@cmake --build build-win -j$(JOBS) -- --no-print-directory -s
	/usr/bin/python3 ci/stress.py --build build-win --exec-wrapper wine --seconds $(STRESS_SECONDS) \
	  $(if $(SEED),--seed $(SEED)) $(if $(SHARD),--shard $(SHARD))

# make verify   bounded proofs: every corpus scenario explored exhaustively by DFS with
#   the partial-order reduction at <= PREEMPTIONS (default 1) preemptions, up to
#   MAX_RUNS (default 20000) runs a scenario; one line a scenario and a total.  A failure
#   fails the target; a scenario left INCOMPLETE at MAX_RUNS is reported, not failed.
PREEMPTIONS ?= 1
MAX_RUNS ?= 20000
.PHONY: verify
verify: deps build
	@$(BUILD)/harness/scenario/tpheal-harness verify scenarios/*.scn --preemptions $(PREEMPTIONS) \
	  --max-runs $(MAX_RUNS); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 4 ]

# make sabotage-dfs   schedules to first catch per strategy (random, PCT, DFS with and
#   without the partial-order reduction at P=0..2) for the sabotage entries a scenario
#   catches, and the reduction's soundness on them (ci/sabotage/dfs_catch.py; ~1 min an entry)
.PHONY: sabotage-dfs
sabotage-dfs: deps
	/usr/bin/python3 ci/sabotage/dfs_catch.py --max-runs 2000

sabotage: deps build
	/usr/bin/python3 ci/sabotage/sweep.py $(if $(SHARD),--shard $(SHARD))

matrix:
	@ci/deps.sh all
	ci/matrix/run.sh

soak:
	@ci/deps.sh windows node soak
	/usr/bin/python3 ci/soak.py --runs $(SOAK_RUNS) --load $(SOAK_LOAD) --keep-going --fresh

# make mutants   generated mutants of core/src against the whole suite (docs/mutation.md):
#   FILES='harness/sim/*.c' SAMPLE=N MUTANT_SEED=S DIFF=BASE (only mutants on lines changed since BASE)
.PHONY: mutants
mutants: deps
	/usr/bin/python3 ci/sabotage/mutants.py $(foreach f,$(FILES),--files '$(f)') \
	  $(if $(SAMPLE),--sample $(SAMPLE) --seed $(or $(MUTANT_SEED),1)) $(if $(DIFF),--diff $(DIFF))

clean:
	rm -rf $(BUILD)
