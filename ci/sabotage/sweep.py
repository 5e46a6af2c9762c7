#!/usr/bin/env python3
"""The sabotage sweep: apply each entry of sabotage.json to a copy of the tree,
rebuild what it touches, run the catchers it names, and compare what happened
with what the entry declared.  docs/sabotage.md is the user's guide.

Exit 0: every entry that declares an expectation behaved as declared (and,
with --fail-under PCT, at least PCT% of the defects were caught).  1: some
did not (each such patch is printed), or the share is below PCT.  2: bad
manifest or invocation, or a red baseline.  An entry that declares nothing
(no caughtBy, no failure kind: a foreign manifest's defects, generated
mutants) is measured, caught or survived, and never decides the exit code.

The sweep is split by concern (docs/sabotage.md, "The code"): this file is
its command line; sweep_run.Sweep the pipeline.  The names other scripts
and the tests import from here are re-exported below.

Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import manifest as mf  # noqa: E402
import report as rp  # noqa: E402
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from sweep_config import (CAUGHT_OUTCOMES, CONFIG_TYPES, DEFAULTS, HANG_FACTOR,  # noqa: E402
                          HANG_FLOOR, LAYERS, OUTPUT_KEEP, PYTEST_HANG_FLOOR, Bad, config_of, now,
                          pytest_python)
from sweep_kinds import (broken_kind, harness_kind, harness_text_kind, parse_generate_json,  # noqa: E402
                         parse_harness, parse_harness_json, parse_harness_text, pytest_kind, unit_kind)
from sweep_procs import kill_all, run_bounded, stop_on_signals  # noqa: E402
from sweep_results import Result, Run  # noqa: E402
from sweep_catchers import relevance, words  # noqa: E402
from sweep_entry import transcript_stem  # noqa: E402
from sweep_run import Sweep  # noqa: E402
from sweep_worker import Worker  # noqa: E402

# What `import sweep` offers (mutants.py, the tests, anyone's script).
__all__ = ["CAUGHT_OUTCOMES", "CONFIG_TYPES", "DEFAULTS", "HANG_FACTOR", "HANG_FLOOR", "OUTPUT_KEEP",
           "PYTEST_HANG_FLOOR", "Bad", "now", "pytest_python",
           "broken_kind", "harness_kind", "harness_text_kind", "parse_harness", "parse_harness_json",
           "parse_harness_text", "pytest_kind", "unit_kind",
           "kill_all", "run_bounded", "stop_on_signals", "Result", "Run", "relevance", "words",
           "transcript_stem", "Sweep", "Worker",
           "parse_shard", "shard", "percent_arg", "summary_lines", "main"]


def parse_shard(s):
    m = re.fullmatch(r"(\d+)/(\d+)", s or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise Bad(f"sweep: --shard must be i/n with 1 <= i <= n, not '{s}'")
    return int(m.group(1)), int(m.group(2))


def shard(entries, i, n):
    """Contiguous blocks, sizes differing by at most one."""
    k, r = divmod(len(entries), n)
    start = (i - 1) * k + min(i - 1, r)
    return entries[start:start + k + (1 if i <= r else 0)]


def percent_arg(text):
    """--fail-under's value: a number 0..100 (a percentage of defects)."""
    try:
        v = float(text)
    except ValueError:
        v = None
    if v is None or not 0.0 <= v <= 100.0 or v != v:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 100, not '{text}'")
    return v


def summary_lines(t, fail_under=None):
    """The closing lines: defects apart from controls and build checks."""
    pct = f"{t['percent']:.1f}%" if t["percent"] is not None else "-"
    line = f"sweep: caught {t['caught']} of {t['defects']} defects ({pct})"
    if t["notRun"]:
        line += f", {t['notRun']} more not run (stale, inert or not compiling)"
    c, b = t["controls"], t["buildChecks"]
    line += (f"; controls apart: {c['total']} ({c['survived']} survived, {c['caught']} caught"
             + (f", {c['notRun']} not run" if c["notRun"] else "") + ")")
    line += (f"; build checks apart: {b['total']}"
             + (f" ({b['refused']} refused, {b['accepted']} accepted"
                + (f", {b['other']} other" if b["other"] else "") + ")" if b["total"] else ""))
    out = [line]
    if fail_under is not None:
        if t["percent"] is None:
            out.append(f"sweep: --fail-under {fail_under:g}: no defect ran, so none was caught: FAIL")
        elif t["percent"] < fail_under:
            out.append(f"sweep: --fail-under {fail_under:g}: {pct} is below it: FAIL")
        else:
            out.append(f"sweep: --fail-under {fail_under:g}: {pct} meets it")
    return out


