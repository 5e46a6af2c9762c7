"""The sabotage sweep: its own machinery against a small fixture project
(ci/sabotage/tests_fixture, one entry per outcome), then one case per entry of
the real sabotage.json, so `pytest ci/test_sabotage.py -k NAME` runs one.

The real entries are run together by one sweep over whichever of them pytest
selected (two in parallel, as `make sabotage` does); each case then asserts
its own entry behaved as declared, with the transcript in the message."""
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from conftest import committed_copy, git

REPO = pathlib.Path(__file__).resolve().parent.parent
SAB = REPO / "ci" / "sabotage"
sys.path.insert(0, str(SAB))
import manifest as mf  # noqa: E402
import report as rp  # noqa: E402
import sweep  # noqa: E402
import harness_json  # noqa: E402  (on the path: sweep puts ci/ there)

FIXTURE = SAB / "tests_fixture"
PY = sys.executable


def tree_state(path):
    """What 'the checkout was not modified' means: the status (tracked and
    untracked) and the content of every tracked file in the working tree."""
    status = git(path, "status", "--porcelain=v1", "--untracked-files=all")
    h = subprocess.run("git ls-files -z | xargs -0 sha256sum", shell=True, cwd=path,
                       capture_output=True, text=True, check=True).stdout
    return status, h


def run_sweep(*args, env=None, timeout=300):
    p = subprocess.run([PY, str(SAB / "sweep.py"), *args], capture_output=True, text=True,
                       env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="session")
def npm_packages():
    """The report schema and the viewer come from npm (ci/sabotage/package.json,
    pinned by its lock file); a fresh clone installs them here."""
    if not (rp.SCHEMA.exists() and rp.BUNDLE.exists()):
        if shutil.which("npm") is None:
            pytest.fail("npm is needed for the sabotage report's schema and viewer (ci/deps.sh node installs it; make test runs that)")
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=SAB, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
    return True


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    return committed_copy(FIXTURE, tmp_path_factory.mktemp("fixture") / "repo")


@pytest.fixture(scope="module")
def fx_run(fx, tmp_path_factory):
    base = tmp_path_factory.mktemp("fxrun")
    pidfile = base / "child.pid"
    env = dict(os.environ, FX_CHILD_PIDFILE=str(pidfile))
    before = tree_state(fx)
    rc, out, err = run_sweep("--checkout", str(fx), "--work", str(base / "work"),
                             "--out", str(base / "out"), env=env)
    after = tree_state(fx)
    results = {r["name"]: r for r in json.loads((base / "out" / "results.json").read_text())}
    return dict(rc=rc, out=out, err=err, before=before, after=after, results=results,
                outdir=base / "out", pidfile=pidfile, work=base / "work")


