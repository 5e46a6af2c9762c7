"""Shared fixtures of the pytest driver: where the builds are, where a built
program is (one rule for every ci/*.py), and how to run a program with a hard
time bound whose whole process tree is killed on expiry -- on POSIX and on
Windows (the MSVC and MSYS2 jobs run this driver too)."""
import contextlib
import os
import pathlib
import shutil
import subprocess

import pytest

import procs  # ci/: bounded runs and tree kills, one definition

REPO = pathlib.Path(__file__).resolve().parent.parent
WINDOWS = os.name == "nt"
EXE = ".exe" if WINDOWS else ""


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TPHEAL_BUILD_DIR", REPO / "build")).resolve()


def binary_candidates(rel: str, build: pathlib.Path | None = None) -> list[pathlib.Path]:
    """Where a multi-config generator (Visual Studio: <dir>/Release/) and a
    single-config one (<dir>/) put the program `rel` (a path under the build
    without suffix, e.g. harness/scenario/tpheal-harness), with the
    platform's suffix.  TPHEAL_BUILD_CONFIG names the configuration."""
    p = (build or build_dir()) / rel
    out = []
    config = os.environ.get("TPHEAL_BUILD_CONFIG")
    if config:
        out.append(p.parent / config / (p.name + EXE))
    out.append(p.parent / (p.name + EXE))
    return out


def binary(rel: str, build: pathlib.Path | None = None) -> pathlib.Path:
    """The built program `rel`; the last candidate (to name in a failure
    message) when none exists."""
    cands = binary_candidates(rel, build)
    return next((c for c in cands if c.is_file()), cands[-1])


def run_bounded(cmd, timeout, cwd=None, env=None):
    """Run cmd, return (returncode, combined output). On timeout the whole
    process tree is killed and returncode is None (ci/procs.py)."""
    r = procs.run_bounded(cmd, timeout, cwd=cwd, env=env)
    return r.rc, r.out


# The Windows build (mingw-w64, ci/windows/run.sh) and its Wine prefix.
WIN_BUILD = pathlib.Path(os.environ.get("TPHEAL_WIN_BUILD_DIR", REPO / "build-win")).resolve()


def need_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (ci/deps.sh windows installs them)")


def need_wine_tools():
    need_tools("x86_64-w64-mingw32-gcc", "cmake")
    if shutil.which("wine") is None and shutil.which("wine64") is None:
        pytest.skip("wine not installed (ci/deps.sh windows installs it)")


@contextlib.contextmanager
def wine_session(build: pathlib.Path = WIN_BUILD):
    """The build's Wine prefix booted (ci/windows/wine-up.sh: a persistent
    server, crash dialogs off) for the duration, then its server stopped;
    yields the wine command and the environment a program runs in.  The
    prefix lives in the build directory, which need not hold a build yet."""
    build.mkdir(parents=True, exist_ok=True)
    up, down = REPO / "ci" / "windows" / "wine-up.sh", REPO / "ci" / "windows" / "wine-down.sh"
    rc, out = run_bounded([str(up), str(build)], timeout=300)
    assert rc == 0, f"wine prefix did not come up:\n{out}"
    wine = shutil.which("wine") or shutil.which("wine64")
    env = dict(os.environ, WINEPREFIX=str(build / "wineprefix"), WINEDEBUG="-all",
               WINEARCH="win64", WINEDLLOVERRIDES="mscoree,mshtml=")
    try:
        yield {"wine": wine, "env": env}
    finally:
        run_bounded([str(down), str(build)], timeout=60)


@pytest.fixture(scope="session")
def builddir():
    d = build_dir()
    if not (d / "CMakeCache.txt").exists():
        pytest.fail(f"no build in {d}: run `make test` (it builds first)")
    return d


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def committed_copy(source: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    """A copy of the fixture project `source` at `dest`, as a git repository
    with everything committed (the sweep and the mutant runner read tracked
    files only)."""
    shutil.copytree(source, dest)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "-c", "user.email=fixture@test", "-c", "user.name=fixture", "commit", "-qm", "fixture")
    return dest


# The sabotage fixture project's own pytest files (its "pytest layer", run by
# the sweep inside the fixture's copies, against the fixture's build) are not
# tests of this tree.
collect_ignore_glob = ["sabotage/tests_fixture/*"]


# `make test` runs this driver on two workers (pytest-xdist, `-n 2 --dist
# loadgroup`: Makefile): most modules run one process at a time, and on the
# project's 2-core machine the second core sat idle for most of the suite.
# A module is one unit of work -- its fixtures build and run things once per
# module or session (the sabotage sweep, the golden corpus's default texts) --
# and the modules that boot build-win's Wine prefix share one unit, so one
# worker at a time has Wine (wine_session stops the prefix's server when it
# ends).  The longest units go first, so the other worker fills in beside
# them instead of the suite ending on one of them alone.
WINE_MODULES = ("test_windows", "test_install")
LONGEST_FIRST = ("test_sabotage", "test_windows", "test_install", "test_golden", "test_unit",
                 "test_races", "test_stress")


def work_unit(module: str) -> str:
    return "wine" if module in WINE_MODULES else module


def pytest_collection_modifyitems(config, items):
    def module(item):
        return pathlib.Path(str(item.fspath)).stem

    def rank(item):
        m = module(item)
        return LONGEST_FIRST.index(m) if m in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)  # stable: a module's own order stays
    for item in items:
        item.add_marker(pytest.mark.xdist_group(work_unit(module(item))))
