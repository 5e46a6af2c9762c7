"""The harness's JSON contract (harness/json-schema.json, version 1): every
object every JSON-printing command writes, over the whole corpus, is valid
against its type's definition -- no field the schema does not name, none it
requires missing -- and every type the schema lists is seen, so neither a
writer site nor the schema can drift from the other unnoticed."""
import json
import re
import subprocess
import sys

import pytest

from conftest import REPO, binary

sys.path.insert(0, str(REPO / "ci"))
import harness_json as HJ  # noqa: E402

CORPUS = sorted((REPO / "scenarios").glob("*.scn"))
FAILING = """# purpose: a scenario whose expectation is false: the contract's failure line
work W
thread A
  submit W
  wait W
end
expect calls(W) == 2
"""


def harness(name="tpheal-harness"):
    exe = binary(f"harness/scenario/{name}")
    if not exe.is_file():
        pytest.fail(f"{exe} missing: the default build makes it (make build)")
    return str(exe)


def objects_of(cmd, ok_codes=(0, 1, 3, 4)):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode in ok_codes, f"{cmd}: exit {p.returncode}\n{p.stderr[-2000:]}"
    return HJ.objects(p.stdout)


def test_every_object_of_every_command_matches_the_schema(tmp_path):
    bad = tmp_path / "false expectation.scn"
    bad.write_text(FAILING)
    h, ff = harness(), harness("tpheal-harness-failfast")
    one = "scenarios/concurrent-cancels-out-of-order.scn"
    seen, problems, batch_failures = {}, [], []
    runs = [[h, "run", *map(str, CORPUS), "--seeds", "2", "--strategy", "both", "--json", "--no-replay"],
            [ff, "run", *map(str, CORPUS), "--seeds", "1", "--json", "--no-replay"],
            [h, "run", str(bad), "--seeds", "2", "--json"],
            [h, "run", "scenarios/healer-never-starts-same-tick.scn", "--mode", "native", "--seeds", "1", "--json"],
            [h, "run", one, "--strategy", "dfs", "--max-runs", "30", "--json"],
            [h, "verify", one, "scenarios/work-cancel-pending.scn", "--max-runs", "30", "--json"],
            [h, "stress-batch", "--mode", "controlled", "--base", "0x5", "--count", "4", "--max-ms", "1000",
             "--strategy", "pct", "--depth", "3", str(bad)],
            [h, "stress-batch", "--mode", "native", "--base", "0x5", "--count", "1", "--max-ms", "1", one],
            [h, "stress-batch", "--mode", "native", "--base", "0x5", "--count", "1", "--max-ms", "1", str(bad)],
            [h, "stress-batch", "--mode", "native", "--base", "0x5", "--count", "1", "--max-ms", "1",
             "scenarios/healer-never-starts-same-tick.scn"],
            [h, "stress-faultloop", "--seed", "0x5", "--max-sites", "4", one]]
    for cmd in runs:
        for o in objects_of(cmd):
            seen[o["type"]] = seen.get(o["type"], 0) + 1
            problems += [f"{' '.join(cmd[1:3])}: {e}" for e in HJ.problems(o)]
            if o["type"] == "batch":
                batch_failures += o["failures"]
    assert not problems, "\n".join(problems[:20])
    assert set(seen) == set(HJ.schema()["properties"]["type"]["enum"]), seen
    # every batch failure carries the run path's command(s): a controlled
    # one both replays, a free-running one the model hint (and both kinds ran)
    kinds = {("model_hint",) if "model_hint" in f else tuple(k for k in ("replay", "replay_schedule") if k in f)
             for f in batch_failures}
    assert kinds == {("replay", "replay_schedule"), ("model_hint",)}, batch_failures
    assert seen["summary"] >= 2 * len(CORPUS) - 2, seen


def test_failure_kinds_are_the_harness_table():
    """The contract's failure kinds are SCN_FAILURE_KIND_MAP's rows, in its
    order (harness/scenario/scn_failure.h), and a failing run carries its
    kinds: `kind` the first failure's, `kinds` every one's in report order."""
    header = (REPO / "harness" / "scenario" / "scn_failure.h").read_text(encoding="utf-8")
    table = ["none"] + re.findall(r'^\s*X\([A-Z_]+, "([a-z-]+)", (?:true|false)\)', header, re.M)
    assert HJ.schema()["definitions"]["failureKind"]["enum"] == table
    assert len(table) == len(set(table)) > 20


def test_a_failing_run_carries_its_kinds(tmp_path):
    bad = tmp_path / "two.scn"
    bad.write_text(FAILING.replace("  wait W\n", "  wait W\n  assert 1 == 2\n"))
    objs = objects_of([harness(), "run", str(bad), "--seeds", "1", "--json"])
    [f] = HJ.of_type(objs, "failure")
    assert (f["kind"], f["kinds"]) == ("assert-failed", ["assert-failed", "expect-failed"]), f
    [b] = HJ.of_type(objects_of([harness(), "stress-batch", "--mode", "controlled", "--base", "0x5", "--count", "1",
                                 str(bad)]), "batch")
    assert [x["kind"] for x in b["failures"]] == ["assert-failed"], b


def test_the_schema_refuses_what_the_harness_does_not_write():
    """The check above can fail: an unknown field, a missing one, a wrong
    type and another version are each reported."""
    h = harness()
    [summary] = HJ.of_type(objects_of([h, "run", "scenarios/work-cancel-pending.scn", "--seeds", "1", "--json"]),
                           "summary")
    assert HJ.problems(summary) == []
    assert any("unexpected property 'ok'" in e for e in HJ.problems(dict(summary, ok=True)))
    assert any("missing required 'runs'" in e for e in HJ.problems({k: v for k, v in summary.items()
                                                                    if k != "runs"}))
    assert any("expected integer" in e for e in HJ.problems(dict(summary, runs="3")))
    assert HJ.problems(dict(summary, v=2))
    with pytest.raises(HJ.VersionMismatch):
        HJ.objects(json.dumps(dict(summary, v=2)))


def test_awkward_paths_stay_valid_json(tmp_path):
    """Paths are written escaped at every site (the DFS and verify lines once
    printed them raw: a quote in a path broke the line)."""
    d = tmp_path / 'a "quoted" \\ dir $x'
    d.mkdir()
    scn = d / "it's.scn"
    scn.write_bytes((REPO / "scenarios" / "work-cancel-pending.scn").read_bytes())
    h = harness()
    for cmd in ([h, "run", str(scn), "--strategy", "dfs", "--max-runs", "5", "--json"],
                [h, "verify", str(scn), "--max-runs", "5", "--json"]):
        objs = objects_of(cmd)
        assert objs and all(HJ.problems(o) == [] for o in objs), objs
        assert any(str(scn) in (o.get("dfs"), o.get("verify")) for o in objs), objs
