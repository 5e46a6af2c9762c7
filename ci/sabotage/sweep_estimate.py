"""The time-left estimate of the progress lines: the catcher time still to
run at the baseline's per-catcher costs, over the workers.  It is not
extrapolated from the entries finished so far (a first entry that rebuilt
the sanitizer copy made that estimate halve between the first two lines);
rebuilds are not in it.  docs/sabotage.md, "Output"."""
from __future__ import annotations


def planned_seconds(e, full_set, baseline, key):
    """What entry e's catchers cost, from the baseline (green) pass: its
    named catchers when it is caught as declared, the whole fallback set
    when it has none (a control, a defect nobody assigned: a survivor runs
    every catcher).  baseline: catcher key -> seconds; key: a catcher's key."""
    if e.expect == "refused-by-build":
        return 0.0
    cs = e.caught_by if e.expect == "caught" and e.caught_by else full_set
    return sum(baseline.get(key(c), 0.0) for c in cs)


def seconds_left(planned, taken, started, t, workers):
    """planned: each entry's planned_seconds, by index; taken: the indexes
    a worker has started (finished or not); started: index -> start time of
    those still running; t: now; workers: how many.  An entry not started
    costs all it planned, one in progress what remains of that."""
    left = sum(planned[j] for j in range(len(planned)) if j not in taken)
    left += sum(max(0.0, planned[j] - (t - t1)) for j, t1 in started.items())
    left /= workers
    return left
