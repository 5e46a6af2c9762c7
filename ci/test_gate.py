"""The PR gate's rules (issue 11: every job of the workflow failed on the
runner images of December 2026), each a check that fails when broken:

- the workflow holds no logic: each `run:` is one `ci/gate.sh JOB` call;
- every action is pinned to a 40-hex commit SHA of a release known to run on
  Node 24 (the comment names that release), none to a Node 20 release GitHub
  removed from its runners, and no runner label is `*-latest`;
- ci/deps.sh installs through `sudo -n` when not root, by names that do not
  carry a compiler version;
- a consumer's build gets no -Werror, the project's own builds do;
- the shared binary lookup finds `.exe` and the MSVC `Release/` folder;
- the clang MSVC-mode pass (ci/matrix/msvc_mode.py) is clean."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import conftest
from conftest import REPO, run_bounded

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
# The Node 20 releases the workflow was pinned to before (removed from the
# runners in September 2026): checkout v4.2.2, cache v4.2.3, upload-artifact
# v4.6.2, msys2/setup-msys2 v2.29.0; and setup-msys2 v2.30.0, the last
# setup-msys2 on Node 20 (v2.31.0's release notes: "Move to node24 from node20").
NODE20_SHAS = {"11bd71901bbe5b1630ceea73d27597364c9af683", "5a3ec84eff668545956fd18022155c47e93e2684",
               "ea165f8d65b6e75b540449e92b4886f43607fa02", "fb197b72ce45fb24f17bf3f807a388985654d1f2",
               "4f806de0a5a7294ffabaff804b38a9b435a73bda"}
# The only pins the workflow may use: releases whose Node 24 runtime was
# checked, with the release the `# vX` comment must name.  A SHA absent here
# has an unknown runtime (a Node 20 one fails the job on today's runners), so
# a bump adds its SHA here with the evidence (docs/toolchain-matrix.md).
NODE24_PINS = {
    "actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8": "v5.0.0",
    "actions/upload-artifact@330a01c490aca151604b8cf639adc76d48f6c5d4": "v5.0.0",
    # Tag to SHA: dependabot's patch, LizardByte/libdisplaydevice PR 222.
    "msys2/setup-msys2@cafece8e6baf9247cf9b1bf95097b0b983cc558d": "v2.31.0",
}


# ---- the workflow --------------------------------------------------------------

def workflow_text():
    return WORKFLOW.read_text(encoding="utf-8")


def action_problems(text):
    """What is wrong with the `uses:` lines of a workflow text (empty: nothing)."""
    problems = []
    for ref, comment in re.findall(r"^\s*(?:-\s+)?uses:\s*(\S+)[ \t]*(?:#[ \t]*(\S+))?", text, re.M):
        if not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref):
            problems.append(f"not pinned to a 40-hex SHA: {ref}")
        elif ref.split("@")[1] in NODE20_SHAS:
            problems.append(f"a Node 20 release (gone from the runners): {ref}")
        elif ref not in NODE24_PINS:
            problems.append(f"a SHA with no Node 24 record in ci/test_gate.py: {ref}")
        elif comment != NODE24_PINS[ref]:
            problems.append(f"{ref} is {NODE24_PINS[ref]}, its comment says {comment or 'nothing'}")
    return problems


def test_every_action_pinned_by_sha_to_a_node24_release():
    assert re.search(r"^\s*(?:-\s+)?uses:", workflow_text(), re.M)
    assert action_problems(workflow_text()) == []


def test_action_rule_rejects_each_bad_pin():
    """The rule above fails on each way a pin goes wrong."""
    good = "      - uses: msys2/setup-msys2@cafece8e6baf9247cf9b1bf95097b0b983cc558d # v2.31.0\n"
    assert action_problems(good) == []
    bad = {
        "msys2/setup-msys2@v2": "not pinned",
        "msys2/setup-msys2@fb197b72ce45fb24f17bf3f807a388985654d1f2 # v2.29.0": "Node 20",
        "msys2/setup-msys2@" + "1" * 40 + " # v2.99.0": "no Node 24 record",
        "msys2/setup-msys2@cafece8e6baf9247cf9b1bf95097b0b983cc558d # v2.29.0": "comment says v2.29.0",
        "msys2/setup-msys2@cafece8e6baf9247cf9b1bf95097b0b983cc558d": "comment says nothing",
    }
    for use, why in bad.items():
        problems = action_problems(f"    steps:\n      - uses: {use}\n")
        assert len(problems) == 1 and why in problems[0], (use, problems)


def test_no_floating_runner_label():
    labels = re.findall(r"^\s*runs-on:\s*(.+?)\s*$", workflow_text(), re.M)
    assert labels
    for label in labels:
        assert "latest" not in label, f"runner label not pinned: {label}"
        assert re.fullmatch(r"(windows|ubuntu)-\d+(\.\d+)?", label), f"not a pinned hosted label: {label}"


def test_workflow_runs_only_the_gate_script():
    runs = re.findall(r"^[ \t]*(?:-[ \t]+)?run:[ \t]*(.*)$", workflow_text(), re.M)
    runs = [r for r in runs if r]  # `defaults: run:` holds a shell, not a command
    assert runs
    for r in runs:
        assert re.fullmatch(r"ci/gate\.sh [\w${}. /-]+", r), f"logic in the YAML: `{r}` (put it in ci/gate.sh)"
    jobs = {re.match(r"ci/gate\.sh (\S+)", r).group(1) for r in runs}
    jobs |= set(re.findall(r"job: \[([^\]]*)\]", workflow_text())[0].replace(" ", "").split(","))
    gate = (REPO / "ci" / "gate.sh").read_text()
    for j in jobs:
        if j.startswith("$"):
            continue
        assert re.search(rf"^\s*(\w+\|)*{j}(\|\w+)*\)", gate, re.M), f"ci/gate.sh has no job {j}"


def test_race_job_is_in_the_workflow_and_runs_the_race_checks():
    """The race build's job (docs/races.md) is a Linux job of the workflow,
    and ci/gate.sh race runs ci/test_races.py and a controlled stress pass
    with --sanitize thread."""
    jobs = re.findall(r"job: \[([^\]]*)\]", workflow_text())[0].replace(" ", "").split(",")
    assert "race" in jobs, jobs
    gate = (REPO / "ci" / "gate.sh").read_text()
    body = re.search(r"^  race\)\n(.*?)^    ;;", gate, re.M | re.S)
    assert body, "ci/gate.sh has no race) job"
    assert "ci/test_races.py" in body.group(1)
    assert re.search(r"ci/stress\.py .*--sanitize thread --modes controlled", body.group(1))


def test_gate_rejects_an_unknown_job():
    rc, out = run_bounded([str(REPO / "ci" / "gate.sh"), "no-such-job"], 30, cwd=REPO)
    assert rc == 2 and "unknown job" in out, out


# ---- ci/deps.sh ------------------------------------------------------------------

def stub(d, name, body):
    p = d / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)


def test_deps_uses_sudo_n_when_not_root(tmp_path):
    """A GitHub runner's user is not root: deps.sh must go through `sudo -n`
    (it used to exit 1 there), asking for version-free package names."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "sudo.log"
    stub(bin_, "id", 'echo 1001\n')
    stub(bin_, "dpkg-query", "exit 1\n")          # nothing is installed
    stub(bin_, "sudo", f'echo "$*" >> "{log}"\n')
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}")
    rc, out = run_bounded(["bash", str(REPO / "ci" / "deps.sh"), "all"], 60, env=env)
    assert rc == 0, out
    calls = log.read_text().splitlines()
    assert calls[0] == "-n true", calls
    assert any(c.startswith("-n env DEBIAN_FRONTEND=noninteractive apt-get install") for c in calls), calls
    install = [c for c in calls if "apt-get install" in c][0].split()
    assert "libclang-rt-dev" in install and "libcmocka-dev" in install, install
    versioned = [p for p in install if re.search(r"-\d+(-dev)?$", p) and "x86-64" not in p]
    assert not versioned, f"version-bound package names: {versioned}"
    assert "python3-pytest-xdist" in install, install  # make test's two workers
    assert "python3-pytest-timeout" not in install


