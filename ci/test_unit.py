"""Every cmocka unit-test executable of every build configuration, one pytest
case each: the default build, ASan+UBSan, and TPHEAL_SELF_HEAL=OFF.

Executables are discovered from ctest (`ctest --show-only=json-v1`), so a new
core/tests/test_X.c or harness/tests/test_X.c is picked up with no edit here.
A configuration whose build directory is absent is reported as a failure, not
skipped: `make test` builds all of them, and a missing one means it did not.

Environment:
  TPHEAL_UNIT_CONFIGS   the configurations a job built (comma/space separated,
                        e.g. `default` on the Windows jobs, which have no ASan
                        or noheal build); the others are skipped with that
                        reason.  Unset: all three are required.
  TPHEAL_BUILD_CONFIG   the configuration of a multi-config generator (MSVC:
                        Release), passed to ctest as `-C`: without it ctest
                        lists the tests of a Visual Studio build with no
                        runnable command."""
import json
import os
import subprocess

import pytest

from conftest import build_dir, run_bounded
from sanitizer_options import unit_env

CONFIGS = {"default": "", "asan": "asan", "noheal": "noheal"}


def required_configs():
    raw = os.environ.get("TPHEAL_UNIT_CONFIGS", "").replace(",", " ").split()
    if not raw:
        return set(CONFIGS)
    unknown = [c for c in raw if c not in CONFIGS]
    if unknown:
        raise pytest.UsageError(f"TPHEAL_UNIT_CONFIGS: unknown configuration(s) {unknown}; "
                                f"known: {sorted(CONFIGS)}")
    return set(raw)


def ctest_list_cmd():
    cmd = ["ctest", "--show-only=json-v1"]
    config = os.environ.get("TPHEAL_BUILD_CONFIG")
    if config:
        cmd += ["-C", config]
    return cmd


def discover(config):
    if config not in required_configs():
        return [pytest.param(config, None, None, id=f"{config}/not-built",
                             marks=pytest.mark.skip(
                                 reason=f"TPHEAL_UNIT_CONFIGS does not list '{config}'"))]
    d = build_dir() / CONFIGS[config] if CONFIGS[config] else build_dir()
    if not (d / "CTestTestfile.cmake").exists():
        return [pytest.param(config, None, None, id=f"{config}/missing")]
    out = subprocess.run(ctest_list_cmd(), cwd=d, capture_output=True,
                         text=True, check=True).stdout
    cases = []
    for t in json.loads(out).get("tests", []):
        name = t["name"]
        if not (name.startswith("core.") or name.startswith("harness.")):
            continue
        cases.append(pytest.param(config, name, t["command"], id=f"{config}/{name}"))
    return cases


def all_cases():
    cases = []
    for config in CONFIGS:
        cases.extend(discover(config))
    return cases


@pytest.mark.parametrize("config,name,command", all_cases())
def test_unit(config, name, command):
    if name is None:
        pytest.fail(f"build configuration '{config}' is missing: run `make test`")
    env = unit_env(os.environ)
    rc, out = run_bounded(command, timeout=300 if config == "asan" else 120, env=env)
    if rc is None:
        pytest.fail(f"{name} ({config}) timed out\n{out[-4000:]}")
    # cmocka prints its summary on stderr (merged here); its exit code is the
    # number of failed tests.
    summary = [l for l in out.splitlines() if "PASSED" in l or "FAILED" in l]
    print("\n".join(summary))
    assert rc == 0, f"{name} ({config}) exited {rc}\n{out[-6000:]}"
