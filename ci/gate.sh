#!/usr/bin/env bash
# The pull-request gate, one job per call: .github/workflows/ci.yml holds no
# logic and calls `ci/gate.sh JOB` in every job, so each job runs the same
# way here (make matrix runs the Linux ones on Debian 12 and in a Debian sid
# chroot, docs/toolchain-matrix.md).
#   ci/gate.sh linux        gcc build: unit tests, scenario corpus, install, workflow lint,
#                           conformance on the sim, the clang MSVC-mode pass
#   ci/gate.sh noheal       TPHEAL_SELF_HEAL=OFF: its unit tests and API-shape checks
#                           (it has no scenario harness: the engine needs the self-heal)
#   ci/gate.sh asan|tsan    clang sanitizer build: unit tests (ASan) and the stress pass
#   ci/gate.sh race         the race build (TSan under the controlled scheduler, docs/races.md):
#                           no race in the corpus or the core's tests, the detector's own
#                           test, and a controlled-only stress pass with the detector
#   ci/gate.sh wine         mingw-w64 cross build, its tests under Wine (make windows), its
#                           replays of the golden corpus, the package as a Windows user links it
#   ci/gate.sh sabotage I/N the sabotage sweep, shard I of N
#   ci/gate.sh verify       make verify: DFS + partial-order reduction over the corpus at P = 1
#   ci/gate.sh msvc         Windows, Git Bash: Visual Studio (newest installed), vcpkg cmocka
#   ci/gate.sh mingw        Windows, MSYS2 UCRT64 shell: gcc + Ninja, stress included
#   ci/gate.sh annotate     only the annotations below, from what earlier steps left
# Environment (all optional):
#   TPHEAL_GATE_BUILD   build root (default build; the job's dirs go under it)
#   TPHEAL_BUILD_TYPE   CMAKE_BUILD_TYPE (default RelWithDebInfo)
#   CC                  the compiler of the linux/noheal jobs (default gcc)
#   STRESS_SECONDS      the stress pass of asan/tsan/mingw (default 120)
#   TPHEAL_GATE_REPORTS where JUnit XML goes (default reports)
# Every step prints `gate: JOB STEP PASS|FAIL (Ns)`; a failed configure or
# build ends the job, a failed test step does not (the later steps still
# report), and the exit status is 1 if any step failed.  With
# GITHUB_STEP_SUMMARY set, the JUnit reports are summarized there.
# Every job ends by turning what failed into GitHub annotations (ci/gate_annotate.py,
# from the harness's JSON, never its prose): a scenario's failing check on its line
# in scenarios/X.scn with the shortest replay command, a surviving sabotage entry or
# mutant on its core/src line; and a table of them with their replay commands in
# $GITHUB_STEP_SUMMARY.  The corpus run keeps its JSON in $TPHEAL_GATE_REPORTS/harness.
set -uo pipefail
cd "$(dirname "$0")/.."
job=${1:?usage: ci/gate.sh linux|noheal|asan|tsan|race|wine|verify|sabotage I/N|msvc|mingw|annotate}
shift
root=${TPHEAL_GATE_BUILD:-build}
type=${TPHEAL_BUILD_TYPE:-RelWithDebInfo}
seconds=${STRESS_SECONDS:-120}
reports=${TPHEAL_GATE_REPORTS:-reports}
py=/usr/bin/python3
[[ -x $py ]] || py=python3
[[ $(command -v "$py") ]] || py=python
failed=()
mkdir -p "$reports/harness"
# The corpus run (ci/test_scenarios.py) keeps its JSON here for annotate: set
# on the steps that run the corpus only (the sabotage sweep's expected
# failures are not the gate's).
hjson="$PWD/$reports/harness"
[[ $reports = /* ]] && hjson="$reports/harness"
# a job annotates its own failures: stale JSON of an earlier local run would read as new
[[ $job == annotate ]] || rm -f "$hjson"/*.jsonl

# step NAME CMD...: runs CMD, records its verdict.
step() {
  local name=$1 t0=$SECONDS rc
  shift
  echo "::group::$job $name" >&2
  "$@"
  rc=$?
  echo "::endgroup::" >&2
  if [[ $rc -eq 0 ]]; then
    echo "gate: $job $name PASS ($((SECONDS - t0))s)"
  else
    echo "gate: $job $name FAIL exit $rc ($((SECONDS - t0))s)"
    failed+=("$name")
  fi
  return $rc
}
# must NAME CMD...: a step the rest depends on.
must() { step "$@" || finish; }

# annotate: each failure the steps left as JSON, where the pull request shows it.
annotate() {
  "$py" ci/gate_annotate.py --title "$job" --harness-json "$reports/harness" \
    --stress "$root/stress/results.json" --sabotage "$root/sabotage/mutation-report.json" \
    --sabotage "$root/mutants/report/mutation-report.json" \
    ${GITHUB_STEP_SUMMARY:+--summary "$GITHUB_STEP_SUMMARY"}
}

finish() {
  annotate
  if [[ -n ${GITHUB_STEP_SUMMARY:-} ]] && compgen -G "$reports/*.xml" >/dev/null; then
    "$py" ci/windows/junit_summary.py --title "$job" "$reports"/*.xml >>"$GITHUB_STEP_SUMMARY"
  fi
  if [[ ${#failed[@]} -gt 0 ]]; then
    echo "gate: $job FAIL (${failed[*]})"
    exit 1
  fi
  echo "gate: $job PASS"
  exit 0
}

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi; }

# configure DIR ARGS...: the project's own build: warnings are errors.
configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DTPHEAL_WERROR=ON "$@"
}
build() { cmake --build "$1" --parallel "${JOBS:-2}"; }
pytest_() {
  local xml=$1
  shift
  "$py" -m pytest -c pyproject.toml --junitxml="$reports/$xml.xml" "$@"
}

case "$job" in
  linux)
    must deps ci/deps.sh
    must configure configure "$root" -DCMAKE_C_COMPILER="${CC:-gcc}"
    must build build "$root"
    step pytest env TPHEAL_BUILD_DIR="$PWD/$root" TPHEAL_UNIT_CONFIGS=default TPHEAL_HARNESS_JSON_DIR="$hjson" \
      "$py" -m pytest -c pyproject.toml --junitxml="$reports/linux.xml" -m "not windows" \
      ci/test_unit.py ci/test_scenarios.py ci/test_scenario_delays.py ci/test_install.py ci/test_gate.py
    # From the Windows side only what needs no Windows build (the wine job has the rest).
    step workflow-and-sim env TPHEAL_BUILD_DIR="$PWD/$root" \
      "$py" -m pytest -c pyproject.toml --junitxml="$reports/linux-windows-side.xml" \
      ci/test_windows.py -k "workflow or on_the_sim"
    ;;
  noheal)
    must deps ci/deps.sh
    must configure configure "$root/noheal" -DTPHEAL_SELF_HEAL=OFF -DCMAKE_C_COMPILER="${CC:-gcc}"
    must build build "$root/noheal"
    step pytest env TPHEAL_BUILD_DIR="$PWD/$root" TPHEAL_UNIT_CONFIGS=noheal \
      "$py" -m pytest -c pyproject.toml --junitxml="$reports/noheal.xml" ci/test_unit.py
    ;;
  asan|tsan)
    san=$([[ $job == asan ]] && echo address || echo thread)
    must deps ci/deps.sh
    must configure configure "$root/$job" -DCMAKE_C_COMPILER=clang -DTPHEAL_SANITIZE="$san"
    must build build "$root/$job"
    # The race build's own checks are the race job; here TSan's pass is the
    # stress run (controlled with the detector, and free-running).
    if [[ $job == asan ]]; then
      step unit env TPHEAL_BUILD_DIR="$PWD/$root" TPHEAL_UNIT_CONFIGS=asan \
        "$py" -m pytest -c pyproject.toml --junitxml="$reports/asan.xml" ci/test_unit.py
    fi
    step stress "$py" ci/stress.py --build "$root" --sanitize "$san" --seconds "$seconds"
    ;;
  race)
    must deps ci/deps.sh
    must configure configure "$root/tsan" -DCMAKE_C_COMPILER=clang -DTPHEAL_SANITIZE=thread
    must build build "$root/tsan"
    step races env TPHEAL_BUILD_DIR="$PWD/$root" \
      "$py" -m pytest -c pyproject.toml --junitxml="$reports/race.xml" ci/test_races.py
    step stress "$py" ci/stress.py --build "$root" --sanitize thread --modes controlled --seconds "$seconds"
    ;;
  wine)
    must deps ci/deps.sh windows
    # cmocka for mingw from Debian's/Ubuntu's source package: apt needs root.
    must cmocka-mingw as_root ci/windows/build-cmocka-mingw.sh build-win
    [[ $(id -u) -eq 0 ]] || as_root chown -R "$(id -u):$(id -g)" build-win
    step make-windows "$py" -m pytest -c pyproject.toml --junitxml="$reports/wine.xml" \
      ci/test_windows.py -k "not on_the_sim"
    # The Windows side of test_install.py: the package as a Windows user
    # links it (the library cross-built alone, consumers static and DLL).
    step install-windows "$py" -m pytest -c pyproject.toml --junitxml="$reports/wine-install.xml" \
      -m windows ci/test_install.py
    ;;
  verify)
    must deps ci/deps.sh
    step verify make verify
    ;;
  sabotage)
    shard=${1:?usage: ci/gate.sh sabotage I/N}
    must deps ci/deps.sh
    step sweep make sabotage SHARD="$shard"
    ;;
  msvc)
    # Git Bash on a windows-2025 runner.  No -G: CMake picks the newest
    # Visual Studio installed (the runner image has one, and its version
    # moves: "Visual Studio 17 2022" vanished from windows-latest).
    vcpkg=${VCPKG_INSTALLATION_ROOT:?VCPKG_INSTALLATION_ROOT is not set: the GitHub Windows image sets it}
    must cmocka "$vcpkg/vcpkg.exe" install cmocka:x64-windows
    must configure cmake -S . -B "$root" -A x64 -DTPHEAL_WERROR=ON \
      -DCMAKE_TOOLCHAIN_FILE="$vcpkg/scripts/buildsystems/vcpkg.cmake" -DVCPKG_TARGET_TRIPLET=x64-windows
    must build cmake --build "$root" --config Release --parallel
    step ctest ctest --test-dir "$root" -C Release --output-on-failure --timeout 600
    must pytest-install python -m pip install --disable-pip-version-check pytest==8.3.4
    py=python
    step pytest env TPHEAL_BUILD_DIR="$PWD/$root" TPHEAL_BUILD_CONFIG=Release TPHEAL_UNIT_CONFIGS=default \
      TPHEAL_HARNESS_JSON_DIR="$hjson" \
      python -m pytest -c pyproject.toml --junitxml="$reports/msvc.xml" ci/test_unit.py ci/test_scenarios.py
    ;;
  mingw)
    # The MSYS2 UCRT64 shell; msys2/setup-msys2 (v2.31.0, Node 24) installed the packages.
    py=python
    must configure cmake -S . -B "$root" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DTPHEAL_WERROR=ON
    must build cmake --build "$root" --parallel
    step ctest ctest --test-dir "$root" --output-on-failure --timeout 600
    step pytest env TPHEAL_BUILD_DIR="$root" TPHEAL_UNIT_CONFIGS=default TPHEAL_HARNESS_JSON_DIR="$hjson" \
      python -m pytest -c pyproject.toml --junitxml="$reports/mingw.xml" ci/test_unit.py ci/test_scenarios.py
    # make stress's job on Windows: controlled and free-running runs on the
    # model and on the real Windows pool (tpheal-harness-realpool).
    step stress python ci/stress.py --build "$root" --seconds "$seconds"
    ;;
  annotate)
    ;;
  *)
    echo "ci/gate.sh: unknown job '$job'" >&2
    exit 2
    ;;
esac
finish
