"""Tests of `make stress` (ci/stress.py).

Two parts:
- the driver's logic against a fake tpheal-harness (a small Python script
  written into a temporary build directory), so every rule -- the seed banner,
  deterministic batches, disjoint shards, merge, failure files with replay
  lines, the native-failure reproduction, crash attribution, exit codes -- is
  checked in seconds and independently of the C code;
- short real passes on the builds `make test` makes: the default build, the
  ASan+UBSan build and the TSan build (both modes: controlled with the race detector), 20 s
  each; any sanitizer report or failure fails them."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, build_dir, run_bounded

sys.path.insert(0, str(REPO / "ci"))
import stress_plan as P  # noqa: E402
import stress_results as R  # noqa: E402

STRESS = str(REPO / "ci" / "stress.py")

FAKE = r'''#!/usr/bin/python3
# Fake tpheal-harness: the stress subcommands' protocol, with failures chosen
# by environment variables.  Logs every call to $FAKE_LOG (its own file name
# first).  Named tpheal-harness-realpool it plays the real-pool build: only
# --mode native, "pool": "win32", and FAKE_* patterns match it as mode "real".
import json, os, shlex, sys, time
EXE = os.path.basename(sys.argv[0])
REAL = "realpool" in EXE
MASK = (1 << 64) - 1
def sm(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)
def opt(name, default=None):
    a = sys.argv
    return a[a.index(name) + 1] if name in a else default
def env_match(var, scen, mode):
    v = os.environ.get(var, "")
    return bool(v) and all(p in (scen + ":" + mode) for p in v.split(","))
cmd = sys.argv[1]
scen = next((a for a in sys.argv[2:] if a.endswith(".scn")), sys.argv[-1])
def commands(seed):
    """The failure's commands as the harness's run path prints them: a
    controlled run's replay (by seed, by schedule), a free-running one's
    model hint on the model harness beside this one."""
    me, q = sys.argv[0], shlex.quote
    if REAL or opt("--mode") == "native":
        model = me.replace("tpheal-harness-realpool", "tpheal-harness")
        return {"model_hint": "%s run --mode controlled --strategy both --seeds 100 --first-seed %d %s"
                              % (q(model), seed, q(scen))}
    recipe = "--strategy " + opt("--strategy", "random")
    if opt("--strategy") == "pct":
        recipe += " --depth %s --pct-steps %s" % (opt("--depth"), opt("--pct-steps", "40"))
    return {"replay": "%s replay --seed %d %s %s" % (q(me), seed, recipe, q(scen)),
            "replay_schedule": "%s replay --schedule r1.2.3 %s" % (q(me), q(scen))}
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps([EXE] + sys.argv[1:]) + "\n")
if REAL and (cmd == "stress-faultloop" or opt("--mode", "native") != "native"):
    sys.stderr.write(cmd + ": the real pool runs free only (--mode native)\n")
    sys.exit(2)
if env_match("FAKE_BADINPUT", scen, "any"):
    sys.stderr.write(scen + ":3:7: unexpected 'x'\n")
    sys.exit(2)
if cmd == "stress-batch":
    mode = "real" if REAL else opt("--mode"); base = int(opt("--base"), 16)
    if env_match("FAKE_SKIP", scen, mode):
        print(json.dumps({"v": 1, "type": "batch", "scenario": scen, "mode": opt("--mode"), "runs": 0, "failures": [],
                          "hashes": [], "skipped": "fake reason"}))
        sys.exit(0)
    n = min(int(opt("--count")), max(1, int(opt("--max-ms")) // 10) * 7)
    seeds = [sm((base + j) & MASK) for j in range(n)]
    if env_match("FAKE_SILENT", scen, mode):  # ends "well" having printed nothing
        sys.exit(int(os.environ.get("FAKE_SILENT_RC", "0")))
    if env_match("FAKE_CRASH", scen, mode):
        sys.stderr.write("tph-stress: crashed in run %s seed=0x%016x j=3\n" % (scen, seeds[3]))
        label, line = next(iter(commands(seeds[3]).items()))
        sys.stderr.write("tph-stress: %s: %s\n" % ({"replay": "replay by seed", "model_hint":
                         "look for a deterministic reproduction on the model"}[label], line))
        os.abort()
    time.sleep(0.01)
    fails = []
    if env_match("FAKE_FAIL", scen, mode):
        j = min(5, n - 1)  # free-running batches are one run each
        fails.append(dict({"j": j, "seed": "0x%016x" % seeds[j], "status": "deadlock",
                           "reason": "fake deadlock", "kind": "deadlock", "schedule": "r1.2.3"}, **commands(seeds[j])))
    sampled = {"sampled": "fake why"} if env_match("FAKE_SAMPLED", scen, mode) else {}
    print(json.dumps(dict(sampled, **{"v": int(os.environ.get("FAKE_V", "1")), "type": "batch", "scenario": scen,
                      "mode": opt("--mode"), "pool": "win32" if REAL else "sim",
                      "runs": n, "steps": 10 * n,
                      # k: as the harness's probe would measure it, when not given
                      "pct_steps": int(opt("--pct-steps", "40")) if opt("--strategy") == "pct" else 0,
                      "max_choice_points": 40, "failures": fails,
                      # FAKE_FAILTOTAL: more failing runs than the batch details
                      "failures_total": int(os.environ.get("FAKE_FAILTOTAL", len(fails))) if fails else 0,
                      "hashes": ["%016x" % (s % 97) for s in seeds] if mode == "controlled" else [],
                      # fewer behaviour classes than interleavings, as runs that
                      # differ only in independent steps' order share one
                      "classes": ["%016x" % (s % 13 + 1) for s in seeds] if mode == "controlled" else [],
                      # FAKE_REACH: PCT at depth 2 reaches the scenario's first `require`
                      "reached": [0] if env_match("FAKE_REACH", scen, mode) and opt("--depth") == "2" else []})))
elif cmd == "stress-faultloop":
    for k in range(3):
        # FAKE_FAULTNTH: which sites fail (default the 2nd)
        failing = os.environ.get("FAKE_FAULTNTH", "2").split(",")
        ok = not env_match("FAKE_FAULTFAIL", scen, "faultloop") or str(k + 1) not in failing
        print(json.dumps({"v": 1, "type": "fault-site", "kind": "alloc", "nth": k + 1, "fired": True, "ok": ok,
                          "status": "ok" if ok else "crash", "reason": "" if ok else "leak"}))
    print(json.dumps({"v": 1, "type": "faultloop-summary", "summary": True, "sites": 3, "per_kind": {"alloc": 3},
                      "complete": True}))
elif cmd == "generate":
    if os.environ.get("FAKE_GENFAIL"):
        print(json.dumps({"v": 1, "type": "generate-failure", "seed": int(opt("--seed")), "index": 7,
                          "program": opt("--out") + "/gen-x-7.scn", "signature": "status 0: oracle: fake",
                          "status": "ok", "kind": "oracle-healers", "kinds": ["oracle-healers"],
                          "strategy": "pct", "run_seed": 3, "runs": 50, "replay": "%s replay --seed 3 gen-x-7.scn" % sys.argv[0],
                          "shrunk_lines": 9, "shrink_runs": 40, "preemptions": 1,
                          "shrunk_replay": "%s replay --schedule r1 gen-x-7-shrunk.scn" % sys.argv[0],
                          "shrunk": "# purpose: generated program x/7, shrunk\n"}))
    print(json.dumps({"v": 1, "type": "generate-summary", "seed": int(opt("--seed")), "programs": 12, "runs": 96,
                      "failing_programs": 1 if os.environ.get("FAKE_GENFAIL") else 0, "seconds": 0.5}))
    sys.exit(1 if os.environ.get("FAKE_GENFAIL") else 0)
elif cmd == "run":
    mode = "real" if REAL else opt("--mode")
    sys.exit(1 if env_match("FAKE_REPRO", scen, mode) else 0)
elif cmd == "replay":  # the model only: a controlled run
    if opt("--timeline"):
        open(opt("--timeline"), "w").write("<html>fake timeline of %s</html>" % scen)
    sys.exit(1 if env_match("FAKE_REPRO", scen, "controlled") else 0)
'''


def fake_build(tmp_path, names=("tpheal-harness",), mode=0o755):
    b = tmp_path / "build"
    for name in names:
        h = b / "harness" / "scenario" / name
        h.parent.mkdir(parents=True, exist_ok=True)
        h.write_text(FAKE)
        h.chmod(mode)
    return b


@pytest.fixture
def fake(tmp_path):
    b = fake_build(tmp_path)
    scen = tmp_path / "scenarios"
    scen.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (scen / f"{name}.scn").write_text("# fake\n")
    log = tmp_path / "calls.log"
    return {"build": b, "scen": scen, "log": log, "tmp": tmp_path}


def run_fake(fake, *extra, env=None, out="out", seconds="1.5", batches=None):
    """batches=N makes the run independent of the clock (N batches per mode);
    by default 4 (each of the 3 scenarios at least once per mode)."""
    e = dict(os.environ, FAKE_LOG=str(fake["log"]))
    e.update(env or {})
    cmd = [sys.executable, STRESS, "--build", str(fake["build"]), "--seconds", seconds,
           "--scenarios", str(fake["scen"]), "--out", str(fake["tmp"] / out), *extra]
    if batches != 0:
        cmd += ["--batches", str(batches or 4)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=fake["tmp"], timeout=120)
    return p


def calls(fake, sub="stress-batch", exe=None):
    """The argument lists of the fake's calls of subcommand sub (of the
    executable named exe, if given)."""
    if not fake["log"].exists():
        return []
    return [c[1:] for c in map(json.loads, fake["log"].read_text().splitlines())
            if c[1] == sub and (exe is None or c[0] == exe)]


def results(fake, out="out"):
    return json.loads((fake["tmp"] / out / "results.json").read_text())


# ---- the plan ---------------------------------------------------------------
def test_splitmix_reference_values():
    # SplitMix64 from state 0: first outputs of the reference generator.
    assert P.splitmix64(0) == 0xE220A8397B1DCDAF
    assert P.splitmix64(0x9E3779B97F4A7C15) == 0x6E789E6AA1B965F4


def test_shards_are_disjoint_and_each_covers_every_scenario_and_strategy():
    scen = ["a", "b", "c", "d"]
    seen = {}
    for i in (1, 2, 3, 4):
        src = P.BatchSource(7, "controlled", scen, P.Shard(i, 4))
        bs = [src.take() for _ in range(64)]
        assert {(b.scenario, b.strategy, b.depth) for b in bs} == \
            {(s, st, d) for s in scen for st, d in P.ROTATION}
        for b in bs:
            assert b.k not in seen, f"batch {b.k} in shards {seen[b.k]} and {i}"
            seen[b.k] = i
    # Together the shards cover a prefix of the sequence with no hole.
    assert sorted(seen)[:200] == list(range(200))


def test_batches_depend_only_on_master_mode_and_number():
    a = P.batch(5, "controlled", 9, ["x", "y"])
    assert a == P.batch(5, "controlled", 9, ["x", "y"])
    assert a.base != P.batch(6, "controlled", 9, ["x", "y"]).base
    assert a.base != P.batch(5, "native", 9, ["x", "y"]).base


@pytest.mark.parametrize("bad", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_bad_shard_is_rejected(bad):
    with pytest.raises(ValueError):
        P.parse_shard(bad)


# ---- the driver against the fake harness -------------------------------------
def test_clean_run_banner_table_results_and_exit_0(fake):
    p = run_fake(fake, "--seed", "1234", batches=12)
    assert p.returncode == 0, p.stdout + p.stderr
    first = p.stdout.splitlines()[0]
    # run with --scenarios/--out: the repeat line is ci/stress.py with them
    assert "master seed 1234" in first and "--seed 1234" in first
    assert "controlled 80%, native 20%" in p.stdout
    r = results(fake)
    assert r["master_seed"] == 1234 and r["failures"] == []
    for name in ("alpha", "beta", "gamma"):
        key = next(k for k in r["scenarios"] if name in k)
        c = r["scenarios"][key]["controlled"]
        assert c["runs"] > 0 and 0 < c["distinct_interleavings"] <= 97
        assert 0 < c["behaviour_classes"] <= 13 and len(c["class_hashes"]) == c["behaviour_classes"]
        assert r["scenarios"][key]["native"]["runs"] > 0
    assert r["faultloop_sites"] == 9
    assert re.search(r"TOTAL \(wall\)\s+[\d,]+", p.stdout)
    # Both modes were given every strategy of the rotation.
    strategies = {(c[c.index("--strategy") + 1], c[c.index("--depth") + 1])
                  for c in calls(fake) if "controlled" in c}
    assert strategies == {("random", "0"), ("pct", "1"), ("pct", "2"), ("pct", "3")}


def test_default_seed_comes_from_the_clock_and_is_printed(fake):
    p1 = run_fake(fake, "--no-faultloop", batches=1)
    p2 = run_fake(fake, "--no-faultloop", batches=1)
    s1 = re.search(r"master seed (\d+)", p1.stdout).group(1)
    s2 = re.search(r"master seed (\d+)", p2.stdout).group(1)
    assert s1 != s2


def test_same_master_seed_gives_the_same_batches(fake):
    def batches(mode):
        return [(c[-1], c[c.index("--base") + 1]) for c in calls(fake) if mode in c]
    run_fake(fake, "--seed", "99", "--no-faultloop", batches=12)
    first = {m: sorted(batches(m)) for m in ("controlled", "native")}
    fake["log"].unlink()
    run_fake(fake, "--seed", "99", "--no-faultloop", batches=12)
    for m in ("controlled", "native"):
        assert len(first[m]) == 12 and sorted(batches(m)) == first[m]


def test_controlled_failure_writes_a_file_with_its_replay_and_exits_1(fake):
    p = run_fake(fake, "--seed", "5", env={"FAKE_FAIL": "beta,controlled"})
    assert p.returncode == 1
    r = results(fake)
    f = [x for x in r["failures"] if x["mode"] == "controlled"]
    assert f and all("beta" in x["scenario"] for x in f)
    # The reported seed is run 5 of the batch whose base the driver sent.
    batch = next(c for c in calls(fake) if "beta" in c[-1] and "controlled" in c)
    base = int(batch[batch.index("--base") + 1], 16)
    assert any(x["seed"] == P.run_seed(base, 5) for x in f)
    text = (fake["tmp"] / f[0]["file"]).read_text() if not os.path.isabs(f[0]["file"]) \
        else pathlib.Path(f[0]["file"]).read_text()
    # the harness's replay line, as it printed it
    assert f"\nreplay:\n  {f[0]['replay']}\n" in text and "fake deadlock" in text
    # what failed, as data: the harness's failure kind, beside its prose
    assert f[0]["kind"] == "deadlock" and "\nkind:      deadlock\n" in text, text
    assert f[0]["replay"].startswith("build/harness/scenario/tpheal-harness replay --seed "
                                     f"{f[0]['seed']} --strategy "), f[0]["replay"]
    assert f[0]["replay_schedule"].endswith(" replay --schedule r1.2.3 " + f[0]["scenario"]), f[0]
    assert f"--base 0x{base:016x} --count 1 --first 5" in text
    assert "replay:" in p.stderr and "FAILED" in p.stderr
    # the run as a picture beside its text: its replay with --timeline
    html = f[0]["file"][:-4] + ".html"
    assert f"the run as a picture (replay --timeline): {html}" in text, text
    page = (fake["tmp"] / html) if not os.path.isabs(html) else pathlib.Path(html)
    assert page.read_text().startswith("<html>fake timeline of "), page
    drawn = [c for c in calls(fake, "replay") if "--timeline" in c]
    assert drawn and drawn[0][:4] == ["replay", "--seed", str(f[0]["seed"]), "--strategy"], drawn


def test_every_failure_is_counted_not_only_the_detailed_ones(fake):
    """Issue 13 item 1: each batch details its first few failures but counts
    all; the summary, the table and results.json give the true count (a real
    run said 320 where 54,865 runs had failed)."""
    p = run_fake(fake, "--seed", "5", "--no-faultloop", "--modes", "controlled",
                 env={"FAKE_FAIL": "beta,controlled", "FAKE_FAILTOTAL": "1000"}, batches=6)
    assert p.returncode == 1
    r = results(fake)
    batches = [c for c in calls(fake) if "beta" in c[-1] and "controlled" in c]
    want = 1000 * len(batches)
    assert len(r["failures"]) == len(batches) and r["failures_recorded"] == len(batches)
    assert r["failures_total"] == want and r["totals"]["controlled"]["failures"] == want
    assert f"; {want:,} failures ({len(batches)} recorded in detail in results.json);" in p.stdout
    total = next(ln for ln in p.stdout.splitlines() if ln.startswith("TOTAL")).split()
    assert total[-1] == str(want)
    beta = next(ln for ln in p.stdout.splitlines() if "beta" in ln and ln.split()[-1].isdigit())
    assert beta.split()[-1] == str(want)
    assert re.search(rf"\b{want} failures$", p.stderr, re.M), p.stderr[-2000:]


def test_repeat_line_keeps_scenarios_and_out_and_runs_when_pasted(fake):
    """Issue 13 item 7: the banner's repeat command names --scenarios and
    --out, and pasted as printed it repeats the same batches."""
    p = run_fake(fake, "--seed", "77", "--no-faultloop", out="o1", batches=3)
    again = re.search(r"\(repeat: (.*)\)$", p.stdout.splitlines()[0]).group(1)
    assert "--scenarios" in again and "--out" in again and "--batches 3" in again, again
    first = sorted(map(tuple, calls(fake)))
    fake["log"].unlink()
    q = subprocess.run(again, shell=True, cwd=fake["tmp"], capture_output=True, text=True,
                       env=dict(os.environ, FAKE_LOG=str(fake["log"])), timeout=120)
    assert q.returncode == 0, q.stdout + q.stderr
    assert sorted(map(tuple, calls(fake))) == first
    assert (fake["tmp"] / "o1" / "results.json").exists()
    assert q.stdout.splitlines()[0] == p.stdout.splitlines()[0]


def test_repeat_line_is_make_stress_only_when_make_says_it_all(monkeypatch):
    sys.path.insert(0, str(REPO / "ci"))
    import stress as S
    monkeypatch.chdir(REPO)
    a = S.parse_args(["--seed", "3", "--seconds", "30", "--shard", "1/2"])
    assert S.repeat_command(a, 3, P.parse_shard("1/2"), []) == \
        "make stress SEED=3 STRESS_SECONDS=30 SHARD=1/2"
    a = S.parse_args(["--seed", "3", "--out", "o"])
    assert S.repeat_command(a, 3, P.parse_shard(None), []).endswith("--out o")


@pytest.mark.parametrize("rc", [0, 1])
def test_silent_batch_is_bad_output_that_says_what_came_back(fake, rc):
    """A batch that exits 0 or 1 with nothing on stdout or stderr (seen once
    under Wine in CI) is a failure, and its report says the exit status and
    what the process printed, not a bare "bad-output"."""
    p = run_fake(fake, "--seed", "5", "--no-faultloop", "--modes", "controlled",
                 env={"FAKE_SILENT": "beta,controlled", "FAKE_SILENT_RC": str(rc)})
    assert p.returncode == 1, p.stdout + p.stderr
    f = [x for x in results(fake)["failures"] if "beta" in x["scenario"]]
    assert f and all(x["status"] == "bad-output" for x in f), f
    want = f"exit {rc}, 0 bytes on stdout (0 JSON lines), nothing on stderr"
    assert f[0]["reason"] == want and want in p.stderr, f[0]


def test_batch_of_another_contract_version_is_refused_not_half_read(fake):
    """A batch line of JSON contract v2 (a build from another tree) is bad
    output that names the versions, never a pass read from changed fields."""
    p = run_fake(fake, "--seed", "5", "--no-faultloop", "--modes", "controlled", env={"FAKE_V": "2"})
    assert p.returncode == 1, p.stdout + p.stderr
    f = results(fake)["failures"]
    assert f and all(x["status"] == "bad-output" for x in f), f
    assert "version 2, this ci/ reads version 1" in f[0]["reason"], f[0]


def test_native_failure_is_rerun_controlled_and_reports_reproduction(fake):
    p = run_fake(fake, "--seed", "5", "--no-faultloop",
                 env={"FAKE_FAIL": "alpha,native", "FAKE_REPRO": "alpha,controlled"})
    assert p.returncode == 1
    f = [x for x in results(fake)["failures"] if x["mode"] == "native"]
    assert f and f[0]["reproduction"]["reproduced"] is True
    runs = calls(fake, "run")
    assert any(str(f[0]["seed"]) in c and "controlled" in c for c in runs)
    text = next((fake["tmp"] / "out" / "failures").glob("*alpha-native*")).read_text()
    assert "REPRODUCED" in text


def test_failure_replay_lines_run_as_pasted(fake):
    """Issue 13 item 2: the replay line of a failure file runs, as printed,
    from where stress.py was started (the fake fails it when FAKE_REPRO)."""
    p = run_fake(fake, "--seed", "5", "--no-faultloop",
                 env={"FAKE_FAIL": "beta", "FAKE_REPRO": "beta"}, batches=6)
    assert p.returncode == 1
    fails = results(fake)["failures"]
    assert {f["mode"] for f in fails} == {"controlled", "native"}
    env = dict(os.environ, FAKE_LOG=str(fake["log"]), FAKE_REPRO="beta")
    for f in fails:
        q = subprocess.run(f["replay"], shell=True, cwd=fake["tmp"], env=env, capture_output=True, text=True)
        assert q.returncode == 1, (f["replay"], q.stderr)
        assert f"  {f['replay']}\n" in (fake["tmp"] / f["file"]).read_text()


def test_native_failure_not_reproduced_is_said_so(fake):
    p = run_fake(fake, "--seed", "5", "--no-faultloop", env={"FAKE_FAIL": "alpha,native"})
    assert p.returncode == 1
    f = [x for x in results(fake)["failures"] if x["mode"] == "native"]
    assert f[0]["reproduction"]["reproduced"] is False
    assert len(f[0]["reproduction"]["tried"]) == len(P.ROTATION)


def test_crash_is_attributed_to_the_run_the_harness_names(fake):
    p = run_fake(fake, "--seed", "5", "--no-faultloop", env={"FAKE_CRASH": "alpha,controlled"})
    assert p.returncode == 1
    f = [x for x in results(fake)["failures"] if x["status"] == "crash"]
    assert f and f[0]["seed"] is not None and f"--seed {f[0]['seed']}" in f[0]["replay"]
    # the line the harness printed after its crash line, as it printed it
    assert f[0]["replay"].startswith("build/harness/scenario/tpheal-harness replay --seed "), f[0]


def test_faultloop_failure_fails_the_run(fake):
    p = run_fake(fake, "--seed", "5", env={"FAKE_FAULTFAIL": "alpha"})
    assert p.returncode == 1
    f = [x for x in results(fake)["failures"] if x["mode"] == "faultloop"]
    assert len(f) == 1 and f[0]["fault"] == "alloc:2" and "--only alloc:2" in f[0]["replay"]


def test_generated_phase_has_its_share_and_its_failures_fail_the_run(fake):
    """The generated phase (ci/stress_generate.py) runs on the clock, with a
    seed derived from the master's, and a failing program is a failure of
    the run with its replay commands in a failure file; --batches (the
    driver's own replays of batches) leaves it out."""
    p = run_fake(fake, "--seed", "5", "--no-faultloop", batches=0, seconds="2", env={"FAKE_GENFAIL": "1"})
    assert p.returncode == 1, p.stdout + p.stderr
    gen = calls(fake, "generate")
    assert len(gen) == 1 and gen[0][gen[0].index("--seed") + 1] == str(P.splitmix64(5 ^ P.MODE_TAG["generate"]))
    r = results(fake)
    assert r["generate"]["programs"] == 12 and r["split_seconds"]["generate"] > 0
    f = [x for x in r["failures"] if x["mode"] == "generate"]
    assert len(f) == 1 and "replay --seed 3" in f[0]["replay"] and r["failures_total"] >= 1
    text = (fake["tmp"] / f[0]["file"]).read_text() if not pathlib.Path(f[0]["file"]).is_absolute() \
        else pathlib.Path(f[0]["file"]).read_text()
    assert "replay --schedule r1 gen-x-7-shrunk.scn" in text
    assert "stress: generate: 12 programs" in p.stdout
    run_fake(fake, "--seed", "5", "--no-faultloop", out="o2")
    assert len(calls(fake, "generate")) == 1
def test_every_faultloop_failure_keeps_its_own_file(fake):
    """Two failing sites of one scenario, one seed: each (scenario, site, n)
    has its own failure file naming it (one file per seed kept only the
    last of them)."""
    p = run_fake(fake, "--seed", "5", env={"FAKE_FAULTFAIL": "alpha", "FAKE_FAULTNTH": "2,3"})
    assert p.returncode == 1
    f = [x for x in results(fake)["failures"] if x["mode"] == "faultloop"]
    assert sorted(x["fault"] for x in f) == ["alloc:2", "alloc:3"]
    files = [fake["tmp"] / x["file"] for x in f]
    assert len(set(files)) == 2, files
    for x, path in zip(f, files):
        text = path.read_text()
        assert f"fault:     {x['fault']}" in text and f"--only {x['fault']}" in text, text
    assert len(list((fake["tmp"] / "out" / "failures").glob("*faultloop*"))) == 2


def test_shards_run_disjoint_seeds_and_merge_sums_them(fake):
    for i in (1, 2):
        p = run_fake(fake, "--seed", "77", "--shard", f"{i}/2", "--no-faultloop",
                     out=f"s{i}", seconds="0.6")
        assert p.returncode == 0, p.stderr
    bases = [c[c.index("--base") + 1] for c in calls(fake)]
    assert len(bases) == len(set(bases))
    m = fake["tmp"] / "merged.json"
    p = subprocess.run([sys.executable, STRESS, "merge", str(m), str(fake["tmp"] / "s1/results.json"),
                        str(fake["tmp"] / "s2/results.json")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    merged, r1, r2 = json.loads(m.read_text()), results(fake, "s1"), results(fake, "s2")
    assert merged["shards"] == ["1/2", "2/2"]
    assert merged["totals"]["controlled"]["runs"] == \
        r1["totals"]["controlled"]["runs"] + r2["totals"]["controlled"]["runs"]
    assert merged["totals"]["controlled"]["distinct_interleavings"] <= 97


def test_merge_of_a_failing_shard_exits_1_and_bad_file_exits_2(fake, tmp_path):
    run_fake(fake, "--seed", "1", "--no-faultloop", env={"FAKE_FAIL": "alpha,controlled"},
             seconds="0.3")
    m = tmp_path / "m.json"
    p = subprocess.run([sys.executable, STRESS, "merge", str(m), str(fake["tmp"] / "out/results.json")],
                       capture_output=True, text=True)
    assert p.returncode == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    p = subprocess.run([sys.executable, STRESS, "merge", str(m), str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "bad.json:1:1:" in p.stderr


def test_bad_usage_exits_2(fake):
    assert run_fake(fake, "--shard", "0/3").returncode == 2
    assert run_fake(fake, "--seed", "nope").returncode == 2
    p = subprocess.run([sys.executable, STRESS, "--build", str(fake["tmp"] / "nowhere")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "no tpheal-harness" in p.stderr


def test_a_scenario_the_harness_declines_is_reported_and_not_asked_again(fake):
    # One free-running worker: with several, batches already started before
    # the first answer came back are asked too (harmless, but not countable).
    p = run_fake(fake, "--seed", "8", "--no-faultloop", "--native-jobs", "1",
                 env={"FAKE_SKIP": "beta,native"},
                 batches=9)
    assert p.returncode == 0, p.stderr
    native_beta = [c for c in calls(fake) if "native" in c and "beta" in c[-1]]
    assert len(native_beta) == 1
    r = results(fake)
    key = next(k for k in r["skipped"] if "beta" in k)
    assert r["skipped"][key] == {"native": "fake reason"}
    assert "no native runs: fake reason" in p.stdout
    # the summary opens with each mode's ran/declined line, the reason included
    summary = p.stdout[p.stdout.index("stress: controlled: "):].splitlines()
    assert summary[0].startswith("stress: controlled: ") and "0 declined" in summary[0], summary
    native = next(l for l in summary if l.startswith("stress: native: "))
    assert "1 declined: 1 fake reason" in native, summary
    assert summary.index(native) < next(i for i, l in enumerate(summary) if "controlled schedules" in l)


def test_a_scenario_that_does_not_parse_is_one_failure_not_one_per_batch(fake):
    p = run_fake(fake, "--seed", "8", "--jobs", "1", "--native-jobs", "1",
                 env={"FAKE_BADINPUT": "gamma"}, batches=9)
    assert p.returncode == 1
    f = results(fake)["failures"]
    assert len(f) == 1 and f[0]["status"] == "bad-input" and ":3:7: unexpected" in f[0]["reason"]
    assert f[0]["mode"] == "faultloop"


def test_progress_is_plain_lines_when_not_a_tty(fake):
    # The time-budget path (no --batches): at least the first batch starts.
    p = run_fake(fake, "--seed", "3", "--no-faultloop", batches=0)
    assert "\r" not in p.stderr
    assert re.search(r"s elapsed, .* left\] .*runs, .*(schedules|runs)/s, 0 failures", p.stderr)


# ---- the real-pool mode (tpheal-harness-realpool, Windows builds) ----------------
import stress_harness as H  # noqa: E402

REALPOOL = "tpheal-harness-realpool"


@pytest.fixture
def fake_real(tmp_path):
    """A build with the model harness and a fake real-pool harness beside it."""
    b = fake_build(tmp_path, ("tpheal-harness", REALPOOL))
    scen = tmp_path / "scenarios"
    scen.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (scen / f"{name}.scn").write_text("# fake\n")
    return {"build": b, "scen": scen, "log": tmp_path / "calls.log", "tmp": tmp_path}


def test_real_mode_seeds_are_disjoint_from_the_other_modes():
    scen = ["a", "b", "c"]
    for master in (0, 1, 20261202):
        bases = {m: {P.batch(master, m, k, scen).base for k in range(2000)}
                 for m in ("controlled", "native", "real")}
        assert len(bases["real"]) == 2000
        assert not bases["real"] & bases["native"] and not bases["real"] & bases["controlled"]
    # Free-running: no strategy rotation, every batch one scenario in turn.
    src = P.BatchSource(3, "real", scen, P.Shard(1, 1))
    bs = [src.take() for _ in range(6)]
    assert [b.scenario for b in bs] == scen * 2 and {(b.strategy, b.depth) for b in bs} == {("", 0)}


def test_shares_with_and_without_the_real_pool():
    def pct(d):
        return {m: round(v * 100) for m, v in d.items()}
    assert pct(P.plan_shares(False)) == {"controlled": 80, "native": 20}
    assert pct(P.plan_shares(True)) == {"controlled": 80, "real": 15, "native": 5}
    assert list(P.plan_shares(True)) == ["controlled", "real", "native"]  # phase order
    # the race build's controlled phase runs the detector (docs/races.md)
    assert pct(P.plan_shares(False, "thread")) == {"controlled": 80, "native": 20}
    assert pct(P.plan_shares(True, "thread")) == {"controlled": 80, "real": 15, "native": 5}
    assert pct(P.plan_shares(True, "", {"real"})) == {"real": 100}
    assert pct(P.plan_shares(False, "", {"real"})) == {}


def test_real_mode_commands_name_the_realpool_exe_with_mode_native():
    b = P.batch(9, "real", 4, ["scenarios/x.scn"])
    cmd = H.batch_cmd("build/harness/scenario/" + REALPOOL, b, 1, 1000, 0, 5000)
    assert cmd[0].endswith(REALPOOL) and cmd[cmd.index("--mode") + 1] == "native"
    assert "real" not in cmd[1:] and "--strategy" not in cmd
    assert f"0x{b.base:016x}" in cmd and "--max-run-ms" in cmd
    run = H.run_cmd(REALPOOL + ".exe", "scenarios/x.scn", 42, "real", json_out=False)
    assert run == [REALPOOL + ".exe", "run", "scenarios/x.scn", "--seed", "42", "--mode", "native"]


def test_results_with_real_runs_merge_and_show_in_the_table():
    a, b = R.Results(master_seed=5, shards=["1/2"]), R.Results(master_seed=5, shards=["2/2"])
    a.mode("s.scn", "real").add_batch(3, 0, 0, 6.0, 0, [])
    a.mode("s.scn", "controlled").add_batch(100, 0, 10, 1.0, 4, [1, 2])
    b.mode("s.scn", "real").add_batch(2, 1, 0, 4.0, 0, [])
    b.skipped["t.scn"] = {"real": "line 2: faults are injected by the model of the pool"}
    b.mode("t.scn", "controlled").add_batch(10, 0, 1, 1.0, 1, [3])
    b.phase_seconds["real"] = 5.0
    # Through the file format, as `ci/stress.py merge` reads shards.
    a, b = R.Results.from_json(a.to_json()), R.Results.from_json(json.loads(json.dumps(b.to_json())))
    a.merge(b)
    j = a.to_json()
    assert j["format"] == R.FORMAT
    assert j["totals"]["real"]["runs"] == 5 and j["totals"]["real"]["failures"] == 1
    assert j["totals"]["controlled"]["runs"] == 110
    assert j["skipped"]["t.scn"] == {"real": "line 2: faults are injected by the model of the pool"}
    assert j["scenarios"]["s.scn"]["real"]["busy_seconds"] == 10.0
    lines = R.table(a).splitlines()
    head = lines[0].split()
    assert head[head.index("native") + 2] == "real" and head[head.index("real") + 1] == "runs/s"
    col = head.index("real")
    row = {ln.split()[0]: ln.split() for ln in lines[2:] if ln.endswith(tuple("0123456789"))}
    assert row["s.scn"][col] == "5" and row["s.scn"][col + 1] == "0.5"
    assert row["t.scn"][col] == "-"           # declined by the real pool
    total = next(ln for ln in lines if ln.startswith("TOTAL")).split()
    assert total[col + 1] == "5" and total[col + 2] == "1.0"  # "TOTAL (wall)" is two words
    # Without any real run or phase the table keeps its old columns.
    plain = R.Results()
    plain.mode("s.scn", "native").add_batch(1, 0, 0, 2.0, 0, [])
    assert "real" not in R.table(plain).splitlines()[0].split()


def test_real_pool_phase_runs_on_the_realpool_exe_free_running(fake_real):
    p = run_fake(fake_real, "--seed", "11", "--no-faultloop", batches=6)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "controlled 80%, real 15%, native 5%" in p.stdout
    assert f"real pool {pathlib.Path('build/harness/scenario') / REALPOOL}" in p.stdout
    real = calls(fake_real, exe=REALPOOL)
    model = calls(fake_real, exe="tpheal-harness")
    assert len(real) == 6 and all(c[c.index("--mode") + 1] == "native" for c in real)
    # Model native batches were not sent to the real pool nor vice versa.
    assert sum(1 for c in model if "native" in c) == 6
    assert not [c for c in model if "controlled" not in c and "native" not in c]
    real_bases = {c[c.index("--base") + 1] for c in real}
    native_bases = {c[c.index("--base") + 1] for c in model if "native" in c}
    assert not real_bases & native_bases
    r = results(fake_real)
    assert r["totals"]["real"]["runs"] == 6 and r["totals"]["native"]["runs"] == 6
    assert set(r["split_seconds"]) == {"controlled", "real", "native"}
    assert re.search(r"\b6 real-pool runs, 6 native runs\b", p.stdout)
    assert re.search(r"^scenario .* sched/s +native +runs/s +real +runs/s", p.stdout, re.M)


def test_without_the_realpool_exe_nothing_changes(fake):
    p = run_fake(fake, "--seed", "11", "--no-faultloop", batches=3)
    assert p.returncode == 0 and "controlled 80%, native 20%" in p.stdout
    assert "real" not in results(fake)["split_seconds"] and "real-pool" not in p.stdout
    p = run_fake(fake, "--seed", "11", "--modes", "real", batches=1)
    assert p.returncode == 2 and "built for Windows only" in p.stderr


def test_modes_option_restricts_the_phases(fake_real):
    p = run_fake(fake_real, "--seed", "4", "--modes", "real", batches=3)
    assert p.returncode == 0, p.stderr
    assert "real 100%" in p.stdout
    assert f"stress.py --build {fake_real['build']} --seed 4 --seconds 1.5 " in p.stdout
    assert re.search(r"\(repeat: /usr/bin/python3 \S*ci/stress.py .* --modes real --batches 3\)", p.stdout)
    assert calls(fake_real, "stress-faultloop") == []
    assert calls(fake_real, exe="tpheal-harness") == [] and len(calls(fake_real, exe=REALPOOL)) == 3
    assert run_fake(fake_real, "--modes", "real,bogus", batches=1).returncode == 2


def test_real_failure_is_reported_with_its_seed_and_reproduced_on_the_model(fake_real):
    p = run_fake(fake_real, "--seed", "5", "--modes", "real",
                 env={"FAKE_FAIL": "alpha,real", "FAKE_REPRO": "alpha,controlled"}, batches=3)
    assert p.returncode == 1
    f = [x for x in results(fake_real)["failures"] if x["mode"] == "real"]
    assert len(f) == 1 and "alpha" in f[0]["scenario"]
    batch = next(c for c in calls(fake_real, exe=REALPOOL) if "alpha" in c[-1])
    assert f[0]["seed"] == P.run_seed(int(batch[batch.index("--base") + 1], 16), 0)
    # Nothing replays a free-running run: like `run`, the harness gives the
    # model hint, on the model harness beside the real pool's...
    assert f[0]["replay"] == (f"build/harness/scenario/tpheal-harness run --mode controlled --strategy both "
                              f"--seeds 100 --first-seed {f[0]['seed']} {f[0]['scenario']}"), f[0]
    assert f[0]["replay_label"] == "look for a deterministic reproduction on the model"
    # ...and the reproduction ran the model (tpheal-harness) controlled.
    rep = f[0]["reproduction"]
    assert rep["reproduced"] is True and REALPOOL not in rep["command"]
    assert "--mode controlled" in rep["command"] and f"--seed {f[0]['seed']}" in rep["command"]
    runs = calls(fake_real, "run")
    assert runs and all(c[c.index("--mode") + 1] == "controlled" for c in runs)
    assert calls(fake_real, "run", exe=REALPOOL) == []
    text = next((fake_real["tmp"] / "out" / "failures").glob("*alpha-real*")).read_text()
    assert "mode:      real" in text and "REPRODUCED" in text
    assert f"\nlook for a deterministic reproduction on the model:\n  {f[0]['replay']}\n" in text


def test_real_hang_is_attributed_to_the_one_run_of_its_batch(fake_real, tmp_path):
    # A realpool that never answers for beta: killed after the slice + grace.
    rp = fake_real["build"] / "harness" / "scenario" / REALPOOL
    rp.write_text(rp.read_text().replace(
        'if cmd == "stress-batch":',
        'if cmd == "stress-batch" and "beta" in scen and REAL:\n    time.sleep(600)\n'
        'if cmd == "stress-batch":', 1))
    import stress  # noqa: E402  the grace period, shortened for the test
    assert stress.BATCH_GRACE_NATIVE > 1
    script = tmp_path / "short_grace.py"
    script.write_text("import sys; sys.path.insert(0, %r)\nimport stress\n"
                      "stress.BATCH_GRACE_NATIVE = 1\nstress.FREE_RUN_MAX_MS = 1000\n"
                      "sys.exit(stress.main())\n" % str(REPO / "ci"))
    e = dict(os.environ, FAKE_LOG=str(fake_real["log"]))
    p = subprocess.run([sys.executable, str(script), "--build", str(fake_real["build"]),
                        "--seconds", "1", "--scenarios", str(fake_real["scen"] / "beta.scn"),
                        "--out", str(tmp_path / "out"), "--modes", "real", "--batches", "1",
                        "--seed", "3"], capture_output=True, text=True, env=e, timeout=60)
    assert p.returncode == 1, p.stdout + p.stderr
    f = json.loads((tmp_path / "out" / "results.json").read_text())["failures"]
    base = int(calls(fake_real, exe=REALPOOL)[0][calls(fake_real, exe=REALPOOL)[0].index("--base") + 1], 16)
    assert f[0]["status"] == "timeout" and f[0]["seed"] == P.run_seed(base, 0)
    # killed without a word: its one-run batch is the run, and the replay
    assert f"{REALPOOL} stress-batch --mode native --base 0x{base:016x} --count 1 " in f[0]["replay"]


def test_free_running_batch_is_not_killed_before_its_one_run_may_end():
    """A batch is killed as hung only past its slice AND the run the harness
    admitted (up to --max-run-ms: the overdue-* runs take 20-30 s)."""
    import stress  # noqa: E402
    g = stress.BATCH_GRACE_NATIVE
    for mode in ("native", "real"):
        assert stress.batch_timeout(mode, 1000, 90_000) == 90 + g
        assert stress.batch_timeout(mode, 1000, 0) == stress.FREE_RUN_MAX_MS / 1000 + g
        assert stress.FREE_RUN_MAX_MS >= 40_000  # the longest run of the corpus, with margin
    assert stress.batch_timeout("controlled", 1000, 0) == 61


def test_declined_real_scenario_is_recorded_as_skipped(fake_real):
    p = run_fake(fake_real, "--seed", "8", "--modes", "real", "--native-jobs", "1",
                 env={"FAKE_SKIP": "beta,real"}, batches=9)
    assert p.returncode == 0, p.stderr
    assert len([c for c in calls(fake_real, exe=REALPOOL) if "beta" in c[-1]]) == 1
    r = results(fake_real)
    key = next(k for k in r["skipped"] if "beta" in k)
    assert r["skipped"][key] == {"real": "fake reason"}
    assert "no real runs: fake reason" in p.stdout


def test_exec_wrapper_prefixes_every_call_and_finds_exe_files(tmp_path):
    """Windows executables (.exe, not executable here) run through the
    wrapper; python3 plays wine, the fakes play the .exe files."""
    b = fake_build(tmp_path, ("tpheal-harness.exe", REALPOOL + ".exe"), mode=0o644)
    scen = tmp_path / "scenarios"
    scen.mkdir()
    (scen / "alpha.scn").write_text("# fake\n")
    f = {"build": b, "scen": scen, "log": tmp_path / "calls.log", "tmp": tmp_path}
    p = run_fake(f, "--seed", "2", "--no-faultloop", batches=2)
    assert p.returncode == 2 and "no tpheal-harness" in p.stderr   # no wrapper: not found
    p = run_fake(f, "--seed", "2", "--exec-wrapper", sys.executable, "--no-faultloop",
                 env={"FAKE_FAIL": "alpha,real"}, batches=2)
    assert p.returncode == 1, p.stdout + p.stderr
    assert len(calls(f, exe="tpheal-harness.exe")) == 4 and len(calls(f, exe=REALPOOL + ".exe")) == 2
    fail = results(f)["failures"][0]
    # the harness's model hint, with the wrapper in front
    assert fail["replay"].startswith(f"{sys.executable} build/harness/scenario/tpheal-harness.exe run --mode "
                                     "controlled "), fail["replay"]
    # The environment variable does the same.
    f["log"].unlink()
    p = run_fake(f, "--seed", "2", "--no-faultloop", "--modes", "real", batches=1,
                 env={"TPHEAL_EXEC_WRAPPER": sys.executable})
    assert p.returncode == 0 and len(calls(f, exe=REALPOOL + ".exe")) == 1


def test_wine_wrapper_gets_the_build_dirs_prefix():
    env = H.wrapper_env({"PATH": "/bin"}, ["wine"], pathlib.Path("/x/build-win"))
    assert env["WINEPREFIX"] == "/x/build-win/wineprefix" and env["WINEDEBUG"] == "-all"
    assert env["WINEARCH"] == "win64" and env["WINEDLLOVERRIDES"] == "mscoree,mshtml="
    assert H.wrapper_env({"WINEPREFIX": "/mine"}, ["/usr/bin/wine64"], pathlib.Path("/b"))[
        "WINEPREFIX"] == "/mine"
    assert "WINEPREFIX" not in H.wrapper_env({}, ["qemu-x86_64"], pathlib.Path("/b"))


# ---- real passes on the builds of `make test` ----------------------------------
REAL_SECONDS = os.environ.get("STRESS_TEST_SECONDS", "20")
# Batches per timed phase, whatever the clock says.  On the clock alone a
# loaded machine starved the last phase: under `make soak` at load average
# 9, the ASan pass's untimed fault loop and controlled phase used up the
# 20 s, the free-running phase had less left than one run needs and
# declined it, and "native runs > 0" failed.  What these passes check (each
# phase runs on the real build, and a sanitizer sees nothing) needs runs,
# not a share of a budget; the budget's split is the fake-harness tests'.
REAL_BATCHES = "3"


def real_pass(tmp_path, sanitize=None):
    b = build_dir()
    sub = {"address": "asan", "thread": "tsan", None: ""}[sanitize]
    if not ((b / sub) if sub else b).joinpath("CMakeCache.txt").exists():
        pytest.fail(f"build {(b / sub) if sub else b} missing: run `make test`")
    cmd = [sys.executable, STRESS, "--build", str(b), "--seconds", REAL_SECONDS,
           "--batches", REAL_BATCHES, "--seed", "20261202", "--out", str(tmp_path / "stress")]
    if sanitize:
        cmd += ["--sanitize", sanitize]
    rc, out = run_bounded(cmd, timeout=float(REAL_SECONDS) + 200, cwd=REPO)
    print(out[-3000:])
    assert rc in (0, 1), out[-8000:]
    r = json.loads((tmp_path / "stress" / "results.json").read_text())
    assert r["errors"] == []
    if sanitize:
        # The sanitizer passes judge what only they can see: a sanitizer
        # report, a crash, a hang.  Verdicts of the scenarios' oracles are the
        # default pass's business (one broken oracle, one failing test).
        bad = [f for f in r["failures"] if f["status"] in BROKEN or f["status"].startswith("exit ")]
    else:
        bad = r["failures"]
    assert not bad, "\n".join(f"{f['scenario']} ({f['mode']}): {f['status']} {f['reason']}\n"
                               f"  replay: {f['replay']}" for f in bad[:20])
    return r


BROKEN = {"sanitizer", "crash", "timeout", "bad-output", "bad-input"}


def cpu_seconds(pid: int) -> float:
    """user + system CPU time of a live process (Linux: /proc/PID/stat)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_real_crash_line_names_the_run_with_the_harness_replay(tmp_path):
    """A batch stopped inside a run (SIGABRT: what the driver sends an
    overrunning batch) names the run and the command `run` prints for it:
    the failure file carries that line, as printed, and pasted it runs the
    same seed (here a passing one)."""
    h = build_dir() / "harness" / "scenario" / "tpheal-harness"
    if not h.is_file():
        pytest.fail(f"{h} missing: build first (make build)")
    scn = "scenarios/concurrent-cancels-out-of-order.scn"
    proc = subprocess.Popen([str(h), "stress-batch", "--mode", "controlled", "--strategy", "pct", "--depth", "2",
                             "--pct-steps", "50", "--base", "0x7", "--max-ms", "60000", scn],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Abort once the batch has spent 0.3 s of CPU time, not after a real-time
    # pause: parsing and setup take milliseconds of CPU, so by then it is inside
    # its runs whatever the load (a 0.5 s sleep was a bound on the harness's
    # start-up that a loaded runner could miss).  60 s of patience, then fail.
    deadline = time.monotonic() + 60
    while cpu_seconds(proc.pid) < 0.3:
        assert proc.poll() is None and time.monotonic() < deadline, "the batch ended or never ran"
        time.sleep(0.02)
    proc.send_signal(signal.SIGABRT)
    _, err = proc.communicate(timeout=60)
    m = H.CRASH_RE.search(err)
    c = H.CRASH_CMD_RE.search(err)
    assert m and c, err[-2000:]
    assert c.group(1) == H.REPLAY_BY_SEED
    assert c.group(2) == (f"{h} replay --seed {int(m.group(2), 16)} --strategy pct --depth 2 --pct-steps 50 "
                          f"{scn}"), c.group(2)
    q = subprocess.run(c.group(2), shell=True, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert q.returncode == 0 and q.stdout.startswith(f"PASS {scn}"), q.stdout + q.stderr


@pytest.mark.slow
def test_real_stress_default_build(tmp_path):
    r = real_pass(tmp_path)
    assert r["totals"]["controlled"]["runs"] > 0 and r["totals"]["native"]["runs"] > 0
    assert r["faultloop_sites"] > 0


@pytest.mark.slow
@pytest.mark.sanitizer
def test_real_stress_asan(tmp_path):
    r = real_pass(tmp_path, "address")
    assert r["totals"]["controlled"]["runs"] > 0 and r["totals"]["native"]["runs"] > 0


@pytest.mark.slow
@pytest.mark.sanitizer
def test_real_stress_tsan(tmp_path):
    r = real_pass(tmp_path, "thread")
    assert r["totals"]["native"]["runs"] > 0 and r["totals"]["controlled"]["runs"] > 0


def test_distinct_interleavings_exact_then_estimated_and_mergeable():
    """Exact up to 2*KMV_K distinct hashes; past that a K-minimum-values
    estimate within a few percent; and merging two shards' sketches gives the
    same figure as one run that saw everything (results.json stays bounded)."""
    import random

    from stress_results import KMV_K, ModeStats

    rng = random.Random(2026)
    small = ModeStats()
    small.add_batch(10, 0, 100, 1.0, 3, [rng.getrandbits(64) for _ in range(1000)] * 2)
    assert small.distinct() == 1000 and not small.sketched

    values = [rng.getrandbits(64) for _ in range(200_000)]
    whole, left, right = ModeStats(), ModeStats(), ModeStats()
    whole.add_batch(1, 0, 1, 1.0, 1, values)
    left.add_batch(1, 0, 1, 1.0, 1, values[:120_000])
    right.add_batch(1, 0, 1, 1.0, 1, values[100_000:])  # overlaps the left shard
    assert whole.sketched and len(whole.hashes) <= 2 * KMV_K
    assert abs(whole.distinct() - 200_000) / 200_000 < 0.05
    left.merge(right)
    assert left.distinct() == whole.distinct()


def test_pct_batches_and_replay_lines_carry_the_harness_k(fake):
    """PCT's k has one definition, the harness's (scn_campaign_pct_steps: a
    probe run's choice points), which `run` and stress-batch both use: the
    driver passes none, and each failure records the k its batch reports,
    which its replay line carries (a replay without it would be another run)."""
    run_fake(fake, "--seed", "5", "--no-faultloop", "--modes", "controlled", "--jobs", "1",
             env={"FAKE_FAIL": "alpha,controlled"}, batches=12)
    pct = [c for c in calls(fake) if "pct" in c]
    assert pct and not any("--pct-steps" in c for c in pct)
    for f in results(fake)["failures"]:
        if f["strategy"] == "pct":
            assert f"--pct-steps {f['pct_steps']}" in f["replay"] and f["pct_steps"] > 0, f


# ---- where the controlled budget goes (ci/stress_alloc.py) -------------------
import stress_alloc as A  # noqa: E402

CORPUS59 = [f"s{i:02d}.scn" for i in range(59)]


def controlled_phase(budget: float, before: float = 1.0) -> float:
    """The controlled phase of a Linux run: 80% of what the fault loop left."""
    return (budget - before) * P.plan_shares(False)["controlled"]


@pytest.mark.parametrize("budget", [10, 20, 60, 600])
def test_every_pair_fits_in_any_budget_of_10_s_or_more(budget):
    n = len(A.pairs(CORPUS59))
    assert n == 59 * 4
    phase = controlled_phase(budget)
    ms = A.first_pass_ms(phase, 2, n)
    assert A.MIN_BATCH_MS <= ms <= A.MAX_BATCH_MS
    assert A.covered(phase, 2, n) == n
    # the fixed plan's one-second batches reached 29 scenarios of 59 at 20 s
    assert A.seconds_needed(n, 2, 0.8, 1.0) < 10


def test_a_budget_too_short_says_how_long_it_needs():
    n = len(A.pairs(CORPUS59))
    phase = controlled_phase(3)
    assert A.covered(phase, 2, n) < n
    need = A.seconds_needed(n, 2, 0.8, 1.0)
    assert 3 < need < 10
    assert A.covered(controlled_phase(need), 2, n) == n


def test_first_pass_leaves_half_the_phase_to_the_allocation_when_it_can():
    n = len(A.pairs(CORPUS59))
    phase = controlled_phase(60)
    ms = A.first_pass_ms(phase, 2, n)
    assert abs(ms * n / (phase * 1000 * 2) - A.FIRST_PASS_SHARE) < 0.01


def feed(src, outcome, batches):
    """Runs `batches` batches of src in order, each outcome(pair) = (new, seconds)."""
    got = []
    for _ in range(batches):
        assert src.ready()
        b = src.take()
        got.append(b)
        src.done(b, *outcome(A.Pair(b.scenario, b.strategy, b.depth)))
    return got


def test_first_pass_covers_every_pair_then_the_allocation_follows_the_yield():
    scen = ["a", "b", "c"]
    src = A.AdaptiveSource(9, scen, P.Shard(1, 1))
    hot = A.Pair("b", "pct", 2)
    bs = feed(src, lambda p: (50, 0.1) if p == hot else (0, 0.1), 12 + 400)
    first = {(b.scenario, b.strategy, b.depth) for b in bs[:12]}
    assert first == {(s, st, d) for s in scen for st, d in P.ROTATION}
    later = [(b.scenario, b.strategy, b.depth) for b in bs[12:]]
    share = later.count(("b", "pct", 2)) / len(later)
    assert share > 0.8, share
    # every other pair keeps its token share (10% over 12 pairs: ~3 of 400)
    assert len(set(later)) >= 8


def test_allocation_is_a_function_of_master_seed_and_outcomes_only():
    def run(master, outcome):
        src = A.AdaptiveSource(master, ["a", "b", "c"], P.Shard(1, 1))
        return [(b.k, b.scenario, b.strategy, b.depth, b.base) for b in feed(src, outcome, 60)]
    yields = lambda p: ((7 if p.scenario == "a" else 1), 0.2)  # noqa: E731
    assert run(3, yields) == run(3, yields)
    assert run(3, yields) != run(4, yields)


def test_sampled_scenarios_get_the_larger_share():
    src = A.AdaptiveSource(5, ["a", "b"], P.Shard(1, 1), sampled={"b"})
    bs = feed(src, lambda p: (1, 0.1), 8 + 400)
    later = [b.scenario for b in bs[8:]]
    assert later.count("b") > 2.5 * later.count("a"), (later.count("a"), later.count("b"))


def test_a_slow_sampled_scenario_still_gets_the_larger_share():
    """Its yield a second is low (its runs are slow), yet each of its pairs
    gets at least SAMPLED_WEIGHT times an even split of the batches."""
    scen = [f"s{i}" for i in range(9)] + ["slow"]
    src = A.AdaptiveSource(5, scen, P.Shard(1, 1), sampled={"slow"})
    bs = feed(src, lambda p: (1, 1.0) if p.scenario == "slow" else (100, 0.2), 40 + 2000)
    later = [b.scenario for b in bs[40:]]
    even = len(later) / len(scen)
    assert later.count("slow") > 0.9 * A.SAMPLED_WEIGHT * even, (later.count("slow"), even)
    probs = dict((p.scenario + p.strategy + str(p.depth), w) for p, w in
                 A.weights(src.stats, {"slow"}, set()))
    assert abs(sum(probs.values()) - 1) < 1e-9


def test_adaptive_shards_stay_disjoint_and_each_makes_a_first_pass():
    seen = {}
    for i in (1, 2, 3):
        src = A.AdaptiveSource(7, ["a", "b", "c", "d"], P.Shard(i, 3))
        bs = feed(src, lambda p: (1, 0.1), 50)
        assert {(b.scenario, b.strategy, b.depth) for b in bs[:16]} == \
            {(s, st, d) for s in "abcd" for st, d in P.ROTATION}
        for b in bs:
            assert b.k not in seen and b.base not in seen.values()
            seen[b.k] = b.base


def test_a_scenario_with_no_controlled_run_is_named(fake):
    p = run_fake(fake, "--seed", "4", "--no-faultloop", "--modes", "controlled", "--jobs", "1",
                 env={"FAKE_SKIP": "beta,controlled"}, batches=12)
    assert p.returncode == 0, p.stdout + p.stderr
    un = results(fake)["plan"]["unrun"]
    assert [pathlib.Path(n).stem for n in un["scenarios"]] == ["beta"]
    assert len(un["pairs"]) == 4
    assert re.search(r"8 of 12 \(scenario, strategy, depth\) pairs ran", p.stdout), p.stdout
    assert re.search(r"WARNING: 1 scenarios had no controlled run: \S*beta\.scn", p.stdout), p.stdout


def test_a_sampled_scenario_gets_the_larger_share_of_the_allocated_batches(fake):
    """The batch says the scenario is sampled; after the first pass (12
    batches) the allocation gives it the larger share; results.json names it."""
    run_fake(fake, "--seed", "6", "--no-faultloop", "--modes", "controlled", "--jobs", "1",
             env={"FAKE_SAMPLED": "gamma"}, batches=12 + 60)
    later = [c[-1] for c in calls(fake)][12:]
    assert sum("gamma" in c for c in later) > len(later) / 2, later
    r = results(fake)
    assert [pathlib.Path(n).stem for n in r["plan"]["sampled"]] == ["gamma"]


def test_bench_runs_both_plans_with_one_seed_and_budget(fake):
    """ci/stress_bench.py: the fixed plan (1 s batches in rotation) and
    today's (a first pass sized from the budget) on one seed and budget,
    one after the other; both rows in bench.json."""
    e = dict(os.environ, FAKE_LOG=str(fake["log"]))
    p = subprocess.run([sys.executable, str(REPO / "ci" / "stress_bench.py"), "--build", str(fake["build"]),
                        "--seconds", "3", "--seed", "21", "--scenarios", str(fake["scen"]),
                        "--out", str(fake["tmp"] / "bench")],
                       capture_output=True, text=True, env=e, cwd=fake["tmp"], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    b = json.loads((fake["tmp"] / "bench" / "bench.json").read_text())
    assert set(b["plans"]) == {"fixed", "adaptive"} and b["seed"] == "21"
    for row in b["plans"].values():
        assert row["pairs"] == 12 and row["runs"] > 0 and row["behaviour_classes"] <= 13 * 3
    ms = [int(c[c.index("--max-ms") + 1]) for c in calls(fake)]
    # the fixed plan's first batch is a second; today's first pass cuts the
    # 3 s over the 12 pairs on 2 workers (half of it: ~250 ms)
    assert ms[0] == 1000, ms[:3]
    assert any(100 <= m <= 300 for m in ms), ms
    assert "behaviour_classes" in p.stdout and "pairs_run" in p.stdout, p.stdout


def test_a_requirement_a_pair_reaches_first_is_counted_for_that_pair(fake):
    """The batch says which `require` lines its runs reached; the pair that
    reached one first has it in results.json (pairs.NAME.pct2), and it
    counts in that batch's yield (REACH_VALUE classes)."""
    run_fake(fake, "--seed", "6", "--no-faultloop", "--modes", "controlled", "--jobs", "1",
             env={"FAKE_REACH": "beta"}, batches=12 + 12)
    pairs = results(fake)["pairs"]
    beta = next(v for k, v in pairs.items() if "beta" in k)
    assert beta["pct2"]["requires_reached"] == 1, beta
    assert all(v["requires_reached"] == 0 for k, v in beta.items() if k != "pct2"), beta
    assert all(v["requires_reached"] == 0 for n, per in pairs.items() if "beta" not in n for v in per.values())


def test_run_and_stress_batch_use_one_pct_k(tmp_path):
    """PCT's k when none is given is one definition for `run` and
    stress-batch (a probe run's choice points, scn_campaign_pct_steps): a
    failing PCT run gets the same k from either, and its commands carry it.
    The scheduler's default of 200 was stress-batch's before, while run probed
    (here the probe finds 23)."""
    h = build_dir() / "harness" / "scenario" / "tpheal-harness"
    if not h.is_file():
        pytest.fail(f"{h} missing: build first (make build)")
    scn = tmp_path / "false.scn"
    scn.write_text("# purpose: false\nwork W\nthread A\n  submit W\n  wait W\nend\nexpect calls(W) == 2\n")
    run = subprocess.run([str(h), "run", str(scn), "--strategy", "pct", "--seeds", "1", "--json", "--no-replay"],
                         capture_output=True, text=True, timeout=120)
    [f] = [json.loads(x) for x in run.stdout.splitlines() if '"type":"failure"' in x]
    k = f["pct_steps"]
    assert k not in (0, 200) and f"--pct-steps {k} " in f["replay"], f
    batch = subprocess.run([str(h), "stress-batch", "--mode", "controlled", "--strategy", "pct", "--depth", "3",
                            "--base", "0x5", "--count", "2", str(scn)], capture_output=True, text=True, timeout=120)
    [b] = [json.loads(x) for x in batch.stdout.splitlines() if x.startswith("{")]
    assert b["pct_steps"] == k and len(b["failures"]) == 2, b
    assert all(f"--pct-steps {k} " in x["replay"] for x in b["failures"]), b
