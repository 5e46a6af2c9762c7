"""Failures are data: every verdict reads a failure's kind, never its message.

A copy of the built harness has every failure message reworded in place --
each format string that scn_run_fail and the run's outcome write (found in
harness/scenario/*.c) is overwritten in the executable's bytes by the same
text in capitals, its conversions untouched, so the program is the one the
build made with other words in it (no rebuild, no test-only branch).  Then
the verdicts of the original and the reworded harness must be equal: the
sabotage sweep's class of a run (text report and JSON alike), run's kinds and
replay verdicts, stress-batch's kinds and stress-faultloop's acceptance of
every injected fault -- while the failure texts they read them from differ.
"""
import json
import pathlib
import re
import shutil
import sys

import pytest

from conftest import REPO, binary
import procs  # ci/: bounded child processes

sys.path.insert(0, str(REPO / "ci" / "sabotage"))
import sweep_kinds  # noqa: E402
import harness_json as HJ  # noqa: E402

SCENARIO_SOURCES = REPO / "harness" / "scenario"
# the functions whose format argument is a failure message (scn_run.c, and
# every check through scn_run_fail)
MESSAGE_CALL = re.compile(r"\b(?:scn_run_fail|outcome_fail)\s*\(")
LITERAL = re.compile(r'\s*"((?:[^"\\]|\\.)*)"')
CONVERSION = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[diouxXscpf%]")
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}

SCENARIOS = {
    # an expectation, an assert, an op's result and an op on a closed object
    "checks.scn": "# purpose: x\nwork W\nwork V\nthread A\n  submit W\n  wait W\n  close V => EINVAL\n"
                  "  close V\n  submit V\n  assert 1 == 2\nend\nexpect calls(W) == 2\n",
    # a deadlock nothing in the script waits in, and one where it does
    "deadlock.scn": "# purpose: x\nwork W\ncallback W\n  wait W\nend\nthread A\n  submit W\n  wait W\nend\n",
    "script-wait.scn": "# purpose: x\nthread A\n  await repair-ran\nend\n",
    # an expected outcome that did not happen
    "no-deadlock.scn": "# purpose: x\nwork W\nthread A\n  submit W\n  wait W\nend\nexpect deadlock\n",
}
# corpus scenarios whose expected outcome (misuse, fail-fast) is taken away
# or made wrong
FROM_CORPUS = {
    "misuse.scn": ("io-completion-without-start-misuse.scn", r"^expect misuse.*$", ""),
    "ended.scn": ("untracked-cancel-fail-fast.scn", r"^expect fail-fast.*$", ""),
    "wrong-end.scn": ("untracked-cancel-fail-fast.scn", r"^expect fail-fast.*$", "expect fail-fast no-such-word"),
}


def unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(0)), s)


def messages() -> list[str]:
    """The failure messages' format strings, as the executable holds them."""
    out = []
    for src in sorted(SCENARIO_SOURCES.glob("*.c")):
        text = src.read_text(encoding="utf-8")
        for m in MESSAGE_CALL.finditer(text):
            if text[m.start() - 5:m.start()].strip().endswith(("void", "*")):
                continue  # the definition or a declaration
            q = text.index('"', m.end())
            if text.find(";", m.end(), q) != -1:
                continue  # no literal in this call
            parts, pos = [], q
            while (lit := LITERAL.match(text, pos)):
                parts.append(lit.group(1))
                pos = lit.end()
            out.append(unescape("".join(parts)))
    return sorted(set(out), key=len, reverse=True)


def reworded(fmt: str) -> str:
    """The same message in capitals; its conversions (%llu, %s) kept."""
    keep = [(m.start(), m.end()) for m in CONVERSION.finditer(fmt)]
    chars = list(fmt)
    for i, c in enumerate(chars):
        if not any(a <= i < b for a, b in keep):
            chars[i] = c.upper()
    return "".join(chars)


def reword_binary(src: pathlib.Path, dst: pathlib.Path, fmts: list[str]) -> None:
    data = bytearray(src.read_bytes())
    for fmt in fmts:
        old, new = fmt.encode() + b"\0", reworded(fmt).encode() + b"\0"
        assert len(old) == len(new)
        at = data.find(old)
        assert at != -1, f"{src.name}: message {fmt!r} not found: reworded nothing"
        while at != -1:
            data[at:at + len(old)] = new
            at = data.find(old, at + len(old))
    dst.write_bytes(bytes(data))
    shutil.copymode(src, dst)


@pytest.fixture(scope="module")
def harnesses(tmp_path_factory):
    """(original dir, reworded dir): each with tpheal-harness and its
    fail-fast sibling side by side, as run expects them."""
    fmts = messages()
    assert len(fmts) >= 25, fmts  # every check and every outcome of the run
    d = tmp_path_factory.mktemp("failure-kinds")
    out = []
    for name in ("original", "reworded"):
        (d / name).mkdir()
        for prog in ("tpheal-harness", "tpheal-harness-failfast"):
            src = binary(f"harness/scenario/{prog}")
            if not src.is_file():
                pytest.fail(f"{src} missing: the default build makes it (make build)")
            dst = d / name / src.name
            if name == "original":
                shutil.copy2(src, dst)
            else:
                reword_binary(src, dst, fmts)
        out.append(d / name)
    scn = d / "scenarios"
    scn.mkdir()
    for f, text in SCENARIOS.items():
        (scn / f).write_text(text, encoding="utf-8")
    for f, (base, pat, repl) in FROM_CORPUS.items():
        text = (REPO / "scenarios" / base).read_text(encoding="utf-8")
        changed = re.sub(pat, repl, text, count=1, flags=re.M)
        assert changed != text, (base, pat)
        (scn / f).write_text(changed, encoding="utf-8")
    return out[0], out[1], scn