EXPECTED = {
    "add-broken": ("caught", True), "check-seeded": ("caught", True),
    "control": ("survived", True), "stale": ("stale", False),
    "wrong-kind": ("wrong-kind", False), "by-other": ("caught-by-other", False),
    "refused": ("refused-by-build", True), "no-compile": ("does-not-compile", False),
    "hang": ("caught", True), "survivor": ("survived", False),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_outcome(fx_run, name):
    r = fx_run["results"][name]
    assert (r["outcome"], r["ok"]) == EXPECTED[name], (r, fx_run["out"])


def test_fixture_exit_code_and_patches(fx_run):
    assert fx_run["rc"] == 1, fx_run["out"] + fx_run["err"]
    out = fx_run["out"]
    for name, (_, ok) in EXPECTED.items():
        assert (f"=== {name}:" in out) == (not ok), name
    # the injected patch is printed with its real place in the file
    assert re.search(r"=== survivor:.*\n--- a/lib/lib\.c\n\+\+\+ b/lib/lib\.c\n@@ -\d+,\d+ \+\d+,\d+ @@", out)


def test_checkout_never_modified(fx_run):
    assert fx_run["before"] == fx_run["after"]


def test_progress_lines(fx_run):
    lines = [l for l in fx_run["out"].splitlines() if l.startswith("[")]
    assert len(lines) == len(EXPECTED)
    for l in lines:
        assert re.match(r"^\[ ?\d+/10\] \S+ \.\.\. .* \(\d+\.\d s, ~\d+ s left\)", l), l
    assert any(re.search(r"check-seeded \.\.\. caught by scenario:basic\.scn after 8 schedules", l)
               for l in lines)


def test_fallback_stops_at_the_first_catcher(fx_run):
    """A catch by something the entry did not name is reported with the first
    catcher of the fallback set that failed (--all-catchers lists them all:
    ci/test_sweep_foreign.py); the entry's own tests ran first -- its name
    says "other", so scenario:other.scn ran (and passed) before the cheaper
    unit:test_add caught it."""
    r = fx_run["results"]["by-other"]
    assert [c["catcher"] for c in r["catchers"]] == ["unit:test_add"], r
    # the named catcher, then the fallback set: its own test first, then cheapest
    # (the cheap ones tie on baseline time, so only those places are fixed)
    assert r["ran"][:2] == ["scenario:basic.scn", "scenario:other.scn"], r
    assert r["ran"][-1] == "unit:test_add" and not any(x.startswith(("asan:", "pytest:")) for x in r["ran"]), r


def test_fallback_is_the_suite(fx_run):
    """The control ran every scenario under both strategies at the
    configured seed count, and the sanitizer build."""
    text = (fx_run["outdir"] / "transcripts" / "control.txt").read_text()
    assert re.search(r"--- scenario:basic\.scn: .*--seeds 20 --strategy both", text), text[-3000:]
    assert "--- asan:test_spin: " in text and "build-san" in text
    # and the pytest layer, against the copy's build
    assert re.search(r"--- pytest:ci/test_cli\.py: .*-m pytest .*ci/test_cli\.py", text), text[-3000:]


def test_schedules_and_seed_of_first_catch(fx_run):
    r = fx_run["results"]["check-seeded"]
    assert (r["schedules"], r["seed"], r["kind"]) == (8, "7", "oracle")


def test_transcripts(fx_run):
    t = fx_run["outdir"] / "transcripts"
    assert sorted(p.stem for p in t.glob("*.txt")) == sorted(list(EXPECTED) + ["baseline"])
    text = (t / "check-seeded.txt").read_text()
    assert "outcome: caught (as declared)" in text and "FAILURE " in text


def test_timeout_kills_the_whole_process_tree(fx_run):
    assert fx_run["results"]["hang"]["kind"] == "timeout"
    pid = int(fx_run["pidfile"].read_text())
    # dead: gone, or a zombie waiting for init to reap it (it was killed)
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z", "X"), state


def test_report_matches_the_schema(fx_run, npm_packages):
    rep = json.loads((fx_run["outdir"] / "mutation-report.json").read_text())
    assert rp.SCHEMA.exists(), "run `npm ci` in ci/sabotage"
    assert rp.validate_report(rep) == []
    statuses = {m["id"]: m["status"] for f in rep["files"].values() for m in f["mutants"]}
    assert statuses["add-broken"] == "Killed" and statuses["survivor"] == "Survived"
    assert statuses["hang"] == "Timeout" and statuses["stale"] == "Ignored"
    # and the validator is not vacuous
    rep["files"]["lib/lib.c"]["mutants"][0]["location"]["start"]["line"] = 0
    del rep["thresholds"]
    errs = rp.validate_report(rep)
    assert any("thresholds" in e for e in errs) and any("line" in e for e in errs)


def test_html_page_embeds_viewer_and_report(fx, tmp_path, npm_packages):
    # rendered after the packages are installed, so the viewer is inlined
    rc, out, err = run_sweep("--checkout", str(fx), "--work", str(tmp_path / "w"),
                             "--out", str(tmp_path / "o"), "--only", "add-broken")
    assert rc == 0, out + err
    page = (tmp_path / "o" / "mutation-report.html").read_text()
    assert rp.BUNDLE.exists(), "run `npm ci` in ci/sabotage"
    assert "<mutation-test-report-app" in page and "customElements" in page
    assert '"add-broken"' in page and "http" not in page.split("<script>")[0]


def test_all_as_declared_exits_zero(fx, tmp_path):
    rc, out, err = run_sweep("--checkout", str(fx), "--work", str(tmp_path / "w"),
                             "--out", str(tmp_path / "o"), "--only", "add-broken",
                             "--only", "control", "--only", "refused")
    assert rc == 0, out + err


def test_red_baseline_exits_two(fx, tmp_path):
    lib = fx / "lib" / "lib.c"
    orig = lib.read_text()
    try:
        # the sweep copies the working tree's tracked files, so an uncommitted
        # break is the baseline it sees
        lib.write_text(orig.replace("return a + b;", "return a + b + 1;"))
        rc, out, err = run_sweep("--checkout", str(fx), "--work", str(tmp_path / "w"),
                                 "--out", str(tmp_path / "o"), "--only", "control")
    finally:
        lib.write_text(orig)
    assert rc == 2 and "baseline: unit:test_add fails unpatched" in err, out + err


def test_a_slow_baseline_catcher_is_reported_and_the_sweep_goes_on(fx, tmp_path):
    """A fallback catcher still running at its baseline bound is slow, not red:
    it is named with its time and left out of the fallback set, the entries
    are judged, and its time is kept (catcher-times.json) so the next sweep's
    bound derives from it.  Here test_spin hangs unpatched (an uncommitted
    break the copies see), so it is slow at any bound and any load."""
    lib = fx / "lib" / "lib.c"
    orig = lib.read_text()
    manifest = json.loads((fx / "sabotage.json").read_text())
    manifest["baselineTimeoutSeconds"] = 1
    mpath = tmp_path / "sabotage.json"
    mpath.write_text(json.dumps(manifest))
    try:
        lib.write_text(orig.replace("        i++;", "        i += 0;"))
        rc, out, err = run_sweep("--checkout", str(fx), "--manifest", str(mpath), "--work", str(tmp_path / "w"),
                                 "--out", str(tmp_path / "o"), "--only", "control")
    finally:
        lib.write_text(orig)
    assert rc == 0, out + err
    line = next((x for x in (out + err).splitlines() if "baseline: unit:test_spin slow:" in x), None)
    assert line and "left out of the fallback set" in line, out + err
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [(r["name"], r["outcome"]) for r in res] == [("control", "survived")]
    assert "unit:test_spin" not in res[0]["ran"] and "unit:test_add" in res[0]["ran"]
    rep = json.loads((tmp_path / "o" / "mutation-report.json").read_text())
    left = {x["catcher"]: x["reason"] for x in rep["config"]["fallback"]["leftOut"]}
    assert left.get("unit:test_spin", "").startswith("slow unpatched"), left
    times = json.loads((tmp_path / "w" / "catcher-times.json").read_text())
    spin = [v for k, v in times.items() if k.startswith("unit:test_spin")]
    assert spin and spin[0] >= 2.5, times  # it ran to its bound: the fixture's 3 s floor at least


def test_baseline_bound_derives_from_the_catchers_own_time_and_the_load():
    """Unpatched, a catcher never timed gets the configured first bound, one
    timed before HANG_FACTOR times its last time; either is stretched by the
    load and kept above the floor (a pytest catcher above its own)."""
    from types import SimpleNamespace as NS
    me = NS(floor=15.0, cfg={"baselineTimeoutSeconds": 120})
    bb = lambda kind, last, load: sweep.Sweep.baseline_bound(me, NS(kind=kind), last, load)  # noqa: E731
    assert bb("asan", None, 1.0) == 120.0
    assert bb("asan", None, 2.5) == 300.0
    assert bb("asan", 127.0, 1.0) == 3 * 127.0
    assert bb("asan", 127.0, 2.0) == 6 * 127.0
    assert bb("unit", 0.2, 1.0) == 15.0
    assert bb("pytest", 2.0, 2.0) == 2 * sweep.PYTEST_HANG_FLOOR


def test_load_factor_reads_the_load_over_the_cores(monkeypatch):
    import sweep_config
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 0.0, 0.0))
    assert sweep_config.load_factor() == 2.5
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.0, 0.0))
    assert sweep_config.load_factor() == 1.0


