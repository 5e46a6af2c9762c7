#!/usr/bin/env python3
"""Today's controlled plan against the fixed one it replaced, in one run on
one machine: the same build, budget and master seed, one after the other.

  ci/stress_bench.py --build build --seconds 60 --seed 1234 [--out DIR] [--scenarios ...]

Each plan is a `ci/stress.py --modes controlled` run (its whole budget to the
controlled phase; `--plan fixed` is batch k = scenario k % S, strategy
(k // S) % 4, 1 s each; `--plan adaptive` the first pass sized from the
budget, then the allocation by yield: docs/stress.md).  Printed per plan, and
written to DIR/bench.json: (scenario, strategy, depth) pairs run, scenarios
with no run, behaviour classes over the corpus (the sum of each scenario's
distinct classes), distinct schedules, runs.  Exit 0, or 2 on bad usage; a
failure in a stress run is reported in its row (failures), not as the exit.

Not measured here: batches-to-first-catch of the sabotage entries -- that
needs each entry's sabotaged build (ci/sabotage), minutes a build."""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import procs  # noqa: E402
import stress_results as R  # noqa: E402

PLANS = ("fixed", "adaptive")


def summarise(results: dict) -> dict:
    res = R.Results.from_json(results)
    per = [res.scenarios[n]["controlled"] for n in res.scenarios if "controlled" in res.scenarios[n]]
    un = results.get("plan", {}).get("unrun", {"pairs": [], "scenarios": []})
    npairs = results.get("plan", {}).get("pairs") or 0
    return {"pairs": npairs, "pairs_run": npairs - len(un["pairs"]) if npairs else None,
            "scenarios_without_run": len(un["scenarios"]),
            "behaviour_classes": sum(s.distinct_classes() for s in per),
            "distinct_schedules": sum(s.distinct() for s in per),
            "runs": sum(s.runs for s in per), "batches": sum(s.batches for s in per),
            "failures": res.failure_count()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="stress_bench.py", description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", required=True, help="master seed, the same for both plans")
    ap.add_argument("--out", default=None, help="directory (default BUILD/stress-bench)")
    ap.add_argument("--scenarios", nargs="*", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    out = pathlib.Path(a.out or pathlib.Path(a.build) / "stress-bench")
    rows = {}
    for plan in PLANS:
        cmd = [sys.executable, str(HERE / "stress.py"), "--build", a.build, "--seconds", f"{a.seconds:g}",
               "--seed", a.seed, "--modes", "controlled", "--plan", plan, "--jobs", str(a.jobs),
               "--out", str(out / plan)]
        if a.scenarios:
            cmd += ["--scenarios", *a.scenarios]
        r = procs.run_bounded(cmd, timeout=a.seconds * 3 + 300, merge=False)
        if r.rc is None or r.rc == 2 or not (out / plan / "results.json").is_file():
            sys.stderr.write(f"stress_bench.py: the {plan} plan's run ended {r.rc}:\n{r.err[-2000:]}")
            return 2
        rows[plan] = summarise(json.loads((out / plan / "results.json").read_text()))
    (out / "bench.json").write_text(json.dumps({"seconds": a.seconds, "seed": a.seed, "plans": rows},
                                               indent=1) + "\n")
    keys = ("pairs_run", "scenarios_without_run", "behaviour_classes", "distinct_schedules", "runs",
            "batches", "failures")
    print(f"stress bench: {a.seconds:g} s, seed {a.seed}, controlled phase only, plans run one after the other")
    print(f"{'':24s}" + "".join(f"{p:>14s}" for p in PLANS))
    for k in keys:
        cells = [rows[p][k] for p in PLANS]
        if k == "pairs_run":
            cells = [f"{c} of {rows[p]['pairs']}" for c, p in zip(cells, PLANS)]
        print(f"{k:24s}" + "".join(f"{c:>14}" if isinstance(c, str) else f"{c:>14,}" for c in cells))
    print(f"stress bench: written to {out / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
