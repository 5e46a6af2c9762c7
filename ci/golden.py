#!/usr/bin/env python3
"""The golden corpus: the observable behaviour of every scenario, pinned.

The project promises that a scenario, a seed and a build give the same run,
byte for byte, and that a seed CI printed replays on another build (Release,
ASan, TSan; gcc or clang).  This tool runs each scenario of scenarios/ the
same fixed ways (the ITEMS below: replays of a few seeds with their whole
trace, a seeded run's deterministic counts, bounded DFS with and without the
partial-order reduction), digests what each printed (sha256, first 16 hex)
and keeps one line per scenario x item in ci/golden/corpus.txt.  A change to
the scheduler's picks, the model, the runner's trace or the exploration
changes some digest, and ci/test_golden.py names the scenario and item.

    python3 ci/golden.py --update                 rewrite ci/golden/corpus.txt from the build
    python3 ci/golden.py --check                  compare the build with the file (exit 1: differs)
    python3 ci/golden.py --show SCENARIO ITEM     the undigested text of one item
    python3 ci/golden.py --list                   the items, each with its command
    --build DIR   the build to run (default $TPHEAL_BUILD_DIR, else build/):
                  `--check --build build/asan` is the cross-build check by hand
    --jobs N      harness processes at once (default 2: the CI machine's cores)
    --exec-wrapper wine   run a Windows build's .exe files from Linux (the
                  prefix: build/wineprefix, booted by ci/windows/wine-up.sh)
    --items A,B   only these items (`--check`: compared with their lines only);
                  `--items replay` is the replay items (ci/test_windows.py's set)

To see what a change did to one item: `--show` before and after it (e.g. with
`git stash`) and diff the two.  A deliberate change of behaviour regenerates
the file with --update in the same commit, the reason in the commit message.

Only deterministic output is pinned: JSON items are read through
ci/harness_json.py (never the prose) with the wall-time fields dropped; the
replay items are the replay's stdout as printed (its trace is the point).
Stdlib only."""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import pathlib
import re
import shlex
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import harness_json as HJ  # noqa: E402  (the one reader of the harness's JSON)
import procs  # noqa: E402  (bounded runs whose tree is killed on expiry)
import golden_flips as GF  # noqa: E402  (the failing copies of a scenario)

GOLDEN = HERE / "golden" / "corpus.txt"
SCENARIO_DIR = REPO / "scenarios"
EXE = ".exe" if os.name == "nt" else ""

# The seeds and bounds of the items.  Changing one changes every digest (the
# command is part of each item's text): regenerate in the same commit.
REPLAY_SEEDS = (1, 2, 3)
# PCT replays as `run` prints them (scn_replay_by_seed): --depth D --pct-steps
# K.  `run` measures K per scenario by a probe; here it is fixed, so the item
# depends on the PCT strategy alone, not on the probe (the run item pins that).
PCT_DEPTH = 3
PCT_STEPS = 50
RUN_SEEDS = 30
DFS_PREEMPTIONS = 1
DFS_MAX_RUNS = 300
# The `run --strategy dfs` items fingerprint the order of exploration; 100
# runs are enough for that and keep the sanitizer builds' share of the test
# down (the reduced search is the costliest item: ~1/3 of all).
DFS_RUN_MAX_RUNS = 100
# Wall-time fields: the only ones of these objects that depend on the machine.
TIME_FIELDS = frozenset({"seconds", "schedules_per_sec", "shrunk_seconds"})
# The behaviour-class count (sched_trace.c) came after the corpus and leaves
# every run as it was; it is kept out of the digests so they pin the runs,
# not the report's fields (ci/test_unit.py pins the count on the hand-counted
# trees).
CLASS_FIELDS = frozenset({"behaviour_classes", "classes_is_lower_bound"})
# A generous bound per harness process: the slowest item takes ~1 s on the
# release build, a few on TSan.  Reaching it (a hang) gives a text no golden
# digest matches, so a mutant that loops fails the test instead of hanging it.
TIMEOUT = 300.0


@dataclasses.dataclass(frozen=True)
class Item:
    name: str
    args: tuple[str, ...]  # after the program, before the scenario file
    json: bool             # read as the JSON contract, else the stdout as printed
    why: str
    flips: bool = False    # run on the scenario's failing copies (ci/golden_flips.py)


