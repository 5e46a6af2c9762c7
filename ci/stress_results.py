"""The results of a stress run: per-scenario counters, the distinct
interleavings seen, failures; their JSON form (build/stress/results.json), the
summary table, and the merge of several result files (shards, machines).

Counters are sums and the interleaving sets are unions, so merging shards
gives the same numbers as one run that did all their work."""
from __future__ import annotations

import dataclasses
import heapq
import json
import pathlib

# Still /2 with the "real" mode added: no existing field changed meaning, a
# reader of /2 finds one more key in totals, scenarios and skipped.
FORMAT = "tpheal-stress-results/2"
MODES = ("controlled", "native", "real")

# Distinct interleavings are counted exactly up to 2*KMV_K per scenario and
# mode, and past that estimated with a K-minimum-values sketch: the interleaving
# hashes are uniform 64-bit values, so the K smallest seen estimate the number
# of distinct ones as (K-1) * 2^64 / (the K-th smallest), with a relative error
# of about 1/sqrt(K) (1.6 % at 4,096).  Keeping every hash made a 60 s run's
# results.json 65 MB and its driver's memory grow with the budget; the sketch
# is bounded, deterministic and still merges exactly: the K smallest of a union
# are among the K smallest of its parts.
KMV_K = 4096


@dataclasses.dataclass
class ModeStats:
    runs: int = 0
    failures: int = 0
    steps: int = 0
    batches: int = 0
    busy_seconds: float = 0.0       # summed wall time of this mode's batches
    max_choice_points: int = 0
    hashes: set = dataclasses.field(default_factory=set)  # interleaving hashes (ints)
    sketched: bool = False  # hashes holds only the KMV_K smallest seen
    # behaviour classes (Mazurkiewicz traces: harness/sched/sched_trace.c),
    # counted the same way; empty from a harness that does not report them
    classes: set = dataclasses.field(default_factory=set)
    classes_sketched: bool = False

    def _bound(self):
        if len(self.hashes) > 2 * KMV_K:
            self.hashes = set(heapq.nsmallest(KMV_K, self.hashes))
            self.sketched = True
        if len(self.classes) > 2 * KMV_K:
            self.classes = set(heapq.nsmallest(KMV_K, self.classes))
            self.classes_sketched = True

    def distinct(self) -> int:
        """Distinct interleavings: exact, or the KMV estimate once sketched."""
        return _count(self.hashes, self.sketched)

    def distinct_classes(self) -> int:
        """Distinct behaviour classes; the interleavings where the harness
        reports no classes (an older harness, free-running modes)."""
        if not self.classes:
            return self.distinct()
        return _count(self.classes, self.classes_sketched)

    def add_batch(self, runs, failures, steps, seconds, choice_points, hashes, classes=()):
        self.runs += runs
        self.failures += failures
        self.steps += steps
        self.batches += 1
        self.busy_seconds += seconds
        self.max_choice_points = max(self.max_choice_points, choice_points)
        self.hashes.update(hashes)
        self.classes.update(classes)
        self._bound()

    def merge(self, o: "ModeStats"):
        self.runs += o.runs
        self.failures += o.failures
        self.steps += o.steps
        self.batches += o.batches
        self.busy_seconds += o.busy_seconds
        self.max_choice_points = max(self.max_choice_points, o.max_choice_points)
        self.hashes |= o.hashes
        self.sketched = self.sketched or o.sketched
        if self.sketched:
            self.hashes = set(heapq.nsmallest(KMV_K, self.hashes))
        self.classes |= o.classes
        self.classes_sketched = self.classes_sketched or o.classes_sketched
        if self.classes_sketched:
            self.classes = set(heapq.nsmallest(KMV_K, self.classes))
        self._bound()

    def rate(self) -> float:
        """Schedules per second of one worker busy on this scenario."""
        return self.runs / self.busy_seconds if self.busy_seconds > 0 else 0.0

    def to_json(self) -> dict:
        return {"runs": self.runs, "failures": self.failures, "steps": self.steps,
                "batches": self.batches, "busy_seconds": round(self.busy_seconds, 3),
                "max_choice_points": self.max_choice_points,
                "distinct_interleavings": self.distinct(),
                "distinct_is_estimate": self.sketched,
                "interleaving_hashes": sorted(f"{h:016x}" for h in self.hashes),
                "behaviour_classes": _count(self.classes, self.classes_sketched),
                "classes_is_estimate": self.classes_sketched,
                "class_hashes": sorted(f"{h:016x}" for h in self.classes)}

    @classmethod
    def from_json(cls, d: dict) -> "ModeStats":
        s = cls(runs=d.get("runs", 0), failures=d.get("failures", 0), steps=d.get("steps", 0),
                batches=d.get("batches", 0), busy_seconds=d.get("busy_seconds", 0.0),
                max_choice_points=d.get("max_choice_points", 0))
        s.hashes = {int(h, 16) for h in d.get("interleaving_hashes", [])}
        s.sketched = bool(d.get("distinct_is_estimate", False))
        s.classes = {int(h, 16) for h in d.get("class_hashes", [])}
        s.classes_sketched = bool(d.get("classes_is_estimate", False))
        return s


