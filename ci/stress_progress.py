"""The progress line of `make stress`: elapsed, remaining, runs, schedules/s,
failures.  On a terminal it is rewritten in place a few times a second; when
stderr is a file or a CI log it is a plain line every 5 seconds, so logs stay
readable."""
from __future__ import annotations

import threading
import time


class Progress:
    def __init__(self, stream, results, lock):
        self.stream, self.res, self.lock = stream, results, lock
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.period = 0.25 if self.tty else 5.0
        self.t0 = time.monotonic()
        self.phase, self.until, self.deadline = "", None, None
        self.phase_t0 = self.t0
        self.phase_runs0 = 0
        self.thread = None
        self.stop_ev = threading.Event()
        self.width = 0
        self.io = threading.Lock()  # the line and notes share the stream

    def _runs(self, mode=None) -> int:
        return sum(s.runs for per in self.res.scenarios.values() for m, s in per.items()
                   if mode is None or m == mode)

    def start(self, phase: str, until, deadline):
        with self.lock:
            self.phase, self.until, self.deadline = phase, until, deadline
            self.phase_t0 = time.monotonic()
            self.phase_runs0 = self._runs(phase)
        if self.thread is None:
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()

    def line(self) -> str:
        now = time.monotonic()
        with self.lock:
            runs = self._runs(self.phase)
            fails = self.res.failure_count()
            rate = (runs - self.phase_runs0) / max(1e-6, now - self.phase_t0)
            phase = self.phase
            if phase == "faultloop":
                sites = sum(f.get("sites", 0) for f in self.res.faultloop.values())
                extra = f"fault loop: {len(self.res.faultloop)} scenarios, {sites} sites"
            else:
                # a controlled run is a schedule; a free-running one is not
                unit = "schedules/s" if phase == "controlled" else "runs/s"
                extra = f"{phase}: {runs:,} runs, {rate:,.0f} {unit}"
        remaining = max(0.0, (self.deadline or now) - now)
        return (f"[{now - self.t0:6.1f}s elapsed, {remaining:5.1f}s left] {extra}, "
                f"{fails} failure{'s' if fails != 1 else ''}")

    def _emit(self, text: str, final=False):
        with self.io:
            self._write(text, final)

    def _write(self, text: str, final):
        if self.tty:
            pad = max(0, self.width - len(text))
            self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
            self.width = 0 if final else len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _loop(self):
        while not self.stop_ev.wait(self.period):
            self._emit(self.line())

    def note(self, text: str):
        """A message (a failure) printed above the progress line."""
        with self.io:
            if self.tty and self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.width = 0
            self.stream.write(text + "\n")
            self.stream.flush()

    def stop(self):
        self.stop_ev.set()
        if self.thread is not None:
            self.thread.join()
        self._emit(self.line(), final=True)
