"""The fixture harness's command line as a user meets it: `version` names
the release, `add A B` prints the sum.  The sweep's pytest layer runs this
file (pytest:ci/test_cli.py) in each copy, against $TPHEAL_BUILD_DIR."""
import os
import pathlib
import subprocess


def harness():
    build = pathlib.Path(os.environ.get("TPHEAL_BUILD_DIR", "build"))
    hits = sorted((p for p in build.rglob("tpheal-harness") if p.is_file()), key=lambda p: len(str(p)))
    assert hits, f"no tpheal-harness under {build}"
    return str(hits[0])


def test_version_names_the_release():
    p = subprocess.run([harness(), "version"], capture_output=True, text=True, timeout=10)
    assert (p.returncode, p.stdout) == (0, "fixture-harness 1.2.0\n")


def test_add_prints_the_sum():
    p = subprocess.run([harness(), "add", "2", "3"], capture_output=True, text=True, timeout=10)
    assert (p.returncode, p.stdout) == (0, "5\n")
