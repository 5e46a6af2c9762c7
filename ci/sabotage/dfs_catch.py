#!/usr/bin/env python3
"""Schedules to first catch, per strategy (each run stops at its first failure), for the sabotage entries a
scenario catches: random and PCT (seeds until the first failing one), DFS
without and with the partial-order reduction at preemption bounds 0, 1, 2
(runs of the search until the first failing one; -- when the bound's search
ended or hit --max-runs without one).  It also checks the reduction's
soundness on real mutants: an entry the plain DFS catches at a bound must be
caught by DFS --por at that bound (exit 1 otherwise).

    ci/sabotage/dfs_catch.py [--max-runs M] [--seeds N] [--only NAME,...] [--json OUT]

One copy of the tree (git archive HEAD, under --work, default
/tmp/tpheal-dfs-catch), built once (RelWithDebInfo); each entry is applied
alone, the harness rebuilt, run, and the file restored.  Minutes per entry
on a 2-core machine: behind `make sabotage-dfs`, not in `make test`."""
import argparse
import json
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import manifest as mf  # noqa: E402
sys.path.insert(0, str(HERE.parent))
import harness_json as HJ  # noqa: E402  (the harness's JSON contract)

TARGETS = ["tpheal-harness", "tpheal-harness-failfast"]


def sh(cmd, cwd, timeout=3600):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def first_failure(out, key="seed"):
    """The smallest seed (random/pct) or run number (dfs) of a failure row."""
    best = None
    for row in HJ.of_type(objects(out), "failure"):
        if isinstance(row.get(key), int):
            best = row[key] if best is None else min(best, row[key])
    return best


def objects(out):
    """The contract's objects of out; a line cut short (a crash) is skipped."""
    return HJ.scan(out)[0]


def dfs_summary(out):
    found = HJ.of_type(objects(out), "dfs")
    return found[0] if found else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-runs", type=int, default=20000)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="/tmp/tpheal-dfs-catch")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    man = mf.load(str(REPO / "sabotage.json"))
    only = set(filter(None, a.only.split(",")))
    entries = []
    for e in man.entries:
        scns = [c for c in e.caught_by if c.kind == "scenario"]
        if e.expect == "caught" and scns and (not only or e.name in only):
            entries.append((e, scns[0]))
    work = pathlib.Path(a.work)
    src = work / "src"
    # a fresh copy of HEAD each time (an interrupted run leaves a patch in place)
    subprocess.run(["rm", "-rf", str(src)], check=True)
    src.mkdir(parents=True, exist_ok=True)
    subprocess.run(f"git -C {REPO} archive HEAD | tar -x -C {src}", shell=True, check=True)
    build = work / "build"
    if not (build / "CMakeCache.txt").is_file():
        rc, out = sh(["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], src)
        if rc:
            sys.exit(out)
    harness = str(build / "harness" / "scenario" / "tpheal-harness")
    results, unsound = [], []
    for e, c in entries:
        path = src / e.file
        orig = path.read_text()
        if e.find not in orig:
            print(f"{e.name}: its find text is not in {e.file}", file=sys.stderr)
            continue
        path.write_text(orig.replace(e.find, e.replace, 1))
        try:
            rc, out = sh(["cmake", "--build", str(build), "-j2", "--target", *TARGETS], src)
            if rc:
                print(f"{e.name}: build failed\n{out[-2000:]}", file=sys.stderr)
                continue
            scn = str(src / "scenarios" / c.name)
            row = {"entry": e.name, "scenario": c.name}
            t0 = time.time()
            for st in ("random", "pct"):
                _, out = sh([harness, "run", scn, "--json", "--no-replay", "--max-failures", "1", "--strategy", st,
                             "--seeds", str(a.seeds)], src)
                s = first_failure(out)
                row[st] = None if s is None else s + 1  # seeds from 0: schedules run
            for p in (0, 1, 2):
                for por in (False, True):
                    _, out = sh([harness, "run", scn, "--json", "--no-replay", "--max-failures", "1", "--strategy",
                                 "dfs", "--preemptions", str(p), "--max-runs", str(a.max_runs)]
                                + (["--por"] if por else []), src)
                    d = dfs_summary(out) or {}
                    row[f"dfs{p}{'_por' if por else ''}"] = first_failure(out)
                    row[f"dfs{p}{'_por' if por else ''}_runs"] = d.get("interleavings")
                    row[f"dfs{p}{'_por' if por else ''}_complete"] = d.get("complete")
                if row[f"dfs{p}"] is not None and row[f"dfs{p}_por"] is None:
                    unsound.append((e.name, p))
            row["seconds"] = round(time.time() - t0, 1)
            results.append(row)
            cell = lambda v: "--" if v is None else str(v)
            print(f"{e.name:44} random {cell(row['random']):>4} pct {cell(row['pct']):>4} | "
                  + " ".join(f"P{p} dfs {cell(row[f'dfs{p}']):>5} por {cell(row[f'dfs{p}_por']):>5}" for p in (0, 1, 2))
                  + f"  ({row['seconds']} s)", flush=True)
        finally:
            path.write_text(orig)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(results, indent=1) + "\n")
    for name, p in unsound:
        print(f"UNSOUND {name}: plain DFS catches it at P={p}, DFS --por does not", file=sys.stderr)
    return 1 if unsound else 0


if __name__ == "__main__":
    sys.exit(main())
