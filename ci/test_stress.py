"""Tests of `make stress` (ci/stress.py).

Two parts:
- the driver's logic against a fake tpheal-harness (a small Python script
  written into a temporary build directory), so every rule -- the seed banner,
  deterministic batches, disjoint shards, merge, failure files with replay
  lines, the native-failure reproduction, crash attribution, exit codes -- is
  checked in seconds and independently of the C code;
- short real passes on the builds `make test` makes: the default build, the
  ASan+UBSan build (both modes) and the TSan build (free-running only), 20 s
  each; any sanitizer report or failure fails them."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import REPO, build_dir, run_bounded

sys.path.insert(0, str(REPO / "ci"))
import stress_plan as P  # noqa: E402
import stress_results as R  # noqa: E402

STRESS = str(REPO / "ci" / "stress.py")

FAKE = r'''#!/usr/bin/python3
# Fake tpheal-harness: the stress subcommands' protocol, with failures chosen
# by environment variables.  Logs every call to $FAKE_LOG.
import json, os, sys, time
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
scen = sys.argv[-1] if cmd != "run" else sys.argv[2]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\n")
if env_match("FAKE_BADINPUT", scen, "any"):
    sys.stderr.write(scen + ":3:7: unexpected 'x'\n")
    sys.exit(2)
if cmd == "stress-batch":
    mode = opt("--mode"); base = int(opt("--base"), 16)
    if env_match("FAKE_SKIP", scen, mode):
        print(json.dumps({"scenario": scen, "mode": mode, "runs": 0, "failures": [],
                          "hashes": [], "skipped": "fake reason"}))
        sys.exit(0)
    n = min(int(opt("--count")), max(1, int(opt("--max-ms")) // 10) * 7)
    seeds = [sm((base + j) & MASK) for j in range(n)]
    if env_match("FAKE_CRASH", scen, mode):
        sys.stderr.write("tph-stress: crashed in run %s seed=0x%016x j=3\n" % (scen, seeds[3]))
        os.abort()
    time.sleep(0.01)
    fails = []
    if env_match("FAKE_FAIL", scen, mode):
        fails.append({"j": 5, "seed": "0x%016x" % seeds[5], "status": "deadlock",
                      "reason": "fake deadlock", "schedule": "r1.2.3"})
    print(json.dumps({"scenario": scen, "mode": mode, "runs": n, "steps": 10 * n,
                      "max_choice_points": 40, "failures": fails, "failures_total": len(fails),
                      "hashes": ["%016x" % (s % 97) for s in seeds] if mode == "controlled" else []}))
elif cmd == "stress-faultloop":
    for k in range(3):
        ok = not env_match("FAKE_FAULTFAIL", scen, "faultloop") or k != 1
        print(json.dumps({"kind": "alloc", "nth": k + 1, "fired": True, "ok": ok,
                          "status": "ok" if ok else "crash", "reason": "" if ok else "leak"}))
    print(json.dumps({"summary": True, "sites": 3, "per_kind": {"alloc": 3}, "complete": True}))
elif cmd == "run":
    mode = opt("--mode")
    sys.exit(1 if env_match("FAKE_REPRO", scen, mode) else 0)
'''


@pytest.fixture
def fake(tmp_path):
    b = tmp_path / "build"
    h = b / "harness" / "scenario" / "tpheal-harness"
    h.parent.mkdir(parents=True)
    h.write_text(FAKE)
    h.chmod(0o755)
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


def calls(fake, sub="stress-batch"):
    if not fake["log"].exists():
        return []
    return [c for c in map(json.loads, fake["log"].read_text().splitlines()) if c[0] == sub]


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
    assert "master seed 1234" in first and "make stress SEED=1234" in first
    assert "controlled 80%, native 20%" in p.stdout
    r = results(fake)
    assert r["master_seed"] == 1234 and r["failures"] == []
    for name in ("alpha", "beta", "gamma"):
        key = next(k for k in r["scenarios"] if name in k)
        c = r["scenarios"][key]["controlled"]
        assert c["runs"] > 0 and 0 < c["distinct_interleavings"] <= 97
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
    assert f"--seed {f[0]['seed']}" in text and " run " in text and "fake deadlock" in text
    assert f"--base 0x{base:016x} --count 1 --first 5" in text
    assert "replay:" in p.stderr and "FAILED" in p.stderr


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


def test_faultloop_failure_fails_the_run(fake):
    p = run_fake(fake, "--seed", "5", env={"FAKE_FAULTFAIL": "alpha"})
    assert p.returncode == 1
    f = [x for x in results(fake)["failures"] if x["mode"] == "faultloop"]
    assert len(f) == 1 and f[0]["fault"] == "alloc:2" and "--only alloc:2" in f[0]["replay"]


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
    assert re.search(r"s elapsed, .* left\] .*runs, .*schedules/s, 0 failures", p.stderr)


# ---- real passes on the builds of `make test` ----------------------------------
REAL_SECONDS = os.environ.get("STRESS_TEST_SECONDS", "20")


def real_pass(tmp_path, sanitize=None):
    b = build_dir()
    sub = {"address": "asan", "thread": "tsan", None: ""}[sanitize]
    if not ((b / sub) if sub else b).joinpath("CMakeCache.txt").exists():
        pytest.fail(f"build {(b / sub) if sub else b} missing: run `make test`")
    cmd = [sys.executable, STRESS, "--build", str(b), "--seconds", REAL_SECONDS,
           "--seed", "20261202", "--out", str(tmp_path / "stress")]
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
    assert r["totals"]["native"]["runs"] > 0 and r["totals"]["controlled"]["runs"] == 0


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