def test_deps_without_root_or_sudo_says_what_to_run(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    stub(bin_, "id", 'echo 1001\n')
    stub(bin_, "dpkg-query", "exit 1\n")
    stub(bin_, "sudo", "exit 1\n")
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}")
    rc, out = run_bounded(["bash", str(REPO / "ci" / "deps.sh")], 60, env=env)
    assert rc == 1 and "apt-get install -y --no-install-recommends cmake" in out, out


def deps_install_line(tmp_path, *groups):
    """The apt-get install line deps.sh asks sudo for on a machine with
    nothing installed and no npm on PATH (PATH holds only the stubs and grep)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "sudo.log"
    stub(bin_, "id", 'echo 1001\n')
    stub(bin_, "dpkg-query", "exit 1\n")
    stub(bin_, "sudo", f'echo "$*" >> "{log}"\n')
    (bin_ / "grep").symlink_to(shutil.which("grep"))
    rc, out = run_bounded(["/bin/bash", str(REPO / "ci" / "deps.sh"), *groups], 60,
                          env=dict(os.environ, PATH=str(bin_)))
    assert rc == 0, out
    return [c for c in log.read_text().splitlines() if "apt-get install" in c][0].split()


def test_deps_installs_npm_for_make_test(tmp_path):
    """A bare Debian 12 with Debian's nodejs had no npm (its own package there)
    and `make test` failed three tests: the groups make test names bring npm,
    nodejs and the CA bundle `npm ci` needs for https."""
    make = (REPO / "Makefile").read_text()
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", make, re.M).group(1)
    groups = re.search(r"ci/deps\.sh ([\w ]+)", recipe).group(1).split()
    install = deps_install_line(tmp_path, *groups)
    for p in ("npm", "nodejs", "ca-certificates", "wine", "gcc-mingw-w64-x86-64"):
        assert p in install, (p, install)


def test_deps_default_group_does_not_pull_node(tmp_path):
    install = deps_install_line(tmp_path)
    assert "npm" not in install and "stress-ng" not in install, install


def test_bare_chroot_runs_the_readmes_two_commands():
    """The matrix's bare cell checks the README's promise: it must run the
    README's two commands as written, on a machine with only the bare list
    (no npm: a bare Debian 12 lacked it and make test failed three tests)."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Set-up and use: two commands", 1)[1].split("\n\n", 2)[1]
    commands = [l.split("#")[0].strip() for l in block.splitlines() if l.strip()]
    assert commands == ["make stress", "make test"], commands
    script = (REPO / "ci" / "matrix" / "bare-chroot.sh").read_text()
    steps = re.findall(r"^  step (\w+) (make \w+)", script, re.M)
    assert [cmd for _, cmd in steps] == commands, steps
    bare = re.search(r"^pkgs=\(([^)]*)\)", script, re.M).group(1).split()
    assert sorted(bare) == sorted("gcc g++ make cmake git python3 clang nodejs".split()), bare
    run = (REPO / "ci" / "matrix" / "run.sh").read_text()
    assert re.search(r"^\s+bare:readme:", run, re.M) and "bare-chroot.sh run" in run


