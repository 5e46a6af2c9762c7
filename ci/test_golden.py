"""The golden corpus (ci/golden.py, ci/golden/corpus.txt): what every scenario
prints under a fixed set of commands -- replays of seeds 1..3 of the random
walk and of PCT with their whole trace, a 30-seed run's deterministic counts,
bounded DFS with and without the partial-order reduction -- is pinned by
digest.

- the default build ($TPHEAL_BUILD_DIR) prints what the file says: any change
  to the scheduler's picks, the model, the runner's trace or the exploration
  fails here by scenario and item (a deliberate one regenerates the file);
- every other build `make test` makes that runs the model prints the same
  bytes: the promise that a seed CI printed replays on the user's build;
- the file lists exactly the corpus and the items, as --update writes it.

The corpus takes ~3.5 s on the release build (2 harness processes at once,
the 2-core machine); the ASan build ~17 s, the TSan build ~24 s."""
import difflib

import pytest

from conftest import REPO
import golden as G  # noqa: E402  (ci/ is on the path: conftest)

# The builds under $TPHEAL_BUILD_DIR that run the same model and must run the
# same runs: each is a seed's "other build" in the replay promise.
#   asan: clang, AddressSanitizer + UBSan, and the fiber switches annotated
#         for ASan (harness/sched/fiber_asan.h);
#   tsan: clang, the race build: every fiber a TSan fiber, stacks never
#         reused, the race detector inside the run (docs/races.md).
# The Windows build is held to the file itself, under Wine, in the wine job
# (ci/test_windows.py: test_windows_build_replays_the_golden_corpus_under_wine).
# Not here: noheal (TPHEAL_SELF_HEAL=OFF) builds no scenario harness at all
# (harness/CMakeLists.txt: the engine exists only where the self-heal does),
# and a core without the self-heal runs other runs by design.
CROSS_BUILDS = ("asan", "tsan")
MAX_DIFF_LINES = 60


@pytest.fixture(scope="session")
def default_texts(builddir):
    missing = G.missing_programs(builddir)
    if missing:
        pytest.fail(f"{', '.join(map(str, missing))} missing: build first (make test builds it)")
    return G.collect(builddir)


def test_golden_file_lists_exactly_the_corpus_and_the_items():
    """(c) A scenario added, renamed or removed without --update fails here by
    name, as does an item added to golden.py; the file is exactly what
    --update writes (header, sorted lines)."""
    golden = G.read_golden()
    listed = {s for s, _ in golden}
    corpus = set(G.corpus())
    problems = [f"scenario {s}: in scenarios/, not in the golden file" for s in sorted(corpus - listed)]
    problems += [f"scenario {s}: in the golden file, not in scenarios/" for s in sorted(listed - corpus)]
    for s in sorted(listed & corpus):
        items = {i for t, i in golden if t == s}
        if items != set(G.ITEM_NAMES):
            problems.append(f"scenario {s}: items {sorted(items)}, golden.py has {sorted(G.ITEM_NAMES)}")
    text = G.GOLDEN.read_text(encoding="utf-8")
    if not problems and text != G.format_golden(golden):
        problems.append("the file is not as --update writes it (its header, or its lines' order)")
    if problems:
        pytest.fail("\n".join(problems) + "\n\nRegenerate: python3 ci/golden.py --update "
                    f"(and commit {G.GOLDEN.relative_to(REPO)} with the change that needs it)", pytrace=False)


def test_default_build_matches_the_golden_file(builddir, default_texts):
    """(a) Every scenario x item of the default build has its golden digest."""
    diff = G.differences(G.read_golden(), G.digests(default_texts))
    if not diff:
        return
    build = "" if builddir == (REPO / "build").resolve() else f" --build {builddir}"
    # one command per scenario (its first item that differs), for the first few
    firsts = {}
    for line in diff:
        s, i = line.split(":", 1)[0].split()
        firsts.setdefault(s, i)
    shown = sorted(firsts.items())
    lines = [f"{len(diff)} of {len(default_texts)} items differ from {G.GOLDEN.relative_to(REPO)} "
             f"(build {builddir}):"]
    lines += [f"  {line}" for line in diff]
    lines += ["", f"{len(firsts)} scenarios.  What an item prints now (run it again on the code before "
                  "the change, e.g. after `git stash`, and diff the two):"]
    lines += [f"  python3 ci/golden.py{build} --show {s} {i}" for s, i in shown[:12]]
    if len(shown) > 12:
        lines.append(f"  ... and {len(shown) - 12} more scenarios")
    lines += ["", "A deliberate change of behaviour: python3 ci/golden.py --update" + build
              + ", committed with the change, the reason in the commit message."]
    pytest.fail("\n".join(lines), pytrace=False)


