#!/usr/bin/env python3
"""`make stress`: every scenario of the corpus under seeded schedules for a
time budget, on both cores.  docs/stress.md is the user's page.

  ci/stress.py --build build --seconds 60 [--seed S] [--shard i/n]
               [--sanitize address|thread] [--scenarios FILE|DIR ...]
               [--modes faultloop,controlled,real,native] [--exec-wrapper wine]
  ci/stress.py merge OUT.json IN.json...      combine shard result files

Phases, in order, sharing the budget:
  1. fault loop   each scenario with its 1st, 2nd, ... failable seam call
                  failed, until none is left (bounded, not timed)
  2. controlled   deterministic scheduler, random walk + PCT depth 1-3
                  (80% of what is left; 0% under TSan, which cannot follow fibers)
  3. real         Windows builds only (tpheal-harness-realpool next to the
                  harness): the real Windows thread pool, free-running (15%)
  4. native       the model on real OS threads with seeded noise (the other
                  20%, 5% when real runs); a failure of 3 or 4 is re-run under
                  the controlled scheduler on the model from its seed
Exit status: 0 no failure, 1 a failure (or a harness problem), 2 bad usage."""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shlex
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import stress_generate as G  # noqa: E402
import stress_alloc as A  # noqa: E402
import stress_harness as H  # noqa: E402
import stress_plan as P  # noqa: E402
import stress_results as R  # noqa: E402
from stress_progress import Progress  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
# A batch returns after this much wall time (the harness checks its clock
# between runs): long enough that process start-up is noise (~2 ms), short
# enough that the budget is kept to within about one batch.
BATCH_MS = 1000
# How long a free-running batch may overrun its slice before it is killed
# and reported as a hang (timeout, with its seed): a native run of the corpus
# takes 1-3 s of real time (the scenarios' settle times are real there).
BATCH_GRACE_NATIVE = 15
# ... where its slice is at least the one run it may start: the harness takes
# a run only if its lower bound fits in --max-run-ms (the time left in the
# phase), and the overdue-* runs take 20-30 s -- killing them at the 1 s
# slice + 15 s made every one of them a false `timeout` (seen on the real pool
# with a 150 s budget).  Without a bound (--batches), this one:
FREE_RUN_MAX_MS = 60_000
# Runs per free-running batch.  One: a free-running run's settles alone (2 s)
# outlast BATCH_MS, so a batch never reached its second run anyway, and with
# one run a batch that hangs or dies without a word (a kill under Wine prints
# no crash line) is still attributed to its seed, run_seed(base, 0).
FREE_RUN_COUNT = 1
# Most failure files written per (scenario, mode); all failures are counted.
MAX_FAILURE_FILES = 20
# Most failures printed as they happen per (scenario, mode).
MAX_FAILURE_NOTES = 3


class UsageError(Exception):
    pass


def rel(p: pathlib.Path) -> str:
    try:
        return str(p.resolve().relative_to(pathlib.Path.cwd().resolve()))
    except ValueError:
        return str(p)


def invoked(p: pathlib.Path) -> str:
    """How a harness is started so that the commands it prints name it
    pasteably from here: relative to here, and never a bare name (the shell,
    and exec, would look that up on PATH)."""
    r = rel(p)
    return r if os.sep in r or "/" in r else os.path.join(".", r)


def discover_scenarios(args_scenarios: list[str]) -> list[str]:
    """Sorted, so every shard and machine numbers the corpus the same way."""
    items = args_scenarios or [str(REPO / "scenarios")]
    found = []
    for item in items:
        p = pathlib.Path(item)
        if p.is_dir():
            found += [rel(f) for f in sorted(p.glob("*.scn"))]
        elif p.is_file():
            found.append(rel(p))
        else:
            raise UsageError(f"{item}: no such scenario file or directory")
    if not found:
        raise UsageError(f"no *.scn scenario in {', '.join(items)}")
    return sorted(set(found))


