"""The generated phase of `make stress` (docs/generate.md): programs nobody
wrote, drawn from a master seed derived from the run's own, for a share of
the timed budget.  One `tpheal-harness generate` process: it draws, runs and
shrinks; this module turns its JSON (generate-failure, generate-summary) into
the run's results and failure files."""
from __future__ import annotations

import time

import harness_json as HJ
import stress_plan as P

# Share of the timed budget left after the fault loop.  The batch phases
# explore the corpus's interleavings; this one writes new programs, each run
# for 4 seeds x random and PCT (~1,300-2,400 schedules/s on the shared 2-core
# machine against ~35,000 for the corpus's smaller scenarios).
GENERATE_SHARE = 0.15
# A process draws until its --seconds; its shrink of a failure may run past
# them (a bounded search of up to 4 x 20,000 runs): this much more, then killed.
SHRINK_GRACE = 300.0


def seed_of(master: int) -> int:
    return P.splitmix64(master ^ P.MODE_TAG["generate"])


def enabled(run) -> bool:
    a = run.args
    return (run.modes is None or "generate" in run.modes) and not a.batches and not run.wrapper


def phase(run, seconds: float) -> None:
    """Runs the generator for `seconds` and records what it found in run.res
    (generate: programs, runs, failing; a failure per failing program)."""
    seed = seed_of(run.master)
    out = run.fail_dir / "generate"
    out.mkdir(parents=True, exist_ok=True)
    secs = max(1, int(seconds))
    cmd = [str(run.harness), "generate", "--seed", str(seed), "--programs", str(1 << 40), "--seconds", str(secs),
           "--max-failures", "1", "--out", str(out), "--json"]
    run.progress.start("generate", time.monotonic() + secs, run.deadline)
    start = time.monotonic()
    o = run.call(cmd, secs + SHRINK_GRACE)
    run.res.phase_seconds["generate"] = time.monotonic() - start
    summary = HJ.of_type(o.data, "generate-summary")
    if not summary:
        with run.lock:
            run.res.errors.append({"problem": f"generate: exit {o.returncode}, no summary "
                                              f"({o.stderr[-300:].strip()})", "command": " ".join(cmd)})
        return
    s = summary[0]
    run.res.generate = {"seed": seed, "programs": s["programs"], "runs": s["runs"],
                        "failing_programs": s["failing_programs"], "seconds": s["seconds"]}
    for f in HJ.of_type(o.data, "generate-failure"):
        run.add_failure({
            "scenario": f["program"], "mode": "generate", "strategy": f["strategy"], "depth": 3,
            "seed": f["run_seed"], "status": "failed", "reason": f["signature"], "batch": None,
            "replay": run.wrapped(f["replay"]),
            "replay_label": "replay (the program as drawn)",
            "stdout_tail": (f"the shrunk program ({f.get('shrunk_lines', '?')} lines), replayed by:\n  "
                            f"{run.wrapped(f.get('shrunk_replay', ''))}\n\n{f.get('shrunk', '')}")})


def summary_line(res) -> str:
    g = getattr(res, "generate", None) or {}
    return (f"stress: generate: {g.get('programs', 0):,} programs (seed {g.get('seed', '-')}), "
            f"{g.get('runs', 0):,} runs, {g.get('failing_programs', 0)} failing")

