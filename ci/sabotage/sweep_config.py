"""The sweep's configuration: the manifest's top-level keys that tune it,
their defaults and types, the hang bound's constants, and the two helpers
every part of the sweep shares (Bad, the exit-2 error; now, the clock).
docs/sabotage.md, "The manifest", is the user's table of these keys."""
from __future__ import annotations

import functools
import os
import sys
import time

HANG_FLOOR = 15.0
HANG_FACTOR = 3.0
# A pytest-layer catcher is mostly Python start-up, which load stretches far
# more than the tests: make soak's fifth run (2 CPU hogs, and a sanitizer
# build beside it) saw ci/test_cli.py pass 43 tests in 1.15 s of test time
# and still reach its 15 s bound (baseline 2.6 s), and the sweep called a
# control "caught" by that timeout.  The tests bound their own child
# processes (conftest.run_bounded), so a hang a defect causes fails a test
# long before this backstop.
PYTEST_HANG_FLOOR = 90.0
OUTPUT_KEEP = 200_000  # characters of a catcher's output kept in a transcript

# Defaults for the top-level configuration keys (all optional in the manifest).
DEFAULTS = {
    "cmakeArgs": ["-DCMAKE_BUILD_TYPE=Debug", "-DTPHEAL_SANITIZE="],
    "harnessTarget": "tpheal-harness",
    # built with the harness: scenarios that say `build fail-fast` re-run in it
    "harnessTargets": ["tpheal-harness", "tpheal-harness-failfast"],
    # executables left out of the fallback set, with the reason (a flaky
    # catcher there would "catch" sabotages it has nothing to do with)
    "fallbackExclude": {},
    "scenarioDir": "scenarios",
    # {harness} {scenario} (absolute path) {seeds} {strategy} {args...}
    # --json: the harness's contract (ci/harness_json.py), read without regexes;
    # a manifest's own command may print the text report instead (both parse);
    # --shrink-seconds 2: each distinct failure's shortest schedule for the
    # transcript, within the 15 s hang floor (the 10 s default, up to 8
    # distinct failures a scenario, could turn a catch into a timeout)
    "scenarioCommand": ["{harness}", "run", "--json", "--no-replay", "--shrink-seconds", "2", "--seeds", "{seeds}",
                        "--strategy", "{strategy}", "{scenario}"],
    "defaultSeeds": 200,
    "defaultStrategy": "pct",
    # The generate layer (docs/generate.md, "As a catcher"): a catcher
    # generate:<master seed> runs that seed's first generatePrograms programs
    # (no --seconds: a verdict replays), each under generateSeeds seeds of
    # generateStrategy, and stops at the first failing program unshrunk
    # (shrinking is the stress phase's job, not a catcher's).  300 programs x
    # 4 seeds x both strategies took 1.9-2.1 s in a RelWithDebInfo build on a
    # loaded 2-core machine; the sweep's Debug copies: see generate.md.  The
    # layer is one catcher per master seed named here: none by default (a
    # foreign project's harness has no generator); tpheal's manifest names 0.
    "generateMasterSeeds": [],
    "generatePrograms": 300,
    "generateSeeds": 4,
    "generateStrategy": "both",
    # {harness} {seed} {programs} {seeds} {strategy}; a catcher's args go last
    "generateCommand": ["{harness}", "generate", "--json", "--no-shrink", "--max-failures", "1",
                        "--seed", "{seed}", "--programs", "{programs}", "--seeds", "{seeds}",
                        "--strategy", "{strategy}"],
    # The layers of the fallback set, by catcher kind (the rest are left out
    # and said so): mutants.py --layers judges mutants by some of them alone.
    "fallbackLayers": ["unit", "scenario", "generate", "asan", "pytest"],
    # The fallback is the suite as `make test` runs it: every scenario under
    # both strategies at ci/test_scenarios.py's seed count, and the unit
    # executables of the default and the sanitizer build.
    "fallbackSeeds": 200,
    "fallbackStrategy": "both",
    "fallbackSanitizer": True,
    "sanitizerCmakeArgs": ["-DCMAKE_BUILD_TYPE=Debug", "-DTPHEAL_SANITIZE=address",
                           "-DCMAKE_C_COMPILER=clang"],
    # Seeds per strategy of every scenario run in the sanitizer build too (0:
    # none).  For a TSan sanitizer build that is the race detector under the
    # controlled scheduler (docs/races.md): mutants.py --sanitizer thread.
    "sanitizerScenarioSeeds": 0,
    # The first bound of a catcher the sweep has never timed (in any tree),
    # stretched by the machine's load; once timed, its baseline bound is
    # derived from that time instead (sweep_catchers.baseline_bound).
    "baselineTimeoutSeconds": 120,
    # ctest names whose executables form the fallback set (the conformance
    # comparison is not a unit test of the rules and takes seconds).
    "unitPrefixes": ["core.", "harness."],
    # The pytest layer of `make test`: the files that can catch a core or
    # harness defect at reasonable cost, each a catcher `pytest:FILE` run in
    # the copy against its build ($TPHEAL_BUILD_DIR).  Every other test_*.py
    # beside them is left out, with its reason (printed, and in the report).
    # ci/test_golden.py pins every scenario's runs by digest, so it kills any
    # mutant that changes a schedule, a trace or a search (docs/scenarios.md,
    # "The golden corpus"); sabotage.json leaves it out of the manifest sweep,
    # whose controls change schedules and no verdict (docs/sabotage.md).
    "pytestFiles": ["ci/test_cli.py", "ci/test_replay.py", "ci/test_scenarios.py", "ci/test_docs.py",
                    "ci/test_golden.py"],
    "pytestExclude": {
        "ci/test_unit.py": "runs the ctest executables, which the unit: and asan: layers run directly",
        "ci/test_sabotage.py": "runs this sweep (its fixture, then the whole manifest): it judges "
                               "ci/sabotage, not the patched tree, at minutes an entry",
        "ci/test_mutants.py": "runs the mutant runner on its fixture project: it judges ci/sabotage, "
                              "not the patched tree",
        "ci/test_sweep_foreign.py": "runs this sweep on its fixture project: it judges ci/sabotage, "
                                    "not the patched tree",
        "ci/test_stress.py": "20 s real-time passes on the default, ASan and TSan builds; the copies "
                             "have no TSan build (`make stress` is that job)",
        "ci/test_races.py": "needs the TSan build ($TPHEAL_BUILD_DIR/tsan), which the copies lack; "
                            "`mutants.py --sanitizer thread` is that layer",
        "ci/test_fuzz.py": "needs the libFuzzer build (build/fuzz) and fuzzes for 30 s",
        "ci/test_install.py": "installs the package and builds its consumers four ways: minutes "
                              "an entry, for rules the unit layer holds",
        "ci/test_windows.py": "needs mingw-w64 and Wine (a cross build the copies do not make)",
        "ci/test_gate.py": "checks the workflow, ci/deps.sh and the build flags; its MSVC-mode pass "
                           "compiles the core, it runs none of its rules",
        "ci/test_soak.py": "tests ci/soak.py against a stand-in suite, none of the tree's C code",
    },
    # {python} (an interpreter with pytest), {file} (relative to the copy,
    # the working directory), {build} (the copy's build dir).  -x: the first
    # failing test is enough, the catcher failed.
    "pytestCommand": ["{python}", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "{file}"],
}
CONFIG_TYPES = {"cmakeArgs": list, "harnessTarget": str, "harnessTargets": list,
                "fallbackExclude": dict, "scenarioDir": str,
                "scenarioCommand": list, "defaultSeeds": int, "defaultStrategy": str,
                "fallbackSeeds": int, "fallbackStrategy": str, "fallbackSanitizer": bool,
                "sanitizerCmakeArgs": list, "baselineTimeoutSeconds": int, "unitPrefixes": list,
                "sanitizerScenarioSeeds": int, "pytestFiles": list, "pytestExclude": dict,
                "pytestCommand": list, "generateMasterSeeds": list, "generatePrograms": int,
                "generateSeeds": int, "generateStrategy": str, "generateCommand": list,
                "fallbackLayers": list}
