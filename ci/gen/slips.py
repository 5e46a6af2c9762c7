"""The slips of ci/gen/slips.json held against `tpheal-harness generate`
alone (docs/generate.md, "Slips"): each is applied to a copy of the tree (git
archive of HEAD, so the checkout is never touched), the copy's harness is
built (ccache shares the unchanged objects), and the generator runs with a
fixed master seed and budget; the report says whether it failed, at which
program, and how small the shrunk scenario and its schedule came out.

    python3 ci/gen/slips.py [--only NAME] [--seed S] [--programs N] [--seconds B] [--keep DIR]

One JSON object per slip on stdout, then a summary line.  Exit 0 when it ran
(the verdicts are the measurement), 2 on bad input or a copy that does not
apply or build.  Python 3.11 standard library only; child processes go
through ci/procs.py."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
import harness_json  # noqa: E402
import procs  # noqa: E402

BUILD_BOUND = 900.0


def load(path=HERE / "slips.json"):
    data = json.loads(pathlib.Path(path).read_text())
    return data["slips"]


def apply(root: pathlib.Path, slip: dict) -> None:
    """The slip's find/replace pairs on root's copy of its file; each find
    must occur exactly once (a slip that no longer applies is an error, not
    a silent pass)."""
    f = root / slip["file"]
    text = f.read_text()
    for find, repl in zip(slip["find"], slip["replace"]):
        if text.count(find) != 1:
            raise SystemExit(f"slips.py: {slip['name']}: its text occurs {text.count(find)} times in {slip['file']}")
        text = text.replace(find, repl)
    f.write_text(text)


def copy_tree(dest: pathlib.Path) -> None:
    r = procs.run_bounded(["sh", "-c", f"git -C '{REPO}' archive HEAD | tar -x -C '{dest}'"], 120)
    if r.rc != 0:
        raise SystemExit(f"slips.py: git archive failed: {r.out}")


def build(root: pathlib.Path) -> pathlib.Path:
    env = dict(os.environ, CCACHE_BASEDIR=str(root))
    b = root / "build"
    for cmd in (["cmake", "-S", str(root), "-B", str(b), "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DTPHEAL_WERROR=ON"],
                ["cmake", "--build", str(b), "-j2", "--target", "tpheal-harness"]):
        r = procs.run_bounded(cmd, BUILD_BOUND, env=env)
        if r.rc != 0:
            raise SystemExit(f"slips.py: {' '.join(cmd)} failed:\n{r.out[-3000:]}")
    return b / "harness" / "scenario" / "tpheal-harness"


def run_generate(harness: pathlib.Path, seed: int, programs: int, seconds: int, out: pathlib.Path, bound: float):
    cmd = [str(harness), "generate", "--seed", str(seed), "--programs", str(programs), "--seconds", str(seconds),
           "--max-failures", "1", "--out", str(out), "--json"]
    r = procs.run_bounded(cmd, bound, merge=False)
    objs = harness_json.objects(r.out) if r.out else []
    return r, objs


def measure(slip: dict, seed: int, programs: int, seconds: int, keep: pathlib.Path | None) -> dict:
    work = pathlib.Path(tempfile.mkdtemp(prefix=f"gen-slip-{slip['name']}-"))
    try:
        copy_tree(work)
        apply(work, slip)
        harness = build(work)
        out = work / "out"
        out.mkdir()
        r, objs = run_generate(harness, seed, programs, seconds, out, bound=seconds * 4 + 600)
        fails = harness_json.of_type(objs, "generate-failure")
        summ = harness_json.of_type(objs, "generate-summary")
        res = {"slip": slip["name"], "source": slip.get("source", ""), "rc": r.rc, "seconds": round(r.seconds, 1),
               "programs": summ[0]["programs"] if summ else None, "runs": summ[0]["runs"] if summ else None,
               "found": bool(fails)}
        if fails:
            f = fails[0]
            res.update(index=f["index"], signature=f["signature"], shrunk_lines=f.get("shrunk_lines"),
                       preemptions=f.get("preemptions"), shrink_runs=f.get("shrink_runs"),
                       replay=f.get("shrunk_replay"), shrunk=f.get("shrunk"))
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            for p in out.iterdir():
                shutil.copy(p, keep / f"{slip['name']}-{p.name}")
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--programs", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--keep", type=pathlib.Path)
    a = ap.parse_args(argv)
    slips = load()
    names = {s["name"] for s in slips}
    for n in a.only:
        if n not in names:
            print(f"slips.py: --only {n}: no such slip (known: {', '.join(sorted(names))})", file=sys.stderr)
            return 2
    found = 0
    ran = 0
    for s in slips:
        if a.only and s["name"] not in a.only:
            continue
        res = measure(s, a.seed, a.programs, a.seconds, a.keep)
        ran += 1
        found += res["found"]
        print(json.dumps(res), flush=True)
    print(f"slips.py: {found} of {ran} slips found by generate --seed {a.seed} (<= {a.programs} programs, {a.seconds} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
