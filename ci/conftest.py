"""Shared fixtures of the pytest driver: where the builds are, and how to run
a program with a hard time bound whose whole process tree is killed on expiry."""
import os
import pathlib
import signal
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TPHEAL_BUILD_DIR", REPO / "build")).resolve()


def run_bounded(cmd, timeout, cwd=None, env=None):
    """Run cmd, return (returncode, combined output). On timeout the whole
    process group is killed and returncode is None."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out.decode("utf-8", "replace")


@pytest.fixture(scope="session")
def builddir():
    d = build_dir()
    if not (d / "CMakeCache.txt").exists():
        pytest.fail(f"no build in {d}: run `make test` (it builds first)")
    return d
