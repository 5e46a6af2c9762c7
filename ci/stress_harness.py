"""How ci/stress.py talks to tpheal-harness: the command lines, the sanitizer
environment, and the parsing of what comes back.

Subcommands used (harness/stress/ implements the first two, the scenario
engine the last; docs/stress.md describes the JSON):
  stress-batch --mode M [--strategy S --depth D] --base SEED --count N
               --max-ms MS [--pct-steps K] FILE
      runs seeds run_seed(base, 0..N-1) of one scenario, stops early after
      MS of wall time, prints one JSON object (aggregate + failures).
  stress-faultloop --seed SEED [--max-sites N] FILE
      fails the 1st, 2nd, ... call of every failable seam kind until nothing
      is left to fail; prints one JSON object per injected fault and a summary.
  run FILE --seed S --mode controlled|native [--strategy S --depth D] --json
      one run, the replay command printed for every failure.
"""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import signal
import subprocess

# A sanitizer report is a failure even when the process exits 0 (halt_on_error
# is set, but a report printed from a daemon thread's exit path need not stop
# the process before main returns).
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer",
                     "ERROR: LeakSanitizer", "runtime error:", "ERROR: ThreadSanitizer",
                     "SUMMARY: UndefinedBehaviorSanitizer")
EXIT_OTHER_BUILD = 4  # the scenario needs the other core build (fail-fast sibling)
CRASH_RE = re.compile(r"tph-stress: crashed in run (\S+) seed=(0x[0-9a-f]+) j=(\d+)")


def sanitizer_env(base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    # exitcode 66 tells a sanitizer report apart from a harness verdict (1)
    # and bad input (2).
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=66")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=66")
    env.setdefault("TSAN_OPTIONS", "halt_on_error=1:exitcode=66:second_deadlock_stack=1")
    env.setdefault("LSAN_OPTIONS", "exitcode=66")
    return env


def find_harness(build: pathlib.Path) -> pathlib.Path | None:
    exe = "" if POSIX else ".exe"
    for rel in ("harness/scenario/tpheal-harness", "harness/tpheal-harness", "tpheal-harness"):
        p = build / (rel + exe)
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


@dataclasses.dataclass
class Outcome:
    """What one subprocess call gave back."""
    ok: bool                     # the process ran to the end and its output parsed
    data: list                   # the JSON objects printed on stdout
    returncode: int | None       # None = killed on timeout
    stderr: str
    crash_seed: int | None = None  # from the harness's crash line, if it printed one
    crash_j: int | None = None
    sanitizer: str = ""            # first sanitizer report line, if any


def _sanitizer_line(text: str) -> str:
    for line in text.splitlines():
        if any(m in line for m in SANITIZER_MARKERS):
            return line.strip()
    return ""


POSIX = os.name == "posix"


def _kill(proc, sig):
    try:
        if POSIX:
            os.killpg(proc.pid, sig)
        else:
            proc.kill()
    except ProcessLookupError:
        pass


def call(cmd: list[str], timeout: float, env: dict) -> Outcome:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, start_new_session=POSIX)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        # SIGABRT first: the harness's handler prints which run it was in.
        try:
            _kill(proc, signal.SIGABRT if POSIX else None)
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            _kill(proc, signal.SIGKILL if POSIX else None)
            out, err = proc.communicate()
        rc = None
    out_s = out.decode("utf-8", "replace")
    err_s = err.decode("utf-8", "replace")
    data, parsed = [], True
    for line in out_s.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data.append(json.loads(line))
        except json.JSONDecodeError:
            parsed = False
    o = Outcome(ok=(rc == 0 and parsed and bool(data)), data=data, returncode=rc, stderr=err_s)
    m = CRASH_RE.search(err_s)
    if m:
        o.crash_seed, o.crash_j = int(m.group(2), 16), int(m.group(3))
    o.sanitizer = _sanitizer_line(err_s)
    if o.sanitizer:
        o.ok = False
    return o


def batch_cmd(harness, b, count: int, max_ms: int, pct_steps: int,
              max_run_ms: int = 0) -> list[str]:
    cmd = [str(harness), "stress-batch", "--mode", b.mode, "--base", f"0x{b.base:016x}",
           "--count", str(count), "--max-ms", str(max_ms)]
    if max_run_ms:
        cmd += ["--max-run-ms", str(max_run_ms)]
    if b.mode == "controlled":
        cmd += ["--strategy", b.strategy, "--depth", str(b.depth)]
        if pct_steps:
            cmd += ["--pct-steps", str(pct_steps)]
    return cmd + [b.scenario]


def faultloop_cmd(harness, scenario: str, seed: int, max_sites: int,
                  leak_each: bool = False) -> list[str]:
    return [str(harness), "stress-faultloop", "--seed", f"0x{seed:016x}",
            "--max-sites", str(max_sites)] + (["--leak-check-each"] if leak_each else []) + \
        [scenario]


def run_cmd(harness, scenario: str, seed: int, mode: str, strategy: str = "",
            depth: int = 0, pct_steps: int = 0, json_out: bool = True) -> list[str]:
    """The scenario engine's single-run command; also the replay line a
    failure file prints (harness path relative to the repo when possible)."""
    cmd = [str(harness), "run", scenario, "--seed", str(seed), "--mode", mode]
    if mode == "controlled" and strategy:
        cmd += ["--strategy", strategy]
        if strategy == "pct":
            cmd += ["--depth", str(depth)]
            if pct_steps:
                cmd += ["--pct-steps", str(pct_steps)]
    if json_out:
        cmd.append("--json")
    return cmd
