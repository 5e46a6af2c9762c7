"""ci/'s one place for child processes: start one in its own process group,
run it under a bound, kill its whole tree, and tell a sanitizer report or a
death by signal from an ordinary failure.  The pytest layer (conftest), the
stress driver (stress_harness) and the sabotage sweep all call these, so a
fix to how a hang is ended or a crash is named is made once.

    run_bounded(cmd, timeout, ...)   -> Bounded(rc or None on timeout, out, err, seconds)
    kill_tree(proc_or_pid, sig)      the process and everything in its group
    sanitizer_line(text)             the first sanitizer report line, or ""
    died_by_signal(rc)               a POSIX signal death, directly or through a shell
"""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time

WINDOWS = os.name == "nt"

# A sanitizer report is a failure even when the process exits 0 (a report
# printed from a daemon thread's exit path need not stop the process before
# main returns).  Markers, not a regex over the whole output.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer",
                     "ERROR: LeakSanitizer", "ERROR: MemorySanitizer", "runtime error:",
                     "ERROR: ThreadSanitizer", "SUMMARY: UndefinedBehaviorSanitizer")


def sanitizer_line(text: str) -> str:
    for line in text.splitlines():
        if any(m in line for m in SANITIZER_MARKERS):
            return line.strip()
    return ""


def died_by_signal(rc: int | None) -> bool:
    """Killed by a signal: negative from Popen, or 128+N through a shell."""
    return rc is not None and (rc < 0 or rc > 128)


def group_kwargs() -> dict:
    """Popen arguments that give the child a process group of its own."""
    if WINDOWS:
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_tree(proc, sig=None):
    """Signal the process and its whole group (POSIX; SIGKILL by default), or
    end the tree by parent id (Windows has no groups to signal).  A process
    already gone is not an error."""
    pid = proc if isinstance(proc, int) else proc.pid
    if WINDOWS:
        subprocess.run(["taskkill", "/T", "/F", "/PID", str(pid)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return
    try:
        os.killpg(pid, signal.SIGKILL if sig is None else sig)
    except (ProcessLookupError, PermissionError):
        pass


@dataclasses.dataclass
class Bounded:
    rc: int | None   # None: the bound was reached and the tree killed
    out: str         # stdout (with stderr folded in when merged)
    err: str         # stderr when kept apart, else ""
    seconds: float


def run_bounded(cmd, timeout: float, cwd=None, env=None, *, merge: bool = True,
                first_signal=None, grace: float = 5.0, fresh: bool = False,
                reap: bool = False, on_start=None, on_end=None) -> Bounded:
    """Run cmd in its own process group under a wall-time bound.

    merge: stderr folded into stdout (the order a reader saw them in).
    first_signal: sent to the group at the bound before SIGKILL, `grace`
      seconds later (the harness prints which run it was in on SIGABRT).
    fresh: start cmd from a small intermediate shell that forks it, not
      exec's it: Linux carries a process's peak RSS across execve, so a child
      exec'd from a large Python process reads the parent's peak as its own
      ru_maxrss (test_sched's stack-reuse check failed that way mid-sweep).
    reap: kill what the process left in its group even when it exited.
    on_start/on_end: called with the pid (the sweep's registry of live runs)."""
    t0 = time.monotonic()
    if fresh:
        cmd = ["/bin/sh", "-c", '"$@"; exit $?', "sh"] + list(cmd)
    proc = subprocess.Popen(list(map(str, cmd)), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                            stdin=subprocess.DEVNULL, **group_kwargs())
    if on_start:
        on_start(proc.pid)
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = None
            out = err = None
            if first_signal is not None and not WINDOWS:
                kill_tree(proc, first_signal)
                try:
                    out, err = proc.communicate(timeout=grace)
                except subprocess.TimeoutExpired:
                    pass
            if out is None:
                kill_tree(proc)
                out, err = proc.communicate()
    finally:
        if reap:
            kill_tree(proc)
        if on_end:
            on_end(proc.pid)
    return Bounded(rc, (out or b"").decode("utf-8", "replace"), (err or b"").decode("utf-8", "replace"),
                   time.monotonic() - t0)
