#!/usr/bin/env python3
"""make soak: the flake hunt.  Runs the suite (`make test`) N times, each under
a competing CPU load (stress-ng, one CPU hog per --load), and reports runs,
failures and each failure's cause, read from pytest's JUnit XML (never its
prose).  A test that fails only here relies on a real-time bound a loaded
2-core runner does not give: fix it with a regression test or remove the
assumption (docs/stress.md, "Soak").

  ci/soak.py [--runs N] [--load K] [--out DIR] [--keep-going] [-- CMD...]

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="soak", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--load", type=int, default=2, help="stress-ng CPU hogs beside each run (0: none)")
    ap.add_argument("--out", default=str(REPO / "build" / "soak"))
    ap.add_argument("--keep-going", action="store_true")
    ap.add_argument("cmd", nargs="*")
    a = ap.parse_args(argv)
    if a.runs < 1 or a.load < 0:
        ap.error("--runs must be >= 1 and --load >= 0")
    cmd = a.cmd or ["make", "test"]
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for i in range(1, a.runs + 1):
        xml = out / f"run-{i}.xml"
        xml.unlink(missing_ok=True)
        env = dict(os.environ, PYTEST_ARGS=f"--junitxml={xml}")
        load_before = loadavg()
        load = start_load(a.load)
        t0 = time.monotonic()
        try:
            with open(out / f"run-{i}.log", "wb") as log:
                rc = subprocess.run(cmd + ([f"PYTEST_ARGS=--junitxml={xml}"] if cmd[0] == "make" else []),
                                    cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        finally:
            stop_load(load)
        secs = round(time.monotonic() - t0, 1)
        fails = failures_of(xml) if xml.exists() else []
        if rc != 0 and not fails:
            fails = [{"test": "(run)", "kind": "error",
                      "cause": f"exit {rc} with no failing test in {xml.name if xml.exists() else 'no JUnit XML'}"}]
        load_after = loadavg()
        runs.append({"run": i, "exit": rc, "seconds": secs, "loadavg": [load_before, load_after],
                     "failures": fails})
        print(f"soak: run {i}/{a.runs} {'PASS' if not fails else 'FAIL'} in {secs}s"
              f" ({a.load} CPU hogs; load average {load_before} before, {load_after} after)", flush=True)
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
        {"command": cmd, "load": a.load, "runs": runs, "failed_runs": len(failed),
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
