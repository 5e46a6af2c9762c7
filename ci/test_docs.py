"""The docs against the tree (issue 13 item 8): the counts they state are
computed here from the tree, the CLI synopsis they quote is the harness's
own `help`, the output lines they quote match real output, and the README's
harness commands run as written.  A count is stated in one place each
(docs/scenarios.md: the corpus; docs/sabotage.md: the manifest; docs/stress.md:
how many the real pool declines), so adding a scenario or an entry fails this
file until that place is updated."""
import json
import re
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

sys.path.insert(0, str(REPO / "ci"))
import stress  # noqa: E402
import stress_results as R  # noqa: E402
from test_windows import model_only_features  # noqa: E402  (the independent reader)

DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
CORPUS = sorted((REPO / "scenarios").glob("*.scn"))


def text(name):
    return (REPO / name).read_text()


def harness():
    p = build_dir() / "harness" / "scenario" / "tpheal-harness"
    if not p.exists():
        pytest.fail(f"{p} is missing: build first (make test builds it)")
    return str(p)


def current_prose(path):
    """The doc without its history (`## Figures`, `## Findings`: dated
    measurements and findings keep the counts of their day)."""
    out, keep = [], True
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            keep = "Figures" not in line and "Findings" not in line
        if keep:
            out.append(line)
    return "\n".join(out)


def test_corpus_count_is_stated_once_and_matches_the_tree():
    m = re.findall(r"The corpus: (\d+) scenarios", text("docs/scenarios.md"))
    assert m == [str(len(CORPUS))], (m, len(CORPUS))


def test_manifest_count_matches_and_every_entry_is_documented():
    entries = json.loads(text("sabotage.json"))["sabotages"]
    doc = text("docs/sabotage.md")
    m = re.findall(r"^(\d+) entries:", doc, re.M)
    assert m == [str(len(entries))], (m, len(entries))
    missing = [e["name"] for e in entries if f"`{e['name']}`" not in doc]
    assert not missing, f"docs/sabotage.md does not name {missing}"


def test_every_current_count_of_the_corpus_matches():
    """`N of the M scenarios ...` outside dated figures: M is the corpus, and
    the real pool's declined/runnable split is what the independent reader of
    the scenario texts says (ci/test_windows.py)."""
    declined = sum(1 for f in CORPUS if model_only_features(f))
    seen = 0
    for path in DOCS:
        prose = current_prose(path)
        for n, m in re.findall(r"(\d+) of the (\d+) scenarios", prose):
            seen += 1
            assert int(m) == len(CORPUS), f"{path.name}: '{n} of the {m} scenarios' (corpus {len(CORPUS)})"
        for n, m, r in re.findall(r"(\d+) of the (\d+) scenarios are declined, (\d+) run", prose):
            assert (int(n), int(r)) == (declined, len(CORPUS) - declined), \
                f"{path.name}: {n} declined, {r} run; the scenario texts say {declined}, {len(CORPUS) - declined}"
    assert seen >= 1  # the statement docs/stress.md makes


def test_cli_synopsis_in_the_docs_is_the_harness_help():
    out = subprocess.run([harness(), "help"], capture_output=True, text=True).stdout
    synopsis = out.split("\n\n")[0].strip("\n")
    blocks = re.findall(r"```\n(usage: tpheal-harness .*?)\n```", text("docs/scenarios.md"), re.S)
    assert blocks == [synopsis]