LAYERS = ("unit", "scenario", "generate", "asan", "pytest")  # the fallback set's, in its order
# A defect's outcomes that mean "caught" (by the named catchers or not, of
# the declared kind or not) for the caught share; stale, inert and
# does-not-compile ran nothing and are counted apart.
CAUGHT_OUTCOMES = ("caught", "caught-by-other", "wrong-kind", "timeout")


@functools.lru_cache(maxsize=None)
def pytest_python():
    """The interpreter for {python}: this one when it has pytest, else the
    system one (`python3` on PATH may lack it; the Makefile uses /usr/bin)."""
    import importlib.util
    if importlib.util.find_spec("pytest") is not None:
        return sys.executable
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class Bad(Exception):
    """Bad input: exit 2 with these lines."""

    def __init__(self, *lines):
        super().__init__("\n".join(lines))
        self.lines = lines


def now():
    return time.monotonic()


def load_factor() -> float:
    """How many times slower than alone a run is to be expected now: the
    one-minute load average over the cores, at least 1.  A sweep's own
    workers (one a core) read as 1; make soak's three hogs beside two workers
    on 2 cores read about 2.5.  Every hang bound is multiplied by it, so a
    bound follows the machine rather than assuming a quiet one."""
    try:
        la = os.getloadavg()[0]
    except (OSError, AttributeError):
        return 1.0
    return max(1.0, la / float(os.cpu_count() or 1))


def config_of(manifest):
    """DEFAULTS overridden by the manifest's top-level keys, each checked
    against its type (a bool is not an int here)."""
    cfg = dict(DEFAULTS)
    for k, typ in CONFIG_TYPES.items():
        if k in manifest.raw:
            if not isinstance(manifest.raw[k], typ) or \
                    (typ is not bool and isinstance(manifest.raw[k], bool)):
                raise Bad(f"{manifest.path}: top-level '{k}' must be a {typ.__name__}")
            cfg[k] = manifest.raw[k]
    bad = [x for x in cfg["fallbackLayers"] if x not in LAYERS]
    if bad:
        raise Bad(f"{manifest.path}: top-level 'fallbackLayers' names no layer: "
                  f"{', '.join(map(str, bad))} (layers: {', '.join(LAYERS)})")
    if not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2 ** 64
               for s in cfg["generateMasterSeeds"]):
        raise Bad(f"{manifest.path}: top-level 'generateMasterSeeds' must be whole numbers 0..2^64-1")
    for k in ("generatePrograms", "generateSeeds"):
        if cfg[k] < 1:
            raise Bad(f"{manifest.path}: top-level '{k}' must be at least 1")
    if cfg["generateStrategy"] not in ("random", "pct", "both"):
        raise Bad(f"{manifest.path}: top-level 'generateStrategy' is random, pct or both")
    return cfg