def test_shards_are_contiguous_blocks():
    xs = list(range(10))
    parts = [sweep.shard(xs, i, 3) for i in (1, 2, 3)]
    assert parts == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert sweep.parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(sweep.Bad):
            sweep.parse_shard(bad)


def _write_manifest(tmp_path, mutate):
    data = json.loads((FIXTURE / "sabotage.json").read_text())
    mutate(data)
    p = tmp_path / "sabotage.json"
    p.write_text(json.dumps(data, indent=2))
    return p


BAD_MANIFESTS = {
    "duplicate-name": (lambda d: d["sabotages"][1].update(name="add-broken"), "duplicate name 'add-broken'"),
    "reserved-name": (lambda d: d["sabotages"][0].update(name="baseline"), "'baseline' is reserved"),
    "bad-expect": (lambda d: d["sabotages"][0].update(expect="killed"), "'expect' must be one of"),
    "empty-catchers": (lambda d: d["sabotages"][0].update(caughtBy=[]),
                       "'caughtBy', when given, must be a non-empty array"),
    "bad-catcher": (lambda d: d["sabotages"][0].update(caughtBy=["ctest:x"]), "catcher 'ctest:x'"),
    "bad-kind": (lambda d: d["sabotages"][0].update(failure="boom"), "'failure' must be one of"),
    "no-build-error": (lambda d: d["sabotages"][6].pop("buildError"), "needs 'buildError'"),
    "find-not-array": (lambda d: d["sabotages"][0].update(find="x"), "'find' must be an array"),
    "unknown-key": (lambda d: d["sabotages"][0].update(expected="caught"), "unknown key 'expected'"),
    "bad-timeout": (lambda d: d["sabotages"][0].update(timeoutSeconds=-1), "'timeoutSeconds' must be"),
    "no-why": (lambda d: d["sabotages"][0].pop("why"), "'why' (a non-empty string) is required"),
    "no-package": (lambda d: d.pop("package"), "'package'"),
    "generate-not-a-seed": (lambda d: d["sabotages"][0].update(caughtBy=["generate:x1"]),
                            "generate catcher 'x1' must name a master seed"),
    "generate-seed-too-big": (lambda d: d["sabotages"][0].update(caughtBy=["generate:18446744073709551616"]),
                              "must name a master seed"),
    "programs-on-a-scenario": (lambda d: d["sabotages"][0].update(caughtBy=[{"scenario": "basic.scn",
                                                                            "programs": 5}]),
                               "'programs' (an integer 1..1000000) applies to generate catchers only"),
    "generate-dfs": (lambda d: d["sabotages"][0].update(caughtBy=[{"generate": 0, "strategy": "dfs"}]),
                     "a generate catcher's 'strategy' is random, pct or both"),
}
# configuration keys: --check reads them too (exit 2, the key named)
BAD_CONFIG = {
    "fallbackLayers": (["unit", "fuzz"], "'fallbackLayers' names no layer: fuzz"),
    "generateMasterSeeds": ([-1], "'generateMasterSeeds' must be whole numbers"),
    "generatePrograms": (0, "'generatePrograms' must be at least 1"),
    "generateStrategy": ("dfs", "'generateStrategy' is random, pct or both"),
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
def test_bad_manifest_exits_two_with_position(tmp_path, case):
    mutate, message = BAD_MANIFESTS[case]
    p = _write_manifest(tmp_path, mutate)
    rc, out, err = run_sweep("--manifest", str(p), "--check")
    assert rc == 2, out + err
    assert message in err, err
    assert re.search(r"sabotage\.json:\d+:\d+: ", err), err


@pytest.mark.parametrize("key", sorted(BAD_CONFIG))
def test_bad_configuration_key_exits_two(tmp_path, key):
    value, message = BAD_CONFIG[key]
    p = _write_manifest(tmp_path, lambda d: d.update({key: value}))
    rc, out, err = run_sweep("--manifest", str(p), "--check")
    assert rc == 2 and message in err, out + err


def test_a_manifest_needs_no_control_nor_caughtby(tmp_path):
    def foreign(d):
        d["sabotages"] = [s for s in d["sabotages"] if s["expect"] != "survives"
                          and s["name"] != "stale"]
        d["sabotages"][0].pop("caughtBy")
        d["sabotages"][0].pop("failure")
    p = _write_manifest(tmp_path, foreign)
    rc, out, err = run_sweep("--manifest", str(p), "--checkout", str(FIXTURE), "--check")
    assert rc == 0, out + err


FOREIGN = {
    "package": "foreign", "timeoutSeconds": 3, "fallbackSeeds": 20, "baselineTimeoutSeconds": 10,
    "harnessTargets": ["tpheal-harness"],
    "sabotages": [
        {"name": "any-add", "file": "lib/lib.c", "find": ["    return a + b;"],
         "replace": ["    return a - b;"], "expect": "caught", "why": "no catcher named"},
        {"name": "any-add-kind", "file": "lib/lib.c", "find": ["    return a + b;"],
         "replace": ["    return a - b;"], "expect": "caught", "failure": "memory-error",
         "why": "a kind nothing reports"},
        {"name": "any-unused", "file": "lib/lib.c", "find": ["    return x * 2;"],
         "replace": ["    return x * 3;"], "expect": "caught", "why": "nothing tests it"},
        {"name": "any-check", "file": "lib/lib.c", "find": ["    return seed < 1000000u;"],
         "replace": ["    return seed % 10u != 7u;"], "expect": "caught", "failure": "oracle",
         "why": "the scenarios catch it"},
    ],
}


def test_foreign_manifest_judged_by_the_whole_suite(fx, tmp_path):
    """Entries without caughtBy (and no control): caught when anything in
    the suite fails, every catcher listed (--all-catchers), the pytest layer
    included; a declared kind must be seen; an entry that declares nothing
    is measured (ok null), one that declares a kind is judged."""
    data = json.loads(json.dumps(FOREIGN))
    data["sanitizerCmakeArgs"] = json.loads((FIXTURE / "sabotage.json").read_text())["sanitizerCmakeArgs"]
    p = tmp_path / "foreign.json"
    p.write_text(json.dumps(data, indent=1))
    rc, out, err = run_sweep("--checkout", str(fx), "--manifest", str(p), "--work", str(tmp_path / "w"),
                             "--out", str(tmp_path / "o"), "--all-catchers")
    res = {r["name"]: r for r in json.loads((tmp_path / "o" / "results.json").read_text())}
    assert rc == 1, out + err  # any-add-kind declared a kind nothing reports
    add = res["any-add"]
    assert (add["outcome"], add["ok"], add["judged"]) == ("caught", None, False), add
    assert {c["catcher"] for c in add["catchers"]} == {"unit:test_add", "asan:test_add",
                                                       "pytest:ci/test_cli.py"}, add
    assert len(add["ran"]) == 7  # every catcher ran, not only up to the first
    assert (res["any-add-kind"]["outcome"], res["any-add-kind"]["ok"]) == ("wrong-kind", False)
    assert (res["any-unused"]["outcome"], res["any-unused"]["ok"]) == ("survived", None)
    chk = res["any-check"]
    assert (chk["outcome"], chk["ok"], chk["kind"]) == ("caught", True, "oracle"), chk
    assert {c["catcher"] for c in chk["catchers"]} == {"scenario:basic.scn", "scenario:other.scn"}
    rep = json.loads((tmp_path / "o" / "mutation-report.json").read_text())
    killed_by = {m["id"]: m.get("killedBy") for f in rep["files"].values() for m in f["mutants"]}
    assert sorted(killed_by["any-add"]) == ["asan:test_add", "pytest:ci/test_cli.py", "unit:test_add"]


def test_named_sanitizer_catcher(fx, tmp_path):
    data = json.loads(json.dumps(FOREIGN))
    data["sanitizerCmakeArgs"] = json.loads((FIXTURE / "sabotage.json").read_text())["sanitizerCmakeArgs"]
    data["sabotages"] = [dict(data["sabotages"][0], caughtBy=["asan:test_add"], failure="assertion")]
    p = tmp_path / "named.json"
    p.write_text(json.dumps(data))
    rc, out, err = run_sweep("--checkout", str(fx), "--manifest", str(p), "--work", str(tmp_path / "w"),
                             "--out", str(tmp_path / "o"))
    assert rc == 0 and "caught by asan:test_add (assertion)" in out, out + err
    assert "no 'survives' control" in out


def test_only_reuses_a_cached_green_baseline(fx, tmp_path):
    args = ("--checkout", str(fx), "--work", str(tmp_path / "w"), "--out", str(tmp_path / "o"))
    rc, out, err = run_sweep(*args, "--only", "add-broken")
    assert rc == 0 and "baseline: green" in out, out + err
    rc, out, err = run_sweep(*args, "--only", "control")
    assert rc == 0 and "baseline: reused the cached green run" in out, out + err
    assert "baseline: green" not in out
    # another tree (an uncommitted edit of a tracked file) is another key
    h = fx / "lib" / "lib.h"
    orig = h.read_text()
    try:
        h.write_text(orig + "/* edited */\n")
        rc, out, err = run_sweep(*args, "--only", "add-broken")
    finally:
        h.write_text(orig)
    assert rc == 0 and "baseline: green" in out and "reused" not in out, out + err
    # a red baseline is never cached
    lib = fx / "lib" / "lib.c"
    orig = lib.read_text()
    try:
        lib.write_text(orig.replace("return a + b;", "return a + b + 1;"))
        for _ in range(2):
            rc, out, err = run_sweep(*args, "--only", "control")
            assert rc == 2 and "fails unpatched" in err, out + err
    finally:
        lib.write_text(orig)


def test_bad_json_and_every_problem_at_once(tmp_path):
    p = tmp_path / "sabotage.json"
    p.write_text('{"package": "x",\n "sabotages": [}\n')
    rc, _, err = run_sweep("--manifest", str(p), "--check")
    assert rc == 2 and re.search(r"sabotage\.json:2:\d+: invalid JSON", err), err

    def two(d):
        d["sabotages"][0]["expect"] = "nope"
        d["sabotages"][3]["failure"] = "nope"
    p = _write_manifest(tmp_path, two)
    rc, _, err = run_sweep("--manifest", str(p), "--check")
    assert rc == 2 and err.count("sabotage.json:") >= 2, err


def test_duplicate_json_key_is_reported(tmp_path):
    text = (FIXTURE / "sabotage.json").read_text().replace(
        '"name": "add-broken",', '"name": "add-broken", "name": "x",', 1)
    p = tmp_path / "sabotage.json"
    p.write_text(text)
    line = text[:text.index('"name": "x"')].count("\n") + 1
    rc, _, err = run_sweep("--manifest", str(p), "--check")
    assert rc == 2 and re.search(rf"sabotage\.json:{line}:\d+: duplicate key 'name'", err), err


def test_bad_invocation_exits_two(fx):
    assert run_sweep("--checkout", str(fx), "--shard", "3/2")[0] == 2
    assert run_sweep("--checkout", str(fx), "--only", "no-such-entry")[0] == 2
    assert run_sweep("--no-such-flag")[0] == 2


def test_entry_file_must_be_tracked(fx, tmp_path):
    def untracked(d):
        d["sabotages"][0]["file"] = "lib/nope.c"
    p = _write_manifest(tmp_path, untracked)
    rc, _, err = run_sweep("--checkout", str(fx), "--manifest", str(p), "--work", str(tmp_path / "w"),
                           "--out", str(tmp_path / "o"))
    assert rc == 2 and "not a tracked file" in err, err


def test_harness_text_kinds():
    """The class comes from the block's `status:` and `kind:` lines; the
    failure lines (prose) are not read: each case's prose says another
    class's words."""
    block = ("FAILURE s.scn\n  purpose: p\n  seed: 41  strategy: pct depth 3 steps 0\n"
             "  status: {st}  steps: 9  interleaving: 00\n  kind: {k}\n  failures:\n    {why}\n")
    tail = "FAIL s.scn  runs=50 failures=3 schedules/s=1.0 steps/run=9\n"
    for st, k, why, kind in (("deadlock", "deadlock", "the sim reported misuse:", "deadlock"),
                             ("livelock", "livelock", "expected a deadlock", "livelock"),
                             ("ok", "expect-failed", "the sim reported misuse:", "oracle"),
                             ("ok", "misuse", "oracle repairs_run >= 1 broken", "misuse"),
                             ("ok", "expected-misuse", "line 3: expect", "misuse"),
                             ("process-ended", "fail-fast", "expected 2, got 1", "fail-fast"),
                             ("process-ended", "expected-fail-fast", "the process was ended", "oracle")):
        out = "x\n" + block.format(st=st, k=k, why=why) + block.format(st="ok", k="op-result", why="later") + tail
        assert sweep.parse_harness(1, out)[:4] == (True, kind, 42, "41"), (st, k, why)
    assert sweep.parse_harness(0, "PASS s.scn  runs=50 failures=0 schedules/s=1.0 steps/run=9\n")[:3] \
        == (False, None, 50)


def test_harness_json_kinds():
    """The sweep reads `run --json` through the contract: every line used
    here is a valid object of harness/json-schema.json, and a line of
    another version stops the sweep rather than being half-read."""
    summ = {"v": 1, "type": "summary", "scenario": "s.scn", "purpose": "p", "build": "default", "pool": "sim",
            "runs": 10, "failures": 0, "steps": 90, "max_choice_points": 9, "seconds": 0.1,
            "schedules_per_sec": 100.0, "distinct_interleavings": 10, "distinct_is_lower_bound": False,
            "exercised": True, "reached": True}
    fail = {"v": 1, "type": "failure", "failure": "s.scn", "seed": 3, "strategy": "pct", "depth": 3,
            "pct_steps": 9, "status": "deadlock", "failures": "deadlock\n", "kind": "deadlock",
            "kinds": ["deadlock"], "line": 0, "schedule": "r1", "race": "", "fairness": "", "replayed": ""}
    for o in (summ, fail):
        assert harness_json.problems(o) == [], harness_json.problems(o)
    line = lambda **kw: json.dumps(kw) + "\n"  # noqa: E731
    assert sweep.parse_harness(0, line(**summ))[:3] == (False, None, 10)
    assert sweep.parse_harness(4, line(**dict(summ, reached=False)))[:2] == (True, "vacuous")
    bad = dict(summ, runs=50, failures=3)
    dl = sweep.parse_harness(1, "x\n" + line(**fail) + line(**dict(fail, seed=7, status="ok")) + line(**bad))
    assert dl[:4] == (True, "deadlock", 4, "3")
    # the kinds decide, never the failures text (each text here says another class's words)
    ff = dict(fail, status="process-ended", failures="expected 2\n", kind="fail-fast", kinds=["fail-fast", "op-result"])
    assert sweep.parse_harness(1, line(**ff) + line(**bad))[:2] == (True, "fail-fast")
    ffx = dict(ff, failures="the process was ended\n", kind="op-result", kinds=["op-result", "expected-deadlock"])
    assert sweep.parse_harness(1, line(**ffx) + line(**bad))[:2] == (True, "oracle")
    assert sweep.parse_harness(1, line(**dict(fail, status="ok", failures="the sim reported misuse:\n",
                                               kind="oracle-unhealed", kinds=["oracle-unhealed"])))[:2] == \
        (True, "oracle")
    assert sweep.parse_harness(1, line(**dict(fail, status="ok", failures="oracle x broken\n", kind="data-race",
                                               kinds=["data-race", "misuse"])))[:2] == (True, "misuse")
    with pytest.raises(sweep.Bad, match="version 2"):
        sweep.parse_harness(0, line(**dict(summ, v=2)))
    assert sweep.parse_harness(139, '{"v":1,"type":"summ')[:2] == (True, "crash")
    assert sweep.parse_harness(None, "")[:2] == (True, "timeout")
    assert sweep.unit_kind(1, "[  FAILED  ] 1 test(s)") == "assertion"
    assert sweep.unit_kind(-11, "") == "crash"
    assert sweep.unit_kind(1, "==1==ERROR: AddressSanitizer: heap-use-after-free") == "memory-error"


# ------------------------------------------------------------ the real manifest
REAL = REPO / "sabotage.json"


def real_entries():
    try:
        return mf.load(str(REAL), display="sabotage.json").entries
    except mf.ManifestError:
        return []


def test_real_manifest_is_valid():
    rc, out, err = run_sweep("--manifest", str(REAL), "--check")
    assert rc == 0, err
    es = real_entries()
    assert len(es) >= 30
    assert sum(e.expect == "survives" for e in es) >= 2
    assert sum(e.file.startswith("harness/") for e in es) >= 3


@pytest.fixture(scope="session")
def real_sweep(request, tmp_path_factory):
    names = [item.callspec.params["entry"] for item in request.session.items
             if item.originalname == "test_entry" and hasattr(item, "callspec")]
    out = tmp_path_factory.mktemp("real-sweep")
    args = ["--out", str(out), "--work", os.environ.get("TPHEAL_SABOTAGE_WORK",
                                                      str(REPO / "build-sabotage"))]
    for n in names:
        args += ["--only", n]
    # The files the selected entries patch (and the manifest): in a shared
    # working tree other people's edits would make a whole-tree comparison
    # fail for reasons that are not the sweep's; the fixture tests compare
    # the whole tree of a repository nobody else touches.
    watched = [REAL] + [REPO / e.file for e in real_entries() if e.name in names or not names]

    def state():
        return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in watched]
    before = state()
    rc, stdout, stderr = run_sweep(*args, timeout=1800)
    after = state()
    res = out / "results.json"
    results = {r["name"]: r for r in json.loads(res.read_text())} if res.exists() else {}
    return dict(rc=rc, out=stdout, err=stderr, results=results, dir=out,
                untouched=before == after)