def _items() -> tuple[Item, ...]:
    out = []
    for s in REPLAY_SEEDS:
        out.append(Item(f"replay-random-{s}", ("replay", "--seed", str(s), "--strategy", "random", "--trace"),
                        False, "the random walk's picks and every trace record of the run"))
    for s in REPLAY_SEEDS:
        out.append(Item(f"replay-pct-{s}", ("replay", "--seed", str(s), "--strategy", "pct", "--depth",
                                            str(PCT_DEPTH), "--pct-steps", str(PCT_STEPS), "--trace"),
                        False, "PCT's priorities and change points, and every trace record"))
    out.append(Item("run", ("run", "--seeds", str(RUN_SEEDS), "--strategy", "both", "--json"), True,
                    "both strategies over many seeds: interleavings, steps, reach counts, failures, "
                    "and the PCT probe that picks K"))
    # verify's JSON has the reduction's counts (traces, redundant runs,
    # pruned, races); `run --strategy dfs`'s summary has the explored runs' total
    # steps and distinct interleavings, which tell a changed order of
    # exploration where a search stops at its bound (runs = traces = 300).
    out.append(Item("verify", ("verify", "--preemptions", str(DFS_PREEMPTIONS), "--max-runs", str(DFS_MAX_RUNS),
                               "--json"), True, "bounded DFS with the partial-order reduction: what it proved"))
    out.append(Item("verify-no-por", ("verify", "--preemptions", str(DFS_PREEMPTIONS), "--max-runs",
                                      str(DFS_MAX_RUNS), "--no-por", "--json"), True,
                    "plain bounded DFS: what it proved"))
    for por in (False, True):
        out.append(Item("dfs-por" if por else "dfs",
                        ("run", "--strategy", "dfs", "--preemptions", str(DFS_PREEMPTIONS), "--max-runs",
                         str(DFS_RUN_MAX_RUNS), *(("--por",) if por else ()), "--json"), True,
                        f"the first {DFS_RUN_MAX_RUNS} runs of the {'reduced' if por else 'plain'} search: "
                        f"their steps, distinct interleavings, fairness, reach"))
    out.append(Item("flips", ("run", "--seeds", str(GF.FLIP_SEEDS), "--strategy", "both"), False,
                    "each expect/assert comparison negated in turn: the failure reports (oracle message, "
                    "trace to the failing check, schedule, replay verdict and commands)", flips=True))
    return tuple(out)


ITEMS = _items()
ITEM_NAMES = tuple(i.name for i in ITEMS)
BY_NAME = {i.name: i for i in ITEMS}
# The whole trace of every seed replayed, each strategy: what the promise "a
# seed one build printed replays on another" is about.
REPLAY_ITEMS = tuple(i for i in ITEMS if i.name.startswith("replay-"))


def items_named(spec: str) -> tuple[Item, ...]:
    """`--items`: names separated by commas, or `replay` for REPLAY_ITEMS."""
    if spec == "replay":
        return REPLAY_ITEMS
    names = [n for n in spec.split(",") if n]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown or not names:
        raise ValueError(f"no item {', '.join(unknown) or repr(spec)} (items: replay, {', '.join(ITEM_NAMES)})")
    return tuple(BY_NAME[n] for n in names)


def wine_env(build: pathlib.Path, base=None) -> dict:
    """The environment a Windows build's programs run in under Wine: the
    build's own prefix (ci/windows/wine-env.sh's), no debug channels, no
    Mono/Gecko prompts.  What the caller set wins."""
    env = dict(os.environ if base is None else base)
    env.setdefault("WINEPREFIX", str(build / "wineprefix"))
    env.setdefault("WINEDEBUG", "-all")
    env.setdefault("WINEDLLOVERRIDES", "mscoree,mshtml=")
    env.setdefault("WINEARCH", "win64")
    return env


@dataclasses.dataclass
class Wrapper:
    """A command before every harness call (`wine` for a Windows build read
    from Linux), and what it did that is not the run's.  A harness process
    prints on stdout whatever its exit (exit 2's usage errors aside, which no
    item makes); one that printed nothing and failed never reached the
    harness: under Wine, 1 of ~4,700 processes at a load average of 15-20
    exited 1 so (the same command then ran as pinned, 90 times of 90).  Such
    a process is run once more, and `reruns` says which, with its exit and
    stderr, so that the caller reports it; a second silent failure is the
    item's text, stderr included."""
    cmd: tuple[str, ...]
    reruns: list[str] = dataclasses.field(default_factory=list)

HEADER = """\
# The golden corpus: sha256 (first 16 hex) of what each scenario of scenarios/
# prints, item by item (ci/golden.py: the items and their commands; `--list`).
# Checked by ci/test_golden.py on the default build, and every other build
# must print the same bytes: a seed CI printed replays on any build.
# Regenerate: python3 ci/golden.py --update
# A deliberate change of behaviour (the scheduler's picks, the model, the
# runner's trace, DFS/POR exploration) regenerates this file in the same
# commit, with the reason in the commit message.  To see what changed:
# python3 ci/golden.py --show SCENARIO ITEM, before and after, and diff.
# scenario item digest
"""


