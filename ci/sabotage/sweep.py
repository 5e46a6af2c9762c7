#!/usr/bin/env python3
"""The sabotage sweep: apply each entry of sabotage.json to a copy of the tree,
rebuild what it touches, run the catchers it names, and compare what happened
with what the entry declared.  docs/sabotage.md is the user's guide.

Exit 0: every entry that declares an expectation behaved as declared (and,
with --fail-under PCT, at least PCT% of the defects were caught).  1: some
did not (each such patch is printed), or the share is below PCT.  2: bad
manifest or invocation, or a red baseline.  An entry that declares nothing
(no caughtBy, no failure kind: a foreign manifest's defects, generated
mutants) is measured, caught or survived, and never decides the exit code.

Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import functools
import hashlib
import json
import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import manifest as mf  # noqa: E402
import report as rp  # noqa: E402
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import harness_json  # noqa: E402  (the harness's JSON contract, harness/json-schema.json)
import procs  # noqa: E402  (bounded runs, tree kills, sanitizer reports: one definition)

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
    # a manifest's own command may print the text report instead (both parse)
    "scenarioCommand": ["{harness}", "run", "--json", "--no-replay", "--seeds", "{seeds}",
                        "--strategy", "{strategy}", "{scenario}"],
    "defaultSeeds": 200,
    "defaultStrategy": "pct",
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
    "baselineTimeoutSeconds": 120,
    # ctest names whose executables form the fallback set (the conformance
    # comparison is not a unit test of the rules and takes seconds).
    "unitPrefixes": ["core.", "harness."],
    # The pytest layer of `make test`: the files that can catch a core or
    # harness defect at reasonable cost, each a catcher `pytest:FILE` run in
    # the copy against its build ($TPHEAL_BUILD_DIR).  Every other test_*.py
    # beside them is left out, with its reason (printed, and in the report).
    "pytestFiles": ["ci/test_cli.py", "ci/test_replay.py", "ci/test_scenarios.py", "ci/test_docs.py"],
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
                "pytestCommand": list}
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


# ---------------------------------------------------------------- processes
_live = set()
_live_lock = threading.Lock()


def run_bounded(cmd, timeout, cwd=None, env=None, fresh=False):
    """(returncode or None on timeout, output, seconds).  Runs in its own
    session; on expiry the whole process group is killed, and what it left in
    its group is reaped even when it exited, so a catcher's children cannot
    outlive it (ci/procs.py; fresh: see there)."""
    r = procs.run_bounded(cmd, timeout, cwd=cwd, env=env, fresh=fresh, reap=True,
                          on_start=_started, on_end=_ended)
    return r.rc, r.out, r.seconds


def _started(pid):
    with _live_lock:
        _live.add(pid)


def _ended(pid):
    with _live_lock:
        _live.discard(pid)


def kill_all():
    with _live_lock:
        for pid in list(_live):
            procs.kill_tree(pid)


def stop_on_signals():
    """SIGTERM/SIGINT end the run at once, catchers included: the main thread
    waits in the thread pool, where a KeyboardInterrupt is not delivered
    until every worker has finished its entry (measured: minutes)."""
    def handler(signum, frame):
        kill_all()
        os._exit(2)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)


# ---------------------------------------------------------------- results
@dataclass
class Run:
    """One catcher run."""
    label: str
    cmd: list
    failed: bool
    kind: str | None
    seconds: float
    output: str
    rc: int | None
    schedules: int | None = None
    seed: str | None = None
    note: str = ""


@dataclass
class Result:
    entry: mf.Entry
    outcome: str
    ok: bool | None  # None: the entry declared nothing to judge it by
    summary: str
    seconds: float = 0.0
    catcher: str | None = None
    kind: str | None = None
    schedules: int | None = None
    seed: str | None = None
    ran: list = field(default_factory=list)
    catchers: list = field(default_factory=list)  # every failed catcher run
    transcript: str = ""
    diff: str = ""
    estimate_left: float | None = None  # seconds left when it finished (baseline costs)

    def as_dict(self):
        e = self.entry
        return {"name": e.name, "file": e.file, "find": e.find, "replace": e.replace,
                "expect": e.expect, "why": e.why, "failure": e.failure,
                "declared": [c.label for c in e.caught_by], "outcome": self.outcome,
                "ok": self.ok, "summary": self.summary, "seconds": round(self.seconds, 2),
                "catcher": self.catcher, "kind": self.kind, "schedules": self.schedules,
                "seed": self.seed, "ran": self.ran, "catchers": self.catchers,
                "judged": e.declared, "role": e.role,
                "estimateLeft": None if self.estimate_left is None else round(self.estimate_left, 2),
                "id": getattr(e, "mutant", None) and e.mutant.id,
                "key": getattr(e, "mutant", None) and e.mutant.key,
                "operator": getattr(e, "mutant", None) and e.mutant.operator,
                "location": getattr(e, "mutant", None) and e.mutant.location()}


# ---------------------------------------------------------------- failure kinds
CMOCKA_EXC_RE = re.compile(r"Test failed with exception: (.*)")


def unit_kind(rc, output):
    """A cmocka executable's failure kind: its exit code counts failed tests,
    so a plain failure is an assertion; a sanitizer report is a memory error;
    death by a signal (directly or as cmocka reports it) is a crash."""
    if rc is None:
        return "timeout"
    if procs.sanitizer_line(output):
        return "memory-error"
    if procs.died_by_signal(rc) or CMOCKA_EXC_RE.search(output):
        return "crash"
    return "assertion"


def broken_kind(rc, output):
    """A harness run that failed without a failure report: a sanitizer's
    memory error, a death by signal, or else an assertion."""
    if procs.sanitizer_line(output):
        return "memory-error"
    return "crash" if procs.died_by_signal(rc) else "assertion"


def pytest_kind(rc):
    """A pytest run's failure kind, from its documented exit codes (no prose
    is read): 1 tests failed, 2 interrupted (a collection error), 3 internal
    error, 4 usage error, 5 no tests collected."""
    if rc is None:
        return "timeout"
    if rc == 1:
        return "assertion"
    if rc == 5:
        return "vacuous"
    return "crash"


FAILURE_RE = re.compile(r"^FAILURE (\S+)\n(?P<body>(?:[ \t].*\n?|\n)*)", re.M)
# NOT-EXERCISED (exit 4): no failure, but a `require` no run reached -- the
# sabotage kept the scenario from its state, which the sweep reads as vacuous.
SUMMARY_RE = re.compile(r"^(PASS|FAIL|NOT-EXERCISED) (\S+)\s+runs=(\d+) failures=(\d+)", re.M)


def harness_kind(status, failures):
    """The failure class of one failing run: the scheduler's status when it
    is not ok, else what its failure lines say (text report or JSON alike)."""
    if status in ("deadlock", "livelock", "misuse"):
        return status
    if status == "process-ended":
        return "fail-fast" if "expected" not in failures[:200] else "oracle"
    if "the sim reported misuse" in failures or "expected a misuse report" in failures:
        return "misuse"
    if "not exercised" in failures or "vacuous" in failures or "never reached" in failures:
        return "vacuous"
    return "oracle"


def harness_text_kind(body):
    """harness_kind of one FAILURE block of tpheal-harness's text report."""
    st = re.search(r"^\s*status: (\S+)", body, re.M)
    status = st.group(1) if st else "ok"
    if status == "process-ended":
        return harness_kind(status, body.split("failures:", 1)[-1])
    return harness_kind(status, body)