@pytest.mark.parametrize("entry", [e.name for e in real_entries()])
def test_entry(real_sweep, entry):
    s = real_sweep
    assert s["untouched"], "the sweep modified the checkout"
    assert entry in s["results"], f"sweep exit {s['rc']}:\n{s['err'][-4000:]}\n{s['out'][-2000:]}"
    r = s["results"][entry]
    t = s["dir"] / "transcripts" / f"{entry}.txt"
    assert r["ok"], f"{r['outcome']}: {r['summary']}\n\n" + (t.read_text()[-6000:] if t.exists() else "")


def test_a_requirement_no_run_reached_reads_as_vacuous_not_as_an_assertion():
    # exit 4 from `tpheal-harness run`: no failure, a `require` never reached
    out = ("reach line 3 `require severed default`:  random reached 0/20 (0.0%)\n"
           "NOT-EXERCISED scenarios/x.scn: a requirement above was reached by no run of a strategy\n"
           "NOT-EXERCISED scenarios/x.scn  runs=20 failures=0 schedules/s=1.0 steps/run=9 interleavings=3\n")
    failed, kind, runs, seed, note = sweep.parse_harness(4, out)
    assert (failed, kind, runs) == (True, "vacuous", 20)
    passed = out.replace("NOT-EXERCISED scenarios/x.scn  runs", "PASS scenarios/x.scn  runs")
    assert sweep.parse_harness(0, passed)[0] is False


