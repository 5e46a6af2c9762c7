#!/usr/bin/env python3
"""make soak: the flake hunt.  Runs the suite (`make test`) N times, each under
a competing CPU load (stress-ng, one CPU hog per --load), and reports runs,
failures and each failure's cause, read from pytest's JUnit XML (never its
prose).  A test that fails only here relies on a real-time bound a loaded
2-core runner does not give: fix it with a regression test or remove the
assumption (docs/stress.md, "Soak").

  ci/soak.py [--runs N] [--load K] [--out DIR] [--keep-going] [--fresh] [-- CMD...]

CMD (default `make test`) gets PYTEST_ARGS=--junitxml=DIR/run-I.xml in its
environment and the make variable of that name; a CMD that writes no XML is
a failed run whose cause is its exit status.  Stops at the first failed run
unless --keep-going.  Results: DIR/soak.json and DIR/run-I.log; exit 1 when
any run failed, 2 on bad usage."""
import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "ci"))
import procs  # noqa: E402  (process groups and tree kills: one definition)


def failures_of(xml_path: pathlib.Path) -> list:
    """[{"test": id, "kind": failure|error, "cause": first line}] from a JUnit file."""
    root = ET.parse(xml_path).getroot()
    out = []
    for case in root.iter("testcase"):
        for kind in ("failure", "error"):
            for el in case.findall(kind):
                msg = (el.get("message") or el.text or "").strip().splitlines()
                out.append({"test": f"{case.get('classname', '')}::{case.get('name', '')}",
                            "kind": kind, "cause": msg[0][:300] if msg else "(no message)"})
    return out


def start_load(k: int):
    if k <= 0:
        return None
    exe = shutil.which("stress-ng")
    if exe is None:
        sys.exit("soak: stress-ng not found (ci/deps.sh soak installs it)")
    # Its own session: stopped by its process group, never by name.
    return subprocess.Popen([exe, "--cpu", str(k), "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, **procs.group_kwargs())


def stop_load(p):
    if p is None:
        return
    procs.kill_tree(p, signal.SIGTERM)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        procs.kill_tree(p)
        p.wait()


def loadavg() -> str:
    """The 1-minute load average (Linux), so a report says how loaded the
    machine was, beside the hogs this run added."""
    try:
        return pathlib.Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


class LoadSampler:
    """The one-minute load average read every `every` seconds while a run
    goes: a report gives its least, mean and most, so "beside a load of 5"
    is a measurement, not the number of hogs started."""

    def __init__(self, every: float = 10.0):
        import threading
        self.samples = []
        self.every = every
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while True:
            v = loadavg()
            if v != "?":
                self.samples.append(float(v))
            if self._stop.wait(self.every):
                return

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    def summary(self) -> dict:
        xs = self.samples
        if not xs:
            return {"samples": 0}
        return {"samples": len(xs), "min": min(xs), "mean": round(sum(xs) / len(xs), 2), "max": max(xs)}


def fresh_clone(out: pathlib.Path) -> pathlib.Path:
    """A fresh clone of this checkout's HEAD under out/clone, as CI's is: no
    build, no untracked file, nothing an earlier run left."""
    dest = out / "clone"
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], check=True)
    return dest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="soak", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--load", type=int, default=3,
                    help="stress-ng CPU hogs beside each run (0: none; 3 puts a 2-core machine at a load of 5)")
    ap.add_argument("--out", default=str(REPO / "build" / "soak"))
    ap.add_argument("--keep-going", action="store_true")
    ap.add_argument("--fresh", action="store_true",
                    help="run CMD in a fresh clone of HEAD (out/clone), made once before the first run")
    ap.add_argument("cmd", nargs="*")
    a = ap.parse_args(argv)
    if a.runs < 1 or a.load < 0:
        ap.error("--runs must be >= 1 and --load >= 0")
    cmd = a.cmd or ["make", "test"]
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    cwd = fresh_clone(out) if a.fresh else REPO
    for i in range(1, a.runs + 1):
        xml = out / f"run-{i}.xml"
        xml.unlink(missing_ok=True)
        env = dict(os.environ, PYTEST_ARGS=f"--junitxml={xml}")
        load_before = loadavg()
        load = start_load(a.load)
        t0 = time.monotonic()
        try:
            with open(out / f"run-{i}.log", "wb") as log, LoadSampler() as sampled:
                rc = subprocess.run(cmd + ([f"PYTEST_ARGS=--junitxml={xml}"] if cmd[0] == "make" else []),
                                    cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        finally:
            stop_load(load)
        secs = round(time.monotonic() - t0, 1)
        fails = failures_of(xml) if xml.exists() else []
        if rc != 0 and not fails:
            fails = [{"test": "(run)", "kind": "error",
                      "cause": f"exit {rc} with no failing test in {xml.name if xml.exists() else 'no JUnit XML'}"}]
        load_after = loadavg()
        seen = sampled.summary()
        runs.append({"run": i, "exit": rc, "seconds": secs, "loadavg": [load_before, load_after],
                     "load_during": seen, "failures": fails})
        during = (f"; during: min {seen['min']}, mean {seen['mean']}, max {seen['max']}"
                  if seen["samples"] else "")
        print(f"soak: run {i}/{a.runs} {'PASS' if not fails else 'FAIL'} in {secs}s"
              f" ({a.load} CPU hogs; load average {load_before} before, {load_after} after{during})",
              flush=True)
        for f in fails:
            print(f"soak:   {f['kind']}: {f['test']}: {f['cause']}", flush=True)
        if fails and not a.keep_going:
            break
    failed = [r for r in runs if r["failures"]]
    causes = {}
    for r in failed:
        for f in r["failures"]:
            causes.setdefault(f["test"], []).append(r["run"])
    (out / "soak.json").write_text(json.dumps(
        {"command": cmd, "load": a.load, "fresh_clone": a.fresh, "runs": runs, "failed_runs": len(failed),
         "causes": causes}, indent=1) + "\n")
    consecutive = 0
    for r in reversed(runs):
        if r["failures"]:
            break
        consecutive += 1
    print(f"soak: {len(runs)} runs, {len(failed)} failed, {consecutive} consecutive passes at the end;"
          f" results in {out / 'soak.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
