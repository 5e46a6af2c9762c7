"""Every cmocka unit-test executable of every build configuration, one pytest
case each: the default build, ASan+UBSan, and TPHEAL_SELF_HEAL=OFF.

Executables are discovered from ctest (`ctest --show-only=json-v1`), so a new
core/tests/test_X.c or harness/tests/test_X.c is picked up with no edit here.
A configuration whose build directory is absent is reported as a failure, not
skipped: `make test` builds all of them, and a missing one means it did not."""
import json
import os
import subprocess

import pytest

from conftest import build_dir, run_bounded

CONFIGS = {"default": "", "asan": "asan", "noheal": "noheal"}


def discover(config):
    d = build_dir() / CONFIGS[config] if CONFIGS[config] else build_dir()
    if not (d / "CTestTestfile.cmake").exists():
        return [pytest.param(config, None, None, id=f"{config}/missing")]
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=d, capture_output=True,
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
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    rc, out = run_bounded(command, timeout=300 if config == "asan" else 120, env=env)
    if rc is None:
        pytest.fail(f"{name} ({config}) timed out\n{out[-4000:]}")
    # cmocka prints its summary on stderr (merged here); its exit code is the
    # number of failed tests.
    summary = [l for l in out.splitlines() if "PASSED" in l or "FAILED" in l]
    print("\n".join(summary))
    assert rc == 0, f"{name} ({config}) exited {rc}\n{out[-6000:]}"