def test_a_dfs_catcher_reports_its_run_number_as_schedules():
    """A scenario catcher with `strategy: dfs` (args --preemptions P [--por]):
    its report has no seed, the search's run number is what it took."""
    import sweep
    out = ("FAILURE scenarios/x.scn\n  purpose: p\n  dfs run 7 of the search (bounded-exhaustive: it replays by its"
           " schedule)\n  status: ok  steps: 10\n  failures:\n    expect calls(W) == 2\n"
           "FAIL scenarios/x.scn  runs=9 failures=2 schedules/s=1.0 steps/run=10 interleavings=9\n")
    failed, kind, schedules, seed, _ = sweep.parse_harness_text(1, out)
    assert failed and kind == "oracle" and schedules == 7 and seed is None


def test_hang_bound_of_a_pytest_catcher_outlasts_a_loaded_start_up(monkeypatch):
    """A pytest catcher's bound is at least PYTEST_HANG_FLOOR: its baseline is
    mostly interpreter start-up, which a loaded runner stretched past 15 s
    while the tests themselves passed (soak run 5).  Other catchers keep the
    15 s floor and 3x their baseline; an entry's timeoutSeconds only raises."""
    from types import SimpleNamespace as NS
    import sweep_catchers
    monkeypatch.setattr(sweep_catchers, "load_factor", lambda: 1.0)  # quiet; the load's share below
    me = NS(floor=sweep.HANG_FLOOR, baseline={"p": 2.6, "u": 1.0, "s": 40.0}, key=lambda c: c.name)
    bound = lambda kind, name, timeout=None: sweep.Sweep.bound(me, NS(kind=kind, name=name), NS(timeout=timeout))  # noqa: E731
    assert bound("pytest", "p") == sweep.PYTEST_HANG_FLOOR >= 60
    assert bound("unit", "u") == sweep.HANG_FLOOR
    assert bound("scenario", "s") == 3 * 40.0
    assert bound("unit", "u", timeout=200) == 200 and bound("pytest", "p", timeout=5) == sweep.PYTEST_HANG_FLOOR
    monkeypatch.setattr(sweep_catchers, "load_factor", lambda: 2.5)  # make soak's three hogs
    assert bound("scenario", "s") == 3 * 40.0 * 2.5 and bound("unit", "u") == sweep.HANG_FLOOR * 2.5


