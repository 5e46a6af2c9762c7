"""The sweep's child processes: every build and catcher runs bounded through
ci/procs.py, and the ones still running are known, so that SIGTERM/SIGINT
(or a KeyboardInterrupt) can kill them all before the sweep exits."""
from __future__ import annotations

import os
import pathlib
import signal
import sys
import threading

CI = str(pathlib.Path(__file__).resolve().parents[1])  # procs.py, harness_json.py
if CI not in sys.path:
    sys.path.insert(0, CI)
import procs  # noqa: E402  (bounded runs, tree kills, sanitizer reports: one definition)

# the pids of the runs still going (kill_all ends them)
_live = set()
_live_lock = threading.Lock()


def run_bounded(cmd, timeout, cwd=None, env=None, fresh=False):
    """(returncode or None on timeout, output, seconds).  Runs in its own
    session; on expiry the whole process group is killed, and what it left in
    its group is reaped even when it exited, so a catcher's children cannot
    outlive it (ci/procs.py; fresh: see there)."""
    r = procs.run_bounded(cmd, timeout, cwd=cwd, env=env, fresh=fresh, reap=True,
                          on_start=_started, on_end=_ended)
    return r.rc, r.out, r.seconds


def _started(pid):
    with _live_lock:
        _live.add(pid)


def _ended(pid):
    with _live_lock:
        _live.discard(pid)


def kill_all():
    with _live_lock:
        for pid in list(_live):
            procs.kill_tree(pid)


def stop_on_signals():
    """SIGTERM/SIGINT end the run at once, catchers included: the main thread
    waits in the thread pool, where a KeyboardInterrupt is not delivered
    until every worker has finished its entry (measured: minutes)."""
    def handler(signum, frame):
        kill_all()
        os._exit(2)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)
