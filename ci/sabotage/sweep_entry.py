"""One entry in one worker: apply the patch to the worker's copy (stale or
inert if it cannot), rebuild what its catchers need, run its named catchers
and then, when they all pass (or none were named), the fallback set in the
entry's order, judge what failed, write the entry's transcript, and restore
the file whatever happened.  docs/sabotage.md, "What a sweep does" 4."""
from __future__ import annotations

import difflib
import re
import time

import harness_json as HJ  # the harness's JSON contract (sweep.py puts ci/ on the path)
import sweep_objects

from sweep_config import OUTPUT_KEEP, now
from sweep_judge import judge
from sweep_results import Result


class Entries:
    """The Sweep's entry runner (a mixin of sweep_run.Sweep): reads its cfg,
    out, full_set, stop_at_first and the Catchers' bound and fallback_order."""

    def run_entry(self, w, e):
        t0 = now()
        log = [f"entry: {e.name}\nexpect: {e.expect}"
               + (f" ({e.failure}) by {', '.join(c.label for c in e.caught_by)}" if e.caught_by else "")
               + (" by anything in the suite" if e.expect == "caught" and not e.caught_by else "")
               + f"\nwhy: {e.why}\n", "patch:\n" + e.diff()]
        path = w.src / self.rel(e)
        original = path.read_text(encoding="utf-8")
        mutant = getattr(e, "mutant", None)

        diff = [e.diff()]

        def done(outcome, ok, summary, **kw):
            if not e.declared:
                ok = None  # measured, not judged: nothing was declared
            r = Result(e, outcome, ok, summary, seconds=now() - t0, diff=diff[0], **kw)
            verdict = {True: "as declared", False: "NOT as declared", None: "nothing declared"}[ok]
            log.append(f"\noutcome: {outcome} ({verdict}): {summary}")
            r.transcript = "\n".join(log)
            self.write_transcript(e.name, r.transcript)
            return r

        if mutant is not None:
            # a generated mutant names its lines, not a unique text
            patched = mutant.apply(original)
            if patched is None:
                return done("stale", False, f"line {mutant.first} of {self.rel(e)} has changed")
        else:
            count = original.count(e.find)
            if count != 1:
                return done("stale", False, f"'find' matches {count} times in {self.rel(e)}")
            patched = original.replace(e.find, e.replace, 1)
        if patched == original:
            return done("inert", False, "the patch leaves the file unchanged")
        diff[0] = "".join(difflib.unified_diff(original.splitlines(True), patched.splitlines(True),
                                               f"a/{self.rel(e)}", f"b/{self.rel(e)}"))
        log[1] = "patch:\n" + diff[0]
        san_built = [False]
        try:
            since = time.time()
            path.write_text(patched, encoding="utf-8")
            w.built_all = False
            first = e.caught_by if e.expect == "caught" else []
            targets = w.targets_for(first) if first else w.fallback_targets()
            ok, out, secs = w.cmake_build(targets)
            log.append(f"build ({'targets ' + ' '.join(sorted(targets)) if first else 'fallback set'}): "
                       f"{'ok' if ok else 'FAILED'} in {secs:.1f} s\n" + (out[-20000:] if not ok else ""))
            if not first and ok:
                w.built_all = True
            if not ok:
                if e.expect == "refused-by-build":
                    if e.build_error in out:
                        return done("refused-by-build", True,
                                    f"the build refused it, printing '{e.build_error}'")
                    return done("does-not-compile", False,
                                f"the build failed without printing '{e.build_error}'")
                return done("does-not-compile", False, "the patched copy does not build")
            if e.expect == "refused-by-build":
                return done("survived", False,
                            f"the build accepted it (expected an error containing '{e.build_error}')")
            if mutant is not None and not first:
                same = self.same_object_code(w, path, since, log)
                if same:
                    return done("same-object-code", False, same)

            def run_one(c):
                if c.kind == "asan" and not san_built[0]:
                    targets = (w.san.san_fallback_targets() if c in self.full_set else set()) \
                        | w.san_targets(first) | w.san_targets([c])
                    ok, out, secs = w.san.cmake_build(targets)
                    log.append(f"build (sanitizer copy): {'ok' if ok else 'FAILED'} in {secs:.1f} s\n"
                               + (out[-20000:] if not ok else ""))
                    if not ok:
                        return None
                    san_built[0] = True
                r = w.run(c, self.bound(c, e))
                log.append(self.run_log(r, self.bound(c, e)))
                return r

            ran = []
            for c in first:
                r = run_one(c)
                if r is None:
                    return done("does-not-compile", False, "the sanitizer build of the patch fails")
                ran.append(c.label)
                if r.failed:
                    return judge(e, [r], ran, named=True, done=done, want=c.failure or e.failure)
                log.append(f"(named catcher {c.label} missed)")
            # The named catchers missed (or none were named): the whole set, so
            # a catch by something else is seen and a control is really tested.
            if not w.built_all:
                ok, out, secs = w.cmake_build(w.fallback_targets())
                log.append(f"build (fallback set): {'ok' if ok else 'FAILED'} in {secs:.1f} s\n"
                           + (out[-20000:] if not ok else ""))
                if not ok:
                    return done("does-not-compile", False,
                                "the catchers built but the rest of the tree does not")
                w.built_all = True
            named = {self.key(c) for c in first}
            caught = []
            # a declared kind without named catchers: go on to a catcher of that kind
            want = e.failure if e.expect == "caught" and not e.caught_by else None
            for c in self.fallback_order(e):
                if self.key(c) in named:
                    continue
                r = run_one(c)
                if r is None:
                    return done("does-not-compile", False, "the sanitizer build of the patch fails")
                ran.append(c.label)
                if r.failed:
                    caught.append(r)
                    # The first catcher decides (the rule's own tests run
                    # first); --all-catchers runs and lists every one.
                    if self.stop_at_first and (want is None or r.kind == want):
                        break
            if caught:
                return judge(e, caught, ran, named=False, done=done)
            if e.expect == "survives":
                return done("survived", True, f"nothing failed ({len(ran)} catcher runs)", ran=ran)
            return done("survived", False,
                        f"survived: no catcher failed ({len(ran)} runs); the rule it breaks "
                        f"lacks a test", ran=ran)
        finally:
            path.write_text(original, encoding="utf-8")
            w.built_all = False

    def same_object_code(self, w, path, since, log):
        """A generated mutant's verdict by its object code (sweep_objects.py):
        the summary when no catcher can tell it from the original, else None.
        The sanitizer copy is built and compared too: its flags and macros
        (an ASan or TSan branch) can make code of what the plain build drops."""
        states = [sweep_objects.same_code(w.build, w.objects, path, since)]
        if states[0] in ("same", "none") and w.san is not None:
            ok, out, secs = w.san.cmake_build(w.san.san_fallback_targets())
            log.append(f"build (sanitizer copy, to compare its objects): {'ok' if ok else 'FAILED'} "
                       f"in {secs:.1f} s\n" + (out[-20000:] if not ok else ""))
            if not ok:
                return None  # the catchers' own build of it says what is wrong
            states.append(sweep_objects.same_code(w.san.build, w.san.objects, path, since))
        log.append(f"object code against the original: {', '.join(states)}")
        return sweep_objects.verdict(states)

    def run_log(self, r, bound):
        return (f"\n--- {r.label}: {' '.join(r.cmd)}\nbound {bound:.0f} s; exit {r.rc}; "
                f"{r.seconds:.2f} s; {'FAILED (' + str(r.kind) + ')' if r.failed else 'passed'}"
                f"{'; schedules ' + str(r.schedules) if r.schedules else ''}"
                f"{'; seed ' + r.seed if r.seed else ''}{'; ' + r.note if r.note else ''}\n"
                + shortest_schedule(r.output)
                + (r.output if len(r.output) <= OUTPUT_KEEP else
                   "[...]\n" + r.output[-OUTPUT_KEEP:]))

    def write_transcript(self, name, text):
        d = self.out / "transcripts"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{transcript_stem(name)}.txt").write_text(text, encoding="utf-8")


def shortest_schedule(output):
    """A scenario catcher's first shrunk failure (the harness's shrunk_*
    fields, harness/scenario/scn_shrink.h) as the transcript's lead lines:
    its preemptions and the command that replays it; '' when none."""
    try:
        objs, _ = HJ.scan(output)
    except HJ.VersionMismatch:
        return ""
    for o in HJ.of_type(objs, "failure"):
        if o.get("shrunk_replay"):
            return (f"shortest failing schedule: {o['shrunk_preemptions']} preemptions, choice prefix "
                    f"{o['shrunk_prefix']} of {o['shrunk_choices']} choices ({o['kind']} at line {o['line']}; "
                    f"found by {o['strategy']} seed {o['seed']}, {o.get('preemptions', '?')} preemptions)\n"
                    f"  replay: {o['shrunk_replay']}\n")
    return ""


def transcript_stem(name):
    """A file name for an entry's transcript (a generated mutant's id has
    slashes and colons)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