# ------------------------------------------------------------ the generate catcher
GEN_FAIL = {"v": 1, "type": "generate-failure", "seed": 0, "index": 12, "program": "gen-0-12.scn",
            "signature": "oracle-healers (status 0): deadlock: the sim reported misuse", "status": "ok",
            "kind": "oracle-healers", "kinds": ["oracle-healers", "teardown-close"], "strategy": "pct",
            "run_seed": 2, "runs": 101, "replay": "tpheal-harness replay --seed 2 --strategy pct gen-0-12.scn"}
GEN_SUMMARY = {"v": 1, "type": "generate-summary", "seed": 0, "programs": 300, "runs": 2400,
               "failing_programs": 0, "seconds": 1.9}


def test_generate_json_kinds():
    """The generate catcher reads `generate --json` through the contract:
    the first generate-failure's status and kinds give the class (as a
    scenario run's do), its runs the schedules to the catch; the
    signature's prose is never read (each case's says another class's
    words)."""
    import sweep_kinds
    for o in (GEN_FAIL, GEN_SUMMARY):
        assert harness_json.problems(o) == [], harness_json.problems(o)
    line = lambda **kw: json.dumps(kw) + "\n"  # noqa: E731
    failing = dict(GEN_SUMMARY, programs=13, runs=101, failing_programs=1)
    parse = sweep_kinds.parse_generate_json
    got = parse(1, "x\n" + line(**GEN_FAIL) + line(**dict(GEN_FAIL, index=40, runs=300)) + line(**failing))
    assert got[:4] == (True, "oracle", 101, "gen-0-12"), got
    for status, kinds, cls in (("deadlock", ["deadlock"], "deadlock"),
                               ("livelock", ["livelock"], "livelock"),
                               ("process-ended", ["fail-fast"], "fail-fast"),
                               ("ok", ["oracle-unhealed", "misuse"], "misuse"),  # every kind counts
                               ("ok", ["oracle-stop-drain"], "oracle")):
        f = dict(GEN_FAIL, status=status, kind=kinds[0], kinds=kinds)
        assert harness_json.problems(f) == [], harness_json.problems(f)
        assert parse(1, line(**f) + line(**failing))[:3] == (True, cls, 101), (status, kinds)
    # a pass: the summary's runs are the schedules run
    assert parse(0, line(**GEN_SUMMARY)) == (False, None, 2400, None, "")
    # broken runs: no report, a failing count without its failure, a crash, a hang, nothing run
    assert parse(0, "")[:2] == (True, "vacuous")
    assert parse(1, line(**failing))[:2] == (True, "assertion")
    assert parse(-11, line(**GEN_FAIL)[:40])[:2] == (True, "crash")
    assert parse(None, line(**GEN_FAIL))[:2] == (True, "timeout")
    assert parse(0, line(**dict(GEN_SUMMARY, programs=0, runs=0)))[:2] == (True, "vacuous")
    with pytest.raises(sweep.Bad, match="version 2"):
        parse(0, line(**dict(GEN_SUMMARY, v=2)))