# ---- -Werror: the project's builds, not a consumer's ---------------------------

def configured_flags(tmp_path, *args):
    b = tmp_path / "b"
    rc, out = run_bounded(["cmake", "-S", str(REPO), "-B", str(b), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *args],
                          120)
    assert rc == 0, out
    cmds = json.loads((b / "compile_commands.json").read_text())
    assert cmds
    return [c["command"] for c in cmds]


def test_consumer_build_has_no_werror(tmp_path):
    for cmd in configured_flags(tmp_path, "-DCMAKE_BUILD_TYPE=Release"):
        assert "-Werror" not in cmd and "-Wall" in cmd, cmd


def test_project_build_has_werror(tmp_path):
    for cmd in configured_flags(tmp_path, "-DTPHEAL_WERROR=ON"):
        assert "-Werror" in cmd, cmd


def test_make_and_gate_configure_with_werror():
    make = (REPO / "Makefile").read_text()
    assert re.search(r"^\s+cmake -S \. -B \$\(1\).*-DTPHEAL_WERROR=ON", make, re.M), "make's builds lack -Werror"
    gate = (REPO / "ci" / "gate.sh").read_text()
    assert len(re.findall(r"cmake -S \. -B .*-DTPHEAL_WERROR=ON", gate)) == 3, "a gate configure without -Werror"


