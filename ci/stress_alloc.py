"""How the controlled phase of `make stress` spends its budget: a first pass
that gives every (scenario, strategy, PCT depth) pair a batch sized from the
budget, then the rest where new behaviour classes still appear per second.
docs/stress.md ("Where the budget goes") gives the rule and its why.

Every function here but `AdaptiveSource`'s bookkeeping is pure, so the rule is
tested without a clock (ci/test_stress.py)."""
from __future__ import annotations

import dataclasses

import stress_plan as P

# A controlled batch shorter than this is mostly process start and parse
# (about 2 ms together, plus the first run's allocations): the first pass
# never cuts a batch below it, and a budget that cannot give every pair one
# batch this long says how long it would need.
MIN_BATCH_MS = 20
# The longest batch: the budget is kept to within about one batch.
MAX_BATCH_MS = 1000
# The first pass takes at most this share of the controlled phase when the
# budget allows a batch of MIN_BATCH_MS per pair within it; the rest is
# allocated.  Half: at 60 s a pair's first batch is about 95 ms (a few
# hundred runs), enough to see whether its classes are still growing.
FIRST_PASS_SHARE = 0.5
# Batches of the allocated part: short enough that the allocation follows
# the yields (about a hundred decisions a worker in 60 s), long enough to
# keep process start below 1 % of a batch.
ALLOC_BATCH_MS = 250
# A decision about batch i uses the outcomes of batches up to i - LAG only,
# so it does not depend on which worker finished first (a worker waits for
# them when they are late).  At least the number of workers, or they wait.
LAG = 4
# Every pair keeps this share of the allocated part spread evenly: a pair
# whose classes stopped growing (or a scenario the bounded search proves)
# still gets a token of runs, because a yield of zero so far is a sample,
# not a proof.
TOKEN_SHARE = 0.10
# A scenario that declares itself sampled (`sampled "why"`: the bounded
# search cannot finish it, so stress is its only check) has its weight and
# its token multiplied by this, and each of its pairs gets at least this
# many times an even split of the allocated batches: its runs are slow (300-
# 1,000 a second for many-pools-churn against 20,000 for most files), so
# by yield alone a 20 s run gave it 625 runs where the others had thousands.
SAMPLED_WEIGHT = 4.0
# The yield of a pair is taken over its last few batches: classes found
# early say little about what is left to find.
YIELD_WINDOW = 3
# A `require` line a pair reaches for the first time counts as this many
# new classes in its yield: a goal the scenario names, reached by a
# strategy that had not reached it, is worth more than one more order of
# its steps (on step time a pair finds hundreds of classes a batch).
REACH_VALUE = 100
# Tag of the allocation draws: a stream apart from the base seeds.
ALLOC_TAG = 0x616C6C6F63000000


@dataclasses.dataclass(frozen=True)
class Pair:
    scenario: str
    strategy: str
    depth: int

    def label(self) -> str:
        return f"{self.scenario} {self.strategy}" + (f" depth {self.depth}" if self.strategy == "pct" else "")