@pytest.mark.sanitizer
@pytest.mark.parametrize("name", CROSS_BUILDS)
def test_other_build_runs_the_same_runs(name, builddir, default_texts):
    """(b) Byte for byte the default build's output, item by item (not
    against the file: a difference here is between two builds of this very
    tree, whatever the file says)."""
    d = builddir / name
    if not (d / "CMakeCache.txt").is_file():
        pytest.skip(f"no {name} build in {d} (make test builds it)")
    missing = G.missing_programs(d)
    if missing:
        pytest.fail(f"{', '.join(map(str, missing))} missing: the {name} build is configured but its "
                    f"harness is not built (make test builds it)")
    other = G.collect(d)
    differ = sorted(k for k in default_texts if other.get(k) != default_texts[k])
    if not differ:
        return
    lines = [f"{len(differ)} of {len(default_texts)} items differ between {builddir} and {d} "
             f"(a seed printed by one build does not replay on the other):"]
    lines += [f"  {s} {i}" for s, i in differ]
    # a replay's diff shows where the two runs part (the first trace record
    # that differs); a JSON item only that some count moved
    s, i = next((k for k in differ if k[1].startswith("replay-")), differ[0])
    lines += ["", f"{s} {i}, the default build (-) against {name} (+):"]
    udiff = list(difflib.unified_diff(default_texts[(s, i)].splitlines(), other.get((s, i), "").splitlines(),
                                      "default", name, lineterm="", n=2))
    lines += udiff[:MAX_DIFF_LINES] + ([f"... {len(udiff) - MAX_DIFF_LINES} more lines"]
                                       if len(udiff) > MAX_DIFF_LINES else [])
    lines += ["", f"Each build's text: python3 ci/golden.py --show {s} {i} [--build {d}]"]
    pytest.fail("\n".join(lines), pytrace=False)


def test_a_windows_program_path_reads_as_the_linux_name():
    """A failure report's replay command starts with the program as it names
    itself: `<dir>/tpheal-harness` on Linux, under Wine its Windows path,
    quoted, with .exe (the flips item differed in 51 of 59 scenarios by that
    alone).  Each reads as the bare name."""
    import pathlib
    tail = " replay --seed 1 --strategy random x.scn\n"
    linux = pathlib.Path("/w/build/harness/scenario/tpheal-harness")
    win = pathlib.Path("/w/build-win/harness/scenario/tpheal-harness.exe")
    want = "  replay by seed: tpheal-harness" + tail
    assert G._neutral(f"  replay by seed: {linux}" + tail, linux) == want
    wine_path = r"Z:\w\build-win\harness\scenario\tpheal-harness.exe"
    assert G._neutral(f"  replay by seed: '{wine_path}'" + tail, win) == want
    assert G._neutral(f"  replay by seed: {win}" + tail, win) == want


def test_a_wrapped_process_that_never_reached_the_harness_runs_again(tmp_path):
    """Under a wrapper (Wine), a process that failed with nothing on stdout
    is run once more and named in Wrapper.reruns; failing so twice, the
    item's text says so with the stderr.  The wrapper here fails silently
    the first time, as Wine did once in ~4,700 runs."""
    marker = tmp_path / "failed-once"
    flaky = G.Wrapper(("sh", "-c", f'[ -e "{marker}" ] || {{ touch "{marker}"; echo lost >&2; exit 1; }}; '
                       'exec "$@"', "sh"))
    exe = tmp_path / "prog.exe"
    exe.write_text("#!/bin/sh\nprintf 'PASS\\r\\n'\n")
    exe.chmod(0o755)
    item = G.BY_NAME["replay-random-1"]
    assert G._one_run(exe, ["prog"], [], tmp_path, item, None, flaky) == "$ prog\nexit 0\nPASS\n"
    assert len(flaky.reruns) == 1 and "exit 1" in flaky.reruns[0] and "lost" in flaky.reruns[0]
    broken = G.Wrapper(("sh", "-c", "echo lost >&2; exit 1", "sh"))
    text = G._one_run(exe, ["prog"], [], tmp_path, item, None, broken)
    assert text.startswith("$ prog\nexit 1, nothing on stdout; stderr:\n") and "lost" in text, text
    assert len(broken.reruns) == 1


def test_each_scenario_keeps_one_leak_checked_item():
    """The ASan build's corpus runs LeakSanitizer on one item a scenario
    (golden.harness_env): renaming that item must not turn the check off
    for every item without a word."""
    assert G.LEAK_CHECKED_ITEM in [i.name for i in G.ITEMS]
    on = G.harness_env({}, leak_check=True)
    off = G.harness_env({"ASAN_OPTIONS": "detect_stack_use_after_return=1"}, leak_check=False)
    assert "detect_leaks=0" not in on.get("ASAN_OPTIONS", "")
    assert off["ASAN_OPTIONS"] == "detect_stack_use_after_return=1:detect_leaks=0"
