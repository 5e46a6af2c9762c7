"""The shortest failing schedule (harness/scenario/scn_shrink.h): a failure a
seeded run found -- a random walk's schedule preempts at most of its choice
points -- is reported with the schedule of fewest preemptions, then shortest
choice prefix, that fails with the same kind at the same check; that
schedule replays to the same failure; and a shrink its budget cut short says
so, in the text and in the JSON."""
import subprocess
import sys

import pytest

from conftest import REPO, binary

sys.path.insert(0, str(REPO / "ci"))
import harness_json as HJ  # noqa: E402

# Fails when B's tick is recorded before A's submission: a random walk finds
# it with 16-27 preemptions in its schedule; the bounded search finds it at 0
# (the two threads' start order is a free switch), on its second run.
ORDER = """# purpose: thread A's submission must be recorded before thread B's tick: which thread goes first decides it
work W
thread A
  submit W
end
thread B
  tick
end
expect api/SubmitThreadpoolWork before heal/healer-tick
"""


def harness():
    exe = binary("harness/scenario/tpheal-harness")
    if not exe.is_file():
        pytest.fail(f"{exe} missing: the default build makes it (make build)")
    return str(exe)


def run(*args):
    p = subprocess.run([harness(), *args], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert p.returncode in (0, 1), f"{args}: exit {p.returncode}\n{p.stderr[-2000:]}"
    return p


@pytest.fixture
def order(tmp_path):
    f = tmp_path / "order.scn"
    f.write_text(ORDER)
    return f


def test_a_seeded_failure_is_reported_with_fewer_preemptions_that_replay_to_the_same_kind(order):
    objs = HJ.objects(run("run", str(order), "--seeds", "6", "--strategy", "both", "--json").stdout)
    failures = HJ.of_type(objs, "failure")
    assert failures, "the fixture no longer fails: the test would prove nothing"
    for f in failures:
        assert not HJ.problems(f), HJ.problems(f)
        assert f["preemptions"] >= 5, f  # the random walk's / PCT's schedule
        assert f["shrunk_preemptions"] == 0 and f["shrunk_fewest_proven"], f
        assert f["shrunk_preemptions"] < f["preemptions"]
        assert f["shrunk_cut"] == "" and f["shrunk_runs"] >= 2, f
        assert f["shrunk_schedule"].startswith("T1/idle:"), f
        assert 0 < f["shrunk_prefix"] <= f["shrunk_choices"], f
        # every failure of the campaign is the same check: one shrink, one schedule
        assert f["shrunk_schedule"] == failures[0]["shrunk_schedule"]
    f = failures[0]
    # the shortest schedule replays to the same failure: kind and check
    again = HJ.of_type(HJ.objects(run("run", str(order), "--seeds", "1", "--schedule", f["shrunk_schedule"], "--json").stdout),
                       "failure")
    assert [(a["kind"], a["line"]) for a in again] == [(f["kind"], f["line"])] == [("order-broken", 9)]
    assert f["shrunk_replay"].split()[1:3] == ["replay", "--schedule"]


def test_the_report_leads_with_the_shortest_schedule_and_keeps_the_seed_one_line(order):
    out = run("run", str(order), "--seed", "0", "--strategy", "random").stdout
    lines = out.splitlines()
    assert lines[0] == f"FAILURE {order}"
    assert lines[1].startswith("  shortest failing schedule: 0 preemptions, choice prefix "), lines[1]
    assert "(fewest: every lower bound searched to its end)" in lines[1]
    assert lines[2].startswith("  replay: ") and " replay --schedule 'T1/idle:" in lines[2], lines[2]
    assert lines[3].startswith("  found by: seed 0, random, ") and " preemptions; replay by seed: " in lines[3]
    assert lines[3].endswith(f"replay --seed 0 --strategy random {order}"), lines[3]
    # the original's schedule string is not repeated: the seed line replays it
    assert sum("replay --seed" in x for x in lines) == 1
    assert "STOPPED EARLY" not in out


def test_a_shrink_cut_by_its_budget_says_so(order):
    """One run a bound: the failing schedule cut and smoothed (step 0) gives a
    schedule with a preemption; the bounded search for fewer stops after its
    first run at 0 preemptions (which passes), so fewer is not ruled out, and
    the report says the budget cut it."""
    p = run("run", str(order), "--seed", "0", "--strategy", "random", "--shrink-runs", "1", "--json")
    [f] = HJ.of_type(HJ.objects(p.stdout), "failure")
    assert not HJ.problems(f), HJ.problems(f)
    assert f["shrunk_cut"] == "runs" and not f["shrunk_fewest_proven"], f
    assert 1 <= f["shrunk_preemptions"] < f["preemptions"], f
    text = run("run", str(order), "--seed", "0", "--strategy", "random", "--shrink-runs", "1").stdout
    first = text.splitlines()[1]
    assert first.startswith("  shortest failing schedule: "), text
    assert first.endswith("(fewer preemptions not ruled out: a lower bound's search was cut); "
                          f"{f['shrunk_runs']} runs; a bound's search STOPPED EARLY at its run budget"), first
    # the schedule it found still replays to the same failure
    again = HJ.of_type(HJ.objects(run("run", str(order), "--seeds", "1", "--schedule", f["shrunk_schedule"],
                                      "--json").stdout), "failure")
    assert [(a["kind"], a["line"]) for a in again] == [(f["kind"], f["line"])]


def test_shrinking_off_reports_the_run_as_it_ran(order):
    p = run("run", str(order), "--seed", "0", "--strategy", "random", "--shrink-seconds", "0", "--json")
    [f] = HJ.of_type(HJ.objects(p.stdout), "failure")
    assert not any(k.startswith("shrunk_") for k in f), f


def test_stress_batch_failures_carry_their_shortest_schedule(order):
    p = run("stress-batch", "--mode", "controlled", "--base", "0x5", "--count", "4", str(order))
    [b] = HJ.of_type(HJ.objects(p.stdout), "batch")
    assert b["failures"], b
    for f in b["failures"]:
        assert f["shrunk_preemptions"] == 0 and f["shrunk_cut"] == "", f
        assert f["shrunk_replay"].split()[1:3] == ["replay", "--schedule"], f


def test_the_sweep_transcript_leads_with_the_shortest_schedule(order):
    """ci/sabotage's transcript of a scenario catcher names the shrunk replay
    the harness's JSON carries (sweep_entry.shortest_schedule)."""
    sys.path.insert(0, str(REPO / "ci" / "sabotage"))
    import sweep_entry
    out = run("run", "--json", "--no-replay", "--seeds", "3", "--strategy", "pct", str(order)).stdout
    lead = sweep_entry.shortest_schedule(out).splitlines()
    assert lead[0].startswith("shortest failing schedule: 0 preemptions, choice prefix "), lead
    assert "(order-broken at line 9; found by pct seed " in lead[0], lead
    assert lead[1].startswith("  replay: ") and " replay --schedule 'T1/idle:" in lead[1], lead
    assert sweep_entry.shortest_schedule(run("run", "--json", "--seeds", "1", "--shrink-seconds", "0",
                                             str(order)).stdout) == ""


def test_the_stress_failure_file_leads_with_the_shortest_schedule(order):
    """ci/stress.py's failure file: a batch failure's shrunk_* fields lead it,
    its replay by seed stays (stress.shrunk_of, failure_text)."""
    import stress
    p = run("stress-batch", "--mode", "controlled", "--base", "0x5", "--count", "2", str(order))
    [b] = HJ.of_type(HJ.objects(p.stdout), "batch")
    f = b["failures"][0]
    sh = stress.shrunk_of(f)
    entry = {"scenario": str(order), "mode": "controlled", "strategy": "random", "seed": 1, "status": f["status"],
             "kind": f["kind"], "reason": f["reason"], "replay": f["replay"], "shrunk": sh}
    lines = stress.failure_text(entry, 5).splitlines()
    assert lines[0].startswith("shortest failing schedule: 0 preemptions (fewest), choice prefix "), lines
    assert lines[1:3] == ["replay:", f"  {f['shrunk_replay']}"], lines
    assert f"  {f['replay']}" in lines  # the seed's replay stays
    assert stress.shrunk_of({"replay": "x"}) is None
