"""tpheal-harness generate (docs/generate.md): one (seed, index) names one
program byte for byte, every drawn program is legal and passes on the
unmutated core, bad options are one line and exit 2, and a slip of the core
(ci/gen/slips.json) is found and shrunk to a short scenario whose replay
command reproduces it."""
import json
import re
import subprocess
import sys

import pytest

from conftest import REPO, binary

sys.path.insert(0, str(REPO / "ci"))
sys.path.insert(0, str(REPO / "ci" / "gen"))
import harness_json as HJ  # noqa: E402
import slips as SL  # noqa: E402


def harness():
    exe = binary("harness/scenario/tpheal-harness")
    if not exe.is_file():
        pytest.fail(f"{exe} missing: the default build makes it (make build)")
    return str(exe)


def gen(*args, timeout=600):
    return subprocess.run([harness(), "generate", *args], capture_output=True, text=True, cwd=REPO, timeout=timeout)


def programs(text):
    """The printed programs, split at their purpose lines."""
    parts = re.split(r"(?m)^(?=# purpose: )", text)
    return [p for p in parts if p]


def test_same_seed_same_program_byte_for_byte():
    a, b = gen("--seed", "7", "--programs", "40", "--print"), gen("--seed", "7", "--programs", "40", "--print")
    assert a.returncode == 0 and a.stdout == b.stdout
    progs = programs(a.stdout)
    assert len(progs) == 40 and len(set(progs)) == 40
    # one index alone is the same program: the streams do not depend on the
    # programs drawn before them
    one = gen("--seed", "7", "--first", "23", "--programs", "1", "--print")
    assert one.stdout == progs[23]
    assert progs[23].startswith("# purpose: generated program 7/23\n")
    other = gen("--seed", "8", "--programs", "40", "--print")
    assert other.stdout != a.stdout


def test_programs_cover_the_surface():
    """The space docs/generate.md describes is drawn: every object kind,
    every release mode, faults, knobs and callbacks appear in 300 programs."""
    text = gen("--seed", "1", "--programs", "300", "--print").stdout
    for word in ("\nwork ", "\nwait ", "\ntimer ", "\nperiodic ", "\nio ", "\ngroup ", " in G", "cancel-callback",
                 "release G", " draining", " cancelling", " untracked", "try_cancel_pending", "cancel_untracked",
                 "cancel_pending", "stop_and_drain", "run_down", "io_cancel", "complete", "retire_workers",
                 "retire_idle", "\n  tick", "fault healer-start", "fault work-create", "stall always", "stall never",
                 "start-delay 1ms", " max ", " min ", "\ncallback ", " window ", " timeout "):
        assert word in text, f"no program of 300 has {word!r}"


def test_every_program_is_legal_and_passes_on_the_unmutated_core(tmp_path):
    """generate checks each drawn program against its legality rules (a
    broken one is exit 1) and runs it under every oracle; 300 programs x 4
    seeds x random and PCT pass.  The 10,000-program figure is in
    docs/generate.md."""
    p = gen("--seed", "11", "--programs", "300", "--json")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    summary = HJ.of_type(HJ.objects(p.stdout), "generate-summary")
    assert summary and summary[0]["programs"] == 300 and summary[0]["failing_programs"] == 0
    assert summary[0]["runs"] == 300 * 4 * 2
    # and each is an ordinary scenario: `run` takes it as it is
    prog = programs(gen("--seed", "11", "--first", "5", "--programs", "1", "--print").stdout)[0]
    f = tmp_path / "gen-11-5.scn"
    f.write_text(prog)
    r = subprocess.run([harness(), "run", str(f), "--seeds", "20", "--strategy", "both"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:]


@pytest.mark.parametrize("args", [
    ["--programs", "0"], ["--programs", "x"], ["--programs"], ["--seed", "-1"], ["--seed", "1e3"],
    ["--strategy", "dfs"], ["--seconds", "0"], ["--depth", "0"], ["--bogus"], ["--out"],
    ["--first", "18446744073709551615", "--programs", "2"],
])
def test_bad_options_are_one_line_and_exit_two(args):
    p = gen(*args)
    assert p.returncode == 2, (args, p.returncode, p.stdout)
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("tpheal-harness generate: "), p.stderr


# The two slips, each failing a different oracle of the runner
# (one healer; the mark after the cancelling call), with the words of the check.
SLIPS = {"healer-start-without-recheck": "exactly one healer",
         "group-marks-before-release": "marks its pool after the call"}
# the failure kind each slip's generate-failure states (what the sabotage
# sweep's generate catcher reads, never the signature's prose)
SLIP_KINDS = {"healer-start-without-recheck": "oracle-healers",
              "group-marks-before-release": "oracle-mark-order"}


@pytest.fixture(scope="module", params=sorted(SLIPS))
def slipped(request, tmp_path_factory):
    """A slip built into a copy of HEAD (ci/gen/slips.py's machinery: git
    archive, the sabotage-style find/replace, ccache): about a minute each."""
    root = tmp_path_factory.mktemp("slip")
    SL.copy_tree(root)
    slip = next(s for s in SL.load() if s["name"] == request.param)
    SL.apply(root, slip)
    return SL.build(root), root, SLIPS[request.param], SLIP_KINDS[request.param]


def test_a_slip_is_found_and_shrunk_to_a_scenario_that_replays(slipped):
    exe, root, words, kind = slipped
    out = root / "out"
    out.mkdir()
    r, objs = SL.run_generate(exe, 0, 200, 60, out, bound=900)
    assert r.rc == 1, r.out[-3000:]
    fails = HJ.of_type(objs, "generate-failure")
    assert len(fails) == 1
    f = fails[0]
    assert HJ.problems(f) == [], HJ.problems(f)
    assert words in f["signature"]
    assert (f["status"], f["kind"], f["kinds"][0]) == ("ok", kind, kind), f
    assert f["runs"] >= 1
    assert f["shrunk_lines"] <= 25 and f.get("preemptions", 99) <= 3, f
    shrunk = out / f"gen-0-{f['index']}-shrunk.scn"
    assert shrunk.read_text() == f["shrunk"]
    assert f["shrunk"].startswith(f"# purpose: generated program 0/{f['index']}, shrunk\n")
    # the printed replay command reproduces the failure on the slipped build ...
    rep = subprocess.run(f["shrunk_replay"], shell=True, capture_output=True, text=True, timeout=300)
    assert rep.returncode == 1 and words in rep.stdout, rep.stdout[-2000:]
    # ... and the shrunk scenario passes on the unmutated core: it pins the slip
    ok = subprocess.run([harness(), "run", str(shrunk), "--seeds", "100", "--strategy", "both"],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stdout[-2000:]


def test_the_slips_manifest_applies_to_the_tree(tmp_path):
    """Every slip's text is in the file it names, once: a slip the code moved
    away from is an error, not a slip found by nothing."""
    for s in SL.load():
        text = (REPO / s["file"]).read_text()
        for find in s["find"]:
            assert text.count(find) == 1, (s["name"], text.count(find))
        assert len(s["find"]) == len(s["replace"]) and s["why"]
    assert json.loads((REPO / "ci" / "gen" / "slips.json").read_text())["slips"]
