#!/usr/bin/env python3
"""The race build against the mutants the suite lets through: every survivor
of ci/mutants/survivors.txt in a chosen section (default: the data races and
atomicity windows), applied in turn to a private copy of the tree and judged
by the race build (-DTPHEAL_SANITIZE=thread) alone -- the core's unit tests
there, then every scenario in controlled mode under random and PCT with the
detector on.  Killed = any of them fails; a survivor's first failure line is
recorded.  The rest of the suite already passed these mutants (that is what
makes them survivors), so only the race build's verdict is new.

  python3 ci/sabotage/race_rerun.py --seeds 20 --work build/race-rerun
  python3 ci/sabotage/race_rerun.py --only core/src/registry.c:atomic-plain:...

Writes WORK/progress.jsonl (one object per mutant: key, outcome, catcher,
first failure line, seconds) and prints a summary; docs/mutation.md
publishes the result.  Python 3.11 standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

SECTION_RACE = "## A data race or an atomicity window"


def survivors(path: pathlib.Path, section: str):
    """[(key, diff)] of the `=== KEY` entries under the section headed `section`."""
    out, cur, diff, inside = [], None, [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            if cur:
                out.append((cur, "\n".join(diff) + "\n"))
                cur, diff = None, []
            inside = line.startswith(section)
            continue
        if not inside:
            continue
        if line.startswith("=== "):
            if cur:
                out.append((cur, "\n".join(diff) + "\n"))
            cur, diff = line.split()[1], []
        elif cur and (diff or line.startswith("--- a/")):
            diff.append(line)
    if cur:
        out.append((cur, "\n".join(diff) + "\n"))
    return out


def run(cmd, cwd, timeout, env=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as ex:
        out = (ex.stdout or b"").decode(errors="replace") if isinstance(ex.stdout, bytes) else (ex.stdout or "")
        return -9, out + "\n(timeout)", time.monotonic() - t0


def first_failure(out: str) -> str:
    for pat in (r"^FAILURE \S+ seed .*$", r"^\s+data race: .*$", r"^.*FAILED.*$", r"^.*ThreadSanitizer.*$"):
        m = re.search(pat, out, re.M)
        if m:
            return m.group(0).strip()[:300]
    return out.strip().splitlines()[-1][:300] if out.strip() else ""


def main(argv=None) -> int:
    here = pathlib.Path(__file__).resolve().parent.parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkout", default=str(here))
    ap.add_argument("--survivors", default=None, help="default CHECKOUT/ci/mutants/survivors.txt")
    ap.add_argument("--section", default=SECTION_RACE)
    ap.add_argument("--only", action="append", default=[], help="a survivor's key (repeatable)")
    ap.add_argument("--seeds", type=int, default=20, help="scenario seeds per strategy (default 20)")
    ap.add_argument("--work", default=None, help="copy and build (default CHECKOUT/build/race-rerun)")
    ap.add_argument("--jobs", type=int, default=2, help="build jobs")
    ap.add_argument("--resume", action="store_true",
                    help="keep WORK/progress.jsonl and judge only the survivors it does not list")
    a = ap.parse_args(argv)
    checkout = pathlib.Path(a.checkout).resolve()
    work = pathlib.Path(a.work).resolve() if a.work else checkout / "build" / "race-rerun"
    path = pathlib.Path(a.survivors) if a.survivors else checkout / "ci" / "mutants" / "survivors.txt"
    muts = survivors(path, a.section)
    if a.only:
        muts = [m for m in muts if m[0] in a.only]
    # The atomics made plain first: the likeliest kills, so a run stopped
    # early has judged the most telling part.
    muts.sort(key=lambda m: ":atomic-plain:" not in m[0])
    if not muts:
        print(f"race_rerun: no survivor under '{a.section}' in {path}", file=sys.stderr)
        return 2
    src, build = work / "src", work / "build"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=checkout, capture_output=True).stdout.decode().split("\0")
    if src.exists():
        shutil.rmtree(src)
    for f in filter(None, files):
        d = src / f
        d.parent.mkdir(parents=True, exist_ok=True)
        if (checkout / f).is_file():
            shutil.copy2(checkout / f, d)
    subprocess.run(["git", "init", "-q"], cwd=src, check=True)
    # Copies keep their sources' times, which may be older than objects a
    # stopped run compiled from a mutant: the mutated files are made newer.
    for f in (src / "core" / "src").rglob("*"):
        if f.is_file():
            os.utime(f)
    if not (build / "CMakeCache.txt").is_file():
        subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                        "-DTPHEAL_WERROR=ON", "-DTPHEAL_SANITIZE=thread", "-DCMAKE_C_COMPILER=clang"],
                       check=True, capture_output=True)
    else:
        # A kept work dir is configured for an older tree: configure again, or
        # the test list below misses tests the tree added since (they then
        # show as "Not Run", and the unmutated tree seems to fail).
        subprocess.run(["cmake", "-S", str(src), "-B", str(build)], check=True, capture_output=True)
    env = dict(os.environ)
    env.setdefault("TSAN_OPTIONS", "halt_on_error=0:exitcode=66")
    harness = build / "harness" / "scenario" / "tpheal-harness"
    scenarios = sorted(str(p) for p in (src / "scenarios").glob("*.scn"))

    # Only what judges a mutant is rebuilt: the harness and the core's tests.
    names = subprocess.run(["ctest", "--test-dir", str(build), "-N", "-L", "core"], capture_output=True,
                           text=True).stdout
    harness_targets = ["tpheal-harness", "tpheal-harness-failfast"]
    test_targets = re.findall(r"core\.(test_\S+)", names)

    def build_(targets):
        return run(["cmake", "--build", str(build), "-j", str(a.jobs), "--target"] + targets, src, 1800)

    def judge():
        # The scenarios first (they have killed every race so far), so a
        # killed mutant never pays for relinking and running the unit tests.
        rc, out, _ = build_(harness_targets)
        if rc != 0:
            return "compile-error", "build", first_failure(out)
        for scn in scenarios:
            rc, out, _ = run([str(harness), "run", "--no-replay", "--seeds", str(a.seeds), "--strategy", "both",
                              scn], src, 900, env)
            if rc not in (0, 3):
                return ("timeout" if rc == -9 else "killed"), "race-build scenarios " + os.path.basename(scn), \
                    first_failure(out)
        rc, out, _ = build_(test_targets)
        if rc != 0:
            return "compile-error", "build", first_failure(out)
        rc, out, _ = run(["ctest", "--test-dir", str(build), "-L", "core", "-R", r"^core\.test_", "-j", str(a.jobs)],
                         src, 1800, env)
        if rc != 0:
            return "killed", "race-build unit tests", first_failure(out)
        return "survived", "", ""

    done = {}
    if a.resume and (work / "progress.jsonl").is_file():
        for line in (work / "progress.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            done[rec["key"]] = rec["outcome"]
    outcome, _, line = ("survived", "", "") if done else judge()
    if outcome != "survived":
        print(f"race_rerun: the unmutated tree fails the race build: {line}", file=sys.stderr)
        return 2
    progress = open(work / "progress.jsonl", "a" if done else "w", encoding="utf-8")
    counts = {}
    for o in done.values():
        counts[o] = counts.get(o, 0) + 1
    muts = [m for m in muts if m[0] not in done]
    for i, (key, diff) in enumerate(muts, 1):
        t0 = time.monotonic()
        p = subprocess.run(["git", "apply", "-"], cwd=src, input=diff, text=True, capture_output=True)
        if p.returncode != 0:
            outcome, catcher, line = "stale", "", p.stderr.strip()[:300]
        else:
            outcome, catcher, line = judge()
            subprocess.run(["git", "apply", "-R", "-"], cwd=src, input=diff, text=True, check=True)
        secs = round(time.monotonic() - t0, 1)
        counts[outcome] = counts.get(outcome, 0) + 1
        rec = {"key": key, "outcome": outcome, "catcher": catcher, "first": line, "seconds": secs,
               "seeds": a.seeds}
        progress.write(json.dumps(rec) + "\n")
        progress.flush()
        print(f"[{i}/{len(muts)}] {outcome:13} {key}  {catcher}  ({secs} s)", flush=True)
    judged = counts.get("killed", 0) + counts.get("timeout", 0) + counts.get("survived", 0)
    killed = counts.get("killed", 0) + counts.get("timeout", 0)
    print(f"race_rerun: {len(muts)} survivors: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + (f"; {killed}/{judged} = {100.0 * killed / judged:.1f}% killed" if judged else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