def pairs(scenarios: list[str]) -> list[Pair]:
    """Every pair, in first-pass order: batch k of a cycle is scenario k % S
    with strategy (k // S) % R, as the fixed plan had it."""
    return [Pair(scenarios[k % len(scenarios)], *P.ROTATION[k // len(scenarios)])
            for k in range(len(scenarios) * len(P.ROTATION))]


def first_pass_ms(phase_seconds: float, jobs: int, npairs: int) -> int:
    """The first pass's batch: FIRST_PASS_SHARE of the phase over the pairs
    when that leaves MIN_BATCH_MS each, else all of it, never above
    MAX_BATCH_MS; below MIN_BATCH_MS the budget is too short (covered() says
    how many pairs fit, seconds_needed() what would do)."""
    worker_ms = phase_seconds * 1000 * max(1, jobs)
    share = worker_ms * FIRST_PASS_SHARE / npairs
    if share >= MIN_BATCH_MS:
        return int(min(MAX_BATCH_MS, share))
    return int(max(MIN_BATCH_MS, min(MAX_BATCH_MS, worker_ms / npairs)))


def covered(phase_seconds: float, jobs: int, npairs: int) -> int:
    """Pairs the first pass reaches at first_pass_ms batches in the phase."""
    ms = first_pass_ms(phase_seconds, jobs, npairs)
    return min(npairs, int(phase_seconds * 1000 * max(1, jobs) // ms))


def seconds_needed(npairs: int, jobs: int, controlled_share: float, before_s: float) -> float:
    """The budget (STRESS_SECONDS) at which every pair gets a MIN_BATCH_MS
    batch: the controlled phase must hold npairs of them on `jobs` workers,
    and it gets controlled_share of what is left after before_s (the fault
    loop)."""
    phase = npairs * MIN_BATCH_MS / 1000 / max(1, jobs)
    return before_s + phase / controlled_share


@dataclasses.dataclass
class PairStats:
    batches: int = 0
    new: list = dataclasses.field(default_factory=list)      # new classes, per batch
    seconds: list = dataclasses.field(default_factory=list)  # wall seconds, per batch

    def rate(self) -> float:
        """New classes a second over the last YIELD_WINDOW batches."""
        n, s = sum(self.new[-YIELD_WINDOW:]), sum(self.seconds[-YIELD_WINDOW:])
        return n / s if s > 0 else 0.0


def weights(stats: dict, sampled: set, excluded: set) -> list:
    """(pair, probability) for the allocated part, in a fixed order: each
    pair's share of (1 - TOKEN_SHARE) is its yield over the total yield, and
    every pair has TOKEN_SHARE / pairs besides; a sampled scenario's pairs
    count SAMPLED_WEIGHT times.  A pair never run yet (a first pass cut
    short) yields as much as the best pair: it is where nothing is known."""
    live = [p for p in stats if p.scenario not in excluded]
    if not live:
        return []
    best = max((stats[p].rate() for p in live if stats[p].batches), default=1.0) or 1.0
    mult = {p: SAMPLED_WEIGHT if p.scenario in sampled else 1.0 for p in live}
    raw = {p: (stats[p].rate() if stats[p].batches else best) * mult[p] for p in live}
    total_raw, total_mult = sum(raw.values()), sum(mult.values())
    share = {}
    for p in live:
        share[p] = TOKEN_SHARE * mult[p] / total_mult
        share[p] += (1 - TOKEN_SHARE) * (raw[p] / total_raw if total_raw > 0 else mult[p] / total_mult)
    # the sampled pairs' floor, taken from the others in proportion
    nsampled = sum(1 for p in live if p.scenario in sampled)
    floor = min(SAMPLED_WEIGHT / len(live), 1 / nsampled) if nsampled else 0.0
    lifted = {p: max(share[p], floor) for p in live if p.scenario in sampled}
    rest = sum(v for p, v in share.items() if p not in lifted)
    scale = (1 - sum(lifted.values())) / rest if rest > 0 else 0.0
    return [(p, lifted[p] if p in lifted else share[p] * scale) for p in live]


def pick(weighted: list, u: float):
    """The pair whose cumulative probability first exceeds u in [0, 1)."""
    acc = 0.0
    for p, w in weighted:
        acc += w
        if u < acc:
            return p
    return weighted[-1][0] if weighted else None


def draw(master: int, k: int) -> float:
    """Batch k's allocation draw in [0, 1): from the master seed and k only."""
    return P.splitmix64(master ^ ALLOC_TAG ^ ((k * P.GOLDEN) & P.MASK64)) / 2.0**64


class AdaptiveSource:
    """Hands out this shard's controlled batches: its first cycle is the
    first pass (every pair, in order), every later batch goes to the pair
    drawn by `weights` from the outcomes of the batches before it, LAG
    behind.  Batch numbers (and so base seeds) stay those of the fixed plan:
    shard i/n owns the cycles c with c % n == i - 1, so shards stay
    disjoint, and a failure's batch (scenario, strategy, depth, base) is
    recorded with it and replays without the plan.  Callers hold a lock."""

    def __init__(self, master: int, scenarios: list[str], shard: P.Shard, sampled=None):
        self.master, self.scenarios, self.shard = master, scenarios, shard
        self.order = pairs(scenarios)
        self.cycle_len = len(self.order)
        self.next_k = (shard.index - 1) * self.cycle_len
        self.position = 0                   # batches handed out by this source
        self.positions: dict = {}           # k -> position
        self.outcomes: dict = {}            # position -> (pair, new, seconds)
        self.applied = 0                    # outcomes folded into stats, in order
        self.stats = {p: PairStats() for p in self.order}
        self.sampled = set(sampled or ())
        self.excluded: set = set()          # scenarios that do not run (bad input, declined)

    def in_first_pass(self) -> bool:
        return self.position < self.cycle_len

    def ready(self) -> bool:
        """Whether the next batch can be decided now (its lagged outcomes are in)."""
        if self.in_first_pass():
            return True
        # exactly the outcomes before position - LAG: more, when a worker
        # happened to be quick, would make the draw depend on timing
        while self.applied < self.position - LAG and self.applied in self.outcomes:
            p, new, secs = self.outcomes.pop(self.applied)
            st = self.stats[p]
            st.batches += 1
            st.new.append(new)
            st.seconds.append(secs)
            self.applied += 1
        return self.applied >= self.position - LAG

    def take(self) -> P.Batch | None:
        """The next batch, or None when every scenario is excluded.  Call
        only when ready()."""
        k = self.next_k
        if self.in_first_pass():
            pair = self.order[k % self.cycle_len]
        else:
            pair = pick(weights(self.stats, self.sampled, self.excluded), draw(self.master, k))
            if pair is None:
                return None
        base = P.splitmix64(self.master ^ P.MODE_TAG["controlled"] ^ ((k * P.GOLDEN) & P.MASK64))
        self.positions[k] = self.position
        self.position += 1
        self.next_k += 1
        if self.next_k % self.cycle_len == 0:  # skip the other shards' cycles
            self.next_k += (self.shard.count - 1) * self.cycle_len
        return P.Batch("controlled", k, pair.scenario, pair.strategy, pair.depth, base)

    def done(self, b: P.Batch, new: int, seconds: float):
        """Batch b's outcome: what it found new (classes new to its
        scenario, REACH_VALUE for each requirement its pair reached for the
        first time), its wall time."""
        self.outcomes[self.positions.pop(b.k)] = (Pair(b.scenario, b.strategy, b.depth), new, seconds)
