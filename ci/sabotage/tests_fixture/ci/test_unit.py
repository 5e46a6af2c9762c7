"""Every ctest executable of the fixture's build, as one case.  The sweep
leaves this file out of its pytest layer (its default pytestExclude): the
unit: and asan: layers run these executables directly."""
import os
import subprocess


def test_ctest():
    build = os.environ.get("TPHEAL_BUILD_DIR", "build")
    p = subprocess.run(["ctest", "--test-dir", build, "--output-on-failure", "--timeout", "20"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