def parse_harness_text(rc, output, first_seed=0):
    """(failed, kind, schedules, seed, note) from tpheal-harness's text report
    (one FAILURE block per failing seed, in run order, then a PASS/FAIL
    summary line per scenario), or None when the output is not that."""
    summary = SUMMARY_RE.search(output)
    first = FAILURE_RE.search(output)
    if not summary and not first:
        return None
    if rc is None:
        return True, "timeout", None, None, "hang bound reached"
    if first:
        body = first.group("body")
        seed = re.search(r"seed: (\d+)", body)
        idx = int(seed.group(1)) - first_seed if seed else None
        dfs = None if seed else re.search(r"dfs run (\d+) of the search", body)
        if dfs:
            # a DFS catcher (strategy dfs, args such as --preemptions 1 --por):
            # no seed, the run number of the search is its schedules to catch
            return True, harness_text_kind(body), int(dfs.group(1)), None, ""
        return True, harness_text_kind(body), (idx + 1 if idx is not None else None), \
            (seed.group(1) if seed else None), ""
    runs, fails = int(summary.group(3)), int(summary.group(4))
    if summary.group(1) == "NOT-EXERCISED" and not fails:
        return True, "vacuous", runs, None, "a requirement was reached by no run"
    if rc != 0 or fails:
        return True, broken_kind(rc, output), None, None, f"exit {rc}, {fails} failures without a report"
    if runs == 0:
        return True, "vacuous", 0, None, "no runs"
    return False, None, runs, None, ""


def parse_harness(rc, output):
    text = parse_harness_text(rc, output)
    if text is not None:
        return text
    return parse_harness_json(rc, output)


def parse_harness_json(rc, output, first_seed=0):
    """(failed, kind, schedules, seed, note) from `tpheal-harness run --json`,
    read through the harness's contract (ci/harness_json.py): the first
    "failure" object is the catching run (seeds run in order from first_seed,
    so its seed says how many schedules it took), the "summary" objects say
    the rest.  A line of another contract version stops the sweep (Bad): a
    verdict read from fields that changed meaning is no verdict."""
    if rc is None:
        return True, "timeout", None, None, "hang bound reached"
    try:
        # a line cut short by a crash is skipped: the exit status tells the rest
        objs = harness_json.scan(output)[0]
    except harness_json.VersionMismatch as e:
        raise Bad(f"{e} (harness and ci/ are from different trees)")
    fails = harness_json.of_type(objs, "failure")
    sums = harness_json.of_type(objs, "summary")
    crashed = broken_kind(rc, output)
    if fails:
        f = fails[0]
        if f["strategy"] == "dfs":
            # a DFS catcher: no seed names the run; its number in the search
            # ("seed" of a dfs failure) is the schedules it took
            return True, harness_kind(f["status"], f["failures"]), f["seed"], None, ""
        return True, harness_kind(f["status"], f["failures"]), f["seed"] - first_seed + 1, str(f["seed"]), ""
    if not sums:
        if rc == 0:
            return True, "vacuous", None, None, "exit 0 without a --json report"
        return True, crashed, None, None, f"exit {rc} without a --json report"
    runs = sum(x["runs"] for x in sums)
    nfail = sum(x["failures"] for x in sums)
    if not nfail and all(x["exercised"] for x in sums) and not all(x["reached"] for x in sums):
        return True, "vacuous", runs, None, "a requirement was reached by no run"
    if rc != 0 or nfail:
        return True, crashed, None, None, f"exit {rc}, {nfail} failures without a report"
    if runs == 0:
        return True, "vacuous", 0, None, "no runs"
    return False, None, runs, None, ""


# ---------------------------------------------------------------- relevance
# Words that say nothing about which rule a test holds.
STOPWORDS = frozenset("""
the and for with from into that this when which what where while than then its not but are was
has have had does did can cannot must may any all each every one two only also own
test tests unit asan pytest scenario scn core src harness lib ci py
""".split())