# ---- the shared binary lookup ----------------------------------------------------

def test_binary_lookup_windows_layouts(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "EXE", ".exe")
    monkeypatch.setenv("TPHEAL_BUILD_CONFIG", "Release")
    d = tmp_path / "harness" / "scenario"
    (d / "Release").mkdir(parents=True)
    (d / "Release" / "tpheal-harness.exe").write_text("")
    assert conftest.binary("harness/scenario/tpheal-harness", tmp_path) == d / "Release" / "tpheal-harness.exe"
    monkeypatch.delenv("TPHEAL_BUILD_CONFIG")
    (d / "tpheal-harness.exe").write_text("")
    assert conftest.binary("harness/scenario/tpheal-harness", tmp_path) == d / "tpheal-harness.exe"


# ---- the clang MSVC-mode pass ----------------------------------------------------

def test_msvc_mode_pass_is_clean():
    """Every file of the Windows build, parsed as MSVC sees it with /W4's
    warnings mapped to clang's (about 8 s on 2 cores)."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None or shutil.which("clang") is None:
        pytest.skip("clang / mingw-w64 not installed (ci/deps.sh windows installs them)")
    build = conftest.build_dir() / "msvc-mode"
    rc, out = run_bounded([sys.executable, str(REPO / "ci" / "matrix" / "msvc_mode.py"), "--build", str(build)],
                          600, cwd=REPO)
    assert rc == 0, out[-8000:]
    assert re.search(r"msvc-mode: (\d{2,}) files, 0 with diagnostics", out), out


def test_msvc_mode_pass_catches_a_w4_warning(tmp_path):
    """The pass fails on a /W4 warning: a uint64_t to double conversion
    (C4244 measured on the Windows job, issue 11) in a file it checks."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None or shutil.which("clang") is None:
        pytest.skip("clang / mingw-w64 not installed (ci/deps.sh windows installs them)")
    sys.path.insert(0, str(REPO / "ci" / "matrix"))
    import msvc_mode
    src = tmp_path / "c4244.c"
    src.write_text("#include <stdint.h>\ndouble f(uint64_t x) { return x / 2.0; }\n")
    _, rc, out = msvc_mode.check(msvc_mode.clang(), {"file": str(src), "directory": str(tmp_path),
                                                      "command": "cc -c c4244.c"})
    assert rc != 0 and "implicit-int-float-conversion" in out, out


# ---- the failures, where the pull request shows them (ci/gate_annotate.py) -------

# A scenario that fails at its line 9 for every seed: the callback runs once.
FAILING = """# purpose: a fixture for the gate's annotations: fails on every seed
work W
thread A
  submit W
  wait W
end
# the next line is line 9
expect calls(W) == 1
expect calls(W) == 2
"""