def main(argv=None):
    here = pathlib.Path(__file__).resolve()
    default_checkout = here.parent.parent.parent
    ap = argparse.ArgumentParser(description="Run the sabotage manifest against a copy of the tree.")
    ap.add_argument("--manifest", default=None, help="default: CHECKOUT/sabotage.json")
    ap.add_argument("--checkout", default=str(default_checkout))
    ap.add_argument("--work", default=None, help="copies and build dirs (default CHECKOUT/build-sabotage)")
    ap.add_argument("--out", default=None, help="transcripts and reports (default CHECKOUT/build/sabotage)")
    ap.add_argument("--shard", default=None, help="i/n: run the i-th of n contiguous blocks")
    ap.add_argument("--only", action="append", default=[], help="run only this entry (repeatable)")
    ap.add_argument("--jobs", type=int, default=2, help="entries run in parallel (default 2)")
    ap.add_argument("--ignore-red-fallback", action="store_true",
                    help="development aid: a fallback catcher that fails unpatched is left out "
                         "(named catchers must still be green)")
    ap.add_argument("--rev", default=None,
                    help="copy this commit's files instead of the working tree's tracked files")
    ap.add_argument("--all-catchers", action="store_true",
                    help="run every catcher of the fallback set on each entry and list all that "
                         "fail (default: stop at the first, the entry's own tests running first)")
    ap.add_argument("--fail-under", type=percent_arg, default=None, metavar="PCT",
                    help="exit 1 when fewer than PCT%% of the defects that ran were caught "
                         "(controls and build checks apart)")
    ap.add_argument("--check", action="store_true", help="validate the manifest and stop")
    ap.add_argument("--list", action="store_true", help="list the entries and stop")
    ap.add_argument("--quiet", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit as ex:
        return 2 if ex.code else 0
    checkout = pathlib.Path(a.checkout).resolve()
    mpath = a.manifest or str(checkout / "sabotage.json")
    try:
        disp = os.path.relpath(mpath) if not os.path.isabs(a.manifest or "") else mpath
        try:
            m = mf.load(mpath, display=disp)
        except mf.ManifestError as ex:
            raise Bad(*ex.problems)
        entries = m.entries
        if a.only:
            names = {e.name for e in entries}
            unknown = [n for n in a.only if n not in names]
            if unknown:
                raise Bad(f"sweep: --only names no entry: {', '.join(unknown)}")
            entries = [e for e in entries if e.name in a.only]
        if a.shard:
            entries = shard(entries, *parse_shard(a.shard))
        if a.jobs < 1:
            raise Bad("sweep: --jobs must be at least 1")
        if a.list:
            try:
                for e in entries:
                    print(f"{e.name}\t{e.expect}\t{e.file}")
            except BrokenPipeError:  # `--list | head`
                sys.stdout = open(os.devnull, "w")
            return 0
        if a.check:
            config_of(m)  # the configuration keys too (Bad: exit 2)
            stale = []
            for e in m.entries:
                rel = os.path.normpath(os.path.join(m.root, e.file))
                if a.rev:
                    p = subprocess.run(["git", "show", f"{a.rev}:{rel}"], cwd=checkout,
                                       capture_output=True)
                    text = p.stdout.decode("utf-8", "replace") if p.returncode == 0 else ""
                else:
                    f = checkout / rel
                    text = f.read_text(encoding="utf-8") if f.is_file() else ""
                n = text.count(e.find)
                if n != 1:
                    stale.append(f"{disp}:{e.line}:1: entry '{e.name}': 'find' matches {n} times "
                                 f"in {e.file} (stale)")
            for line in stale:
                print(line)
            print(f"{disp}: {len(m.entries)} entries, valid" + (f", {len(stale)} stale" if stale else ""))
            return 1 if stale else 0
        work = pathlib.Path(a.work) if a.work else checkout / "build-sabotage"
        out = pathlib.Path(a.out) if a.out else checkout / "build" / "sabotage"
        sw = Sweep(checkout, m, work, out, jobs=a.jobs, quiet=a.quiet, rev=a.rev)
        sw.ignore_red_fallback = a.ignore_red_fallback
        sw.stop_at_first = not a.all_catchers
        sw.fail_under = a.fail_under
        t0 = now()
        if not entries:
            print("sweep: this shard has no entries")
            return 0
        stop_on_signals()
        if not any(e.expect == "survives" for e in m.entries) and not a.quiet:
            print("sweep: note: no 'survives' control in the manifest, so nothing here shows "
                  "the suite does not fail on any change at all")
        results = sw.run(entries)
        sw.write_reports(results)
    except Bad as ex:
        for line in ex.lines:
            print(line, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        return 2
    bad = [r for r in results if r.ok is False]
    t = rp.tally([r.as_dict() for r in results])
    counts = {}
    for r in results:
        if r.entry.role == "defect":
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
    print(f"sweep: {len(results)} entries in {now() - t0:.1f} s: "
          + (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no defect")
          + f"; {t['asDeclared']} as declared, {t['notAsDeclared']} not, "
            f"{t['undeclared']} with nothing declared")
    lines = summary_lines(t, a.fail_under)
    for line in lines:
        print(line)
    print(f"sweep: report {out / 'mutation-report.html'}, transcripts {out / 'transcripts'}")
    for r in bad:
        print(f"\n=== {r.entry.name}: {r.outcome} ({r.summary}); declared {r.entry.expect}"
              + (f" ({r.entry.failure})" if r.entry.failure else "") + "\n" + r.diff)
    below = a.fail_under is not None and lines[-1].endswith("FAIL")
    return 1 if bad or below else 0


if __name__ == "__main__":
    sys.exit(main())
