"""An entry's verdict from the catcher runs that failed: the outcome
(caught, caught-by-other, wrong-kind, timeout) and whether that is what the
entry declared.  The failure kinds themselves are read in sweep_kinds; an
entry that ran and nothing failed is judged where it ran (sweep_entry).
docs/sabotage.md, "What a sweep does" 4, and "Declared or measured"."""
from __future__ import annotations


def judge(e, runs, ran, named, done, want=None):
    """runs: the failed catcher runs, in run order (all of them when the
    whole set ran); the first decides the outcome, all are listed."""
    want = want or e.failure
    r = runs[0]
    if not named and not e.caught_by and e.expect == "caught":
        # no catcher named: anything in the suite may catch it; a declared
        # kind must be among the kinds seen
        hit = [x for x in runs if want is None or x.kind == want]
        if hit:
            r = hit[0]
    kw = dict(catcher=r.label, kind=r.kind, schedules=r.schedules, seed=r.seed, ran=ran,
              catchers=[{"catcher": x.label, "kind": x.kind, "schedules": x.schedules,
                         "seed": x.seed} for x in runs])
    where = f"{r.label}" + (f" after {r.schedules} schedules" if r.schedules else "") \
        + (f" (seed {r.seed})" if r.seed else "")
    also = f"; also {', '.join(x.label for x in runs if x is not r)}" if len(runs) > 1 else ""
    if e.expect == "survives":
        return done("caught-by-other" if not named else "caught", False,
                    f"a control was caught by {where} ({r.kind}){also}", **kw)
    if not named and not e.caught_by:
        if want is None or r.kind == want:
            return done("caught", True, f"caught by {where} ({r.kind}){also}", **kw)
        return done("wrong-kind", False, f"caught by {where} as {r.kind}, {want} expected{also}",
                    **kw)
    if not named:
        return done("caught-by-other", False,
                    f"caught by {where} ({r.kind}), none of the named catchers{also}", **kw)
    if r.kind == want:
        return done("caught", True, f"caught by {where} ({r.kind})", **kw)
    if r.kind == "timeout":
        return done("timeout", False, f"{r.label} hung past its bound ({want} expected)", **kw)
    return done("wrong-kind", False, f"caught by {where} as {r.kind}, {want} expected", **kw)
