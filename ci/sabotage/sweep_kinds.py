"""What a catcher run says: its failure kind, read from the exit status and
the output of each kind of catcher -- a cmocka unit executable, a pytest
file, or tpheal-harness (its text report, or `run --json` through the
harness's contract, ci/harness_json.py).  docs/sabotage.md, "Failure kinds"."""
from __future__ import annotations

import pathlib
import re
import sys

CI = str(pathlib.Path(__file__).resolve().parents[1])  # procs.py, harness_json.py
if CI not in sys.path:
    sys.path.insert(0, CI)
import harness_json  # noqa: E402  (the harness's JSON contract, harness/json-schema.json)
import procs  # noqa: E402  (bounded runs, tree kills, sanitizer reports: one definition)
from sweep_config import Bad  # noqa: E402

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


# The harness's failure kinds (harness/json-schema.json, "failureKind"; the
# table is SCN_FAILURE_KIND_MAP in harness/scenario/scn_failure.h) the
# sweep's classes gather.  The messages are never read: rewording one changes
# no verdict (ci/test_failure_kinds.py).
EXPECTED_OUTCOME_KINDS = frozenset({"expected-fail-fast", "expected-deadlock", "expected-misuse"})
MISUSE_KINDS = frozenset({"misuse", "expected-misuse"})


def harness_kind(status, kinds):
    """The failure class of one failing run, from the scheduler's status and
    the run's failure kinds (text report or JSON alike): the status when it
    is deadlock, livelock or misuse; for an ended process, fail-fast unless
    the scenario expected another outcome (then oracle); misuse when the sim
    reported misuse or an expected misuse report was missing; else oracle."""
    kinds = set(kinds)
    if status in ("deadlock", "livelock", "misuse"):
        return status
    if status == "process-ended":
        return "oracle" if kinds & EXPECTED_OUTCOME_KINDS else "fail-fast"
    if kinds & MISUSE_KINDS:
        return "misuse"
    return "oracle"


def harness_text_kind(body):
    """harness_kind of one FAILURE block of tpheal-harness's text report: its
    `status:` and `kind:` lines (the first failure's kind)."""
    st = re.search(r"^\s*status: (\S+)", body, re.M)
    kind = re.search(r"^\s*kind: (\S+)", body, re.M)
    return harness_kind(st.group(1) if st else "ok", [kind.group(1)] if kind else [])


def parse_harness_text(rc, output, first_seed=0):
    """(failed, kind, schedules, seed, note) from tpheal-harness's text report
    (one FAILURE block per failing seed, in run order, then a PASS/FAIL
    summary line per scenario), or None when the output is not that."""
    summary = SUMMARY_RE.search(output)
    first = FAILURE_RE.search(output)
    if not summary and not first:
        return None
    if rc is None:
        return TIMED_OUT
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


TIMED_OUT = (True, "timeout", None, None, "hang bound reached")


def contract_objects(output):
    """The harness's JSON objects in a catcher's output (ci/harness_json.py):
    a line cut short by a crash is skipped (the exit status tells the rest);
    a line of another contract version stops the sweep (Bad)."""
    try:
        return harness_json.scan(output)[0]
    except harness_json.VersionMismatch as e:
        raise Bad(f"{e} (harness and ci/ are from different trees)")


def parse_harness_json(rc, output, first_seed=0):
    """(failed, kind, schedules, seed, note) from `tpheal-harness run --json`,
    read through the harness's contract (ci/harness_json.py): the first
    "failure" object is the catching run (seeds run in order from first_seed,
    so its seed says how many schedules it took), the "summary" objects say
    the rest.  A line of another contract version stops the sweep (Bad): a
    verdict read from fields that changed meaning is no verdict."""
    if rc is None:
        return TIMED_OUT
    objs = contract_objects(output)
    fails = harness_json.of_type(objs, "failure")
    sums = harness_json.of_type(objs, "summary")
    crashed = broken_kind(rc, output)
    if fails:
        f = fails[0]
        if f["strategy"] == "dfs":
            # a DFS catcher: no seed names the run; its number in the search
            # ("seed" of a dfs failure) is the schedules it took
            return True, harness_kind(f["status"], f["kinds"]), f["seed"], None, ""
        return True, harness_kind(f["status"], f["kinds"]), f["seed"] - first_seed + 1, str(f["seed"]), ""
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


def parse_generate_json(rc, output):
    """(failed, kind, schedules, seed, note) from `tpheal-harness generate
    --json --no-shrink --max-failures 1`, read through the harness's
    contract: the first "generate-failure" object is the catch, classed by
    its status and kinds as a scenario run's failure is (harness_kind; the
    signature's prose is not read); its "runs" -- the search's runs up to and
    including the failing one, over every program before it -- are the
    schedules to the catch, and "gen-SEED-INDEX" names the program (its
    `replay` command is in the output).  A summary with programs and no
    failure is a pass; anything else is a broken run."""
    if rc is None:
        return TIMED_OUT
    objs = contract_objects(output)
    fails = harness_json.of_type(objs, "generate-failure")
    sums = harness_json.of_type(objs, "generate-summary")
    if fails:
        f = fails[0]
        return True, harness_kind(f["status"], f["kinds"]), f["runs"], \
            f"gen-{f['seed']}-{f['index']}", f"program {f['index']}, {f['strategy']} seed {f['run_seed']}"
    crashed = broken_kind(rc, output)
    if not sums:
        if rc == 0:
            return True, "vacuous", None, None, "exit 0 without a --json report"
        return True, crashed, None, None, f"exit {rc} without a --json report"
    s = sums[0]
    if rc != 0 or s["failing_programs"]:
        return True, crashed, None, None, f"exit {rc}, {s['failing_programs']} failing programs without a report"
    if s["programs"] == 0 or s["runs"] == 0:
        return True, "vacuous", 0, None, "no programs run"
    return False, None, s["runs"], None, ""