def _cfg(**kw):
    import sweep_config
    return dict(sweep_config.DEFAULTS, **kw)


def test_generate_catcher_command_and_targets(tmp_path):
    """generate:<master seed> runs `generate --json --no-shrink
    --max-failures 1` over that seed's first generatePrograms programs (no
    --seconds: the verdict replays); an object catcher's programs, seeds and
    strategy override the generate* keys, its args go last.  The unit layer
    left out, the copy builds the harness only."""
    import sweep_worker
    problems = []
    c = mf._catcher("generate:7", "x", problems)
    assert not problems and (c.kind, c.name, c.label) == ("generate", "7", "generate:7")
    w = sweep_worker.Worker(0, tmp_path, tmp_path, [], _cfg(generatePrograms=50), 1)
    w.harness = "/b/tpheal-harness"
    assert w.command(c) == ["/b/tpheal-harness", "generate", "--json", "--no-shrink", "--max-failures", "1",
                            "--seed", "7", "--programs", "50", "--seeds", "4", "--strategy", "both"]
    o = mf._catcher({"generate": 3, "programs": 9, "seeds": 2, "strategy": "pct", "args": ["--depth", "2"]},
                    "x", problems)
    assert not problems and o.programs == 9
    assert w.command(o)[6:] == ["--seed", "3", "--programs", "9", "--seeds", "2", "--strategy", "pct",
                                "--depth", "2"]
    # the program count is part of the catcher's key (its baseline time, its cache)
    assert sweep.Sweep.key(o) != sweep.Sweep.key(mf.Catcher("generate", "3", seeds=2, strategy="pct",
                                                            args=["--depth", "2"]))
    w.fallback_units = ["test_a"]
    assert w.fallback_targets() == {"test_a", "tpheal-harness", "tpheal-harness-failfast"}
    w2 = sweep_worker.Worker(0, tmp_path, tmp_path, [], _cfg(fallbackLayers=["generate"]), 1)
    w2.fallback_units = ["test_a"]
    assert w2.fallback_targets() == {"tpheal-harness", "tpheal-harness-failfast"}
    assert w2.san is None  # no asan layer: no sanitizer copy to build
    assert w.san is not None