def _count(values: set, sketched: bool) -> int:
    if not sketched:
        return len(values)
    kth = heapq.nsmallest(KMV_K, values)[-1]
    return int((KMV_K - 1) * 2**64 / (kth + 1))


@dataclasses.dataclass
class Results:
    master_seed: int = 0
    shards: list = dataclasses.field(default_factory=list)   # ["1/2", ...]
    sanitize: str = ""
    budget_seconds: float = 0.0
    split: dict = dataclasses.field(default_factory=dict)    # mode -> seconds planned
    phase_seconds: dict = dataclasses.field(default_factory=dict)  # mode -> wall seconds
    scenarios: dict = dataclasses.field(default_factory=dict)  # name -> {mode: ModeStats}
    faultloop: dict = dataclasses.field(default_factory=dict)  # name -> summary dict
    failures: list = dataclasses.field(default_factory=list)
    errors: list = dataclasses.field(default_factory=list)     # harness problems (not verdicts)
    skipped: dict = dataclasses.field(default_factory=dict)    # name -> {mode: why}
    cpu_seconds: dict = dataclasses.field(default_factory=dict)  # mode -> CPU s of the harness
    generate: dict = dataclasses.field(default_factory=dict)   # the generated phase (ci/stress_generate.py)
    # controlled batches per (scenario, strategy and depth): name -> {"pct2": {...}}
    pairs: dict = dataclasses.field(default_factory=dict)
    plan: dict = dataclasses.field(default_factory=dict)       # the first pass, as sized

    def add_pair(self, scenario: str, strategy: str, depth: int, runs: int, new: int, new_reach: int = 0):
        key = pair_key(strategy, depth)
        p = self.pairs.setdefault(scenario, {}).setdefault(key, {"batches": 0, "runs": 0, "new_classes": 0,
                                                                 "requires_reached": 0})
        p["batches"] += 1
        p["runs"] += runs
        p["new_classes"] += new
        p["requires_reached"] = p.get("requires_reached", 0) + new_reach

    def unrun(self, scenarios, rotation) -> dict:
        """The pairs and the scenarios that got no controlled run."""
        pairs = [f"{n} {pair_key(st, d)}" for n in scenarios for st, d in rotation
                 if not self.pairs.get(n, {}).get(pair_key(st, d), {}).get("runs")]
        names = [n for n in scenarios if not any(v.get("runs") for v in self.pairs.get(n, {}).values())]
        return {"pairs": pairs, "scenarios": names}

    def mode(self, scenario: str, mode: str) -> ModeStats:
        return self.scenarios.setdefault(scenario, {}).setdefault(mode, ModeStats())

    def total(self, mode: str) -> ModeStats:
        t = ModeStats()
        for per in self.scenarios.values():
            if mode in per:
                t.merge(per[mode])
        return t

    def failure_count(self) -> int:
        """Every failure, counted: a batch reports how many of its runs failed
        (failures_total) but details only the first few, so the records
        undercount -- a 60 s run of a broken build said 320 failures (16
        batches x the cap of 20) where 54,865 runs had failed.  The counters
        of the batch modes (a broken batch adds its 1 there), plus the fault
        loop's failures (one record each) and the harness problems."""
        counted = sum(s.failures for per in self.scenarios.values() for s in per.values())
        return counted + self._faultloop_failures() + len(self.errors)

    def recorded_count(self) -> int:
        """Failures recorded in detail (seed, reason, replay) in failures[]."""
        return len(self.failures)

    def _faultloop_failures(self, scenario=None) -> int:
        """The phases that record one failure each: the fault loop's sites and
        the generated phase's failing programs."""
        return sum(1 for f in self.failures if f.get("mode") in ("faultloop", "generate")
                   and (scenario is None or f.get("scenario") == scenario))

    def scenario_failures(self, name: str) -> int:
        per = self.scenarios.get(name, {})
        return sum(s.failures for s in per.values()) + self._faultloop_failures(name)

    def to_json(self) -> dict:
        tot = {m: self.total(m) for m in MODES}
        return {
            "format": FORMAT,
            "master_seed": self.master_seed,
            "replay": f"make stress SEED={self.master_seed}",
            "shards": self.shards,
            "sanitize": self.sanitize,
            "budget_seconds": self.budget_seconds,
            "split_seconds": self.split,
            "phase_seconds": {k: round(v, 3) for k, v in self.phase_seconds.items()},
            "totals": {m: {"runs": t.runs, "failures": t.failures,
                           "distinct_interleavings": t.distinct(),
                           "behaviour_classes": _count(t.classes, t.classes_sketched),
                           "schedules_per_second": round(
                               t.runs / self.phase_seconds[m], 1)
                           if self.phase_seconds.get(m) else 0.0,
                           # Load-independent: runs per CPU second the
                           # harness processes used (the machine may be shared).
                           "schedules_per_cpu_second": round(
                               t.runs / self.cpu_seconds[m], 1)
                           if self.cpu_seconds.get(m) else 0.0}
                       for m, t in tot.items()},
            "faultloop_sites": sum(f.get("sites", 0) for f in self.faultloop.values()),
            "scenarios": {name: {m: s.to_json() for m, s in sorted(per.items())}
                          for name, per in sorted(self.scenarios.items())},
            "faultloop": self.faultloop,
            "generate": self.generate,
            "skipped": self.skipped,
            "pairs": self.pairs,
            "plan": self.plan,
            "cpu_seconds": {k: round(v, 3) for k, v in self.cpu_seconds.items()},
            # failures_total counts every failing run; failures[] holds the
            # first few of each batch in detail (failures_recorded of them).
            "failures_total": self.failure_count(),
            "failures_recorded": self.recorded_count(),
            "failures": self.failures,
            "errors": self.errors,
        }

    @classmethod
    def from_json(cls, d: dict) -> "Results":
        if d.get("format") != FORMAT:
            raise ValueError(f"not a stress result file (format {d.get('format')!r})")
        r = cls(master_seed=d.get("master_seed", 0), shards=list(d.get("shards", [])),
                sanitize=d.get("sanitize", ""), budget_seconds=d.get("budget_seconds", 0.0),
                split=dict(d.get("split_seconds", {})),
                phase_seconds=dict(d.get("phase_seconds", {})),
                faultloop=dict(d.get("faultloop", {})), failures=list(d.get("failures", [])),
                skipped=dict(d.get("skipped", {})), cpu_seconds=dict(d.get("cpu_seconds", {})),
                errors=list(d.get("errors", [])), generate=dict(d.get("generate", {})),
                pairs=dict(d.get("pairs", {})), plan=dict(d.get("plan", {})))
        for name, per in d.get("scenarios", {}).items():
            for m, s in per.items():
                r.scenarios.setdefault(name, {})[m] = ModeStats.from_json(s)
        return r

    def merge(self, o: "Results"):
        """Shards run side by side: budgets and phase times are maxima (wall
        clock), counters sums, interleavings unions."""
        if not self.shards:
            self.master_seed, self.sanitize = o.master_seed, o.sanitize
        elif o.master_seed != self.master_seed:
            self.errors.append({"problem": f"merged shards of different master seeds "
                                           f"({self.master_seed} and {o.master_seed}): "
                                           "their seeds may overlap"})
        self.shards += o.shards
        self.budget_seconds = max(self.budget_seconds, o.budget_seconds)
        for k, v in o.split.items():
            self.split[k] = max(self.split.get(k, 0), v)
        for k, v in o.phase_seconds.items():
            self.phase_seconds[k] = max(self.phase_seconds.get(k, 0.0), v)
        for name, per in o.scenarios.items():
            for m, s in per.items():
                self.mode(name, m).merge(s)
        for name, f in o.faultloop.items():
            mine = self.faultloop.get(name)
            if mine is None or f.get("sites", 0) > mine.get("sites", 0):
                self.faultloop[name] = f
        self.failures += o.failures
        self.errors += o.errors
        for name, per in o.skipped.items():
            self.skipped.setdefault(name, {}).update(per)
        for k, v in o.cpu_seconds.items():
            self.cpu_seconds[k] = self.cpu_seconds.get(k, 0.0) + v
        for name, per in o.pairs.items():
            for key, p in per.items():
                mine = self.pairs.setdefault(name, {}).setdefault(key, {"batches": 0, "runs": 0, "new_classes": 0,
                                                                        "requires_reached": 0})
                for f in mine:
                    # a requirement each shard reached first is one requirement
                    mine[f] = max(mine[f], p.get(f, 0)) if f == "requires_reached" else mine[f] + p.get(f, 0)
        if o.plan and not self.plan:
            self.plan = dict(o.plan)


