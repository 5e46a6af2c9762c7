"""The catchers a sweep runs: the fallback set (the suite, layer by layer,
and what it leaves out), their baseline run unpatched (green, cached under a
key of the tree, the configuration and this code), the order the fallback
runs them in for an entry (its own tests first: relevance), and the hang
bound of each run.  docs/sabotage.md, "What a sweep does" 3 and 5."""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import pathlib
import queue
import re
import threading

import manifest as mf
from sweep_config import HANG_FACTOR, LAYERS, OUTPUT_KEEP, PYTEST_HANG_FLOOR, Bad, load_factor, now

# ---------------------------------------------------------------- relevance
# Words that say nothing about which rule a test holds.
STOPWORDS = frozenset("""
the and for with from into that this when which what where while than then its not but are was
has have had does did can cannot must may any all each every one two only also own
test tests unit asan pytest scenario scn core src harness lib ci py
""".split())


def words(text):
    return {w for w in re.findall(r"[a-z][a-z0-9]*", text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def _same_word(a, b):
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def relevance(e, c):
    """How much catcher c looks like the entry's own test: each word of the
    catcher's name (test_heal_tick: heal, tick) that is a word of the entry's
    name or file scores 2, one only in its `why` (the rule) 1; a word matches
    another that it begins (stamp, stamps).  The fallback runs the most
    relevant first, so a catch is credited to the rule's own test when that
    test fails, not to whichever happened to run first."""
    strong = words(e.name) | words(os.path.splitext(e.file)[0])
    weak = words(e.why)
    score = 0
    for w in words(os.path.splitext(c.name)[0]):
        if any(_same_word(w, x) for x in strong):
            score += 2
        elif any(_same_word(w, x) for x in weak):
            score += 1
    return score


class Catchers:
    """The Sweep's catcher bookkeeping (a mixin of sweep_run.Sweep): reads its
    cfg, floor, workers, source, workroot and stop_at_first; sets baseline
    (catcher key -> seconds), slow (key -> the bound a catcher ran past
    unpatched), full_set (the fallback set, in baseline order) and
    fallback_info (config.fallback of the report)."""

    def run_baseline(self, entries):
        """Every named catcher and the whole fallback set must pass unpatched;
        their times set the hang bounds."""
        t0 = now()
        w0 = self.workers[0]
        named = {}
        for e in entries:
            for c in e.caught_by:
                named.setdefault(self.key(c), c)
        on = self.cfg["fallbackLayers"]
        full = [mf.Catcher("unit", u) for u in sorted(w0.fallback_units)] if "unit" in on else []
        if "scenario" in on:
            full += [mf.Catcher("scenario", s, seeds=self.cfg["fallbackSeeds"],
                                strategy=self.cfg["fallbackStrategy"]) for s in w0.scenarios()]
        if "generate" in on:
            # its own layer, after the corpus: the programs nobody wrote
            full += [mf.Catcher("generate", str(s), seeds=self.cfg["generateSeeds"],
                                strategy=self.cfg["generateStrategy"], programs=self.cfg["generatePrograms"])
                     for s in self.cfg["generateMasterSeeds"]]
        if w0.san is not None:
            full += [mf.Catcher("asan", u) for u in sorted(w0.san.fallback_units)]
            if self.cfg["sanitizerScenarioSeeds"]:
                full += [mf.Catcher("asan", s, seeds=self.cfg["sanitizerScenarioSeeds"], strategy="both")
                         for s in w0.scenarios()]
        pytest_files, left_out = self.pytest_layer(w0.files) if "pytest" in on else ([], [])
        full += [mf.Catcher("pytest", f) for f in pytest_files]
        left_out = [{"catcher": f"unit:{u}", "reason": str(why)}
                    for u, why in sorted(self.cfg["fallbackExclude"].items()) if "unit" in on] + left_out
        left_out += [{"catcher": f"{layer}:*", "reason": "fallbackLayers leaves the layer out"}
                     for layer in LAYERS if layer not in on]
        if "generate" in on and not self.cfg["generateMasterSeeds"]:
            left_out.append({"catcher": "generate:*", "reason": "generateMasterSeeds names no master seed"})
        if w0.san is None and "asan" in on:
            left_out.append({"catcher": "asan:*", "reason": "fallbackSanitizer is false: no "
                                                            "sanitizer build"})
        if not full and any(e.expect != "caught" or not e.caught_by for e in entries):
            raise Bad("sweep: the fallback set is empty (fallbackLayers: "
                      f"{', '.join(self.cfg['fallbackLayers']) or 'none'}; a generate layer needs "
                      f"generateMasterSeeds): an entry without caughtBy would survive unjudged")
        self.full_set = full
        layers = {}
        for c in full:
            layers.setdefault(c.kind, []).append(c.label)
        self.fallback_info = {"layers": layers, "leftOut": left_out,
                              "firstCatcher": self.stop_at_first,
                              "order": "the entry's own tests first (words of its name, file and "
                                       "why in the catcher's name), then cheapest by baseline time, "
                                       "the sanitizer build's last"}
        self.say("fallback: " + ", ".join(f"{len(v)} {k}" for k, v in layers.items())
                 + (" (" + ", ".join(c.name for c in full if c.kind == "pytest") + ")"
                    if "pytest" in layers else ""))
        for x in left_out:
            self.say(f"fallback: left out {x['catcher']}: {x['reason']}")
        todo = list(named.values()) + [c for c in full if self.key(c) not in named]
        for c in todo:
            w0.command(c)  # raises Bad for unknown catchers before anything runs
        cache_key = self.baseline_key()
        cached = self.read_baseline_cache(cache_key)
        if cached is not None and all(self.key(c) in cached for c in todo):
            # A green baseline of this very tree and configuration: `--only`
            # need not re-run the whole set (docs/sabotage.md, Baseline).
            self.baseline.update(cached)
            self.order_full_set()
            self.perf["initialRun"] = (now() - t0) * 1000
            self.write_transcript("baseline", f"reused the cached green baseline {cache_key}\n")
            self.say(f"baseline: reused the cached green run of this tree ({len(todo)} catchers)")
            return
        if cached is not None:
            self.baseline.update(cached)
            todo = [c for c in todo if self.key(c) not in cached]
        times = self.read_catcher_times()
        load = load_factor()
        self.say(f"baseline: {len(todo)} catcher runs (load {load:.1f}x: the 1-minute load average "
                 f"over {os.cpu_count()} cores)")
        lines, red = [], []
        red_keys = set()
        q = queue.Queue()
        for c in todo:
            q.put(c)
        lock = threading.Lock()

        def drain(w):
            while True:
                try:
                    c = q.get_nowait()
                except queue.Empty:
                    return
                b = self.baseline_bound(c, times.get(self.key(c)), load)
                r = w.run(c, b)
                with lock:
                    self.baseline[self.key(c)] = r.seconds
                    slow = r.failed and r.kind == "timeout"
                    lines.append(f"--- {r.label} {' '.join(r.cmd)}\nexit {r.rc}, {r.seconds:.2f} s"
                                 f"{', SLOW: still running at its bound ' + format(b, '.0f') + ' s' if slow else ''}"
                                 f"{', FAILED: ' + str(r.kind) if r.failed and not slow else ''}\n"
                                 + r.output[-OUTPUT_KEEP:])
                    if slow:
                        # Slow is not red: nothing failed.  Its time (a lower
                        # bound) is kept so its later bounds derive from it.
                        self.slow[self.key(c)] = r.seconds
                    elif r.failed:
                        red_keys.add(self.key(c))
                        red.append(f"baseline: {r.label} fails unpatched ({r.kind}"
                                   f"{', seed ' + r.seed if r.seed else ''}; "
                                   f"exit {r.rc}): {' '.join(r.cmd)}\n{r.output[-3000:]}")

        with concurrent.futures.ThreadPoolExecutor(len(self.workers)) as ex:
            list(ex.map(drain, self.workers))
        self.write_transcript("baseline", "\n".join(lines))
        self.perf["initialRun"] = (now() - t0) * 1000
        if red and self.ignore_red_fallback and not (red_keys & set(named)):
            for line in red:
                self.say(line.splitlines()[0] + " -- left out of the fallback set (--ignore-red-fallback)")
            self.fallback_info["leftOut"] += [
                {"catcher": c.label, "reason": "fails unpatched (--ignore-red-fallback)"}
                for c in full if self.key(c) in red_keys]
            self.full_set = [c for c in full if self.key(c) not in red_keys]
            for k, v in self.fallback_info["layers"].items():
                self.fallback_info["layers"][k] = [x for x in v if x in {c.label for c in self.full_set}]
            red = []
        if red:
            raise Bad(*red)
        self.leave_out_slow(full, named, load)
        # Only the green runs are cached: a catcher that failed unpatched (left
        # out under --ignore-red-fallback) runs again next time, and is red
        # again -- a later sweep without the flag must not reuse it as green.
        for k in red_keys | set(self.slow):
            self.baseline.pop(k, None)
        self.write_baseline_cache(cache_key)
        self.baseline.update(self.slow)
        self.write_catcher_times()
        self.order_full_set()
        total = sum(self.baseline.values())
        self.say(f"baseline: green, {len(todo) - len(red_keys) - len(self.slow)} runs, {total:.1f} s of catcher "
                 f"time" + (f" ({len(red_keys)} red left out)" if red_keys else "")
                 + (f" ({len(self.slow)} slow)" if self.slow else ""))

    def baseline_bound(self, c, last, load):
        """The bound of catcher c's unpatched run, from its own cost: HANG_FACTOR
        times the time it last took (any tree: WORK/catcher-times.json), or the
        configured first bound when it was never timed, either stretched by the
        load -- never a constant a slow sanitizer run beside other work can
        cross (the ASan bench test took 127 s under one, and a fixed 120 s
        bound stopped the whole sweep)."""
        b = HANG_FACTOR * last if last else float(self.cfg["baselineTimeoutSeconds"])
        b = max(b * load, self.floor)
        if c.kind == "pytest":
            b = max(b, PYTEST_HANG_FLOOR * load)
        return b

    def leave_out_slow(self, full, named, load):
        """A catcher still running at its bound unpatched is reported as slow,
        with its time, and the sweep goes on: a fallback catcher leaves the
        fallback set (it cannot be told green), a named one stays, bounded
        from the time it ran past.  Its time is remembered, so the next sweep
        bounds it from that."""
        for k, secs in sorted(self.slow.items()):
            c = next((x for x in full if self.key(x) == k), None) or named.get(k)
            role = "named catcher, kept" if k in named else "left out of the fallback set"
            self.say(f"baseline: {c.label} slow: still running after {secs:.0f} s (load {load:.1f}x); "
                     f"{role}; the next sweep bounds it at {HANG_FACTOR:g}x that")
            if k not in named:
                self.fallback_info["leftOut"].append(
                    {"catcher": c.label, "reason": f"slow unpatched: still running after {secs:.0f} s "
                                                   f"(load {load:.1f}x)"})
        self.full_set = [c for c in self.full_set if self.key(c) not in self.slow or self.key(c) in named]
        for k, v in self.fallback_info["layers"].items():
            self.fallback_info["layers"][k] = [x for x in v if x in {c.label for c in self.full_set}]

    def read_catcher_times(self):
        """key -> the seconds each catcher last took unpatched, in any tree."""
        try:
            doc = json.loads((self.workroot / "catcher-times.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: float(v) for k, v in doc.items()} if isinstance(doc, dict) else {}

    def write_catcher_times(self):
        times = self.read_catcher_times()
        times.update(self.baseline)
        (self.workroot / "catcher-times.json").write_text(json.dumps(times, indent=1, sort_keys=True),
                                                          encoding="utf-8")

    def pytest_layer(self, files):
        """(the pytest files the fallback runs, [{catcher, reason}] of those
        it leaves out): pytestFiles that are in the tree, and every other
        test_*.py of their directories, or named in pytestExclude."""
        tracked = set(files)
        excl = self.cfg["pytestExclude"]
        want = [f for f in self.cfg["pytestFiles"] if f in tracked and f not in excl]
        dirs = {os.path.dirname(f) for f in self.cfg["pytestFiles"]} | {os.path.dirname(f) for f in excl}
        others = sorted(f for f in tracked if os.path.dirname(f) in dirs
                        and re.fullmatch(r"test_.*\.py", os.path.basename(f)) and f not in want)
        out = []
        for f in others:
            out.append({"catcher": f"pytest:{f}",
                        "reason": str(excl[f]) if f in excl else "not in pytestFiles"})
        for f in self.cfg["pytestFiles"]:
            if f not in tracked:
                out.append({"catcher": f"pytest:{f}", "reason": "not in the tree"})
        return want, out

    @staticmethod
    def key(c):
        # a generate catcher's program count is part of what it runs
        return c.label + repr((c.seeds, c.strategy, c.args)) + (f"x{c.programs}" if c.programs else "")

    def order_full_set(self):
        """Cheapest first, the sanitizer build's catchers last (they need a
        second rebuild): when the first failure ends the run, the suite's
        verdict costs the least."""
        self.full_set.sort(key=lambda c: (c.kind == "asan", self.baseline.get(self.key(c), 0.0),
                                          c.label))

    def baseline_key(self):
        """What a green baseline depends on: every tracked file's content, the
        sweep's configuration and the catchers' code (this directory)."""
        h = hashlib.sha256()
        for rel in sorted(self.workers[0].files):
            p = self.source / rel
            h.update(rel.encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest() if p.is_file() else b"-")
        h.update(json.dumps(self.cfg, sort_keys=True).encode())
        h.update(json.dumps(float(self.floor)).encode())
        for f in sorted(pathlib.Path(__file__).resolve().parent.glob("*.py")):
            h.update(f.read_bytes())
        return h.hexdigest()[:20]

    def read_baseline_cache(self, key):
        p = self.workroot / "baseline-cache.json"
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("times"), dict):
            return None
        return {k: float(v) for k, v in doc["times"].items()}

    def write_baseline_cache(self, key):
        """Only a green baseline is written (a red one exits before this)."""
        p = self.workroot / "baseline-cache.json"
        old = self.read_baseline_cache(key) or {}
        old.update(self.baseline)
        p.write_text(json.dumps({"key": key, "times": old}, indent=1, sort_keys=True), encoding="utf-8")

    def bound(self, c, e):
        """A patched run's hang bound: HANG_FACTOR times the catcher's baseline
        time (for a slow one, the time it ran past), stretched by the load now."""
        load = load_factor()
        b = max(self.floor, HANG_FACTOR * self.baseline.get(self.key(c), self.floor)) * load
        if c.kind == "pytest":
            b = max(b, PYTEST_HANG_FLOOR * load)
        if e.timeout:
            b = max(b, float(e.timeout))
        return b

    def fallback_order(self, e):
        """The fallback set for entry e: its own tests first (relevance), then
        the baseline's order (cheapest first, the sanitizer build's last)."""
        return sorted(self.full_set, key=lambda c: (-relevance(e, c), c.kind == "asan",
                                                    self.baseline.get(self.key(c), 0.0), c.label))
