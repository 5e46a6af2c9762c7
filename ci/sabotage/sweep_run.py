"""The sweep, start to end: Sweep.run makes the workers' copies and builds
them (setup), runs the catchers unpatched (run_baseline, sweep_catchers),
runs each entry in the next free worker (run_entry, sweep_entry) with a
progress line and the time left (sweep_estimate), and returns the Results;
write_reports writes results.json and the mutation report (report.py).
ci/sabotage/sweep.py is its command line; mutants.py drives it too."""
from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import queue
import shutil
import subprocess
import sys
import threading

import report as rp
import sweep_objects
from sweep_catchers import Catchers
from sweep_config import HANG_FLOOR, Bad, config_of, now
from sweep_entry import Entries
from sweep_estimate import planned_seconds, seconds_left
from sweep_worker import Worker


class Sweep(Catchers, Entries):
    """One sweep of a manifest: run(entries), then write_reports(results).
    Its catchers are kept by Catchers (sweep_catchers), an entry is run by
    Entries (sweep_entry); the copies are Workers (sweep_worker)."""

    def __init__(self, checkout, manifest, workroot, outdir, jobs=2, quiet=False,
                 stream=sys.stdout, rev=None):
        self.checkout = pathlib.Path(checkout).resolve()
        self.rev = rev
        self.ignore_red_fallback = False
        # The fallback stops at its first failure (of the declared kind, when
        # one is declared); --all-catchers runs and lists every catcher.
        self.stop_at_first = True
        self.on_result = None       # called with each Result as it finishes
        self.fail_under = None      # --fail-under PCT (recorded in the report)
        self.m = manifest
        self.cfg = config_of(manifest)
        self.floor = float(manifest.raw.get("timeoutSeconds", HANG_FLOOR))
        self.workroot = pathlib.Path(workroot).resolve()
        self.out = pathlib.Path(outdir).resolve()
        self.jobs = max(1, jobs)
        self.quiet = quiet
        self.stream = stream
        self.baseline = {}    # catcher label -> seconds
        self.slow = {}        # catcher key -> seconds it was still running at, unpatched
        self.full_set = []    # catchers run when the named ones miss
        # what the fallback is made of and what it leaves out (config.fallback)
        self.fallback_info = {"layers": {}, "leftOut": []}
        self.workers = []
        self.perf = {"setup": 0.0, "initialRun": 0.0, "mutation": 0.0}
        self.print_lock = threading.Lock()

    def say(self, msg):
        if not self.quiet:
            with self.print_lock:
                print(msg, file=self.stream, flush=True)

    # -- setup ---------------------------------------------------------------
    def tracked(self):
        cmd = ["git", "ls-tree", "-r", "-z", "--name-only", self.rev] if self.rev else \
            ["git", "ls-files", "-z"]
        rc = subprocess.run(cmd, cwd=self.checkout, capture_output=True)
        if rc.returncode != 0:
            raise Bad(f"sweep: {' '.join(cmd)} failed in {self.checkout}: "
                      f"{rc.stderr.decode(errors='replace').strip()}")
        return [f for f in rc.stdout.decode().split("\0") if f]

    def export(self):
        """With --rev, the commit's files (git archive) are the source of the
        copies: the working tree may hold other people's half-done edits."""
        if not self.rev:
            return None
        d = self.workroot / "export"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        p = subprocess.run(f"git archive --format=tar {self.rev} | tar -x -C '{d}'", shell=True,
                           cwd=self.checkout, capture_output=True)
        if p.returncode != 0:
            raise Bad(f"sweep: cannot export {self.rev}: {p.stderr.decode(errors='replace')}")
        return d

    def check_files(self, entries, files):
        tracked = set(files)
        problems = []
        for e in entries:
            rel = self.rel(e)
            if rel not in tracked:
                problems.append(f"{self.m.path}:{e.line}:1: entry '{e.name}': file '{rel}' is not "
                                f"a tracked file")
        if problems:
            raise Bad(*problems)

    def rel(self, e):
        return os.path.normpath(os.path.join(self.m.root, e.file))

    def setup(self, entries):
        t0 = now()
        files = self.tracked()
        self.check_files(entries, files)
        n = min(self.jobs, max(1, len(entries)))
        per_build_jobs = max(1, (os.cpu_count() or 2) // n)
        source = self.export()
        self.source = source or self.checkout
        self.workers = [Worker(i, self.checkout, self.workroot, files, self.cfg, per_build_jobs,
                               source) for i in range(n)]
        self.say(f"sweep: {len(entries)} entries, {n} worker(s) in {self.workroot}")

        def build_until_stable(copy, wanted, what):
            # A build can re-run the configure step (the globs see new test
            # files) and so reveal executables the first discovery missed:
            # build until the set of targets stops growing.
            built = set()
            for _ in range(3):
                targets = wanted()
                if targets <= built:
                    break
                ok, out, secs = copy.cmake_build(targets)
                if not ok:
                    raise Bad(f"sweep: the unpatched copy{what} does not build (worker {copy.idx}):\n"
                              f"{out[-6000:]}")
                built |= targets
                copy.discover()

        def prep(w):
            w.sync()
            w.configure()
            w.discover()  # ctest knows the executables as soon as it is configured
            build_until_stable(w, lambda: w.fallback_targets() | set(named_units), "")
            w.built_all = True
            w.objects = sweep_objects.snapshot(w.build)
            if w.san is not None:
                s = w.san
                s.configure()
                s.discover()
                build_until_stable(s, lambda: s.san_fallback_targets() | s.san_targets(named_san_c),
                                   "'s sanitizer build")
                s.objects = sweep_objects.snapshot(s.build)

        named_units = {c.name for e in entries for c in e.caught_by if c.kind == "unit"}
        named_san_c = [c for e in entries for c in e.caught_by if c.kind == "asan"]

        if shutil.which("ccache"):
            # One copy at a time, each with every core: the first fills the
            # cache and the second is almost all hits.  Building both at once
            # would compile everything twice.
            for w in self.workers:
                w.jobs = os.cpu_count() or 2
                if w.san:
                    w.san.jobs = w.jobs
                prep(w)
                w.jobs = per_build_jobs
                if w.san:
                    w.san.jobs = per_build_jobs
        else:
            with concurrent.futures.ThreadPoolExecutor(n) as ex:
                list(ex.map(prep, self.workers))
        self.perf["setup"] = (now() - t0) * 1000

    # -- all entries ---------------------------------------------------------
    def run(self, entries):
        self.setup(entries)
        self.run_baseline(entries)
        t0 = now()
        q = queue.Queue()
        for i, e in enumerate(entries):
            q.put((i, e))
        results = [None] * len(entries)
        finished = [0]
        lock = threading.Lock()
        width = len(str(len(entries)))
        planned = [planned_seconds(e, self.full_set, self.baseline, self.key) for e in entries]
        taken, started = set(), {}

        def loop(w):
            while True:
                with lock:
                    try:
                        i, e = q.get_nowait()
                    except queue.Empty:
                        return
                    taken.add(i)
                    started[i] = now()
                r = self.run_entry(w, e)
                with lock:
                    results[i] = r
                    finished[0] += 1
                    k = finished[0]
                    del started[i]
                    # the catchers still to run, at their baseline cost, over the workers
                    left = seconds_left(planned, taken, started, now(), len(self.workers))
                    r.estimate_left = left
                tail = f"({r.seconds:.1f} s, ~{left:.0f} s left)"
                mark = "  <-- NOT AS DECLARED" if r.ok is False and not getattr(e, "mutant", None) else ""
                if self.on_result is not None:
                    with lock:
                        self.on_result(r)
                self.say(f"[{k:>{width}}/{len(entries)}] {e.name} ... {r.summary} {tail}{mark}")

        with concurrent.futures.ThreadPoolExecutor(len(self.workers)) as ex:
            futs = [ex.submit(loop, w) for w in self.workers]
            for f in futs:
                f.result()
        self.perf["mutation"] = (now() - t0) * 1000
        return results

    def write_reports(self, results):
        sources = {}
        for r in results:
            p = getattr(self, "source", self.checkout) / self.rel(r.entry)
            sources[r.entry.file] = p.read_text(encoding="utf-8") if p.is_file() else ""
        tests = {c.label for c in self.full_set}
        for r in results:
            tests.update(c.label for c in r.entry.caught_by)
        base, seen = [], set()
        for c, fb in [(c, True) for c in self.full_set] + \
                [(c, False) for r in results for c in r.entry.caught_by]:
            if self.key(c) in seen or self.key(c) not in self.baseline:
                continue
            seen.add(self.key(c))
            base.append({"catcher": c.label, "fallback": fb, "seeds": c.seeds, "strategy": c.strategy,
                         "args": c.args, "seconds": round(self.baseline[self.key(c)], 3),
                         **({"slow": True} if self.key(c) in self.slow else {})})
        extra = {"failUnder": self.fail_under} if self.fail_under is not None else {}
        rep = rp.build(self.m, [r.as_dict() for r in results], sources, self.perf, tests,
                       fallback=self.fallback_info, baseline=base, extra=extra)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "mutation-report.json").write_text(json.dumps(rep, indent=1), encoding="utf-8")
        (self.out / "mutation-report.html").write_text(rp.html(rep), encoding="utf-8")
        (self.out / "results.json").write_text(
            json.dumps([r.as_dict() for r in results], indent=1), encoding="utf-8")
        return rep