def pair_key(strategy: str, depth: int) -> str:
    return f"pct{depth}" if strategy == "pct" else strategy


def write(results: Results, path: pathlib.Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    # Compact: a 60 s run stores ~600,000 interleaving hashes, and indenting
    # them costs a second for no reader (python3 -m json.tool shows it).
    tmp.write_text(json.dumps(results.to_json(), separators=(",", ":")) + "\n")
    tmp.replace(path)


def load(path: pathlib.Path) -> Results:
    return Results.from_json(json.loads(path.read_text()))


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.1f}"


def _classes(c: ModeStats) -> str:
    """Behaviour classes, '-' from a harness that does not report them."""
    if not c.classes:
        return "-"
    return f"{'~' if c.classes_sketched else ''}{c.distinct_classes():,}"


def table(results: Results) -> str:
    """One row per scenario: runs per mode, distinct interleavings (controlled
    mode: the harness hashes each run's sequence of thread switches),
    schedules/s per busy worker, failures; then the totals.  The real-pool
    columns are there when the run had a real phase (Windows builds) or a
    merged file has real runs; "-" marks a scenario the real pool declined."""
    show_real = "real" in results.split or any("real" in per for per in results.scenarios.values())
    # A controlled run is one schedule; a free-running run is one run of
    # OS threads (seconds of real time): the rate columns say which.
    head = ("scenario", "controlled", "interleavings", "classes", "sched/s", "native", "runs/s") + \
        (("real", "runs/s") if show_real else ()) + ("fault sites", "failures")
    rows = []
    for name in sorted(set(results.scenarios) | set(results.faultloop)):
        per = results.scenarios.get(name, {})
        c, n = per.get("controlled", ModeStats()), per.get("native", ModeStats())
        fl = results.faultloop.get(name, {})
        fails = results.scenario_failures(name)
        real = ()
        if show_real:
            r = per.get("real", ModeStats())
            declined = "real" in results.skipped.get(name, {}) and not r.runs
            real = ("-", "-") if declined else (f"{r.runs:,}", _fmt_rate(r.rate()))
        rows.append((name, f"{c.runs:,}", f"{'~' if c.sketched else ''}{c.distinct():,}", _classes(c),
                     _fmt_rate(c.rate()),
                     f"{n.runs:,}", _fmt_rate(n.rate())) + real +
                    (str(fl.get("sites", "-")) if fl else "-", str(fails)))
    c, n, r = results.total("controlled"), results.total("native"), results.total("real")
    pc, pn, pr = (results.phase_seconds.get(m, 0) for m in ("controlled", "native", "real"))
    rows.append(("TOTAL (wall)", f"{c.runs:,}", f"{'~' if c.sketched else ''}{c.distinct():,}", _classes(c),
                 _fmt_rate(c.runs / pc if pc else 0), f"{n.runs:,}",
                 _fmt_rate(n.runs / pn if pn else 0)) +
                ((f"{r.runs:,}", _fmt_rate(r.runs / pr if pr else 0)) if show_real else ()) +
                (str(sum(f.get("sites", 0) for f in results.faultloop.values())),
                 str(results.failure_count())))
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    def fmt(r):
        return "  ".join([r[0].ljust(widths[0])] +
                         [r[i].rjust(widths[i]) for i in range(1, len(r))])
    sep = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(head), sep] + [fmt(r) for r in rows[:-1]] + [sep, fmt(rows[-1])])
