"""ci/soak.py (make soak): the flake hunt's report.  Runs a two-test
stand-in suite twice, the second run failing one test, and reads the report
back; the load is checked to be beside the run and gone after it.  Cheap:
~2 s (two inner pytest runs)."""
import json
import os
import pathlib
import shutil
import sys

import pytest

from conftest import REPO, run_bounded

SOAK = REPO / "ci" / "soak.py"

INNER = '''
import os, pathlib
STATE = pathlib.Path(os.environ["SOAK_STATE"])

def test_always():
    pass

def test_second_run_fails():
    n = int(STATE.read_text()) + 1 if STATE.exists() else 1
    STATE.write_text(str(n))
    def read(p):
        try:
            return p.read_bytes()
        except OSError:
            return b""
    # this soak's hogs only: their environment names our state file
    mark = ("SOAK_STATE=" + str(STATE)).encode()
    hogs = [p for p in pathlib.Path("/proc").iterdir() if p.name.isdigit()
            and read(p / "comm").startswith(b"stress-ng") and mark in read(p / "environ")]
    (STATE.parent / f"hogs-{n}").write_text(str(len(hogs)))
    assert n != 2, "the second run fails here"
'''


def soak(tmp_path, *args):
    (tmp_path / "test_inner.py").write_text(INNER)
    env = dict(os.environ, SOAK_STATE=str(tmp_path / "state"))
    cmd = [sys.executable, str(SOAK), "--out", str(tmp_path / "out"), *args, "--",
           "sh", "-c", f'"{sys.executable}" -m pytest -q -p no:cacheprovider $PYTEST_ARGS "{tmp_path}/test_inner.py"']
    rc, out = run_bounded(cmd, 120, env=env)
    return rc, out, json.loads((tmp_path / "out" / "soak.json").read_text())


def test_soak_reports_runs_failures_and_causes(tmp_path):
    rc, out, r = soak(tmp_path, "--runs", "3", "--load", "0", "--keep-going")
    assert rc == 1, out
    assert [x["run"] for x in r["runs"]] == [1, 2, 3] and r["failed_runs"] == 1, r
    assert r["runs"][0]["failures"] == [] and r["runs"][2]["failures"] == []
    (f,) = r["runs"][1]["failures"]
    assert f["test"].endswith("::test_second_run_fails") and "the second run fails here" in f["cause"], f
    assert r["causes"] == {f["test"]: [2]}
    assert "soak: 3 runs, 1 failed, 1 consecutive passes at the end" in out, out


def test_soak_stops_at_the_first_failed_run(tmp_path):
    rc, out, r = soak(tmp_path, "--runs", "3", "--load", "0")
    assert rc == 1 and len(r["runs"]) == 2, out


def test_soak_all_passing_exits_0(tmp_path):
    rc, out, r = soak(tmp_path, "--runs", "1", "--load", "0")
    assert rc == 0 and r["failed_runs"] == 0, out


def test_soak_runs_the_load_beside_each_run_and_stops_it(tmp_path):
    if shutil.which("stress-ng") is None:
        pytest.skip("stress-ng not installed (ci/deps.sh soak installs it)")
    rc, out, r = soak(tmp_path, "--runs", "1", "--load", "2")
    assert rc == 0, out
    # stress-ng itself exists once Popen returns (after its exec); its
    # workers fork later, so counting them would be a race with its start-up
    assert int((tmp_path / "hogs-1").read_text()) >= 1
    # ... and none of this run's (its environment names our state file) is left
    mark = f"SOAK_STATE={tmp_path / 'state'}".encode()
    left = [p.name for p in pathlib.Path("/proc").iterdir() if p.name.isdigit()
            and _read(p / "comm").startswith(b"stress-ng") and mark in _read(p / "environ")]
    assert not left, f"stress-ng left running: {left}"


def test_soak_without_xml_reports_the_exit(tmp_path):
    rc, out = run_bounded([sys.executable, str(SOAK), "--out", str(tmp_path), "--runs", "1", "--load", "0",
                           "--", "false"], 60)
    r = json.loads((tmp_path / "soak.json").read_text())
    assert rc == 1 and "exit 1 with no failing test" in r["runs"][0]["failures"][0]["cause"], out


def test_soak_bad_usage_is_exit_2():
    rc, out = run_bounded([sys.executable, str(SOAK), "--runs", "0"], 30)
    assert rc == 2, out


def _read(p):
    try:
        return p.read_bytes()
    except OSError:
        return b""


def test_soak_fresh_runs_in_a_clone_and_samples_the_load(tmp_path):
    """--fresh (make soak's): the command runs in a fresh clone of HEAD, with
    no untracked file of the checkout, and each run's record carries the load
    average sampled while it ran (the issue asked for load 5: a figure, not a
    hog count)."""
    (tmp_path / "test_inner.py").write_text(INNER + '''
def test_where():
    (STATE.parent / "cwd").write_text(os.getcwd())
''')
    env = dict(os.environ, SOAK_STATE=str(tmp_path / "state"))
    cmd = [sys.executable, str(SOAK), "--out", str(tmp_path / "out"), "--runs", "1", "--load", "0", "--fresh",
           "--", "sh", "-c", f'"{sys.executable}" -m pytest -q -p no:cacheprovider $PYTEST_ARGS "{tmp_path}/test_inner.py"']
    rc, out = run_bounded(cmd, 120, env=env)
    r = json.loads((tmp_path / "out" / "soak.json").read_text())
    assert rc == 0 and r["fresh_clone"] is True, out
    clone = tmp_path / "out" / "clone"
    assert (tmp_path / "cwd").read_text() == str(clone)
    assert (clone / ".git").is_dir() and (clone / "ci" / "soak.py").is_file()
    seen = r["runs"][0]["load_during"]
    assert seen["samples"] >= 1 and 0 <= seen["min"] <= seen["mean"] <= seen["max"], seen
    assert "during: min " in out, out
