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
      one run (the controlled re-runs of a free-running failure).

The replay commands of a failure are the harness's own (a batch's failure
objects and its crash line carry the ones `run` prints); nothing here
builds one.

The driver's mode "real" is tpheal-harness-realpool (the same CLI linked
with the real Windows pool), which only runs free (`--mode native`): the
command lines name that mode, the driver's results and seed streams keep
"real" apart.  An exec wrapper (`wine`) runs Windows executables from Linux:
every command is prefixed with it and `.exe` files are looked for.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shlex
import signal

import harness_json  # the harness's JSON contract (harness/json-schema.json)
import procs  # bounded runs, tree kills, sanitizer reports: one definition

POSIX = os.name == "posix"
EXIT_OTHER_BUILD = 4  # the scenario needs the other core build (fail-fast sibling)
CRASH_RE = re.compile(r"tph-stress: crashed in run (\S+) seed=(0x[0-9a-f]+) j=(\d+)")
# ... and the line after it: the command the harness's run path prints for
# that run (stress_batch.c), which the failure file carries as it is.
# The labels are the run report's (scn_report.c): a free-running run is
# replayed by nothing, so its command is the model hint.
REPLAY_BY_SEED = "replay by seed"
MODEL_HINT = "look for a deterministic reproduction on the model"
CRASH_CMD_RE = re.compile(rf"^tph-stress: ({REPLAY_BY_SEED}|{MODEL_HINT}): (.*)$", re.M)


def sanitizer_env(base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    # exitcode 66 tells a sanitizer report apart from a harness verdict (1)
    # and bad input (2).
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=66:"
                   "detect_stack_use_after_return=1")  # clang >= 15's default (issue 11)
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=66")
    env.setdefault("TSAN_OPTIONS", "halt_on_error=1:exitcode=66:second_deadlock_stack=1")
    env.setdefault("LSAN_OPTIONS", "exitcode=66")
    return env


# The harness's --mode for each driver mode (only "real" differs).
HARNESS_MODE = {"real": "native"}
REALPOOL = "tpheal-harness-realpool"


def harness_mode(mode: str) -> str:
    return HARNESS_MODE.get(mode, mode)


def _runnable(p: pathlib.Path, wrapped: bool) -> bool:
    # A wrapper (wine) runs the file; it need not be executable itself.
    return p.is_file() and (wrapped or os.access(p, os.X_OK))


def find_harness(build: pathlib.Path, wrapped: bool = False) -> pathlib.Path | None:
    """The model harness; with a wrapper also the Windows one (.exe) of a
    cross build, which a Linux host runs through the wrapper."""
    exes = [""] if POSIX else [".exe"]
    if wrapped and ".exe" not in exes:
        exes.append(".exe")
    for exe in exes:
        for rel in ("harness/scenario/tpheal-harness", "harness/tpheal-harness", "tpheal-harness"):
            p = build / (rel + exe)
            if _runnable(p, wrapped):
                return p
    return None


def find_realpool(harness: pathlib.Path, wrapped: bool = False) -> pathlib.Path | None:
    """tpheal-harness-realpool next to the harness: built only for Windows
    (the real pool exists there only)."""
    p = harness.with_name(REALPOOL + harness.suffix)
    return p if _runnable(p, wrapped) else None


def wrapper_env(env: dict, wrapper: list[str], build: pathlib.Path) -> dict:
    """The environment ci/windows/wine-env.sh gives a build directory's Wine:
    its own prefix inside the build (never ~/.wine), no debug chatter on
    stderr (it would read as the harness's last words), no Mono/Gecko
    prompts.  Values already set by the caller win."""
    env = dict(env)
    if wrapper and pathlib.Path(wrapper[0]).name.startswith("wine"):
        env.setdefault("WINEPREFIX", str(pathlib.Path(build).resolve() / "wineprefix"))
        env.setdefault("WINEDEBUG", "-all")
        env.setdefault("WINEDLLOVERRIDES", "mscoree,mshtml=")
        env.setdefault("WINEARCH", "win64")
    return env


@dataclasses.dataclass
class Outcome:
    """What one subprocess call gave back."""
    ok: bool                     # the process ran to the end and its output parsed
    data: list                   # the JSON objects printed on stdout
    returncode: int | None       # None = killed on timeout
    stderr: str
    crash_seed: int | None = None  # from the harness's crash line, if it printed one
    crash_j: int | None = None
    crash_label: str = ""          # REPLAY_BY_SEED or MODEL_HINT, with crash_command
    crash_command: str = ""        # what the harness printed for the run it crashed in
    sanitizer: str = ""            # first sanitizer report line, if any
    stdout_bytes: int = 0
    stdout_tail: str = ""          # the last of stdout, kept for a batch whose output did not parse


def call(cmd: list[str], timeout: float, env: dict, wrapper=()) -> Outcome:
    """Runs cmd (prefixed with the exec wrapper, if any) and parses its
    JSON lines.  At the bound SIGABRT first: the harness's handler prints
    which run it was in."""
    r = procs.run_bounded([*wrapper, *map(str, cmd)], timeout, env=env, merge=False,
                          first_signal=signal.SIGABRT)
    rc, out_s, err_s = r.rc, r.out, r.err
    try:
        data, unparsed = harness_json.scan(out_s)
        parsed = unparsed == 0
    except harness_json.VersionMismatch as e:
        # never half-read: the batch is bad output, and says why
        data, parsed = [], False
        err_s += f"\nstress: {e} (the build and ci/ are from different trees)\n"
    o = Outcome(ok=(rc == 0 and parsed and bool(data)), data=data, returncode=rc, stderr=err_s,
                stdout_bytes=len(out_s.encode("utf-8")), stdout_tail=out_s[-2000:])
    m = CRASH_RE.search(err_s)
    if m:
        o.crash_seed, o.crash_j = int(m.group(2), 16), int(m.group(3))
        c = CRASH_CMD_RE.search(err_s, m.end())
        if c:
            o.crash_label, o.crash_command = c.group(1), c.group(2)
    o.sanitizer = procs.sanitizer_line(err_s)
    if o.sanitizer:
        o.ok = False
    return o


def batch_cmd(harness, b, count: int, max_ms: int, pct_steps: int,
              max_run_ms: int = 0) -> list[str]:
    cmd = [str(harness), "stress-batch", "--mode", harness_mode(b.mode), "--base", f"0x{b.base:016x}",
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
    """The scenario engine's single-run command: the controlled re-runs of a
    free-running failure, listed with their verdicts in its failure file."""
    cmd = [str(harness), "run", scenario, "--seed", str(seed), "--mode", harness_mode(mode)]
    if mode == "controlled" and strategy:
        cmd += ["--strategy", strategy]
        if strategy == "pct":
            cmd += ["--depth", str(depth)]
            if pct_steps:
                cmd += ["--pct-steps", str(pct_steps)]
    if json_out:
        cmd.append("--json")
    return cmd


def timeline_argv(replay: str, html: pathlib.Path) -> list[str] | None:
    """A controlled failure's replay command (the harness's own, as its batch
    printed it) drawing the run into html (`replay --timeline`,
    docs/scenarios.md), or None for what is no plain replay: a fault loop's,
    a free-running run's model hint, a command behind an exec wrapper."""
    try:
        argv = shlex.split(replay)
    except ValueError:
        return None
    if len(argv) < 3 or argv[1] != "replay":
        return None
    return [*argv, "--timeline", str(html)]