def words(text):
    return {w for w in re.findall(r"[a-z][a-z0-9]*", text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def _same_word(a, b):
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def relevance(e, c):
    """How much catcher c looks like the entry's own test: each word of the
    catcher's name (test_heal_tick: heal, tick) that is a word of the entry's
    name or file scores 2, one only in its `why` (the rule) 1; a word matches
    another that it begins (stamp, stamps).  The fallback runs the most
    relevant first, so a catch is credited to the rule's own test when that
    test fails, not to whichever happened to run first."""
    strong = words(e.name) | words(os.path.splitext(e.file)[0])
    weak = words(e.why)
    score = 0
    for w in words(os.path.splitext(c.name)[0]):
        if any(_same_word(w, x) for x in strong):
            score += 2
        elif any(_same_word(w, x) for x in weak):
            score += 1
    return score


# ---------------------------------------------------------------- worker
class Worker:
    """A copy of the tracked files and its own build directory."""

    def __init__(self, idx, checkout, workroot, files, cfg, jobs, source=None,
                 build="build", cmake_args=None):
        self.idx = idx
        self.checkout = source or checkout
        self.dir = workroot / f"w{idx}"
        self.src = self.dir / "src"
        self.build = self.dir / build
        self.cmake_args = list(cfg["cmakeArgs"] if cmake_args is None else cmake_args)
        self.files = files
        self.cfg = cfg
        self.jobs = jobs
        self.units = {}       # executable -> command
        self.fallback_units = []  # executables whose ctest name has a unit prefix
        self.harness = None
        self.built_all = False
        # The sanitizer build of the same copy (its own build dir), when the
        # fallback includes it; built only when a run reaches its catchers.
        self.san = None
        if cfg.get("fallbackSanitizer") and cmake_args is None:
            self.san = Worker(idx, checkout, workroot, files, cfg, jobs, source,
                              build="build-san", cmake_args=cfg["sanitizerCmakeArgs"])

    def sync(self):
        """Make src an exact copy of the checkout's tracked files, writing only
        what differs so the build stays incremental."""
        self.src.mkdir(parents=True, exist_ok=True)
        listing = self.dir / "tracked.txt"
        old = set(listing.read_text().splitlines()) if listing.exists() else set()
        for rel in self.files:
            s, d = self.checkout / rel, self.src / rel
            if not s.is_file():
                continue
            data = s.read_bytes()
            if d.is_file() and d.read_bytes() == data:
                continue
            d.parent.mkdir(parents=True, exist_ok=True)
            d.write_bytes(data)
            shutil.copymode(s, d)
        for rel in old - set(self.files):
            (self.src / rel).unlink(missing_ok=True)
        listing.write_text("\n".join(self.files))

    def configure(self):
        if (self.build / "CMakeCache.txt").exists():
            return
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        # With ccache, restoring a file after its entry and building the second
        # copy are cache hits instead of compiles (see build_env).
        launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
        rc, out, _ = run_bounded(["cmake", "-S", str(self.src), "-B", str(self.build)] + gen
                                 + launcher + self.cmake_args, 600,
                                 env=self.build_env())
        if rc != 0:
            raise Bad(f"sweep: configuring the copy failed:\n{out[-4000:]}")

    def build_env(self):
        """ccache settings shared by every copy: the base dir makes the copies'
        absolute paths relative to the build dir (identical in every copy), and
        the cwd is not hashed, so one copy's compile is the other's hit."""
        env = dict(os.environ)
        root = str(self.dir.parent)
        env.update(CCACHE_DIR=os.path.join(root, "ccache"), CCACHE_BASEDIR=root,
                   CCACHE_NOHASHDIR="true", CCACHE_MAXSIZE="2G")
        return env

    def cmake_build(self, targets):
        cmd = ["cmake", "--build", str(self.build), "-j", str(self.jobs)]
        if targets:
            cmd += ["--target"] + sorted(set(targets))
        rc, out, secs = run_bounded(cmd, 900, env=self.build_env())
        return rc == 0, out, secs

    ADD_TEST_RE = re.compile(r'^add_test\(\[=\[(.+?)\]=\]\s+"([^"]+)"((?:\s+"[^"]*")*)\)', re.M)

    def discover(self):
        """Unit executables from the CTestTestfile.cmake files configure wrote
        (ctest --show-only leaves out the command of a test whose executable
        is not built yet, and the first build needs the names)."""
        self.units = {}
        self.fallback_units = []
        for f in sorted(self.build.rglob("CTestTestfile.cmake")):
            for m in self.ADD_TEST_RE.finditer(f.read_text(encoding="utf-8", errors="replace")):
                name, exe_path = m.group(1), m.group(2)
                args = re.findall(r'"([^"]*)"', m.group(3) or "")
                exe = pathlib.Path(exe_path).name
                self.units[exe] = [exe_path] + args
                if any(name.startswith(p) for p in self.cfg["unitPrefixes"]) \
                        and exe not in self.cfg["fallbackExclude"]:
                    self.fallback_units.append(exe)
        h = self.cfg["harnessTarget"]
        hits = [p for p in self.build.rglob(h) if p.is_file() and os.access(p, os.X_OK)]
        self.harness = str(sorted(hits, key=lambda p: len(str(p)))[0]) if hits else None

    def scenarios(self):
        d = self.src / self.cfg["scenarioDir"]
        return sorted(p.name for p in d.glob("*.scn")) if d.is_dir() else []

    def targets_for(self, catchers):
        t = set()
        for c in catchers:
            if c.kind == "asan":
                continue  # built in the sanitizer copy (san_targets)
            if c.kind == "unit":
                t.add(c.name)
            else:
                t.update(self.cfg["harnessTargets"])
        return t

    def san_targets(self, catchers):
        out = set()
        for c in catchers:
            if c.kind == "asan":
                out |= set(self.cfg["harnessTargets"]) if c.name.endswith(".scn") else {c.name}
        return out

    def fallback_targets(self):
        """What the fallback set needs: every unit executable it runs and the
        harness -- not the whole tree (the installable libraries, the
        conformance and bench programs cannot catch anything here)."""
        return set(self.fallback_units) | set(self.cfg["harnessTargets"])

    def command(self, c):
        if c.kind == "asan":
            if self.san is None:
                raise Bad(f"sweep: catcher '{c.label}' needs the sanitizer build "
                          f"(fallbackSanitizer is off)")
            if c.name.endswith(".scn"):  # a scenario in the sanitizer build
                return self.san.command(mf.Catcher("scenario", c.name, seeds=c.seeds,
                                                   strategy=c.strategy, args=c.args))
            return self.san.command(mf.Catcher("unit", c.name, args=c.args))
        if c.kind == "pytest":
            if not (self.src / c.name).is_file():
                raise Bad(f"sweep: no pytest file '{c.name}' in the tree")
            return [part.format(python=pytest_python(), file=c.name, build=str(self.build))
                    for part in self.cfg["pytestCommand"]] + list(c.args)
        if c.kind == "unit":
            cmd = self.units.get(c.name)
            if not cmd:
                raise Bad(f"sweep: no unit-test executable '{c.name}' in the build "
                          f"(known: {', '.join(sorted(self.units)) or 'none'})")
            return list(cmd) + list(c.args)
        if not self.harness:
            raise Bad(f"sweep: the harness target '{self.cfg['harnessTarget']}' was not built")
        scn = self.src / self.cfg["scenarioDir"] / c.name
        if not scn.is_file():
            raise Bad(f"sweep: scenario '{c.name}' not found in {self.cfg['scenarioDir']}/")
        out = []
        for part in self.cfg["scenarioCommand"]:
            if part == "{args...}":
                out += list(c.args)
                continue
            out.append(part.format(harness=self.harness, scenario=str(scn),
                                   seeds=c.seeds or self.cfg["defaultSeeds"],
                                   strategy=c.strategy or self.cfg["defaultStrategy"]))
        if "{args...}" not in self.cfg["scenarioCommand"]:
            out += list(c.args)
        return out

    def run(self, c, bound):
        cmd = self.command(c)
        env = None
        if c.kind == "asan":
            # as ci/test_unit.py runs the sanitizer build
            env = dict(os.environ)
            env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
            env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
            # when the sanitizer build is a TSan one (mutants.py --sanitizer
            # thread); its scenario runs report a race as the run's failure
            # (docs/races.md), so TSan must not end the process at it
            env.setdefault("TSAN_OPTIONS", "halt_on_error=0:exitcode=66" if c.name.endswith(".scn")
                           else "halt_on_error=1:exitcode=66")
        if c.kind == "pytest":
            # the suite's pytest driver, against this copy's build
            env = dict(os.environ, TPHEAL_BUILD_DIR=str(self.build), PYTHONDONTWRITEBYTECODE="1")
        rc, out, secs = run_bounded(cmd, bound, cwd=self.src, env=env, fresh=True)
        if c.kind == "pytest":
            failed = rc != 0
            return Run(c.label, cmd, failed, pytest_kind(rc) if failed else None, secs, out, rc,
                       note=f"pytest exit {rc}" if failed and rc is not None else "")
        if c.kind == "unit" or (c.kind == "asan" and not c.name.endswith(".scn")):
            failed = rc != 0
            kind = unit_kind(rc, out) if failed else None
            return Run(c.label, cmd, failed, kind, secs, out, rc)
        failed, kind, scheds, seed, note = parse_harness(rc, out)
        return Run(c.label, cmd, failed, kind, secs, out, rc, scheds, seed, note)


# ---------------------------------------------------------------- sweep
class Sweep:
    def __init__(self, checkout, manifest, workroot, outdir, jobs=2, quiet=False,
                 stream=sys.stdout, rev=None):
        self.checkout = pathlib.Path(checkout).resolve()
        self.rev = rev
        self.ignore_red_fallback = False
        # The fallback stops at its first failure (of the declared kind, when
        # one is declared); --all-catchers runs and lists every catcher.
        self.stop_at_first = True
        self.on_result = None       # called with each Result as it finishes
        self.fail_under = None      # --fail-under PCT (recorded in the report)
        self.m = manifest
        self.cfg = dict(DEFAULTS)
        for k, typ in CONFIG_TYPES.items():
            if k in manifest.raw:
                if not isinstance(manifest.raw[k], typ) or \
                        (typ is not bool and isinstance(manifest.raw[k], bool)):
                    raise Bad(f"{manifest.path}: top-level '{k}' must be a {typ.__name__}")
                self.cfg[k] = manifest.raw[k]
        self.floor = float(manifest.raw.get("timeoutSeconds", HANG_FLOOR))
        self.workroot = pathlib.Path(workroot).resolve()
        self.out = pathlib.Path(outdir).resolve()
        self.jobs = max(1, jobs)
        self.quiet = quiet
        self.stream = stream
        self.baseline = {}    # catcher label -> seconds
        self.full_set = []    # catchers run when the named ones miss
        # what the fallback is made of and what it leaves out (config.fallback)
        self.fallback_info = {"layers": {}, "leftOut": []}
        self.workers = []
        self.perf = {"setup": 0.0, "initialRun": 0.0, "mutation": 0.0}
        self.print_lock = threading.Lock()

    def say(self, msg):
        if not self.quiet:
            with self.print_lock:
                print(msg, file=self.stream, flush=True)

    # -- setup ---------------------------------------------------------------
    def tracked(self):
        cmd = ["git", "ls-tree", "-r", "-z", "--name-only", self.rev] if self.rev else \
            ["git", "ls-files", "-z"]
        rc = subprocess.run(cmd, cwd=self.checkout, capture_output=True)
        if rc.returncode != 0:
            raise Bad(f"sweep: {' '.join(cmd)} failed in {self.checkout}: "
                      f"{rc.stderr.decode(errors='replace').strip()}")
        return [f for f in rc.stdout.decode().split("\0") if f]

    def export(self):
        """With --rev, the commit's files (git archive) are the source of the
        copies: the working tree may hold other people's half-done edits."""
        if not self.rev:
            return None
        d = self.workroot / "export"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        p = subprocess.run(f"git archive --format=tar {self.rev} | tar -x -C '{d}'", shell=True,
                           cwd=self.checkout, capture_output=True)
        if p.returncode != 0:
            raise Bad(f"sweep: cannot export {self.rev}: {p.stderr.decode(errors='replace')}")
        return d

    def check_files(self, entries, files):
        tracked = set(files)
        problems = []
        for e in entries:
            rel = self.rel(e)
            if rel not in tracked:
                problems.append(f"{self.m.path}:{e.line}:1: entry '{e.name}': file '{rel}' is not "
                                f"a tracked file")
        if problems:
            raise Bad(*problems)

    def rel(self, e):
        return os.path.normpath(os.path.join(self.m.root, e.file))

    def setup(self, entries):
        t0 = now()
        files = self.tracked()
        self.check_files(entries, files)
        n = min(self.jobs, max(1, len(entries)))
        per_build_jobs = max(1, (os.cpu_count() or 2) // n)
        source = self.export()
        self.source = source or self.checkout
        self.workers = [Worker(i, self.checkout, self.workroot, files, self.cfg, per_build_jobs,
                               source) for i in range(n)]
        self.say(f"sweep: {len(entries)} entries, {n} worker(s) in {self.workroot}")

        def build_until_stable(copy, wanted, what):
            # A build can re-run the configure step (the globs see new test
            # files) and so reveal executables the first discovery missed:
            # build until the set of targets stops growing.
            built = set()
            for _ in range(3):
                targets = wanted()
                if targets <= built:
                    break
                ok, out, secs = copy.cmake_build(targets)
                if not ok:
                    raise Bad(f"sweep: the unpatched copy{what} does not build (worker {copy.idx}):\n"
                              f"{out[-6000:]}")
                built |= targets
                copy.discover()

        def prep(w):
            w.sync()
            w.configure()
            w.discover()  # ctest knows the executables as soon as it is configured
            build_until_stable(w, lambda: w.fallback_targets() | set(named_units), "")
            w.built_all = True
            if w.san is not None:
                s = w.san
                s.configure()
                s.discover()
                build_until_stable(s, lambda: set(s.fallback_units) | s.san_targets(named_san_c)
                                   | (set(self.cfg["harnessTargets"]) if self.cfg["sanitizerScenarioSeeds"] else set()),
                                   "'s sanitizer build")

        named_units = {c.name for e in entries for c in e.caught_by if c.kind == "unit"}
        named_san_c = [c for e in entries for c in e.caught_by if c.kind == "asan"]

        if shutil.which("ccache"):
            # One copy at a time, each with every core: the first fills the
            # cache and the second is almost all hits.  Building both at once
            # would compile everything twice.
            for w in self.workers:
                w.jobs = os.cpu_count() or 2
                if w.san:
                    w.san.jobs = w.jobs
                prep(w)
                w.jobs = per_build_jobs
                if w.san:
                    w.san.jobs = per_build_jobs
        else:
            with concurrent.futures.ThreadPoolExecutor(n) as ex:
                list(ex.map(prep, self.workers))
        self.perf["setup"] = (now() - t0) * 1000

    def run_baseline(self, entries):
        """Every named catcher and the whole fallback set must pass unpatched;
        their times set the hang bounds."""
        t0 = now()
        w0 = self.workers[0]
        named = {}
        for e in entries:
            for c in e.caught_by:
                named.setdefault(self.key(c), c)
        full = [mf.Catcher("unit", u) for u in sorted(w0.fallback_units)]
        full += [mf.Catcher("scenario", s, seeds=self.cfg["fallbackSeeds"],
                            strategy=self.cfg["fallbackStrategy"]) for s in w0.scenarios()]
        if w0.san is not None:
            full += [mf.Catcher("asan", u) for u in sorted(w0.san.fallback_units)]
            if self.cfg["sanitizerScenarioSeeds"]:
                full += [mf.Catcher("asan", s, seeds=self.cfg["sanitizerScenarioSeeds"], strategy="both")
                         for s in w0.scenarios()]
        pytest_files, left_out = self.pytest_layer(w0.files)
        full += [mf.Catcher("pytest", f) for f in pytest_files]
        left_out = [{"catcher": f"unit:{u}", "reason": str(why)}
                    for u, why in sorted(self.cfg["fallbackExclude"].items())] + left_out
        if w0.san is None:
            left_out.append({"catcher": "asan:*", "reason": "fallbackSanitizer is false: no "
                                                            "sanitizer build"})
        self.full_set = full
        layers = {}
        for c in full:
            layers.setdefault(c.kind, []).append(c.label)
        self.fallback_info = {"layers": layers, "leftOut": left_out,
                              "firstCatcher": self.stop_at_first,
                              "order": "the entry's own tests first (words of its name, file and "
                                       "why in the catcher's name), then cheapest by baseline time, "
                                       "the sanitizer build's last"}
        self.say("fallback: " + ", ".join(f"{len(v)} {k}" for k, v in layers.items())
                 + (" (" + ", ".join(c.name for c in full if c.kind == "pytest") + ")"
                    if "pytest" in layers else ""))
        for x in left_out:
            self.say(f"fallback: left out {x['catcher']}: {x['reason']}")
        todo = list(named.values()) + [c for c in full if self.key(c) not in named]
        for c in todo:
            w0.command(c)  # raises Bad for unknown catchers before anything runs
        cache_key = self.baseline_key()
        cached = self.read_baseline_cache(cache_key)
        if cached is not None and all(self.key(c) in cached for c in todo):
            # A green baseline of this very tree and configuration: `--only`
            # need not re-run the whole set (docs/sabotage.md, Baseline).
            self.baseline.update(cached)
            self.order_full_set()
            self.perf["initialRun"] = (now() - t0) * 1000
            self.write_transcript("baseline", f"reused the cached green baseline {cache_key}\n")
            self.say(f"baseline: reused the cached green run of this tree ({len(todo)} catchers)")
            return
        if cached is not None:
            self.baseline.update(cached)
            todo = [c for c in todo if self.key(c) not in cached]
        self.say(f"baseline: {len(todo)} catcher runs")
        lines, red = [], []
        red_keys = set()
        q = queue.Queue()
        for c in todo:
            q.put(c)
        lock = threading.Lock()

        def drain(w):
            while True:
                try:
                    c = q.get_nowait()
                except queue.Empty:
                    return
                r = w.run(c, max(float(self.cfg["baselineTimeoutSeconds"]), self.floor))
                with lock:
                    self.baseline[self.key(c)] = r.seconds
                    lines.append(f"--- {r.label} {' '.join(r.cmd)}\nexit {r.rc}, {r.seconds:.2f} s"
                                 f"{', FAILED: ' + str(r.kind) if r.failed else ''}\n"
                                 + r.output[-OUTPUT_KEEP:])
                    if r.failed:
                        red_keys.add(self.key(c))
                        red.append(f"baseline: {r.label} fails unpatched ({r.kind}"
                                   f"{', seed ' + r.seed if r.seed else ''}; "
                                   f"exit {r.rc}): {' '.join(r.cmd)}\n{r.output[-3000:]}")

        with concurrent.futures.ThreadPoolExecutor(len(self.workers)) as ex:
            list(ex.map(drain, self.workers))
        self.write_transcript("baseline", "\n".join(lines))
        self.perf["initialRun"] = (now() - t0) * 1000
        if red and self.ignore_red_fallback and not (red_keys & set(named)):
            for line in red:
                self.say(line.splitlines()[0] + " -- left out of the fallback set (--ignore-red-fallback)")
            self.fallback_info["leftOut"] += [
                {"catcher": c.label, "reason": "fails unpatched (--ignore-red-fallback)"}
                for c in full if self.key(c) in red_keys]
            self.full_set = [c for c in full if self.key(c) not in red_keys]
            for k, v in self.fallback_info["layers"].items():
                self.fallback_info["layers"][k] = [x for x in v if x in {c.label for c in self.full_set}]
            red = []
        if red:
            raise Bad(*red)
        # Only the green runs are cached: a catcher that failed unpatched (left
        # out under --ignore-red-fallback) runs again next time, and is red
        # again -- a later sweep without the flag must not reuse it as green.
        for k in red_keys:
            self.baseline.pop(k, None)
        self.write_baseline_cache(cache_key)
        self.order_full_set()
        total = sum(self.baseline.values())
        self.say(f"baseline: green, {len(todo) - len(red_keys)} runs, {total:.1f} s of catcher time"
                 + (f" ({len(red_keys)} red left out)" if red_keys else ""))

    def pytest_layer(self, files):
        """(the pytest files the fallback runs, [{catcher, reason}] of those
        it leaves out): pytestFiles that are in the tree, and every other
        test_*.py of their directories, or named in pytestExclude."""
        tracked = set(files)
        excl = self.cfg["pytestExclude"]
        want = [f for f in self.cfg["pytestFiles"] if f in tracked and f not in excl]
        dirs = {os.path.dirname(f) for f in self.cfg["pytestFiles"]} | {os.path.dirname(f) for f in excl}
        others = sorted(f for f in tracked if os.path.dirname(f) in dirs
                        and re.fullmatch(r"test_.*\.py", os.path.basename(f)) and f not in want)
        out = []
        for f in others:
            out.append({"catcher": f"pytest:{f}",
                        "reason": str(excl[f]) if f in excl else "not in pytestFiles"})
        for f in self.cfg["pytestFiles"]:
            if f not in tracked:
                out.append({"catcher": f"pytest:{f}", "reason": "not in the tree"})
        return want, out

    @staticmethod
    def key(c):
        return c.label + repr((c.seeds, c.strategy, c.args))

    def order_full_set(self):
        """Cheapest first, the sanitizer build's catchers last (they need a
        second rebuild): when the first failure ends the run, the suite's
        verdict costs the least."""
        self.full_set.sort(key=lambda c: (c.kind == "asan", self.baseline.get(self.key(c), 0.0),
                                          c.label))

    def baseline_key(self):
        """What a green baseline depends on: every tracked file's content, the
        sweep's configuration and the catchers' code (this directory)."""
        h = hashlib.sha256()
        for rel in sorted(self.workers[0].files):
            p = self.source / rel
            h.update(rel.encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest() if p.is_file() else b"-")
        h.update(json.dumps(self.cfg, sort_keys=True).encode())
        h.update(json.dumps(float(self.floor)).encode())
        for f in sorted(pathlib.Path(__file__).resolve().parent.glob("*.py")):
            h.update(f.read_bytes())
        return h.hexdigest()[:20]

    def read_baseline_cache(self, key):
        p = self.workroot / "baseline-cache.json"
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("times"), dict):
            return None
        return {k: float(v) for k, v in doc["times"].items()}

    def write_baseline_cache(self, key):
        """Only a green baseline is written (a red one exits before this)."""
        p = self.workroot / "baseline-cache.json"
        old = self.read_baseline_cache(key) or {}
        old.update(self.baseline)
        p.write_text(json.dumps({"key": key, "times": old}, indent=1, sort_keys=True), encoding="utf-8")

    def bound(self, c, e):
        b = max(self.floor, HANG_FACTOR * self.baseline.get(self.key(c), self.floor))
        if c.kind == "pytest":
            b = max(b, PYTEST_HANG_FLOOR)
        if e.timeout:
            b = max(b, float(e.timeout))
        return b

    # -- one entry -----------------------------------------------------------
    def run_entry(self, w, e):
        t0 = now()
        log = [f"entry: {e.name}\nexpect: {e.expect}"
               + (f" ({e.failure}) by {', '.join(c.label for c in e.caught_by)}" if e.caught_by else "")
               + (" by anything in the suite" if e.expect == "caught" and not e.caught_by else "")
               + f"\nwhy: {e.why}\n", "patch:\n" + e.diff()]
        path = w.src / self.rel(e)
        original = path.read_text(encoding="utf-8")
        mutant = getattr(e, "mutant", None)

        diff = [e.diff()]

        def done(outcome, ok, summary, **kw):
            if not e.declared:
                ok = None  # measured, not judged: nothing was declared
            r = Result(e, outcome, ok, summary, seconds=now() - t0, diff=diff[0], **kw)
            verdict = {True: "as declared", False: "NOT as declared", None: "nothing declared"}[ok]
            log.append(f"\noutcome: {outcome} ({verdict}): {summary}")
            r.transcript = "\n".join(log)
            self.write_transcript(e.name, r.transcript)
            return r

        if mutant is not None:
            # a generated mutant names its lines, not a unique text
            patched = mutant.apply(original)
            if patched is None:
                return done("stale", False, f"line {mutant.first} of {self.rel(e)} has changed")
        else:
            count = original.count(e.find)
            if count != 1:
                return done("stale", False, f"'find' matches {count} times in {self.rel(e)}")
            patched = original.replace(e.find, e.replace, 1)
        if patched == original:
            return done("inert", False, "the patch leaves the file unchanged")
        diff[0] = "".join(difflib.unified_diff(original.splitlines(True), patched.splitlines(True),
                                               f"a/{self.rel(e)}", f"b/{self.rel(e)}"))
        log[1] = "patch:\n" + diff[0]
        san_built = [False]
        try:
            path.write_text(patched, encoding="utf-8")
            w.built_all = False
            first = e.caught_by if e.expect == "caught" else []
            targets = w.targets_for(first) if first else w.fallback_targets()
            ok, out, secs = w.cmake_build(targets)
            log.append(f"build ({'targets ' + ' '.join(sorted(targets)) if first else 'fallback set'}): "
                       f"{'ok' if ok else 'FAILED'} in {secs:.1f} s\n" + (out[-20000:] if not ok else ""))
            if not first and ok:
                w.built_all = True
            if not ok:
                if e.expect == "refused-by-build":
                    if e.build_error in out:
                        return done("refused-by-build", True,
                                    f"the build refused it, printing '{e.build_error}'")
                    return done("does-not-compile", False,
                                f"the build failed without printing '{e.build_error}'")
                return done("does-not-compile", False, "the patched copy does not build")
            if e.expect == "refused-by-build":
                return done("survived", False,
                            f"the build accepted it (expected an error containing '{e.build_error}')")

            def run_one(c):
                if c.kind == "asan" and not san_built[0]:
                    extra = set(self.cfg["harnessTargets"]) if self.cfg["sanitizerScenarioSeeds"] else set()
                    targets = ((set(w.san.fallback_units) | extra) if c in self.full_set else set()) \
                        | w.san_targets(first) | w.san_targets([c])
                    ok, out, secs = w.san.cmake_build(targets)
                    log.append(f"build (sanitizer copy): {'ok' if ok else 'FAILED'} in {secs:.1f} s\n"
                               + (out[-20000:] if not ok else ""))
                    if not ok:
                        return None
                    san_built[0] = True
                r = w.run(c, self.bound(c, e))
                log.append(self.run_log(r, self.bound(c, e)))
                return r

            ran = []
            for c in first:
                r = run_one(c)
                if r is None:
                    return done("does-not-compile", False, "the sanitizer build of the patch fails")
                ran.append(c.label)
                if r.failed:
                    return self.judge(e, [r], ran, named=True, done=done, want=c.failure or e.failure)
                log.append(f"(named catcher {c.label} missed)")
            # The named catchers missed (or none were named): the whole set, so
            # a catch by something else is seen and a control is really tested.
            if not w.built_all:
                ok, out, secs = w.cmake_build(w.fallback_targets())
                log.append(f"build (fallback set): {'ok' if ok else 'FAILED'} in {secs:.1f} s\n"
                           + (out[-20000:] if not ok else ""))
                if not ok:
                    return done("does-not-compile", False,
                                "the catchers built but the rest of the tree does not")
                w.built_all = True
            named = {self.key(c) for c in first}
            caught = []
            # a declared kind without named catchers: go on to a catcher of that kind
            want = e.failure if e.expect == "caught" and not e.caught_by else None
            for c in self.fallback_order(e):
                if self.key(c) in named:
                    continue
                r = run_one(c)
                if r is None:
                    return done("does-not-compile", False, "the sanitizer build of the patch fails")
                ran.append(c.label)
                if r.failed:
                    caught.append(r)
                    # The first catcher decides (the rule's own tests run
                    # first); --all-catchers runs and lists every one.
                    if self.stop_at_first and (want is None or r.kind == want):
                        break
            if caught:
                return self.judge(e, caught, ran, named=False, done=done)
            if e.expect == "survives":
                return done("survived", True, f"nothing failed ({len(ran)} catcher runs)", ran=ran)
            return done("survived", False,
                        f"survived: no catcher failed ({len(ran)} runs); the rule it breaks "
                        f"lacks a test", ran=ran)
        finally:
            path.write_text(original, encoding="utf-8")
            w.built_all = False

    def fallback_order(self, e):
        """The fallback set for entry e: its own tests first (relevance), then
        the baseline's order (cheapest first, the sanitizer build's last)."""
        return sorted(self.full_set, key=lambda c: (-relevance(e, c), c.kind == "asan",
                                                    self.baseline.get(self.key(c), 0.0), c.label))

    def planned_seconds(self, e):
        """What entry e's catchers cost, from the baseline (green) pass: its
        named catchers when it is caught as declared, the whole fallback set
        when it has none (a control, a defect nobody assigned: a survivor runs
        every catcher).  The time-left estimate adds these up; it does not
        extrapolate from the entries finished so far."""
        if e.expect == "refused-by-build":
            return 0.0
        cs = e.caught_by if e.expect == "caught" and e.caught_by else self.full_set
        return sum(self.baseline.get(self.key(c), 0.0) for c in cs)

    def run_log(self, r, bound):
        return (f"\n--- {r.label}: {' '.join(r.cmd)}\nbound {bound:.0f} s; exit {r.rc}; "
                f"{r.seconds:.2f} s; {'FAILED (' + str(r.kind) + ')' if r.failed else 'passed'}"
                f"{'; schedules ' + str(r.schedules) if r.schedules else ''}"
                f"{'; seed ' + r.seed if r.seed else ''}{'; ' + r.note if r.note else ''}\n"
                + (r.output if len(r.output) <= OUTPUT_KEEP else
                   "[...]\n" + r.output[-OUTPUT_KEEP:]))

    def judge(self, e, runs, ran, named, done, want=None):
        """runs: the failed catcher runs, in run order (all of them when the
        whole set ran); the first decides the outcome, all are listed."""
        want = want or e.failure
        r = runs[0]
        if not named and not e.caught_by and e.expect == "caught":
            # no catcher named: anything in the suite may catch it; a declared
            # kind must be among the kinds seen
            hit = [x for x in runs if want is None or x.kind == want]
            if hit:
                r = hit[0]
        kw = dict(catcher=r.label, kind=r.kind, schedules=r.schedules, seed=r.seed, ran=ran,
                  catchers=[{"catcher": x.label, "kind": x.kind, "schedules": x.schedules,
                             "seed": x.seed} for x in runs])
        where = f"{r.label}" + (f" after {r.schedules} schedules" if r.schedules else "") \
            + (f" (seed {r.seed})" if r.seed else "")
        also = f"; also {', '.join(x.label for x in runs if x is not r)}" if len(runs) > 1 else ""
        if e.expect == "survives":
            return done("caught-by-other" if not named else "caught", False,
                        f"a control was caught by {where} ({r.kind}){also}", **kw)
        if not named and not e.caught_by:
            if want is None or r.kind == want:
                return done("caught", True, f"caught by {where} ({r.kind}){also}", **kw)
            return done("wrong-kind", False, f"caught by {where} as {r.kind}, {want} expected{also}",
                        **kw)
        if not named:
            return done("caught-by-other", False,
                        f"caught by {where} ({r.kind}), none of the named catchers{also}", **kw)
        if r.kind == want:
            return done("caught", True, f"caught by {where} ({r.kind})", **kw)
        if r.kind == "timeout":
            return done("timeout", False, f"{r.label} hung past its bound ({want} expected)", **kw)
        return done("wrong-kind", False, f"caught by {where} as {r.kind}, {want} expected", **kw)

    def write_transcript(self, name, text):
        d = self.out / "transcripts"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{transcript_stem(name)}.txt").write_text(text, encoding="utf-8")

    # -- all entries ---------------------------------------------------------
    def run(self, entries):
        self.setup(entries)
        self.run_baseline(entries)
        t0 = now()
        q = queue.Queue()
        for i, e in enumerate(entries):
            q.put((i, e))
        results = [None] * len(entries)
        finished = [0]
        lock = threading.Lock()
        width = len(str(len(entries)))
        planned = [self.planned_seconds(e) for e in entries]
        taken, started = set(), {}

        def loop(w):
            while True:
                with lock:
                    try:
                        i, e = q.get_nowait()
                    except queue.Empty:
                        return
                    taken.add(i)
                    started[i] = now()
                r = self.run_entry(w, e)
                with lock:
                    results[i] = r
                    finished[0] += 1
                    k = finished[0]
                    del started[i]
                    # the catchers still to run, at their baseline cost, over the workers
                    t = now()
                    left = sum(planned[j] for j in range(len(entries)) if j not in taken)
                    left += sum(max(0.0, planned[j] - (t - t1)) for j, t1 in started.items())
                    left /= len(self.workers)
                    r.estimate_left = left
                tail = f"({r.seconds:.1f} s, ~{left:.0f} s left)"
                mark = "  <-- NOT AS DECLARED" if r.ok is False and not getattr(e, "mutant", None) else ""
                if self.on_result is not None:
                    with lock:
                        self.on_result(r)
                self.say(f"[{k:>{width}}/{len(entries)}] {e.name} ... {r.summary} {tail}{mark}")

        with concurrent.futures.ThreadPoolExecutor(len(self.workers)) as ex:
            futs = [ex.submit(loop, w) for w in self.workers]
            for f in futs:
                f.result()
        self.perf["mutation"] = (now() - t0) * 1000
        return results

    def write_reports(self, results):
        sources = {}
        for r in results:
            p = getattr(self, "source", self.checkout) / self.rel(r.entry)
            sources[r.entry.file] = p.read_text(encoding="utf-8") if p.is_file() else ""
        tests = {c.label for c in self.full_set}
        for r in results:
            tests.update(c.label for c in r.entry.caught_by)
        base, seen = [], set()
        for c, fb in [(c, True) for c in self.full_set] + \
                [(c, False) for r in results for c in r.entry.caught_by]:
            if self.key(c) in seen or self.key(c) not in self.baseline:
                continue
            seen.add(self.key(c))
            base.append({"catcher": c.label, "fallback": fb, "seeds": c.seeds, "strategy": c.strategy,
                         "args": c.args, "seconds": round(self.baseline[self.key(c)], 3)})
        extra = {"failUnder": self.fail_under} if self.fail_under is not None else {}
        rep = rp.build(self.m, [r.as_dict() for r in results], sources, self.perf, tests,
                       fallback=self.fallback_info, baseline=base, extra=extra)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "mutation-report.json").write_text(json.dumps(rep, indent=1), encoding="utf-8")
        (self.out / "mutation-report.html").write_text(rp.html(rep), encoding="utf-8")
        (self.out / "results.json").write_text(
            json.dumps([r.as_dict() for r in results], indent=1), encoding="utf-8")
        return rep


def transcript_stem(name):
    """A file name for an entry's transcript (a generated mutant's id has
    slashes and colons)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def parse_shard(s):
    m = re.fullmatch(r"(\d+)/(\d+)", s or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise Bad(f"sweep: --shard must be i/n with 1 <= i <= n, not '{s}'")
    return int(m.group(1)), int(m.group(2))


def shard(entries, i, n):
    """Contiguous blocks, sizes differing by at most one."""
    k, r = divmod(len(entries), n)
    start = (i - 1) * k + min(i - 1, r)
    return entries[start:start + k + (1 if i <= r else 0)]


def percent_arg(text):
    """--fail-under's value: a number 0..100 (a percentage of defects)."""
    try:
        v = float(text)
    except ValueError:
        v = None
    if v is None or not 0.0 <= v <= 100.0 or v != v:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 100, not '{text}'")
    return v


def summary_lines(t, fail_under=None):
    """The closing lines: defects apart from controls and build checks."""
    pct = f"{t['percent']:.1f}%" if t["percent"] is not None else "-"
    line = f"sweep: caught {t['caught']} of {t['defects']} defects ({pct})"
    if t["notRun"]:
        line += f", {t['notRun']} more not run (stale, inert or not compiling)"
    c, b = t["controls"], t["buildChecks"]
    line += (f"; controls apart: {c['total']} ({c['survived']} survived, {c['caught']} caught"
             + (f", {c['notRun']} not run" if c["notRun"] else "") + ")")
    line += (f"; build checks apart: {b['total']}"
             + (f" ({b['refused']} refused, {b['accepted']} accepted"
                + (f", {b['other']} other" if b["other"] else "") + ")" if b["total"] else ""))
    out = [line]
    if fail_under is not None:
        if t["percent"] is None:
            out.append(f"sweep: --fail-under {fail_under:g}: no defect ran, so none was caught: FAIL")
        elif t["percent"] < fail_under:
            out.append(f"sweep: --fail-under {fail_under:g}: {pct} is below it: FAIL")
        else:
            out.append(f"sweep: --fail-under {fail_under:g}: {pct} meets it")
    return out


def main(argv=None):
    here = pathlib.Path(__file__).resolve()
    default_checkout = here.parent.parent.parent
    ap = argparse.ArgumentParser(description="Run the sabotage manifest against a copy of the tree.")
    ap.add_argument("--manifest", default=None, help="default: CHECKOUT/sabotage.json")
    ap.add_argument("--checkout", default=str(default_checkout))
    ap.add_argument("--work", default=None, help="copies and build dirs (default CHECKOUT/build-sabotage)")
    ap.add_argument("--out", default=None, help="transcripts and reports (default CHECKOUT/build/sabotage)")
    ap.add_argument("--shard", default=None, help="i/n: run the i-th of n contiguous blocks")
    ap.add_argument("--only", action="append", default=[], help="run only this entry (repeatable)")
    ap.add_argument("--jobs", type=int, default=2, help="entries run in parallel (default 2)")
    ap.add_argument("--ignore-red-fallback", action="store_true",
                    help="development aid: a fallback catcher that fails unpatched is left out "
                         "(named catchers must still be green)")
    ap.add_argument("--rev", default=None,
                    help="copy this commit's files instead of the working tree's tracked files")
    ap.add_argument("--all-catchers", action="store_true",
                    help="run every catcher of the fallback set on each entry and list all that "
                         "fail (default: stop at the first, the entry's own tests running first)")
    ap.add_argument("--fail-under", type=percent_arg, default=None, metavar="PCT",
                    help="exit 1 when fewer than PCT%% of the defects that ran were caught "
                         "(controls and build checks apart)")
    ap.add_argument("--check", action="store_true", help="validate the manifest and stop")
    ap.add_argument("--list", action="store_true", help="list the entries and stop")
    ap.add_argument("--quiet", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit as ex:
        return 2 if ex.code else 0
    checkout = pathlib.Path(a.checkout).resolve()
    mpath = a.manifest or str(checkout / "sabotage.json")
    try:
        disp = os.path.relpath(mpath) if not os.path.isabs(a.manifest or "") else mpath
        try:
            m = mf.load(mpath, display=disp)
        except mf.ManifestError as ex:
            raise Bad(*ex.problems)
        entries = m.entries
        if a.only:
            names = {e.name for e in entries}
            unknown = [n for n in a.only if n not in names]
            if unknown:
                raise Bad(f"sweep: --only names no entry: {', '.join(unknown)}")
            entries = [e for e in entries if e.name in a.only]
        if a.shard:
            entries = shard(entries, *parse_shard(a.shard))
        if a.jobs < 1:
            raise Bad("sweep: --jobs must be at least 1")
        if a.list:
            try:
                for e in entries:
                    print(f"{e.name}\t{e.expect}\t{e.file}")
            except BrokenPipeError:  # `--list | head`
                sys.stdout = open(os.devnull, "w")
            return 0
        if a.check:
            stale = []
            for e in m.entries:
                rel = os.path.normpath(os.path.join(m.root, e.file))
                if a.rev:
                    p = subprocess.run(["git", "show", f"{a.rev}:{rel}"], cwd=checkout,
                                       capture_output=True)
                    text = p.stdout.decode("utf-8", "replace") if p.returncode == 0 else ""
                else:
                    f = checkout / rel
                    text = f.read_text(encoding="utf-8") if f.is_file() else ""
                n = text.count(e.find)
                if n != 1:
                    stale.append(f"{disp}:{e.line}:1: entry '{e.name}': 'find' matches {n} times "
                                 f"in {e.file} (stale)")
            for line in stale:
                print(line)
            print(f"{disp}: {len(m.entries)} entries, valid" + (f", {len(stale)} stale" if stale else ""))
            return 1 if stale else 0
        work = pathlib.Path(a.work) if a.work else checkout / "build-sabotage"
        out = pathlib.Path(a.out) if a.out else checkout / "build" / "sabotage"
        sw = Sweep(checkout, m, work, out, jobs=a.jobs, quiet=a.quiet, rev=a.rev)
        sw.ignore_red_fallback = a.ignore_red_fallback
        sw.stop_at_first = not a.all_catchers
        sw.fail_under = a.fail_under
        t0 = now()
        if not entries:
            print("sweep: this shard has no entries")
            return 0
        stop_on_signals()
        if not any(e.expect == "survives" for e in m.entries) and not a.quiet:
            print("sweep: note: no 'survives' control in the manifest, so nothing here shows "
                  "the suite does not fail on any change at all")
        results = sw.run(entries)
        sw.write_reports(results)
    except Bad as ex:
        for line in ex.lines:
            print(line, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        return 2
    bad = [r for r in results if r.ok is False]
    t = rp.tally([r.as_dict() for r in results])
    counts = {}
    for r in results:
        if r.entry.role == "defect":
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
    print(f"sweep: {len(results)} entries in {now() - t0:.1f} s: "
          + (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no defect")
          + f"; {t['asDeclared']} as declared, {t['notAsDeclared']} not, "
            f"{t['undeclared']} with nothing declared")
    lines = summary_lines(t, a.fail_under)
    for line in lines:
        print(line)
    print(f"sweep: report {out / 'mutation-report.html'}, transcripts {out / 'transcripts'}")
    for r in bad:
        print(f"\n=== {r.entry.name}: {r.outcome} ({r.summary}); declared {r.entry.expect}"
              + (f" ({r.entry.failure})" if r.entry.failure else "") + "\n" + r.diff)
    below = a.fail_under is not None and lines[-1].endswith("FAIL")
    return 1 if bad or below else 0


if __name__ == "__main__":
    sys.exit(main())