class _FakeCopy:
    """A worker whose catchers all pass, each taking its kind's time; with
    a sanitizer copy and a pytest file, every layer has a catcher."""
    files = ["ci/test_cli.py"]
    fallback_units = ["test_b", "test_a"]

    def __init__(self, san=True):
        from types import SimpleNamespace as NS
        self.san = NS(fallback_units=["test_a"]) if san else None

    def scenarios(self):
        return ["x.scn"]

    def command(self, c):
        return [c.label]

    def run(self, c, bound):
        secs = {"unit": 0.2, "scenario": 3.0, "generate": 2.0, "asan": 0.5, "pytest": 2.5}[c.kind]
        return sweep.Run(c.label, [c.label], False, None, secs, "", 0)


def _baseline(tmp_path, entries=(), **raw):
    m = mf.Manifest(str(tmp_path / "m.json"), "t", ".", list(entries), dict({"package": "t"}, **raw))
    s = sweep.Sweep(tmp_path, m, tmp_path / "w", tmp_path / "o", jobs=1, quiet=True)
    s.workers, s.source = [_FakeCopy("asan" in s.cfg["fallbackLayers"])], tmp_path
    (tmp_path / "w").mkdir(parents=True, exist_ok=True)
    s.run_baseline(list(entries))
    return s


def test_the_generate_layer_sits_between_the_corpus_and_the_sanitizer_build(tmp_path):
    """One catcher per generateMasterSeeds seed, its own layer after the
    scenarios; the run order is the baseline's (cheapest first) and relevance
    (no words in a master seed) gives it no precedence; fallbackLayers
    leaves layers out, and says so."""
    s = _baseline(tmp_path, generateMasterSeeds=[0, 5], generatePrograms=120)
    assert list(s.fallback_info["layers"]) == ["unit", "scenario", "generate", "asan", "pytest"]
    assert s.fallback_info["layers"]["generate"] == ["generate:0", "generate:5"]
    gen = [c for c in s.full_set if c.kind == "generate"]
    assert [(c.programs, c.seeds, c.strategy) for c in gen] == [(120, 4, "both")] * 2
    # cheapest first, the sanitizer build's last
    kinds = ["unit", "unit", "generate", "generate", "pytest", "scenario", "asan"]
    assert [c.kind for c in s.full_set] == kinds
    e = mf.Entry(0, "healer-start-recheck", "core/src/healer.c", "a", "b", "caught",
                 "generate finds it: seed 0", None, None, [], None, 1)
    assert all(sweep.relevance(e, c) == 0 for c in gen)
    assert [c.kind for c in s.fallback_order(e)] == kinds
    assert {"catcher": "generate:*", "reason": "fallbackLayers leaves the layer out"} \
        not in s.fallback_info["leftOut"]
    only = _baseline(tmp_path / "only", fallbackLayers=["generate"], generateMasterSeeds=[0])
    assert [c.label for c in only.full_set] == ["generate:0"]
    assert {x["catcher"] for x in only.fallback_info["leftOut"]} >= {"unit:*", "scenario:*", "asan:*",
                                                                     "pytest:*"}
    # none named: no generate layer (a foreign harness has no generator) ...
    none = _baseline(tmp_path / "none").fallback_info
    assert "generate" not in none["layers"]
    assert {"catcher": "generate:*", "reason": "generateMasterSeeds names no master seed"} in none["leftOut"]
    # ... and an entry left to an empty fallback set is refused, not "survived"
    with pytest.raises(sweep.Bad, match="fallback set is empty"):
        _baseline(tmp_path / "empty", [e], fallbackLayers=["generate"])