def annotation_fixture(tmp_path):
    """A failing corpus run's JSON as test_scenarios.py keeps it, a stress
    result with a failure, and a sweep report with a survivor."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "fails.scn").write_text(FAILING)
    harness = conftest.binary("harness/scenario/tpheal-harness")
    rc, out = run_bounded([harness, "run", "scenarios/fails.scn", "--seeds", "3", "--json"], 60, cwd=tmp_path)
    assert rc == 1, out
    reports = tmp_path / "reports"
    (reports / "harness").mkdir(parents=True)
    (reports / "harness" / "fails.jsonl").write_text(out)
    build = tmp_path / "build"
    (build / "stress").mkdir(parents=True)
    (build / "stress" / "results.json").write_text(json.dumps({"failures": [{
        "scenario": "scenarios/fails.scn", "mode": "controlled", "status": "oracle", "line": 9,
        "reason": "line 9: expect `calls ( W ) == 2` failed (left 1, right 2)", "seed": 5,
        "replay": "h replay --seed 5 --strategy random scenarios/fails.scn",
        "replay_schedule": "h replay --schedule 'main:1.2.3.4.5.6.7.8.9' scenarios/fails.scn"}]}))
    (build / "sabotage").mkdir()
    (build / "sabotage" / "mutation-report.json").write_text(json.dumps({"files": {"core/src/healer.c": {
        "mutants": [
            {"id": "healer-recheck-dropped", "status": "Survived", "description": "the re-check dropped",
             "location": {"start": {"line": 142, "column": 5}}},
            {"id": "healer-lock-dropped", "status": "Killed", "description": "caught",
             "location": {"start": {"line": 140, "column": 5}}}]}}}))
    return reports, build


def test_gate_turns_failures_into_annotations_and_a_summary(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("ci/gate.sh needs bash")
    reports, build = annotation_fixture(tmp_path)
    summary = tmp_path / "summary.md"
    env = dict(os.environ, TPHEAL_GATE_REPORTS=str(reports), TPHEAL_GATE_BUILD=str(build),
               GITHUB_STEP_SUMMARY=str(summary))
    p = subprocess.run(["bash", "ci/gate.sh", "annotate"], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    errors = [l for l in p.stdout.splitlines() if l.startswith("::error ")]
    # the corpus run: every seed failed at line 9, one annotation with the count and a replay
    scn = [l for l in errors if l.startswith("::error file=scenarios/fails.scn,line=9,title=scenario failed%3A a check::")]
    assert len(scn) == 1, errors
    assert "line 9: expect `calls ( W ) == 2` failed (left 1, right 2) (3 failures here)" in scn[0], scn
    replay = scn[0].split("%0Areplay: ")[1]
    assert " replay --seed " in replay and replay.endswith(" scenarios/fails.scn"), replay
    # the printed command replays the failure where the harness ran
    q = subprocess.run(replay, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert q.returncode == 1 and "expect `calls ( W ) == 2` failed" in q.stdout, q.stdout + q.stderr
    # stress: the shorter of its two replay commands
    st = [l for l in errors if "title=stress controlled failed (oracle)" in l]
    assert len(st) == 1 and st[0].startswith("::error file=scenarios/fails.scn,line=9,"), errors
    assert st[0].endswith("%0Areplay: h replay --seed 5 --strategy random scenarios/fails.scn"), st
    # the surviving sabotage entry on its core/src line; the killed one is no annotation
    sab = [l for l in errors if l.startswith("::error file=core/src/healer.c,")]
    assert sab == ["::error file=core/src/healer.c,line=142,title=sabotage healer-recheck-dropped survived::"
                   "the re-check dropped"], errors
    assert len(errors) == 3, errors
    table = summary.read_text()
    assert "| where | what | replay |" in table and "`scenarios/fails.scn:9`" in table
    assert f"`{replay}`" in table and "`core/src/healer.c:142`" in table, table


def test_annotation_escapes_what_github_would_read_as_syntax():
    import gate_annotate as GA
    f = GA.Finding("a,b:c.scn", 3, "x, y: z", "100% done\nnext line")
    line = GA.annotation(f)
    assert line == "::error file=a%2Cb%3Ac.scn,line=3,title=x%2C y%3A z::100%25 done%0Anext line", line
