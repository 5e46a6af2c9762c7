"""The work plan of `make stress`: which seeds, strategies and scenarios each
batch covers, derived from one master seed so any batch -- and therefore any
shard -- can be replayed on another machine.

A run is an endless numbered sequence of batches per mode.  Batch k of mode M:
  scenario  = scenarios[k % S]
  strategy  = rotation[(k // S) % R]   (controlled mode; native has R = 1)
  base seed = splitmix64(master ^ tag(M) ^ k * GOLDEN)
and the harness derives run j's seed from (base, j) itself, so the seeds of a
batch do not depend on how many of them a time budget lets it run.
A *cycle* is S * R consecutive batches: every (scenario, strategy) pair once.
Shard i/n (1-based) owns the cycles c with c % n == i - 1.  Shards of one
master seed are therefore disjoint by construction, and every shard still
covers every scenario and strategy (owning batches k % n instead would starve
a shard of scenarios whenever n and S share a factor)."""
from __future__ import annotations

import dataclasses
import re
import time

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15

# Domain tags keep the seed streams of the modes apart: a seed that found
# nothing in one mode says nothing about another ("real" runs the same seeds'
# noise on the real Windows pool, a different system from the model native
# runs on, so it gets its own stream too).
MODE_TAG = {"controlled": 0x636F6E74726F6C00, "native": 0x6E61746976650000,
            "real": 0x7265616C00000000, "faultloop": 0x6661756C74000000,
            "generate": 0x67656E6572617465}

# The batch modes, in the order their phases run.  "native" and "real" are
# free-running (OS threads, real time): "native" drives the model of the pool
# (tpheal-harness --mode native), "real" the real Windows thread pool
# (tpheal-harness-realpool, which has only that mode).  Real runs before
# native so that a batch overrunning its slice eats into the smaller share.
BATCH_MODES = ("controlled", "real", "native")
FREE_RUNNING = ("native", "real")

# Share of the timed budget per mode.  Controlled schedules are where the
# interleavings are explored (~35,000 a CPU second against one free-running
# run per 2-3 s of real time), so they keep 80% whatever else is available;
# with the real pool, 3/4 of the free-running share goes to it: it is the
# only phase that tests the library against the system it is written for,
# while native only re-checks the model on OS threads.
SHARES = {"controlled": 0.80, "native": 0.20}
SHARES_WITH_REAL = {"controlled": 0.80, "real": 0.15, "native": 0.05}


def plan_shares(have_real: bool, sanitize: str = "", only=None) -> dict:
    """Mode -> share of the timed budget (summing to 1), in phase order.
    Under TSan the controlled phase is the race detector's (docs/races.md);
    `only` restricts the modes (--modes); the kept shares are rescaled."""
    base = SHARES_WITH_REAL if have_real else SHARES
    modes = [m for m in BATCH_MODES if m in base]
    if only is not None:
        modes = [m for m in modes if m in only]
    total = sum(base[m] for m in modes)
    return {m: base[m] / total for m in modes} if total else {}

# Rotation of controlled strategies: a random walk, then PCT at depths 1-3
# (depth 1 is a random priority order with no change point; depths 2 and 3
# find the ordering bugs of one or two preemptions -- PCT's guarantee is per
# depth, so every depth gets an equal share).
ROTATION = (("random", 0), ("pct", 1), ("pct", 2), ("pct", 3))


def splitmix64(x: int) -> int:
    """SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijection on 64 bits
    whose outputs for consecutive inputs are uncorrelated."""
    x = (x + GOLDEN) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def run_seed(base: int, j: int) -> int:
    """Seed of run j of a batch: the same function as harness/stress
    (stress_run_seed) so a failure's seed can be recomputed from its batch."""
    return splitmix64((base + j) & MASK64)


def clock_master_seed() -> int:
    # The only use of real time in the plan: choosing a fresh master seed,
    # which the banner prints so the run can be repeated with SEED=.
    return splitmix64(time.time_ns()) & ((1 << 63) - 1)


def parse_seed(text: str) -> int:
    """Decimal or 0x-hex, 0 <= seed < 2**64."""
    t = text.strip().lower()
    try:
        v = int(t, 16) if t.startswith("0x") else int(t, 10)
    except ValueError:
        raise ValueError(f"seed '{text}' is not a decimal or 0x-hex integer") from None
    if not 0 <= v <= MASK64:
        raise ValueError(f"seed '{text}' does not fit in 64 bits")
    return v


@dataclasses.dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def owns_cycle(self, c: int) -> bool:
        return c % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str | None) -> Shard:
    if not text:
        return Shard(1, 1)
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise ValueError(f"shard '{text}' is not i/n (for example 1/4)")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise ValueError(f"shard '{text}': need 1 <= i <= n (shards are numbered from 1)")
    return Shard(i, n)


@dataclasses.dataclass(frozen=True)
class Batch:
    mode: str
    k: int              # batch number in the mode's sequence
    scenario: str
    strategy: str       # "random" | "pct" | "" (native)
    depth: int          # PCT depth, 0 otherwise
    base: int           # base seed; run j has seed run_seed(base, j)


def rotation(mode: str):
    # Free-running modes have no strategy: the OS schedules.
    return ROTATION if mode == "controlled" else (("", 0),)


def batch(master: int, mode: str, k: int, scenarios: list[str]) -> Batch:
    s = len(scenarios)
    scen = scenarios[k % s]
    rot = rotation(mode)
    strategy, depth = rot[(k // s) % len(rot)]
    base = splitmix64(master ^ MODE_TAG[mode] ^ ((k * GOLDEN) & MASK64))
    return Batch(mode, k, scen, strategy, depth, base)


class BatchSource:
    """Hands out this shard's batches of one mode in order, to any number of
    worker threads (the caller holds the lock)."""

    def __init__(self, master: int, mode: str, scenarios: list[str], shard: Shard):
        self.master, self.mode, self.scenarios, self.shard = master, mode, scenarios, shard
        self.cycle_len = len(scenarios) * len(rotation(mode))
        self.next_k = (shard.index - 1) * self.cycle_len

    def take(self) -> Batch:
        b = batch(self.master, self.mode, self.next_k, self.scenarios)
        self.next_k += 1
        if self.next_k % self.cycle_len == 0:  # skip the other shards' cycles
            self.next_k += (self.shard.count - 1) * self.cycle_len
        return b