def corpus() -> list[str]:
    """The scenarios' names (file stems), sorted."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.scn"))


_FAIL_FAST = re.compile(r"^[ \t]*build[ \t]+fail[-_]fast\b", re.M)


def needs_failfast(name: str) -> bool:
    """`build fail-fast` (keywords read - and _ alike): the scenario runs on
    tpheal-harness-failfast.  The default harness would re-execute it there
    anyway; naming the sibling keeps one process per item and the command in
    the item the one that ran."""
    return bool(_FAIL_FAST.search((SCENARIO_DIR / f"{name}.scn").read_text(encoding="utf-8")))


def build_dir(explicit: str | None = None) -> pathlib.Path:
    return pathlib.Path(explicit or os.environ.get("TPHEAL_BUILD_DIR", REPO / "build")).resolve()


def program(build: pathlib.Path, failfast: bool) -> pathlib.Path:
    """The harness of a build, by conftest.binary's rule (a multi-config
    generator's <config>/ first), without importing pytest.  A Windows build
    read from Linux (run through Wine) has its .exe found too."""
    name = "tpheal-harness-failfast" if failfast else "tpheal-harness"
    d = build / "harness" / "scenario"
    config = os.environ.get("TPHEAL_BUILD_CONFIG")
    suffixes = dict.fromkeys((EXE, ".exe"))
    cands = [c for x in suffixes for c in ([d / config / (name + x)] if config else []) + [d / (name + x)]]
    return next((c for c in cands if c.is_file()), cands[0])


def missing_programs(build: pathlib.Path) -> list[pathlib.Path]:
    return [p for p in (program(build, False), program(build, True)) if not p.is_file()]


def _strip_time(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k not in TIME_FIELDS and k not in CLASS_FIELDS}


def _neutral(text: str, exe: pathlib.Path) -> str:
    """Take out what names the build or the machine rather than the run: the
    program's own path (a failure's replay commands start with it), a
    failure report's `build:` line (the build's id) and the prose summary's
    rate (schedules/s, the one wall-time figure of a failing run's text).
    None occurs in a passing run's item; each would make a failing item
    differ between two builds that ran the same run, which is not the
    divergence this pins.  A Windows program names itself by its Windows
    path with its suffix, quoted for the shell (a path with `\\` is not a
    plain word: scn_shell_word), under Wine its Linux path as drive Z:; each
    form becomes the bare name a Linux build prints."""
    if exe.suffix == ".exe":
        for path in dict.fromkeys((str(exe), "Z:" + str(exe).replace("/", "\\"))):
            text = text.replace(f"'{path}'", exe.stem).replace(path, exe.stem)
    text = text.replace(str(exe.parent) + os.sep, "")
    text = re.sub(r"schedules/s=[0-9.]+", "schedules/s=*", text)
    text = re.sub(r" classes=(at least )?[0-9]+$", "", text, flags=re.M)
    return re.sub(r"^(  build: ).*$", r"\1<build>", text, flags=re.M)


def command(name: str, item: Item) -> list[str]:
    prog = "tpheal-harness-failfast" if needs_failfast(name) else "tpheal-harness"
    return [prog, *item.args, f"scenarios/{name}.scn"]


def harness_env(base=None, leak_check: bool = True) -> dict:
    """The environment of every harness process.  ThreadSanitizer sleeps a
    second at exit by default (atexit_sleep_ms=1000, for races at exit):
    580 processes of the race build took 5 minutes of wall time and 31 s of
    CPU.  No run reads it; the rest of TSAN_OPTIONS is the caller's (the
    later flag wins in the sanitizers' parser).

    leak_check=False turns LeakSanitizer's exit scan off in the ASan build:
    it was 75 ms of a 107 ms replay (perf stat, quiet machine), 56 of the
    64 s the ASan build's corpus took.  Each scenario keeps it on one item
    (LEAK_CHECKED_ITEM, its widest: every seed of both strategies); the
    other items run the same code paths again."""
    env = dict(os.environ if base is None else base)
    tsan = env.get("TSAN_OPTIONS", "")
    env["TSAN_OPTIONS"] = (tsan + ":" if tsan else "") + "atexit_sleep_ms=0"
    if not leak_check:
        asan = env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "detect_leaks=0"
    return env


# The item whose runs LeakSanitizer checks in the ASan build (harness_env).
LEAK_CHECKED_ITEM = "run"


def _one_run(exe: pathlib.Path, shown: list[str], args: list[str], cwd, item: Item, env,
             wrapper: Wrapper | None = None) -> str:
    """One harness process as an item's text: the command as shown, its exit
    status, then its output (JSON objects without wall time, or the text as
    printed), and a sanitizer's report from stderr, which is otherwise not
    pinned (warnings, progress): the report itself makes the item differ.
    A Windows program writes stdout in the C runtime's text mode, each \\n
    as \\r\\n: that is the platform's line end, not the run, so it is read
    back as \\n (a \\r the harness printed itself would still show)."""
    cmd = [*(wrapper.cmd if wrapper else ()), str(exe), *args]
    henv = harness_env(env, leak_check=item.name == LEAK_CHECKED_ITEM)
    r = procs.run_bounded(cmd, TIMEOUT, cwd=cwd, env=henv, merge=False)
    if wrapper and r.rc and not r.out:
        wrapper.reruns.append(f"{' '.join(shown)}: exit {r.rc}, nothing on stdout; stderr: {r.err[-500:]!r}")
        r = procs.run_bounded(cmd, TIMEOUT, cwd=cwd, env=henv, merge=False)
    head = f"$ {' '.join(shown)}\n"
    if r.rc is None:
        return head + f"timed out after {TIMEOUT:.0f} s\n"
    if wrapper and r.rc and not r.out:
        return head + f"exit {r.rc}, nothing on stdout; stderr:\n{r.err[-2000:]}"
    out = r.out.replace("\r\n", "\n") if exe.suffix == ".exe" else r.out
    body = _neutral(out, exe)
    if item.json:
        try:
            body = "".join(json.dumps(_strip_time(o)) + "\n" for o in HJ.objects(body))
        except (json.JSONDecodeError, HJ.VersionMismatch) as e:
            body = f"not the JSON contract: {e}\n{body}"
    text = head + f"exit {r.rc}\n" + body
    san = procs.sanitizer_line(r.err)
    if san:
        text += f"sanitizer: {san}\n"
    return text


def run_item(build: pathlib.Path, name: str, item: Item, env=None, wrapper: Wrapper | None = None) -> str:
    """The undigested text of one item.  The scenario is named relative to
    the repository, from its root, so the paths inside the output are the
    same on every machine."""
    cmd = command(name, item)
    exe = program(build, cmd[0].endswith("failfast"))
    return _one_run(exe, cmd, cmd[1:], REPO, item, env, wrapper)


def run_flips(build: pathlib.Path, name: str, item: Item, env=None, wrapper: Wrapper | None = None) -> str:
    """The failure reports of the scenario's failing copies, in line order
    (ci/golden_flips.py).  Each copy is written to a fresh directory and run
    from there by its bare file name, which is all its report names of it."""
    text = (SCENARIO_DIR / f"{name}.scn").read_text(encoding="utf-8")
    cmd = command(name, item)
    exe = program(build, cmd[0].endswith("failfast"))
    out = []
    with tempfile.TemporaryDirectory(prefix="tpheal-flips-") as d:
        for line, flipped in GF.flips(text):
            copy = GF.flip_name(SCENARIO_DIR / f"{name}.scn", line)
            (pathlib.Path(d) / copy).write_text(flipped, encoding="utf-8")
            out.append(_one_run(exe, [cmd[0], *item.args, copy], [*item.args, copy], d, item, env,
                                wrapper))
    return "".join(out) or "no expect or assert line compares\n"


def scenario_items(build: pathlib.Path, name: str, items=ITEMS, env=None,
                   wrapper: Wrapper | None = None) -> dict[str, str]:
    """Every item of one scenario.  `run` goes first: a scenario it declines
    (exit 3, nothing ran) is recorded as declined for every other item, with
    the run's `declined` object saying why."""
    out = {}
    first = next((i for i in items if i.name == "run"), None)
    declined = None
    if first is not None:
        out["run"] = run_item(build, name, first, env, wrapper)
        if out["run"].split("\n", 2)[1] == "exit 3":
            declined = out["run"]
    for it in items:
        if it.name == "run":
            continue
        out[it.name] = (f"declined (see the run item)\n{declined}" if declined
                        else (run_flips if it.flips else run_item)(build, name, it, env, wrapper))
    return out


def collect(build: pathlib.Path, names=None, items=ITEMS, jobs: int = 2, env=None,
            wrapper: Wrapper | None = None) -> dict[tuple[str, str], str]:
    """(scenario, item) -> text, over the corpus (or `names`).  A small pool
    of harness processes; the result is keyed, so its order is the caller's
    sort, never the order the processes finished in.  wrapper: see Wrapper."""
    names = corpus() if names is None else list(names)
    out: dict[tuple[str, str], str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futs = {n: pool.submit(scenario_items, build, n, items, env, wrapper) for n in names}
        for n, f in futs.items():
            for item, text in f.result().items():
                out[(n, item)] = text
    return out


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def digests(texts: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    return {k: digest(v) for k, v in texts.items()}


def format_golden(d: dict[tuple[str, str], str]) -> str:
    return HEADER + "".join(f"{s} {i} {h}\n" for (s, i), h in sorted(d.items()))


def read_golden(path: pathlib.Path = GOLDEN) -> dict[tuple[str, str], str]:
    """The file's lines as (scenario, item) -> digest.  A malformed or
    repeated line is an error, not a line skipped."""
    out: dict[tuple[str, str], str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or not re.fullmatch(r"[0-9a-f]{16}", parts[2]):
            raise ValueError(f"{path}:{n}: not `scenario item digest`: {line!r}")
        key = (parts[0], parts[1])
        if key in out:
            raise ValueError(f"{path}:{n}: {parts[0]} {parts[1]} listed twice")
        out[key] = parts[2]
    return out


def differences(golden: dict, got: dict) -> list[str]:
    """One line per (scenario, item) whose digest differs, is missing from
    the file, or is in the file but not produced; sorted."""
    out = []
    for k in sorted(set(golden) | set(got)):
        if k not in got:
            out.append(f"{k[0]} {k[1]}: in the golden file, not produced")
        elif k not in golden:
            out.append(f"{k[0]} {k[1]}: produced ({got[k]}), not in the golden file")
        elif golden[k] != got[k]:
            out.append(f"{k[0]} {k[1]}: golden {golden[k]}, now {got[k]}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--update", action="store_true", help=f"rewrite {GOLDEN.relative_to(REPO)} from the build")
    g.add_argument("--check", action="store_true", help="compare the build with the golden file")
    g.add_argument("--show", nargs=2, metavar=("SCENARIO", "ITEM"), help="print one item undigested")
    g.add_argument("--list", action="store_true", help="the items and their commands")
    ap.add_argument("--build", help="the build directory (default $TPHEAL_BUILD_DIR, else build/)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--exec-wrapper", default="", help="a command before every harness call, e.g. wine "
                    "(the build's Wine prefix must be up: ci/windows/wine-up.sh BUILD)")
    ap.add_argument("--items", help="only these items, comma-separated, or `replay` (the replay items)")
    a = ap.parse_args(argv)
    if a.list:
        for it in ITEMS:
            print(f"{it.name:16} tpheal-harness {' '.join(it.args)} scenarios/NAME.scn\n{'':16} {it.why}")
        return 0
    build = build_dir(a.build)
    try:
        items = items_named(a.items) if a.items else ITEMS
    except ValueError as e:
        print(f"golden.py: --items: {e}", file=sys.stderr)
        return 2
    if a.update and items != ITEMS:
        print("golden.py: --update writes every item; --items is for --check", file=sys.stderr)
        return 2
    wrapper = Wrapper(tuple(shlex.split(a.exec_wrapper))) if a.exec_wrapper.strip() else None
    env = wine_env(build) if wrapper else None
    if missing_programs(build):
        print(f"golden.py: {', '.join(map(str, missing_programs(build)))} missing: build first (make)",
              file=sys.stderr)
        return 2
    if a.show:
        name, item = a.show
        name = pathlib.Path(name).stem  # a path or a file name works too
        if name not in corpus() or item not in BY_NAME:
            print(f"golden.py: no item {item!r} of scenario {name!r} (items: {', '.join(ITEM_NAMES)})",
                  file=sys.stderr)
            return 2
        shown = [BY_NAME[item]] if item == "run" else [BY_NAME["run"], BY_NAME[item]]
        sys.stdout.write(scenario_items(build, name, shown, env, wrapper)[item])
        return 0
    got = digests(collect(build, items=items, jobs=a.jobs, env=env, wrapper=wrapper))
    for line in wrapper.reruns if wrapper else ():
        print(f"golden.py: ran again: {line}", file=sys.stderr)
    if a.update:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(format_golden(got), encoding="utf-8")
        print(f"golden.py: wrote {len(got)} digests of {len(corpus())} scenarios to {GOLDEN.relative_to(REPO)}")
        return 0
    wanted = {i.name for i in items}
    diff = differences({k: v for k, v in read_golden().items() if k[1] in wanted}, got)
    for line in diff:
        print(line)
    print(f"golden.py: {build}: {len(diff)} of {len(got)} items differ from {GOLDEN.relative_to(REPO)}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