def call(exe_dir, *args, cwd):
    r = procs.run_bounded([str(exe_dir / "tpheal-harness"), *args], 300, cwd=cwd, merge=False)
    assert r.rc is not None, args
    return r.rc, r.out


def files(scn):
    return sorted(p.name for p in scn.glob("*.scn"))


def test_the_reworded_harness_says_other_words(harnesses):
    """The rewording reached every failure this file's verdicts are read
    from: otherwise the comparisons below could not fail."""
    orig, rew, scn = harnesses
    for f in files(scn):
        a = HJ.of_type(HJ.objects(call(orig, "run", f, "--seeds", "2", "--json", cwd=scn)[1]), "failure")
        b = HJ.of_type(HJ.objects(call(rew, "run", f, "--seeds", "2", "--json", cwd=scn)[1]), "failure")
        assert a and len(a) == len(b), f
        for x, y in zip(a, b):
            assert x["failures"] != y["failures"], (f, x["failures"])
            assert x["failures"].upper() == y["failures"].upper() or "blocked threads" in x["failures"], f


def verdicts_json(out):
    objs = HJ.objects(out)
    keep = ("failure", "seed", "strategy", "status", "kind", "kinds", "replayed")
    return ([{k: o[k] for k in keep} for o in HJ.of_type(objs, "failure")],
            [{k: o[k] for k in ("runs", "failures", "exercised", "reached")} for o in HJ.of_type(objs, "summary")])


def test_run_and_the_sweep_read_kinds_not_words(harnesses):
    orig, rew, scn = harnesses
    kinds = set()
    for f in files(scn):
        for args in (("--seeds", "3", "--strategy", "both", "--json"), ("--seeds", "3")):
            rc_a, out_a = call(orig, "run", f, *args, cwd=scn)
            rc_b, out_b = call(rew, "run", f, *args, cwd=scn)
            assert rc_a == rc_b == 1, (f, args, rc_a, rc_b)
            # the sweep's class, seed and schedules of the first catch
            assert sweep_kinds.parse_harness(rc_a, out_a) == sweep_kinds.parse_harness(rc_b, out_b), (f, args)
            kinds.add(sweep_kinds.parse_harness(rc_a, out_a)[1])
            if "--json" in args:
                va = verdicts_json(out_a)
                assert va == verdicts_json(out_b), f
                assert all(x["replayed"].startswith("reproduced") for x in va[0]), va
            else:
                replay = re.compile(r"^  (?:kind|status|replayed once by its schedule): .*$", re.M)
                assert replay.findall(out_a) == replay.findall(out_b), f
    # the scenarios above reach every class a scenario catcher can report
    assert kinds == {"oracle", "deadlock", "misuse", "fail-fast"}, kinds


def test_stress_reads_kinds_not_words(harnesses):
    orig, rew, scn = harnesses
    batch = ("stress-batch", "--mode", "controlled", "--base", "0x5", "--count", "6", "--strategy", "random")
    for f in ("checks.scn", "script-wait.scn", "deadlock.scn"):
        a = HJ.of_type(HJ.objects(call(orig, *batch, f, cwd=scn)[1]), "batch")[0]["failures"]
        b = HJ.of_type(HJ.objects(call(rew, *batch, f, cwd=scn)[1]), "batch")[0]["failures"]
        assert a and [(x["j"], x["status"], x["kind"]) for x in a] == [(x["j"], x["status"], x["kind"]) for x in b]
        if f == "checks.scn":  # (a deadlock's reason is the scheduler's)
            assert [x["reason"] for x in a] != [x["reason"] for x in b], f
    # every injected fault judged alike (the loop's acceptance reads the kinds
    # a fault may cause); the scenario's faults give both verdicts
    loop = ("stress-faultloop", "--seed", "0x5", "--max-sites", "60")
    for f in ("concurrent-cancels-out-of-order.scn", "healer-start-fails-then-retried.scn"):
        path = str(REPO / "scenarios" / f)
        sites = [HJ.of_type(HJ.objects(call(x, *loop, path, cwd=REPO)[1]), "fault-site") for x in (orig, rew)]
        key = [[(s["kind"], s["nth"], s["ok"], s["status"]) for s in x] for x in sites]
        assert key[0] and key[0] == key[1], f
        # faults whose failures the loop accepted: the judgement these compare
        # (the harness before the kinds judged by words, and the rewording
        # took 8 of concurrent-cancels-out-of-order's 16 sites from ok)
        assert any(s.get("accepted") for s in sites[0]), f
