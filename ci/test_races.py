"""The race build (-DTPHEAL_SANITIZE=thread, $TPHEAL_BUILD_DIR/tsan; docs/races.md):
ThreadSanitizer inside the controlled scheduler, with the pool's happens-before
contract and nothing more.

- the unmutated core has no race: every scenario under random and PCT, and the
  core's unit tests, in the race build -- any report fails the case;
- the detector's own test (harness/tests/test_race.c: each contract edge both
  ways, the report's content and its determinism) passes there;
- docs/races.md names every row of the contract's table (harness/sim/sim_hb.h)
  and no other.

Seeds per strategy here: $TPHEAL_RACE_SEEDS (default 10: the corpus takes
~10 s at 10 on the 2-core machine; the 200-seed run is `make stress
SANITIZE=thread` and its figures are in docs/races.md)."""
import json
import os
import re
import subprocess

import pytest

from conftest import REPO, binary, build_dir, run_bounded
import harness_json as HJ  # noqa: E402  (ci/ is on the path: conftest)

SEEDS = int(os.environ.get("TPHEAL_RACE_SEEDS", "10"))
SCENARIOS = sorted((REPO / "scenarios").glob("*.scn"))
TSAN_ENV = dict(os.environ, TSAN_OPTIONS=os.environ.get("TSAN_OPTIONS", "halt_on_error=0:exitcode=66"))


def race_build():
    d = build_dir() / "tsan"
    if not (d / "CMakeCache.txt").is_file():
        pytest.fail(f"no race build in {d}: run `make build-tsan` (make test builds it)")
    return d


def harness():
    exe = binary("harness/scenario/tpheal-harness", race_build())
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: make build-tsan")
    return str(exe)


@pytest.mark.sanitizer
def test_corpus_has_no_race():
    """One harness process for the corpus (a process per file would pay TSan's
    start-up 42 times); a race is a failure record whose `race` is set."""
    rc, out = run_bounded([harness(), "run", "--json", "--no-replay", "--seeds", str(SEEDS),
                           "--strategy", "both"] + [str(p) for p in SCENARIOS], 900, cwd=REPO, env=TSAN_ENV)
    assert rc is not None, f"timed out:\n{out[-4000:]}"
    records = HJ.objects(out)
    races = [r for r in HJ.of_type(records, "failure") if r["race"]]
    assert not races, "\n".join(f"{r['failure']} seed {r['seed']} {r['strategy']}:\n{r['race']}"
                                for r in races[:5])
    summaries = HJ.of_type(records, "summary")
    assert len(summaries) == len(SCENARIOS), out[-4000:]
    failed = HJ.of_type(records, "failure")
    assert not failed, json.dumps(failed[:3], indent=1)
    assert "WARNING: ThreadSanitizer" not in out, out[-8000:]
    assert rc == 0, out[-4000:]


def unit_cases():
    d = build_dir() / "tsan"
    if not (d / "CTestTestfile.cmake").is_file():
        return [pytest.param(None, None, id="race-build-missing")]
    doc = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=d, capture_output=True,
                                    text=True, check=True).stdout)
    out = []
    for t in doc.get("tests", []):
        n = t["name"]
        # the core's tests, the detector's own, the native runtime's
        # (rt_native.c's locks on real threads: 0.14 s; a lock deleted from
        # n_choose ends it with "unlock of an unlocked mutex"; and its lock
        # discipline, test_rt_native_locks), and the sim's under the
        # controlled scheduler, whose happens-before edges are the model's
        # stated ones (sim_hb.h) and the scheduler's: one deleted -- a
        # thread's exit into the run's end, a timer set into its callback --
        # is a race TSan reports in test_sim_sched.  The scheduler's own
        # tests run racy programs on purpose and are built uninstrumented
        # (their cost under TSan, ~6 min, buys nothing here)
        if n.startswith("core.test_") or n in ("harness.test_race", "harness.test_sim_native",
                                               "harness.test_rt_native_locks", "harness.test_sim_sched"):
            # ctest lists a test whose executable is not built without a
            # command: that case fails by name instead of the whole collection
            out.append(pytest.param(n, t.get("command"), id=n))
    return out


@pytest.mark.sanitizer
@pytest.mark.parametrize("name,command", unit_cases())
def test_unit_in_race_build(name, command):
    if name is None:
        pytest.fail("no race build: make build-tsan")
    if command is None:
        pytest.fail(f"{name} is not built in the race build: make build-tsan")
    rc, out = run_bounded(command, 300, env=TSAN_ENV)
    assert rc is not None, f"{name} timed out\n{out[-4000:]}"
    if name != "harness.test_race":  # its races are on purpose, each one checked by the test
        assert "WARNING: ThreadSanitizer" not in out, out[-8000:]
    assert rc == 0, f"{name} exited {rc}\n{out[-6000:]}"


def contract_rows():
    text = (REPO / "harness/sim/sim_hb.h").read_text()
    body = text[text.index("#define SIM_HB_EDGES(X)"):text.index("typedef enum sim_hb_edge")]
    return re.findall(r"\bX\((\w+),", body)


def test_docs_name_every_contract_row():
    rows = contract_rows()
    assert len(rows) >= 7, rows
    doc = (REPO / "docs/races.md").read_text()
    table = re.findall(r"^\| `(\w+)` \|", doc, re.M)
    assert sorted(table) == sorted(rows), f"docs/races.md's table {table} != sim_hb.h's rows {rows}"


@pytest.mark.sanitizer
def test_bench_rate_of_both_builds():
    """`bench --rate` is how the bench compares the race build with the plain
    one in one run (docs/races.md, Cost): a bare number from each."""
    plain = binary("harness/scenario/tpheal-harness")
    for exe in (plain, harness()):
        rc, out = run_bounded([str(exe), "bench", "--seeds", "50", "--rate"], 300, env=TSAN_ENV)
        assert rc == 0, out[-2000:]
        assert float(out.strip().splitlines()[-1]) > 0, out
