#!/usr/bin/env python3
"""Generated mutants run through the sabotage sweep's machinery: the
mutation score of the suite against defects nobody chose.

Each mutant (mutagen.py: relational/arithmetic/logical operators, constants
+-1, statement, call and lock/unlock deletion, atomic -> plain, swapped
statements) becomes an entry without `caughtBy`: the sweep applies it to a
worker's copy, rebuilds incrementally, and runs the suite's catchers --
unit tests, every scenario under both strategies at the suite's seed count,
the generated programs, the sanitizer build's unit tests, the pytest layer
(--layers picks some of them) -- cheapest first, stopping at the first
that fails (killed; a hang past the bound is a timeout, also killed).  A
mutant that does not build is a compile error, outside the score; one whose
file compiles to the same object bytes as the original in every build the
suite runs (or into nothing it runs) is `same-object-code`, also outside it,
without running a catcher (sweep_objects.py: trivial compiler equivalence).

  python3 ci/sabotage/mutants.py                        # every mutant of core/src
  python3 ci/sabotage/mutants.py --files 'harness/sim/*.c' --sample 50 --seed 1
  python3 ci/sabotage/mutants.py --diff origin/main     # only mutants on changed lines
  python3 ci/sabotage/mutants.py --list                 # id, key, change; nothing runs
  python3 ci/sabotage/mutants.py --sample 60 --layers generate   # the generated programs alone

Score = killed / (killed + survived), equivalent mutants (ci/mutants/
equivalent.txt, by key, and same-object-code) left out.  Exit 0, or 1 when the score is below
--fail-under, 2 for a bad invocation or a red baseline.  docs/mutation.md is
the guide and holds the published score.

Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import pathlib
import random
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import manifest as mf  # noqa: E402
import mutagen  # noqa: E402
from sweep_config import DEFAULTS, LAYERS, Bad, now  # noqa: E402
from sweep_procs import kill_all, stop_on_signals  # noqa: E402
from sweep_run import Sweep  # noqa: E402

DEFAULT_FILES = ["core/src/*.c"]
EQUIV = "ci/mutants/equivalent.txt"
POSITION_RE = re.compile(r"^[^\s:]+:\d+:\d+:[a-z0-9+-]+$")  # a mutant's id, file:line:col:operator
# the suite's seeds per strategy (ci/test_scenarios.py: TPHEAL_SCENARIO_SEEDS)
SUITE_SEEDS = 200


def load_equivalent(path):
    """{mutant key: reason} from lines `KEY  reason` ('#' starts a comment
    line).  A note names its mutant by key (mutagen.py), never by position:
    a position moves with every edit above it and then names another
    mutant, or none.  Malformed lines are `file:line:col: what` errors
    (exit 2)."""
    out = {}
    if not path.is_file():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 1)
        if POSITION_RE.match(parts[0]):
            raise Bad(f"{path}:{n}:1: '{parts[0]}' is a mutant's position, which moves when lines "
                      f"above it change; name it by its key (mutants.py --list, or the '=== KEY' "
                      f"line of survivors.txt)")
        if len(parts) != 2 or not mutagen.KEY_RE.match(parts[0]):
            raise Bad(f"{path}:{n}:1: expected 'FILE:OPERATOR:HASH[#N]  reason' (a mutant's key "
                      f"and why no test can tell it from the original)")
        if parts[0] in out:
            raise Bad(f"{path}:{n}:1: mutant '{parts[0]}' listed twice")
        out[parts[0]] = parts[1].strip()
    return out


def stale_notes(equivalent, files, operators, keys):
    """The notes on these files and operators whose key no generated mutant
    has (the statement was edited, or went)."""
    return [k for k in equivalent
            if k.split(":")[0] in files and k.split(":")[1] in operators and k not in keys]


def survivor_header(key, mid, note):
    """survivors.txt's line for one survivor: the key first, ready to paste
    into equivalent.txt, then the position to find it by."""
    head = f"=== {key}  ({mid})" if key else f"=== {mid}"  # a progress.jsonl from before keys
    return head + (f"  [equivalent: {note}]" if note else "  [NOT KILLED]")


def glob_match(path, pattern):
    """A glob per path component: `core/src/*.c` is not core/src/win/x.c
    (that backend is never compiled by a Linux build, so its mutants would
    all "survive")."""
    a, b = path.split("/"), pattern.split("/")
    return len(a) == len(b) and all(fnmatch.fnmatchcase(x, y) for x, y in zip(a, b))


def collect(checkout, patterns, files, operators):
    """Mutants of the tracked files matching the patterns, in file order."""
    chosen = sorted(f for f in files if f.endswith(".c") and any(glob_match(f, p) for p in patterns))
    muts = []
    for rel in chosen:
        text = (checkout / rel).read_text(encoding="utf-8")
        muts += mutagen.generate(rel, text, operators)
    return chosen, muts


def sample(muts, n, seed):
    """A deterministic sample (random.Random(seed)) in the order drawn, so
    that the mutants finished when a long run is stopped are themselves a
    uniform sample (progress.jsonl keeps them)."""
    if n is None:
        return list(muts)
    return [muts[i] for i in random.Random(seed).sample(range(len(muts)), min(n, len(muts)))]


def entry_of(m, index):
    e = mf.Entry(index, m.id, m.file, "\n".join(m.before), "\n".join(m.after), "caught",
                 m.description, None, None, [], None, m.first)
    e.mutant = m
    return e


def summarize(results, equivalent):
    """Counts and the score over non-equivalent mutants (results: dicts as
    Result.as_dict gives them, or progress.jsonl holds them)."""
    c = {"killed": 0, "timeout": 0, "survived": 0, "equivalent": 0, "same-object-code": 0,
         "compile-error": 0, "stale": 0}
    for r in results:
        if r["outcome"] == "caught":
            c["timeout" if r["kind"] == "timeout" else "killed"] += 1
        elif r["outcome"] == "survived":
            c["equivalent" if r.get("key") in equivalent else "survived"] += 1
        elif r["outcome"] == "does-not-compile":
            c["compile-error"] += 1
        elif r["outcome"] == "same-object-code":
            c["same-object-code"] += 1
        else:
            c["stale"] += 1
    killed = c["killed"] + c["timeout"]
    denom = killed + c["survived"]
    c["score"] = round(100.0 * killed / denom, 1) if denom else None
    c["interval95"] = wilson_interval(killed, denom)
    return c


def wilson_interval(k, n, z=1.959964):
    """The 95% Wilson score interval of k successes in n, in percent (None for
    n = 0): how far a sample's score may sit from its population's.  A uniform
    sample of the mutants (--sample) measures the folder's score only to this
    width -- 20 of 50 is 27.6-53.8%, 45 of 50 is 78.6-95.7% -- so the
    published score names it (docs/mutation.md)."""
    if not n:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5)
    return [round(100.0 * max(0.0, centre - half), 1), round(100.0 * min(1.0, centre + half), 1)]


def write_outputs(sweep, results, equivalent, counts, meta):
    rep = sweep.write_reports(results)
    out = sweep.out
    surv = []
    for r in results:
        if r.outcome != "survived":
            continue
        m = r.entry.mutant
        surv.append(survivor_header(m.key, m.id, equivalent.get(m.key)) + f"\n{r.entry.why}\n{r.diff}")
    (out / "survivors.txt").write_text("\n".join(surv) + ("\n" if surv else ""), encoding="utf-8")
    (out / "score.json").write_text(json.dumps(dict(meta, **counts), indent=1), encoding="utf-8")
    return rep


def summarize_progress(dirs, checkout, equivalent_path):
    """Counts and survivors of one run's progress.jsonl, or of several: a later
    directory's result for a key replaces an earlier one's (a sample's
    survivors run again with --only after a new test: the sample re-judged)."""
    by_key, order = {}, []
    try:
        equivalent = load_equivalent(pathlib.Path(equivalent_path) if equivalent_path
                                     else checkout / EQUIV)
        for d in dirs:
            for line in (d / "progress.jsonl").read_text().splitlines():
                if not line:
                    continue
                r = json.loads(line)
                k = r.get("key") or r["name"]
                if k not in by_key:
                    order.append(k)
                by_key[k] = r
    except (OSError, ValueError, KeyError, Bad) as ex:
        print(f"mutants: cannot read {d / 'progress.jsonl'}: {ex}", file=sys.stderr)
        return 2
    rows = [by_key[k] for k in order]
    c = summarize(rows, equivalent)
    try:
        print(json.dumps(c))
        for r in rows:
            if r["outcome"] == "survived":
                print("\n" + survivor_header(r.get("key"), r["name"], equivalent.get(r.get("key")))
                      + f"\n{r['why']}\n{r.get('diff', '')}")
    except BrokenPipeError:  # `--summarize DIR | head`
        sys.stdout = open(os.devnull, "w")
    return 0


def main(argv=None):
    here = pathlib.Path(__file__).resolve()
    ap = argparse.ArgumentParser(description="Mutation score of the suite on generated mutants.")
    ap.add_argument("--checkout", default=str(here.parent.parent.parent))
    ap.add_argument("--files", action="append", default=[],
                    help="glob of tracked .c files to mutate (repeatable; default core/src/*.c)")
    ap.add_argument("--operators", default=",".join(mutagen.OPERATORS),
                    help="comma-separated subset of: " + ", ".join(mutagen.OPERATORS))
    ap.add_argument("--diff", metavar="BASE", default=None,
                    help="only mutants on lines changed since BASE (git diff -U0 BASE)")
    ap.add_argument("--sample", type=int, default=None, help="run N mutants drawn with --seed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", action="append", default=[],
                    help="run only this mutant, named by id or key (repeatable)")
    ap.add_argument("--config", default=None,
                    help="manifest whose top-level keys configure the catchers "
                         "(default CHECKOUT/sabotage.json; its entries are not run)")
    ap.add_argument("--seeds", type=int, default=SUITE_SEEDS,
                    help=f"scenario seeds per strategy (default {SUITE_SEEDS}, the suite's)")
    ap.add_argument("--no-sanitizer", action="store_true", help="leave the sanitizer build out")
    ap.add_argument("--no-pytest", action="store_true",
                    help="leave the pytest layer (pytest:FILE catchers: the sweep's default pytestFiles, "
                         "ci/test_golden.py included, whatever the config says) out")
    ap.add_argument("--sanitizer", choices=("address", "thread"), default="address",
                    help="what the sanitizer build is: ASan+UBSan (default, the suite's) or TSan, "
                         "for races the scheduler cannot see (its catchers keep the asan: label; "
                         "use its own --work)")
    ap.add_argument("--race-seeds", type=int, default=10,
                    help="with --sanitizer thread: every scenario also runs in the race build, "
                         "controlled, under both strategies at this many seeds (default 10; 0: none)")
    ap.add_argument("--layers", default=None, metavar="L,L",
                    help="judge by these layers of the suite only (default all: " + ",".join(LAYERS)
                         + "); e.g. --layers generate: the generated programs alone")
    ap.add_argument("--all-catchers", action="store_true",
                    help="run every catcher on each mutant and list them all (slower)")
    ap.add_argument("--equivalent", default=None, help=f"default CHECKOUT/{EQUIV}")
    ap.add_argument("--work", default=None, help="copies and builds (default CHECKOUT/build/mutants)")
    ap.add_argument("--out", default=None, help="reports (default CHECKOUT/build/mutants/report)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fail-under", type=float, default=None, metavar="PCT")
    ap.add_argument("--list", action="store_true", help="print the mutants and stop")
    ap.add_argument("--summarize", metavar="DIR", nargs="+", default=None,
                    help="counts and survivors of DIR/progress.jsonl (a run still going, or stopped); "
                         "of several, a later DIR's result for a mutant replaces an earlier one's")
    ap.add_argument("--quiet", action="store_true")
    try:
        a = ap.parse_args(argv)
    except SystemExit as ex:
        return 2 if ex.code else 0
    checkout = pathlib.Path(a.checkout).resolve()
    t0 = now()
    if a.summarize:
        return summarize_progress([pathlib.Path(x) for x in a.summarize], checkout, a.equivalent)
    try:
        ops = tuple(o.strip() for o in a.operators.split(",") if o.strip())
        bad = [o for o in ops if o not in mutagen.OPERATORS]
        if bad or not ops:
            raise Bad(f"mutants: unknown operator(s) {', '.join(bad) or '(none)'}; "
                      f"known: {', '.join(mutagen.OPERATORS)}")
        if a.sample is not None and a.sample < 1:
            raise Bad("mutants: --sample must be at least 1")
        layers = LAYERS
        if a.layers is not None:
            layers = tuple(x.strip() for x in a.layers.split(",") if x.strip())
            unknown = [x for x in layers if x not in LAYERS]
            if unknown or not layers:
                raise Bad(f"mutants: --layers: unknown layer(s) {', '.join(unknown) or '(none)'}; "
                          f"known: {', '.join(LAYERS)}")
        p = subprocess.run(["git", "ls-files", "-z"], cwd=checkout, capture_output=True)
        if p.returncode != 0:
            raise Bad(f"mutants: {checkout} is not a git checkout")
        tracked = [f for f in p.stdout.decode().split("\0") if f]
        patterns = a.files or DEFAULT_FILES
        chosen, muts = collect(checkout, patterns, tracked, ops)
        if not chosen:
            raise Bad(f"mutants: no tracked .c file matches {', '.join(patterns)}")
        population = len(muts)
        population_keys = {m.key for m in muts}
        if a.diff:
            d = subprocess.run(["git", "diff", "-U0", a.diff, "--"] + chosen, cwd=checkout,
                               capture_output=True, text=True)
            if d.returncode != 0:
                raise Bad(f"mutants: git diff {a.diff} failed: {d.stderr.strip()}")
            changed = mutagen.changed_lines(d.stdout)
            muts = [m for m in muts if mutagen.on_changed_lines(m, changed)]
        if a.only:
            names = {m.id for m in muts} | {m.key for m in muts}
            unknown = [i for i in a.only if i not in names]
            if unknown:
                raise Bad(f"mutants: --only names no mutant (by id or key): {', '.join(unknown)}")
            muts = [m for m in muts if m.id in a.only or m.key in a.only]
        muts = sample(muts, a.sample, a.seed)
        if a.list:
            try:
                for m in muts:
                    print(f"{m.id}\t{m.key}\t{m.description}")
            except BrokenPipeError:
                sys.stdout = open(os.devnull, "w")
            print(f"mutants: {len(muts)} of {population}", file=sys.stderr)
            return 0
        equivalent = load_equivalent(pathlib.Path(a.equivalent) if a.equivalent else checkout / EQUIV)
        for key in sorted(stale_notes(equivalent, chosen, ops, population_keys)):
            print(f"mutants: equivalence note {key} names no mutant of today's {key.split(':')[0]} "
                  f"(its lines changed: re-judge the mutant and write its new key)", file=sys.stderr)
        cfg_path = pathlib.Path(a.config) if a.config else checkout / "sabotage.json"
        raw = {"package": "mutants"}
        if cfg_path.is_file():
            try:
                raw = dict(mf.load(str(cfg_path)).raw)
            except mf.ManifestError as ex:
                raise Bad(*ex.problems)
        # The suite's catchers, whatever the sabotage manifest trims for speed.
        raw.update(fallbackSeeds=a.seeds, fallbackStrategy="both",
                   fallbackSanitizer=not a.no_sanitizer, fallbackLayers=list(layers))
        # The pytest layer too: sabotage.json leaves ci/test_golden.py out (its
        # controls change schedules, which that file pins, and no verdict);
        # a generated mutant that changes any run is killed by it.
        raw["pytestFiles"] = [] if a.no_pytest else list(DEFAULTS["pytestFiles"])
        # The project's own builds are -Werror (TPHEAL_WERROR): a mutant the
        # compiler warns about (an argument left unused by a deleted call)
        # never reaches a test there, so it is a compile error here too, not
        # a survivor.
        if a.sanitizer == "thread":
            # The race build (docs/races.md): the core's tests and, with
            # --race-seeds, every scenario under the controlled scheduler with
            # the detector.  The scheduler's own tests run racy programs on
            # purpose, uninstrumented: ~40 s there that judge no core mutant.
            raw["sanitizerCmakeArgs"] = ["-DCMAKE_BUILD_TYPE=Debug", "-DTPHEAL_SANITIZE=thread",
                                         "-DCMAKE_C_COMPILER=clang"]
            raw["sanitizerScenarioSeeds"] = max(0, a.race_seeds)
            raw["fallbackExclude"] = dict(raw.get("fallbackExclude", {}),
                                          test_sched="tests schedules, not memory (uninstrumented in the race build)",
                                          test_sched_pct="the same", test_sched_dfs="the same")
        for key in ("cmakeArgs", "sanitizerCmakeArgs"):
            args = list(raw.get(key, DEFAULTS[key]))
            if not any(x.startswith("-DTPHEAL_WERROR") for x in args):
                args.append("-DTPHEAL_WERROR=ON")
            raw[key] = args
        raw.pop("sabotages", None)
        entries = [entry_of(m, i) for i, m in enumerate(muts)]
        m = mf.Manifest(str(cfg_path), raw.get("package", "mutants"), ".", entries, raw)
        work = pathlib.Path(a.work) if a.work else checkout / "build" / "mutants"
        out = pathlib.Path(a.out) if a.out else work / "report"
        if not muts:
            print(f"mutants: no mutant to run ({population} generated"
                  + (f", none on lines changed since {a.diff}" if a.diff else "") + ")")
            return 0
        sweep = Sweep(checkout, m, work, out, jobs=a.jobs, quiet=a.quiet)
        sweep.stop_at_first = not a.all_catchers
        out.mkdir(parents=True, exist_ok=True)
        progress = open(out / "progress.jsonl", "w", encoding="utf-8")

        def record(r):
            progress.write(json.dumps(dict(r.as_dict(), diff=r.diff)) + "\n")
            progress.flush()
        sweep.on_result = record
        stop_on_signals()
        results = sweep.run(entries)
    except Bad as ex:
        for line in ex.lines:
            print(line, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        return 2
    counts = summarize([r.as_dict() for r in results], equivalent)
    wall = now() - t0
    meta = {"files": patterns, "operators": list(ops), "population": population,
            "diff": a.diff, "sample": a.sample, "seed": a.seed, "ran": len(results),
            "seeds": a.seeds, "sanitizer": None if a.no_sanitizer or "asan" not in layers else a.sanitizer,
            "layers": list(layers),
            "pytest": sweep.fallback_info["layers"].get("pytest", []),
            "wallSeconds": round(wall, 1),
            "perMutantSeconds": round(sum(r.seconds for r in results) / len(results), 2)}
    write_outputs(sweep, results, equivalent, counts, meta)
    print(f"mutants: {len(results)} run of {population} generated in {wall:.0f} s: "
          f"{counts['killed']} killed, {counts['timeout']} timeout, {counts['survived']} survived, "
          f"{counts['equivalent']} equivalent, {counts['same-object-code']} same object code, "
          f"{counts['compile-error']} compile error"
          + (f", {counts['stale']} stale" if counts["stale"] else "")
          + (f"; score {counts['score']}%" if counts["score"] is not None else "")
          + (f" (95% interval {counts['interval95'][0]}-{counts['interval95'][1]}%: a sample)"
             if counts["score"] is not None and a.sample and len(results) < population else "")
          + (f"; judged by the {', '.join(layers)} layer(s) only" if layers != LAYERS else ""))
    print(f"mutants: report {out / 'mutation-report.html'}, survivors {out / 'survivors.txt'}")
    for r in results:
        if r.outcome == "survived" and r.entry.mutant.key not in equivalent:
            print(f"\n=== {r.entry.mutant.key}  ({r.entry.name}): survived\n{r.diff}")
    if a.fail_under is not None and counts["score"] is not None and counts["score"] < a.fail_under:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