def test_quoted_output_lines_match_real_output(tmp_path):
    h = harness()
    doc = text("docs/scenarios.md")
    # the per-scenario line, from its template in the docs
    tmpl = re.search(r"`(PASS\|FAIL path runs=N failures=N schedules/s=R steps/run=S interleavings=I classes=C)`", doc)
    assert tmpl, "docs/scenarios.md: the PASS|FAIL line template"
    rx = re.escape(tmpl.group(1)).replace(r"PASS\|FAIL", "(PASS|FAIL)").replace("path", r"\S+") \
        .replace("=N", r"=\d+").replace("=R", r"=[\d.]+").replace("=S", r"=\d+").replace("=I", r"=\d+") \
        .replace("=C", r"=\d+")
    rx = rx.replace(r"\ ", " +")
    scn = str(REPO / "scenarios" / "concurrent-cancels-out-of-order.scn")
    out = subprocess.run([h, "run", scn, "--seeds", "5"], capture_output=True, text=True).stdout
    assert re.search("^" + rx + "$", out, re.M), (rx, out)
    # the report's trace heading and records, as quoted
    f = tmp_path / "x.scn"
    f.write_text("# purpose: a deliberately false expectation\nwork W\nthread A\n  submit W\n  wait W\nend\n"
                 "expect calls(W) == 2\n")
    rep = subprocess.run([h, "run", str(f), "--seed", "3"], capture_output=True, text=True).stdout
    quoted = re.search(r"```\n(  trace up to the first failing check .*?)\n```", doc, re.S).group(1)
    for line in quoted.splitlines():
        assert line in rep.splitlines(), (line, rep)
    # docs/stress.md's summary phrase is what the driver prints
    res = R.Results()
    res.mode("s.scn", "controlled").failures = 54865
    res.failures = [{"scenario": "s.scn", "mode": "controlled"}] * 320
    assert stress.failures_phrase(res) in text("docs/stress.md")


def test_readme_harness_commands_run_as_written():
    cmds = re.findall(r"(build/harness/scenario/tpheal-harness [^`#\n]*?)\s*(?:`|#|$)", text("README.md"), re.M)
    cmds = [c for c in cmds if "realpool" not in c]
    assert any(" replay --seed " in c for c in cmds), cmds
    for c in cmds:
        c = c.replace("build/harness/", f"{build_dir()}/harness/", 1)
        p = subprocess.run(c, shell=True, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, (c, p.stdout[-2000:], p.stderr[-2000:])


def test_every_rule_row_names_guards_that_exist():
    """docs/architecture.md's rule table: every row says which test fails
    when its rule is broken, and every unit case or scenario it names exists
    (a renamed test cannot leave the table pointing at nothing)."""
    t = text("docs/architecture.md")
    table = t[t.index("| rule | definition | callers | guarded by"):]
    rows = [r for r in table.split("\n\n", 1)[0].splitlines()[2:] if r.startswith("|")]
    assert len(rows) >= 20, rows
    for row in rows:
        guards = re.findall(r"`([^`]+)`", row.rstrip(" |").rsplit(" | ", 1)[1])
        assert guards, f"a rule with no guard: {row[:100]}"
        for g in guards:
            if g.startswith("control-"):
                continue  # a sabotage control, named to say why a detail is unobservable
            if g.startswith("scenarios/"):
                assert (REPO / g).is_file(), f"{g} named as a guard is not in the corpus"
                continue
            prog, _, fn = g.partition(":")
            src = REPO / "core" / "tests" / f"{prog}.c"
            assert src.is_file(), f"{prog} named as a guard is not a unit program in core/tests"
            if fn:
                assert re.search(rf"\bstatic void {re.escape(fn)}\(void \*\*state\)", src.read_text()), \
                    f"{g}: no such case in {src.name}"


def test_harness_includes_no_private_core_header_but_the_seam():
    """docs/architecture.md's layers: the harness reaches the core through its
    public headers; of core/src it may include only the seam it implements
    (os.h) and, in the model's pool backend and the checker's run, the reset
    that ends a simulated process (process_state.h).  scn_run.c once read tph_object's fields."""
    private = {p.name for p in (REPO / "core" / "src").glob("*.h")}
    allowed = {"os.h": None,
               "process_state.h": {"harness/scenario/pool/model.c", "harness/check/check_run.c"}}
    bad = []
    for f in sorted((REPO / "harness").rglob("*.[ch]")):
        rel = f.relative_to(REPO).as_posix()
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read_text(errors="replace"), re.M):
            name = inc.rsplit("/", 1)[-1]
            if inc.endswith(".c"):
                bad.append(f"{rel}: includes {inc}")  # a source file inside another
            elif name in private and not (REPO / f.parent / inc).is_file() and \
                    not (name in allowed and (allowed[name] is None or rel in allowed[name])):
                bad.append(f"{rel}: includes core/src/{name}")
    assert bad == [], bad