class Run:
    """One `ci/stress.py` invocation: configuration, shared counters, workers."""

    def __init__(self, args):
        self.args = args
        self.build = pathlib.Path(args.build)
        if args.sanitize:
            self.build = self.build / {"address": "asan", "thread": "tsan"}[args.sanitize]
        # Windows executables from Linux: `--exec-wrapper wine` (or
        # TPHEAL_EXEC_WRAPPER) prefixes every harness command.
        self.wrapper = shlex.split(args.exec_wrapper or os.environ.get("TPHEAL_EXEC_WRAPPER", ""))
        self.harness = H.find_harness(self.build, wrapped=bool(self.wrapper))
        if self.harness is None:
            raise UsageError(f"no tpheal-harness under {self.build}: build it first "
                             f"(make build{'-asan' if args.sanitize == 'address' else '-tsan' if args.sanitize == 'thread' else ''})")
        self.harness_rel = rel(self.harness)
        # Scenarios that say `build fail-fast` run on the sibling executable
        # built with TPHEAL_FAIL_FAST; the harness says so with exit status 4.
        self.sibling = self.harness.with_name("tpheal-harness-failfast" + self.harness.suffix)
        # The real Windows pool (mode "real"): built on Windows only.
        self.realpool = H.find_realpool(self.harness, wrapped=bool(self.wrapper))
        self.modes = parse_modes(args.modes)
        if self.modes is not None and "real" in self.modes and self.realpool is None:
            raise UsageError(f"--modes real: no {H.REALPOOL}{self.harness.suffix} next to "
                             f"{rel(self.harness)} (it is built for Windows only)")
        self.exe: dict = {}
        self.shard = P.parse_shard(args.shard)
        self.master = P.parse_seed(args.seed) if args.seed else P.clock_master_seed()
        self.scenarios = discover_scenarios(args.scenarios)
        self.out = pathlib.Path(args.out) if args.out else pathlib.Path(args.build) / "stress"
        self.fail_dir = self.out / "failures"
        self.env = H.wrapper_env(H.sanitizer_env(), self.wrapper, self.build)
        # The race build's controlled runs turn a TSan report into a failure
        # of the run (seed, replay; docs/races.md): TSan must not end the
        # process at the first one.
        self.race_env = None
        if args.sanitize == "thread":
            self.race_env = dict(self.env)
            if "TSAN_OPTIONS" not in os.environ:
                self.race_env["TSAN_OPTIONS"] = "halt_on_error=0:exitcode=66:second_deadlock_stack=1"
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)  # a controlled batch waits for its lagged outcomes
        self.res = R.Results(master_seed=self.master, shards=[str(self.shard)],
                             sanitize=args.sanitize or "", budget_seconds=args.seconds)
        self.files_written: dict = {}
        self.skipped: dict = {}     # (scenario, mode) -> why the harness declined it
        self.bad_input: set = set()  # scenarios the harness could not read (reported once)
        self.sampled: dict = {}     # scenario -> why it says it is sampled (its batches say)
        self.reach: dict = {}       # (scenario, strategy, depth) -> requirements its runs reached
        self.jobs = max(1, args.jobs)
        self.native_jobs = max(1, args.native_jobs or 4 * self.jobs)
        self.progress = Progress(sys.stderr, self.res, self.lock)

    # ---- the phases ---------------------------------------------------------
    def main(self) -> int:
        self.t0 = time.monotonic()
        self.deadline = self.t0 + self.args.seconds
        share = P.plan_shares(self.realpool is not None, self.args.sanitize or "", self.modes)
        modes = list(share)
        self.planned = modes
        self.banner(modes, share)
        self.prepare_out()
        if self.faultloop_on():
            self.phase_faultloop()
        left = max(0.0, self.deadline - time.monotonic())
        if G.enabled(self):
            self.res.split["generate"] = round(left * G.GENERATE_SHARE, 1)
            G.phase(self, left * G.GENERATE_SHARE)
            left = max(0.0, self.deadline - time.monotonic())
        for i, mode in enumerate(modes):
            rest = sum(share[m] for m in modes[i:])
            secs = left * share[mode] / rest if rest else 0
            self.res.split[mode] = round(secs, 1)
            self.phase_batches(mode, time.monotonic() + secs)
            left = max(0.0, self.deadline - time.monotonic())
        self.progress.stop()
        if "controlled" in modes:
            self.res.plan.setdefault("pairs", len(self.scenarios) * len(P.ROTATION))
            self.res.plan["plan"] = self.args.plan
            self.res.plan["unrun"] = self.res.unrun(self.scenarios, P.ROTATION)
            self.res.plan["sampled"] = dict(sorted(self.sampled.items()))
        R.write(self.res, self.out / "results.json")
        print(R.table(self.res))
        return self.verdict()

    def faultloop_on(self) -> bool:
        return not self.args.no_faultloop and self.args.sanitize != "thread" and \
            (self.modes is None or "faultloop" in self.modes)

    def banner(self, modes, share):
        self.again = repeat_command(self.args, self.master, self.shard, self.wrapper)
        again, a = self.again, self.args
        split = ", ".join(f"{m} {share[m]:.0%}" for m in modes) or "no timed phase"
        print(f"stress: master seed {self.master}  (repeat: {again})", flush=True)
        print(f"stress: {len(self.scenarios)} scenarios, {a.seconds:g} s budget ({split}"
              f"{', after the fault loop' if self.faultloop_on() else ''}"
              f"{f' and {G.GENERATE_SHARE:.0%} of it generated programs' if G.enabled(self) else ''}), "
              f"{self.jobs} workers ({self.native_jobs} free-running), shard {self.shard}, harness {self.harness_rel}"
              f"{', real pool ' + rel(self.realpool) if self.realpool and 'real' in modes else ''}"
              f"{', via ' + ' '.join(self.wrapper) if self.wrapper else ''}"
              f"{', sanitizer ' + a.sanitize if a.sanitize else ''}", flush=True)

    def prepare_out(self):
        self.fail_dir.mkdir(parents=True, exist_ok=True)
        for f in self.fail_dir.glob("*.txt"):   # stale files would read as new failures
            f.unlink()

    def workers(self, fn, n=None):
        ts = [threading.Thread(target=fn, daemon=True) for _ in range(n or self.jobs)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    def phase_batches(self, mode: str, until: float):
        # --plan fixed: the plan before the allocation (batch k: scenario
        # k % S, strategy (k // S) % 4, 1 s each), kept for ci/stress_bench.py
        adaptive = mode == "controlled" and self.args.plan == "adaptive"
        src = A.AdaptiveSource(self.master, self.scenarios, self.shard) if adaptive else \
            P.BatchSource(self.master, mode, self.scenarios, self.shard)
        self.progress.start(mode, until, self.deadline)
        start = time.monotonic()

        # --batches N: exactly N batches per mode, whatever the clock says
        # (replaying the start of a shard; the driver's own tests).
        quota = [self.args.batches] if self.args.batches else None
        first_ms = BATCH_MS if quota is not None or not adaptive else \
            self.plan_first_pass(src, until - start)

        def unusable(b) -> bool:
            return (b.scenario, mode) in self.skipped or b.scenario in self.bad_input

        def take():
            """The next batch to run (lock held), None when there is none."""
            while True:
                if adaptive:
                    src.excluded = {s for s, m in self.skipped if m == mode} | self.bad_input
                    while not src.ready():
                        if quota is None and time.monotonic() >= until - 0.05:
                            return None
                        self.cond.wait(0.5)
                if len({s for s, m in self.skipped if m == mode} | self.bad_input) == len(self.scenarios):
                    return None
                b = src.take()
                if b is None or not unusable(b):
                    return b
                if adaptive:
                    src.done(b, 0, 0.0)

        def worker():
            while True:
                now = time.monotonic()
                if quota is None and now >= until - 0.05:
                    return
                with self.lock:
                    if quota is not None:
                        if quota[0] <= 0:
                            return
                        quota[0] -= 1
                    b = take()
                    if b is None:
                        return
                    first = adaptive and src.positions[b.k] < src.cycle_len
                    if adaptive:
                        src.sampled = set(self.sampled)  # as the batches so far said
                want = first_ms if first or quota is not None or not adaptive else A.ALLOC_BATCH_MS
                slice_ms = want if quota is not None else min(want, int((until - now) * 1000))
                # A free-running run cannot stop early: one longer than what
                # is left of the phase is declined by the harness (skipped).
                run_ms = 0 if mode not in P.FREE_RUNNING or quota is not None else \
                    max(1, int((until - now) * 1000))
                t, new = time.monotonic(), 0
                try:
                    new = self.run_batch(b, slice_ms, run_ms)
                finally:  # a batch that raised still has an outcome: the others wait for it
                    if adaptive:
                        with self.cond:
                            src.done(b, new, time.monotonic() - t)
                            self.cond.notify_all()

        # A free-running run mostly sleeps: the scenario's settle times are
        # real time there (about 2 s a run against ~0.1 s of CPU), so more
        # processes than cores keep the cores busy.
        cpu0 = children_cpu()
        self.workers(worker, self.native_jobs if mode in P.FREE_RUNNING else self.jobs)
        self.res.phase_seconds[mode] = time.monotonic() - start
        self.res.cpu_seconds[mode] = children_cpu() - cpu0

    def plan_first_pass(self, src, phase_s: float) -> int:
        """The first pass's batch length from the phase's budget; a budget too
        short for every pair says so, with the budget that would do."""
        n = src.cycle_len
        ms = A.first_pass_ms(phase_s, self.jobs, n)
        cov = A.covered(phase_s, self.jobs, n)
        plan = {"pairs": n, "first_pass_ms": ms, "pairs_in_budget": cov}
        if cov < n:
            before = time.monotonic() - self.t0
            share = self.res.split.get("controlled", 0) / max(1e-9, self.args.seconds - before)
            need = A.seconds_needed(n, self.jobs, share or 1.0, before)
            plan["seconds_needed"] = round(need, 1)
            print(f"stress: controlled: {phase_s:.1f} s give {cov} of {n} (scenario, strategy, depth) "
                  f"pairs a {A.MIN_BATCH_MS} ms batch; every pair needs a budget of about "
                  f"{need:.0f} s (STRESS_SECONDS={int(need) + 1})", flush=True)
        self.res.plan = plan
        return ms

    def exe_for(self, scenario: str, mode: str = "") -> pathlib.Path:
        if mode == "real":
            return self.realpool
        return self.exe.get(scenario, self.harness)

    def call(self, cmd, timeout: float, mode: str = ""):
        if self.race_env is not None and mode == "controlled":
            o = H.call(cmd, timeout=timeout, env=self.race_env, wrapper=self.wrapper)
            if o.sanitizer and o.returncode == 0 and o.data:
                # The report went into the batch's failures (its "data race:"
                # reason); TSan's own print of it on stderr is not a second,
                # unattributed failure.
                o.sanitizer, o.ok = "", True
            return o
        return H.call(cmd, timeout=timeout, env=self.env, wrapper=self.wrapper)

    def call_for(self, scenario: str, make_cmd, timeout: float, mode: str = ""):
        """Runs make_cmd(exe) for the scenario's executable, switching to the
        fail-fast sibling once when the harness asks for it (exit 4).  The
        real pool has no sibling: it declines fail-fast scenarios."""
        o = self.call(make_cmd(self.exe_for(scenario, mode)), timeout, mode)
        if o.returncode == H.EXIT_OTHER_BUILD and self.exe_for(scenario, mode) == self.harness \
                and self.sibling.is_file():
            with self.lock:
                self.exe[scenario] = self.sibling
            o = self.call(make_cmd(self.sibling), timeout, mode)
        return o

    def rel_exe(self, scenario: str, mode: str = "") -> str:
        """The executable as a command line of the driver's names it (with the wrapper)."""
        return shjoin([*self.wrapper, rel(self.exe_for(scenario, mode))])

    def wrapped(self, command: str) -> str:
        """A command the harness printed, as pasted here: the harness cannot
        know the exec wrapper it was run through, so that is put in front."""
        return " ".join([shjoin(self.wrapper), command]) if self.wrapper else command

    def run_batch(self, b: P.Batch, max_ms: int, max_run_ms: int = 0) -> int:
        """Runs batch b; returns how many behaviour classes it found that
        its scenario had not shown before (the allocation's yield)."""
        # PCT's k is the harness's one definition (a probe run's choice
        # points, scn_campaign_pct_steps): no --pct-steps is passed, and the
        # batch says the k its runs used, which its failures' commands carry.
        # A batch stops itself after max_ms; one run may still be long (the
        # native mode waits out real timers), so allow a generous margin.
        t = time.monotonic()
        count = FREE_RUN_COUNT if b.mode in P.FREE_RUNNING else 1 << 40
        # The harness names itself in its replay lines as invoked: by the
        # path relative to here, as the failure files always named it.
        o = self.call_for(b.scenario, lambda exe: H.batch_cmd(invoked(exe), b, count, max(1, max_ms),
                                                              0, max_run_ms),
                          batch_timeout(b.mode, max_ms, max_run_ms), b.mode)
        cmd = H.batch_cmd(self.exe_for(b.scenario, b.mode), b, count, max(1, max_ms), 0)
        secs = time.monotonic() - t
        d = o.data[-1] if o.data else {}
        fails = d.get("failures", [])
        if b.mode == "real" and d and d.get("pool", "win32") != "win32":
            # Runs counted as the real pool's must have run on it.
            with self.lock:
                if not any(e.get("pool_mismatch") for e in self.res.errors):
                    self.res.errors.append({"problem": f"{rel(self.realpool)} ran on pool "
                                                       f"{d.get('pool')!r}, not win32",
                                            "pool_mismatch": True})
            return 0
        if d.get("skipped"):
            with self.lock:  # the time left only shrinks: skipped for good
                self.skipped[(b.scenario, b.mode)] = d["skipped"]
                self.res.skipped.setdefault(b.scenario, {})[b.mode] = d["skipped"]
            return 0
        with self.lock:
            st = self.res.mode(b.scenario, b.mode)
            before = st.distinct_classes()
            hashes = [int(h, 16) for h in d.get("hashes", [])]
            st.add_batch(d.get("runs", 0), d.get("failures_total", len(fails)),
                         d.get("steps", 0), secs, d.get("max_choice_points", 0), hashes,
                         [int(h, 16) for h in d.get("classes", [])])
            new = st.distinct_classes() - before
            if b.mode == "controlled":
                reach = self.reach.setdefault((b.scenario, b.strategy, b.depth), set())
                new_reach = len(set(d.get("reached", [])) - reach)
                reach.update(d.get("reached", []))
                self.res.add_pair(b.scenario, b.strategy, b.depth, d.get("runs", 0), new, new_reach)
                new += A.REACH_VALUE * new_reach
                if d.get("sampled"):
                    self.sampled[b.scenario] = d["sampled"]
        for f in fails:
            self.record(b, f, d.get("pct_steps", 0))
        if not o.ok:
            if o.returncode == 2:  # bad input: the scenario does not parse
                with self.lock:
                    if b.scenario in self.bad_input:
                        return new
                    self.bad_input.add(b.scenario)
            self.record_broken_batch(b, o, cmd, d.get("pct_steps", 0))
        return new

    # ---- failures -----------------------------------------------------------
    def record(self, b: P.Batch, f: dict, pct_steps: int):
        seed = int(str(f.get("seed", "0")), 0)
        entry = {"scenario": b.scenario, "mode": b.mode, "strategy": b.strategy,
                 "depth": b.depth, "pct_steps": pct_steps, "seed": seed, "batch": b.k,
                 "status": f.get("status", "failed"), "reason": f.get("reason", ""),
                 "line": f.get("line", 0),
                 # what failed, as data (the harness's failure kind; the reason is its prose)
                 "kind": f.get("kind", "")}
        # The commands are the harness's, as its run path prints them: a
        # controlled run's replay by seed, a free-running run's model hint.
        if f.get("model_hint"):
            entry["replay"], entry["replay_label"] = self.wrapped(f["model_hint"]), H.MODEL_HINT
        else:
            entry["replay"] = self.wrapped(f.get("replay", ""))
        if f.get("replay_schedule"):
            entry["replay_schedule"] = self.wrapped(f["replay_schedule"])
        if f.get("schedule"):
            entry["schedule"] = f["schedule"]
        shrunk = shrunk_of(f)
        if shrunk:
            entry["shrunk"] = dict(shrunk, replay=self.wrapped(shrunk["replay"]) if shrunk.get("replay") else "")
        if "j" in f:  # the same run as its batch made it: seed splitmix64(base + j)
            entry["batch_replay"] = " ".join(
                [self.rel_exe(b.scenario, b.mode), shjoin(H.batch_cmd("", b, 1, 0, pct_steps)[1:])]).replace(
                "--max-ms 0", f"--first {f['j']}")
        if b.mode in P.FREE_RUNNING:
            entry["reproduction"] = self.reproduce(b.scenario, seed)
        self.add_failure(entry)

    def record_broken_batch(self, b: P.Batch, o: H.Outcome, cmd, pct_steps: int):
        """The harness process itself went wrong: crash, sanitizer report,
        timeout, unparsable output.  The harness names the run it was in
        when it can (crash line); otherwise the batch command is the replay."""
        if o.returncode is None:
            status = "timeout"
        elif o.sanitizer:
            status = "sanitizer"
        elif o.returncode == 2:
            status = "bad-input"
        else:
            status = "crash" if o.returncode not in (0, 1) else "bad-output"
        reason = o.sanitizer or (o.stderr.strip().splitlines() or [""])[-1][:300]
        if not reason:
            # Nothing on stderr: say what the process did give back, so a
            # one-off under a wrapper (Wine) is told apart from a harness bug.
            reason = (f"exit {o.returncode}, {o.stdout_bytes} bytes on stdout "
                      f"({len(o.data)} JSON lines), nothing on stderr")
        if o.crash_seed is None and b.mode in P.FREE_RUNNING and status != "bad-input":
            # A one-run batch: its run is the one that went wrong, even
            # when nothing was printed (a hang killed under Wine, which
            # does not turn SIGABRT into the harness's crash line).
            o.crash_seed = P.run_seed(b.base, 0)
        seed = o.crash_seed
        label = None
        if o.crash_command:
            # the command the harness printed for the run it crashed in
            replay = self.wrapped(o.crash_command)
            label = H.MODEL_HINT if o.crash_label == H.MODEL_HINT else None
        else:
            # the batch itself (a one-run free-running batch is that run)
            replay = " ".join([self.rel_exe(b.scenario, b.mode), shjoin(cmd[1:])])
        entry = {"scenario": b.scenario, "mode": b.mode, "strategy": b.strategy,
                 "depth": b.depth, "pct_steps": pct_steps, "seed": seed, "batch": b.k,
                 "status": status, "reason": reason, "returncode": o.returncode,
                 "replay": replay, "stderr_tail": o.stderr[-4000:]}
        if label:
            entry["replay_label"] = label
        if status == "bad-output":
            entry["stdout_tail"] = o.stdout_tail
        if b.mode in P.FREE_RUNNING and seed is not None and status != "sanitizer":
            entry["reproduction"] = self.reproduce(b.scenario, seed)
        with self.lock:
            self.res.mode(b.scenario, b.mode).failures += 1
        self.add_failure(entry)

    def reproduce(self, scenario: str, seed: int) -> dict:
        """A free-running failure (model or real pool), tried under the
        controlled scheduler on the model from the same seed with each
        strategy of the rotation: a deterministic reproduction is what makes
        it debuggable.  Through call_for, so a scenario the plain harness
        hands to its fail-fast sibling (exit 4) is not taken for a failure."""
        tried = []
        for strategy, depth in P.ROTATION:
            o = self.call_for(scenario, lambda exe: H.run_cmd(exe, scenario, seed, "controlled",
                                                              strategy, depth), 120)
            verdict = "failed" if (o.returncode not in (0, None) and o.returncode != 2) else \
                ("passed" if o.returncode == 0 else "error")
            line = self.rel_exe(scenario) + " " + shjoin(H.run_cmd("", scenario, seed, "controlled",
                                      strategy, depth, json_out=False)[1:])
            tried.append({"command": line, "verdict": verdict})
            if verdict == "failed":
                return {"reproduced": True, "command": line, "tried": tried}
        return {"reproduced": False, "tried": tried}

    def add_failure(self, entry: dict):
        with self.lock:
            self.res.failures.append(entry)
            key = (entry["scenario"], entry["mode"])
            n = self.files_written.get(key, 0)
            if n >= MAX_FAILURE_FILES:
                return
            self.files_written[key] = n + 1
            seed = entry["seed"]
            name = failure_file_name(entry)
            entry["file"] = rel(self.fail_dir / name)
        lead = entry.get("shrunk", {}).get("replay") or entry["replay"]  # the picture of the shortest run
        draw = H.timeline_argv(lead, self.fail_dir / (name[:-4] + ".html")) \
            if entry["mode"] == "controlled" and not self.wrapper else None
        if draw and self.call(draw, 60, entry["mode"]).returncode in (0, 1):
            entry["timeline"] = rel(self.fail_dir / (name[:-4] + ".html"))  # the picture beside the text
        text = failure_text(entry, self.master)
        (self.fail_dir / name).write_text(text)
        if n >= MAX_FAILURE_NOTES:
            if n == MAX_FAILURE_NOTES:
                self.progress.note(f"FAILED {entry['scenario']} ({entry['mode']}): more failures, "
                                   f"files in {rel(self.fail_dir)}/")
            return
        self.progress.note(f"FAILED {entry['scenario']} ({entry['mode']}, seed {seed}): "
                           f"{entry['status']} {entry['reason'][:120]}\n"
                           + (f"  shortest ({entry['shrunk']['preemptions']} preemptions): {entry['shrunk']['replay']}\n"
                              if entry.get("shrunk", {}).get("replay") else "")
                           + f"  {entry.get('replay_label', 'replay')}: {entry['replay']}")

    # ---- fault loop ---------------------------------------------------------
    def phase_faultloop(self):
        todo = list(self.scenarios)
        self.progress.start("faultloop", None, self.deadline)
        start = time.monotonic()

        def worker():
            while True:
                with self.lock:
                    if not todo:
                        return
                    scen = todo.pop(0)
                self.run_faultloop(scen)

        self.workers(worker)
        self.res.phase_seconds["faultloop"] = time.monotonic() - start

    def run_faultloop(self, scen: str, leak_each: bool = False):
        seed = P.splitmix64(self.master ^ P.MODE_TAG["faultloop"]) if self.args.faultloop_seed is None \
            else self.args.faultloop_seed
        o = self.call_for(scen, lambda exe: H.faultloop_cmd(exe, scen, seed,
                                                            self.args.max_fault_sites,
                                                            leak_each), 600)
        cmd = H.faultloop_cmd(self.exe_for(scen), scen, seed, self.args.max_fault_sites, leak_each)
        if o.sanitizer and "LeakSanitizer" in o.sanitizer and not leak_each:
            # The exit-time leak check fired: once more with a check after
            # every run, so the failure names the fault site that leaked.
            return self.run_faultloop(scen, leak_each=True)
        summary = next((d for d in reversed(o.data) if d.get("summary")), None)
        injected = [d for d in o.data if not d.get("summary")]
        with self.lock:
            self.res.faultloop[scen] = {
                "seed": seed,
                "sites": summary.get("sites", 0) if summary else len(injected),
                "per_kind": summary.get("per_kind", {}) if summary else {},
                "complete": bool(summary and summary.get("complete")),
                "failed": sum(1 for d in injected if not d.get("ok", False))}
        for d in injected:
            if not d.get("ok", False):
                self.add_failure({
                    "scenario": scen, "mode": "faultloop", "strategy": "random", "depth": 0,
                    "seed": seed, "batch": None, "fault": f"{d.get('kind')}:{d.get('nth')}",
                    "status": d.get("status", "failed"), "reason": d.get("reason", ""),
                    "replay": f"{self.rel_exe(scen)} stress-faultloop --seed {seed} "
                              f"--only {d.get('kind')}:{d.get('nth')} {shlex.quote(scen)}"})
        if not o.ok or summary is None:
            status = "sanitizer" if o.sanitizer else (
                "timeout" if o.returncode is None else
                "bad-input" if o.returncode == 2 else f"exit {o.returncode}")
            if o.returncode == 2:
                with self.lock:
                    self.bad_input.add(scen)
            last = injected[-1] if injected else {}
            self.add_failure({
                "scenario": scen, "mode": "faultloop", "strategy": "random", "depth": 0,
                "seed": seed, "batch": None, "status": status,
                "reason": o.sanitizer or (o.stderr.strip().splitlines() or [""])[-1][:300],
                "fault": f"{last.get('kind')}:{last.get('nth')} (last one reported)" if last else "",
                "replay": " ".join([self.rel_exe(scen), shjoin(cmd[1:])]),
                "stderr_tail": o.stderr[-4000:]})

    def verdict(self) -> int:
        for line in mode_summary(self.res, self.planned):
            print(line)
        if self.res.generate:
            print(G.summary_line(self.res))
        for line in coverage_summary(self.res, len(self.scenarios) * len(P.ROTATION)):
            print(line)
        n = self.res.failure_count()
        tot = self.res.total("controlled")
        cpu = self.res.cpu_seconds.get("controlled", 0)
        if tot.runs and cpu:
            print(f"stress: controlled: {tot.runs / cpu:,.0f} schedules per CPU second "
                  f"({cpu:.1f} CPU s over {self.res.phase_seconds.get('controlled', 0):.1f} s)")
        late = 0
        for name, per in sorted(self.res.skipped.items()):
            for m, why in per.items():
                if "real time" in why:  # the phase had too little time left for one run
                    late += 1
                else:
                    print(f"stress: {name}: no {m} runs: {why}")
        if late:
            print(f"stress: {late} scenarios had free-running batches declined: one run would "
                  "have outlasted the phase (results.json: skipped)")
        real = f"{self.res.total('real').runs:,} real-pool runs, " \
            if "real" in self.planned else ""
        print(f"stress: {tot.runs:,} controlled schedules, {real}"
              f"{self.res.total('native').runs:,} native runs, "
              f"{sum(f.get('sites', 0) for f in self.res.faultloop.values())} fault sites; "
              f"{failures_phrase(self.res)}; results in {rel(self.out / 'results.json')}")
        if n:
            print(f"stress: failures in {rel(self.fail_dir)}/ ; repeat the whole run: "
                  f"{self.again}")
        return 1 if n else 0


def mode_summary(res: R.Results, planned) -> list[str]:
    """The summary's first lines: per planned mode, what ran and what the
    harness declined, grouped by why (a loaded 2-core run once said only in
    one late line that 41 scenarios had no free-running run at all)."""
    lines = []
    for mode in planned:
        if mode == "faultloop":
            sites = sum(f.get("sites", 0) for f in res.faultloop.values())
            lines.append(f"stress: {mode}: {len(res.faultloop)} scenarios, {sites} fault sites")
            continue
        ran = sorted(n for n, per in res.scenarios.items() if per.get(mode) and per[mode].runs)
        why_count: dict = {}
        for name, per in res.skipped.items():
            if mode in per and name not in ran:
                why = ("too little real time left in the phase for one run"
                       if "real time" in per[mode] else per[mode])
                why_count[why] = why_count.get(why, 0) + 1
        declined = sum(why_count.values())
        line = (f"stress: {mode}: {res.total(mode).runs:,} runs of {len(ran)} scenarios; "
                f"{declined} declined")
        if why_count:
            line += ": " + "; ".join(f"{c} {why}" for why, c in
                                     sorted(why_count.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(line)
    return lines


def failure_file_name(entry: dict) -> str:
    """One file per failure: the fault loop runs every site of a scenario
    from one seed, so a name of scenario, mode and seed alone made its
    failures (alloc:5, alloc:6, pool-create:1, ...) overwrite one file that
    kept only the last; the site and its n are part of the name there."""
    stem = pathlib.Path(entry["scenario"]).stem
    seed = entry["seed"]
    which = seed if seed is not None else "batch" + str(entry["batch"])
    fault = entry.get("fault", "")
    if fault:
        site = re.sub(r"[^A-Za-z0-9]+", "-", fault.split(" ")[0]).strip("-")
        which = f"{which}-{site}" + ("-last" if " " in fault else "")
    return f"{stem}-{entry['mode']}-{which}.txt"


def coverage_summary(res: R.Results, npairs: int) -> list[str]:
    """The controlled phase's coverage: pairs run, behaviour classes, and
    every scenario that got no run, by name (a 20 s run once left 29 of 59
    scenarios without a controlled run and said nothing)."""
    un = res.plan.get("unrun")
    if un is None:
        return []
    tot = res.total("controlled")
    lines = [f"stress: controlled: {npairs - len(un['pairs'])} of {npairs} (scenario, strategy, depth) "
             f"pairs ran; {tot.distinct_classes():,} behaviour classes, "
             f"{tot.distinct():,} distinct schedules"]
    if un["scenarios"]:
        lines.append(f"stress: WARNING: {len(un['scenarios'])} scenarios had no controlled run: "
                     f"{', '.join(un['scenarios'])} (results.json: plan.unrun)")
    elif un["pairs"]:
        lines.append(f"stress: WARNING: {len(un['pairs'])} pairs had no controlled run: "
                     f"{', '.join(un['pairs'][:8])}{', ...' if len(un['pairs']) > 8 else ''} "
                     "(results.json: plan.unrun)")
    if "seconds_needed" in res.plan:
        lines.append(f"stress: every pair needs a budget of about {res.plan['seconds_needed']:.0f} s")
    return lines


def shjoin(words) -> str:
    """A command line a shell reads back as these words (replay lines are
    pasted as printed)."""
    return " ".join(shlex.quote(str(w)) for w in words)


def failures_phrase(res: R.Results) -> str:
    """The true failure count, and how many of them have a detailed record
    (each batch details its first few; all are counted)."""
    n, kept = res.failure_count(), res.recorded_count() + len(res.errors)
    text = f"{n:,} failure{'s' if n != 1 else ''}"
    if n != kept:
        text += f" ({kept:,} recorded in detail in results.json)"
    return text


def repeat_command(a, master: int, shard, wrapper) -> str:
    """The command that repeats this run, pasteable where the user stands.
    `make stress ...` when the Makefile can say it all (and the user is in the
    repository); otherwise ci/stress.py with every option that changes what
    runs -- a repeat line that dropped --scenarios or --out re-ran the whole
    corpus into another directory."""
    makeable = not (a.modes or wrapper or a.scenarios or a.out or a.batches or a.no_faultloop
                    or a.plan != "adaptive"
                    or a.faultloop_seed is not None or a.max_fault_sites != 10000
                    or a.build != "build") and \
        pathlib.Path.cwd().resolve() == REPO.resolve()
    if makeable:
        again = f"make stress SEED={master}"
        if a.seconds != 60:
            again += f" STRESS_SECONDS={a.seconds:g}"
        if shard.count > 1:
            again += f" SHARD={shard}"
        if a.sanitize:
            again += f" SANITIZE={a.sanitize}"
        return again
    q = shlex.quote
    parts = ["/usr/bin/python3", q(rel(pathlib.Path(__file__))), "--build", q(a.build),
             "--seed", str(master), "--seconds", f"{a.seconds:g}"]
    if shard.count > 1:
        parts += ["--shard", str(shard)]
    if a.sanitize:
        parts += ["--sanitize", a.sanitize]
    if a.scenarios:
        parts += ["--scenarios", *map(q, a.scenarios)]
    if a.out:
        parts += ["--out", q(a.out)]
    if a.modes:
        parts += ["--modes", q(a.modes)]
    if a.batches:
        parts += ["--batches", str(a.batches)]
    if a.plan != "adaptive":
        parts += ["--plan", a.plan]
    if a.no_faultloop:
        parts.append("--no-faultloop")
    if a.faultloop_seed is not None:
        parts += ["--faultloop-seed", str(a.faultloop_seed)]
    if a.max_fault_sites != 10000:
        parts += ["--max-fault-sites", str(a.max_fault_sites)]
    if wrapper:
        parts += ["--exec-wrapper", q(shlex.join(wrapper))]
    return " ".join(parts)


def batch_timeout(mode: str, max_ms: int, max_run_ms: int) -> float:
    """Seconds after which a batch process is killed (reported: timeout)."""
    if mode not in P.FREE_RUNNING:
        return max_ms / 1000 + 60
    return max(max_ms, max_run_ms or FREE_RUN_MAX_MS) / 1000 + BATCH_GRACE_NATIVE


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished harness processes: the
    rate per CPU second does not depend on what else the machine runs.
    0 where there is no getrusage (Windows): the rate is then not given."""
    try:
        import resource
    except ImportError:
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def shrunk_of(f: dict) -> dict | None:
    """A batch failure's shortest failing schedule (the harness's shrunk_*
    fields, harness/scenario/scn_shrink.h), or None when it was not shrunk."""
    if "shrunk_runs" not in f:
        return None
    return {"schedule": f.get("shrunk_schedule", ""), "replay": f.get("shrunk_replay", ""),
            "preemptions": f.get("shrunk_preemptions"), "prefix": f.get("shrunk_prefix"),
            "choices": f.get("shrunk_choices"), "fewest_proven": f.get("shrunk_fewest_proven", False),
            "runs": f["shrunk_runs"], "seconds": f.get("shrunk_seconds", 0), "cut": f.get("shrunk_cut", "")}


def shrunk_lines(sh: dict) -> list[str]:
    """The report's lead: the shortest failing schedule and its replay, or
    why there is none; the budget's cut named."""
    cut = {"time": "; STOPPED EARLY at the time budget",
           "runs": "; a bound's search STOPPED EARLY at its run budget"}.get(sh["cut"], "")
    if not sh.get("replay"):
        return [f"shortest failing schedule: none with at most 3 preemptions fails the same way "
                f"({sh['runs']} runs{cut})", ""]
    proven = "fewest" if sh["fewest_proven"] else "fewer not ruled out"
    return [f"shortest failing schedule: {sh['preemptions']} preemptions ({proven}), choice prefix "
            f"{sh['prefix']} of {sh['choices']} choices ({sh['runs']} runs{cut})",
            "replay:", f"  {sh['replay']}", ""]


def failure_text(e: dict, master: int) -> str:
    lines = shrunk_lines(e["shrunk"]) if e.get("shrunk") else []
    lines += [f"scenario:  {e['scenario']}", f"mode:      {e['mode']}"]
    if e.get("strategy"):
        lines.append(f"strategy:  {e['strategy']}" + (f" depth {e['depth']}" if e['strategy'] == 'pct' else ""))
    if e.get("fault"):
        lines.append(f"fault:     {e['fault']}")
    lines += [f"seed:      {e['seed']}", f"status:    {e['status']}"]
    if e.get("kind"):
        lines.append(f"kind:      {e['kind']}")
    lines += [f"reason:    {e['reason']}", f"master:    {master} (batch {e.get('batch')})", "",
              f"{e.get('replay_label', 'replay')}:", f"  {e['replay']}"]
    if e.get("batch_replay"):
        lines += ["the same run inside its batch:", f"  {e['batch_replay']}"]
    if e.get("timeline"):
        lines += [f"the run as a picture (replay --timeline): {e['timeline']}"]
    rep = e.get("reproduction")
    if rep is not None:
        lines += ["", "controlled re-run from the same seed: " +
                  ("REPRODUCED" if rep["reproduced"] else "not reproduced")]
        lines += [f"  {t['verdict']:7s} {t['command']}" for t in rep["tried"]]
    if e.get("schedule"):
        lines += ["", "schedule:", f"  {e['schedule']}"]
    if e.get("stderr_tail"):
        lines += ["", "stderr (tail):", e["stderr_tail"]]
    if e.get("stdout_tail"):
        lines += ["", "stdout (tail):", e["stdout_tail"]]
    return "\n".join(lines) + "\n"


def merge_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="stress.py merge",
                                 description="Combine stress result files (shards).")
    ap.add_argument("out")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args(argv)
    total = R.Results()
    for p in a.inputs:
        try:
            total.merge(R.load(pathlib.Path(p)))
        except (OSError, ValueError) as e:
            print(f"{p}:1:1: {e}", file=sys.stderr)
            return 2
    R.write(total, pathlib.Path(a.out))
    print(R.table(total))
    n = total.failure_count()
    print(f"merged {len(a.inputs)} result files (shards {', '.join(total.shards)}): "
          f"{failures_phrase(total)}")
    return 1 if n else 0


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="stress.py", description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("STRESS_SECONDS", 60)))
    ap.add_argument("--seed", help="master seed (default: from the clock, printed)")
    ap.add_argument("--shard", help="i/n: run only shard i of n (1-based)")
    ap.add_argument("--sanitize", choices=["address", "thread"])
    ap.add_argument("--scenarios", nargs="*", default=[], help="files or directories")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("STRESS_JOBS", 2)))
    ap.add_argument("--native-jobs", type=int, default=0,
                    help="concurrent free-running batches (default: 4 x --jobs)")
    ap.add_argument("--out", help="output directory (default: BUILD/stress)")
    ap.add_argument("--batches", type=int, default=0,
                    help="run exactly N batches per mode instead of filling --seconds")
    ap.add_argument("--no-faultloop", action="store_true")
    ap.add_argument("--faultloop-seed", type=lambda s: P.parse_seed(s), default=None)
    ap.add_argument("--max-fault-sites", type=int, default=10000)
    ap.add_argument("--plan", choices=["adaptive", "fixed"], default="adaptive",
                    help="controlled batches: sized from the budget, then by yield (default), or "
                         "the fixed rotation of 1 s batches (for ci/stress_bench.py)")
    ap.add_argument("--modes", help="comma-separated phases to run, of "
                    f"{','.join(PHASES)} (default: all this build has)")
    ap.add_argument("--exec-wrapper", help="command prefixed to every harness call, e.g. "
                    "wine for a Windows build dir on Linux (env TPHEAL_EXEC_WRAPPER)")
    a = ap.parse_args(argv)
    if a.seconds < 0:
        ap.error("--seconds must be >= 0")
    try:
        parse_modes(a.modes)
    except UsageError as e:
        ap.error(str(e))
    return a


PHASES = ("faultloop", "generate") + P.BATCH_MODES


def parse_modes(text):
    """--modes a,b -> the set of phases to run; None = all of them."""
    if not text:
        return None
    modes = {m.strip() for m in text.split(",") if m.strip()}
    bad = sorted(modes - set(PHASES))
    if bad or not modes:
        raise UsageError(f"--modes {text}: unknown {', '.join(bad) or 'empty list'} "
                         f"(phases: {', '.join(PHASES)})")
    return modes


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
    args = parse_args(argv)
    try:
        run = Run(args)
    except (UsageError, ValueError) as e:
        print(f"stress: {e}", file=sys.stderr)
        return 2
    return run.main()


if __name__ == "__main__":
    sys.exit(main())
