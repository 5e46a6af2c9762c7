"""Generated mutants (ci/sabotage/mutagen.py, ci/sabotage/mutants.py): the
generator on small C snippets, the diff filter, and whole runs against the
fixture project (ci/sabotage/tests_fixture) -- killed, survived,
equivalent and compile-error classification, the score and the report."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import committed_copy, git

REPO = pathlib.Path(__file__).resolve().parent.parent
SAB = REPO / "ci" / "sabotage"
sys.path.insert(0, str(SAB))
import mutagen  # noqa: E402
import mutants  # noqa: E402
import report as rp  # noqa: E402

FIXTURE = SAB / "tests_fixture"
PY = sys.executable

SNIPPET = """\
#include <stdio.h>
#define LIMIT (a < b)
static tph_os_mutex lock_;
static int table[4];
/* if (a < b) return a + 1; -- a comment */
int f(int a, int b, volatile uint32_t *c)
{
    int n = 3;
    const char *s = "a < b + 1;";
    tph_os_mutex_lock(&lock_);
    n += a * 2;
    g(n);
    tph_os_mutex_unlock(&lock_);
    if (a < b && b != 0)
        n--;
    n = tph_os_load32(c) + n;
    tph_os_store32(c, n);
    return n / b;
}
#if TPHEAL_SELF_HEAL
int live(int x) { return x == 1; }
#else
int dead(int x) { return x == 1; }
#endif
#if defined(_MSC_VER)
int msvc(int x) { return x != 1; }
#endif
"""


def gen(text=SNIPPET, rel="x.c"):
    return mutagen.generate(rel, text)


def by_id(ms):
    return {m.id: m for m in ms}


def test_generator_is_deterministic_and_ids_are_stable():
    a, b = gen(), gen()
    assert [m.id for m in a] == [m.id for m in b]
    assert [m.after for m in a] == [m.after for m in b]
    ids = [m.id for m in a]
    assert len(set(ids)) == len(ids)
    assert ids == [m.id for m in sorted(a, key=lambda m: (m.line, m.col, mutagen.OPERATORS.index(m.operator)))]
    # an id is file:line:col:operator, and the position is where the change is
    for m in a:
        f, line, col, op = m.id.split(":")
        assert (f, int(line), int(col), op) == (m.file, m.line, m.col, m.operator)
    # editing a line elsewhere leaves the other ids alone (ids are positions)
    c = gen(SNIPPET.replace("    g(n);", "    g(n + 0);"))
    assert {m.id for m in a if m.line != 12} == {m.id for m in c if m.line != 12}
    # every mutant has a key of the documented form, unique in its file
    keys = [m.key for m in a]
    assert len(set(keys)) == len(keys)
    assert all(mutagen.KEY_RE.match(k) and k.startswith(f"x.c:{m.operator}:") for k, m in zip(keys, a))


def test_a_key_survives_lines_inserted_above_and_a_position_does_not():
    """Equivalence notes are keyed: an edit above the mutant (or re-indenting
    it) must not make its note stale, nor point it at another mutant."""
    a = gen()
    moved = SNIPPET.replace("int f(int a, int b, volatile uint32_t *c)\n{\n",
                            "int f(int a, int b, volatile uint32_t *c)\n{\n    h();\n")
    b = gen(moved)
    key_a = {m.key: m for m in a}
    key_b = {m.key: m for m in b if "h();" not in "".join(m.before)}
    assert set(key_a) == set(key_b)
    swap = by_id(a)["x.c:11:5:stmt-swap"]
    assert key_b[swap.key].id == "x.c:12:5:stmt-swap"  # the same swap, a line down
    assert by_id(b)["x.c:11:5:stmt-swap"].key != swap.key  # its old position is another mutant
    # re-indenting the mutated lines keeps the key too (whitespace-normalized)
    c = gen(SNIPPET.replace("    n += a * 2;", "\t n  +=  a * 2;"))
    assert {m.key for m in c} == set(key_a)


def test_a_key_changes_when_the_mutated_statement_changes():
    a = by_id(gen())
    b = by_id(gen(SNIPPET.replace("    n += a * 2;", "    n += a * 4;")))
    for i in ("x.c:11:7:arith", "x.c:11:5:stmt-delete", "x.c:11:5:stmt-swap"):
        assert a[i].key != b[i].key, i  # same position, another statement: another key
    assert a["x.c:10:5:stmt-swap"].key != b["x.c:10:5:stmt-swap"].key  # a swap with it, too
    assert a["x.c:12:5:call-delete"].key == b["x.c:12:5:call-delete"].key  # its neighbour's own: not


def test_duplicate_statements_get_distinct_numbered_keys_in_file_order():
    text = ("void f(void)\n{\n    x = 1;\n    g();\n}\nvoid k(void)\n{\n    x = 1;\n    h();\n"
            "    x = 1;\n}\n")
    ms = mutagen.generate("d.c", text)
    dels = [m for m in ms if m.operator == "stmt-delete" and m.before == ["    x = 1;"]]
    base = dels[0].key
    assert [m.key for m in dels] == [base, base + "#2", base + "#3"]
    assert [m.line for m in dels] == [3, 8, 10]
    assert [m.key for m in mutagen.generate("d.c", text)] == [m.key for m in ms]  # deterministic
    # the bare hash is the statement's, shared by the three; another file's differs
    assert base == "d.c:stmt-delete:" + mutagen.statement_hash(["    x = 1;"], [""])
    assert mutagen.generate("e.c", text)[0].key.startswith("e.c:")


def test_each_operator_on_the_snippet():
    ms = by_id(gen())
    after = {i: m.after for i, m in ms.items()}
    assert after["x.c:14:11:rel-boundary"] == ["    if (a <= b && b != 0)"]
    assert after["x.c:14:11:rel-negate"] == ["    if (a >= b && b != 0)"]
    assert after["x.c:14:20:rel-negate"] == ["    if (a < b && b == 0)"]
    assert after["x.c:14:15:logical"] == ["    if (a < b || b != 0)"]
    assert after["x.c:11:7:arith"] == ["    n -= a * 2;"]
    assert after["x.c:11:14:const+1"] == ["    n += a * 3;"]
    assert after["x.c:11:14:const-1"] == ["    n += a * 1;"]
    assert after["x.c:15:10:arith"] == ["        n++;"]
    assert after["x.c:18:14:arith"] == ["    return n * b;"]
    assert after["x.c:12:5:call-delete"] == [""]
    assert after["x.c:10:5:lock-delete"] == [""] and after["x.c:13:5:lock-delete"] == [""]
    assert after["x.c:11:5:stmt-delete"] == [""]
    assert after["x.c:16:9:atomic-plain"] == ["    n = (*(c)) + n;"]
    assert after["x.c:17:5:atomic-plain"] == ["    (void)(*(c) = (n));"]
    assert ms["x.c:11:5:stmt-swap"].after == ["    g(n);", "    n += a * 2;"]
    assert ms["x.c:11:5:stmt-swap"].before == ["    n += a * 2;", "    g(n);"]
    # every operator the generator has is exercised here
    assert {m.operator for m in ms.values()} == set(mutagen.OPERATORS)


def test_comments_strings_preprocessor_declarations_and_dead_branches_are_left_alone():
    ms = gen()
    lines = {m.line for m in ms}
    assert not lines & {1, 2, 3, 4, 5, 9}, sorted(lines)  # pp, decl, comment, string, array size
    assert 21 in lines  # the live #if TPHEAL_SELF_HEAL branch
    assert not lines & {23, 26}  # !TPHEAL_SELF_HEAL and _MSC_VER: no build compiles them
    # an unbraced if body is not deleted (that would make the next line its body)
    assert "x.c:15:9:stmt-delete" not in by_id(ms)
    # `int n = 3;` is a declaration: its constant is mutated, the line never deleted
    assert "x.c:8:13:const+1" in by_id(ms) and not any(m.line == 8 and m.operator.endswith("delete")
                                                       for m in ms)


def test_apply_and_stale():
    m = by_id(gen())["x.c:11:5:stmt-swap"]
    out = m.apply(SNIPPET).split("\n")
    assert out[10:12] == ["    g(n);", "    n += a * 2;"]
    assert len(out) == len(SNIPPET.split("\n"))
    assert m.apply(SNIPPET.replace("    g(n);", "    h(n);")) is None


def test_the_core_sources_give_mutants_of_every_family():
    text = (REPO / "core" / "src" / "registry.c").read_text()
    ms = mutagen.generate("core/src/registry.c", text)
    ops = {m.operator for m in ms}
    assert {"rel-negate", "lock-delete", "atomic-plain", "stmt-swap", "call-delete"} <= ops, ops
    for m in ms:  # each mutant changes its file and applies cleanly
        assert m.apply(text) not in (None, text), m.id


DIFF = """\
diff --git a/lib/lib.c b/lib/lib.c
--- a/lib/lib.c
+++ b/lib/lib.c
@@ -9 +9 @@ int fx_add(int a, int b)
-    return a + b;
+    return b + a;
@@ -20,0 +21,2 @@ int fx_check(unsigned seed)
+    int y = 0;
+    (void)y;
diff --git a/gone.c b/gone.c
--- a/gone.c
+++ /dev/null
@@ -1,3 +0,0 @@
-x
"""


def test_changed_lines_from_a_zero_context_diff():
    ch = mutagen.changed_lines(DIFF)
    assert ch == {"lib/lib.c": {9, 21, 22}}
    m = mutagen.Mutant("lib/lib.c:8:14:arith", "lib/lib.c", 9, 14, "arith", 9, 9, ["a"], ["b"])
    assert mutagen.on_changed_lines(m, ch)
    m2 = mutagen.Mutant("lib/lib.c:8:1:stmt-swap", "lib/lib.c", 8, 1, "stmt-swap", 8, 9, ["a", "b"],
                        ["b", "a"])
    assert mutagen.on_changed_lines(m2, ch)  # a swap touching a changed line
    m3 = mutagen.Mutant("lib/lib.c:12:1:arith", "lib/lib.c", 12, 1, "arith", 12, 12, ["a"], ["b"])
    assert not mutagen.on_changed_lines(m3, ch)
    assert not mutagen.on_changed_lines(m3, {})


def test_sample_is_deterministic_and_uniform_in_draw_order():
    xs = list(range(100))
    a = mutants.sample(xs, 10, 7)
    assert a == mutants.sample(xs, 10, 7) and len(set(a)) == 10
    assert a != mutants.sample(xs, 10, 8)
    assert mutants.sample(xs, None, 1) == xs
    assert sorted(mutants.sample(xs, 500, 1)) == xs


def test_glob_is_per_path_component():
    assert mutants.glob_match("core/src/registry.c", "core/src/*.c")
    assert not mutants.glob_match("core/src/win/os_win32.c", "core/src/*.c")
    assert mutants.glob_match("core/src/win/os_win32.c", "core/src/*/*.c")


# ------------------------------------------------------------ fixture runs
@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    return committed_copy(FIXTURE, tmp_path_factory.mktemp("mutfixture") / "repo")


def run_mutants(fx, tmp, *args):
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--checkout", str(fx), "--files", "lib/*.c",
                        "--config", str(fx / "sabotage.json"), "--seeds", "20",
                        "--work", str(tmp / "work"), "--out", str(tmp / "out"), *args],
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


# Notes by key, as written by hand: the keys of fx_check's mutants (the
# literals also pin the hash, which every note in the project depends on).
# The static assertion's mutants need no note: they compile to the same
# object code (same-object-code, below).
EQUIV = """\
# key  reason
# rel-boundary: return seed < 1000000u;  ->  <= 1000000u
lib/lib.c:rel-boundary:70426a9f77ac  the harness calls fx_check with seeds below 1000, never at the bound
lib/lib.c:const+1:ebb7be2eda87  the harness calls fx_check with seeds below 1000, never at the bound
lib/lib.c:const-1:28427aeab0cb  the harness calls fx_check with seeds below 1000, never at the bound
"""


def fixture_keys():
    """{id: key} of the fixture's mutants, as generated today."""
    return {m.id: m.key for rel in ("lib/lib.c", "lib/lib_win32.c")
            for m in mutagen.generate(rel, (FIXTURE / rel).read_text())}


@pytest.fixture(scope="module")
def fx_mut(fx, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutrun")
    eq = tmp / "equivalent.txt"
    eq.write_text(EQUIV)
    rc, out, err = run_mutants(fx, tmp, "--equivalent", str(eq))
    rows = json.loads((tmp / "out" / "results.json").read_text())
    results = {r["id"]: r for r in rows}
    score = json.loads((tmp / "out" / "score.json").read_text())
    return dict(rc=rc, out=out, err=err, results=results, rows=rows, score=score, out_dir=tmp / "out")


def test_fixture_kill_survive_and_compile_error(fx_mut):
    r = fx_mut["results"]
    assert fx_mut["rc"] == 0, fx_mut["out"] + fx_mut["err"]
    assert r["lib/lib.c:8:14:arith"]["outcome"] == "caught"            # a - b: test_add
    assert r["lib/lib.c:8:14:arith"]["catcher"] == "unit:test_add"
    assert r["lib/lib.c:21:17:rel-negate"]["catcher"].startswith("scenario:")  # every seed fails
    assert r["lib/lib.c:26:14:arith"]["outcome"] == "survived"         # fx_unused: no test
    assert r["lib/lib.c:4:28:rel-negate"]["outcome"] == "does-not-compile"
    s = fx_mut["score"]
    # 19 mutants: 5 killed, 1 compile error, 3 equivalent, 6 same object code, 4 survived
    assert (s["population"], s["ran"]) == (19, 19), s
    assert (s["killed"] + s["timeout"], s["survived"], s["equivalent"], s["same-object-code"],
            s["compile-error"]) == (5, 4, 3, 6, 1), s
    assert s["score"] == round(100 * 5 / 9, 1)


def test_fixture_same_object_code_runs_no_catcher(fx_mut):
    """Trivial compiler equivalence: the static assertion's two mutants that
    still hold compile to the original's bytes, and lib_win32.c is compiled
    by no build here; none of them costs a catcher run or a note."""
    r = fx_mut["results"]
    same = {i for i, x in r.items() if x["outcome"] == "same-object-code"}
    assert same == {"lib/lib.c:4:28:rel-boundary", "lib/lib.c:4:31:const+1", "lib/lib.c:4:31:const-1",
                    "lib/lib_win32.c:5:14:arith", "lib/lib_win32.c:5:16:const+1",
                    "lib/lib_win32.c:5:16:const-1"}, same
    assert all(r[i]["ran"] == [] for i in same)
    assert "trivial compiler equivalence" in r["lib/lib.c:4:31:const+1"]["summary"]
    assert "no build here compiles this file" in r["lib/lib_win32.c:5:14:arith"]["summary"]
    # a change the compiler keeps is run as usual, whatever its size
    assert r["lib/lib.c:26:16:const-1"]["outcome"] == "survived"  # x * 1: code differs
    assert r["lib/lib.c:8:14:arith"]["outcome"] == "caught"


def test_fixture_notes_by_key_are_applied(fx_mut):
    """The three notes, written with keys, make exactly those three
    survivors equivalent; results carry each mutant's id and key."""
    keys = fixture_keys()
    eq = {r["id"] for r in fx_mut["rows"] if r["outcome"] == "survived"
          and r["key"] in mutants.load_equivalent(fx_mut["out_dir"].parent / "equivalent.txt")}
    assert eq == {"lib/lib.c:21:17:rel-boundary", "lib/lib.c:21:19:const+1", "lib/lib.c:21:19:const-1"}
    assert all(r["key"] == keys[r["id"]] for r in fx_mut["rows"])
    assert fx_mut["score"]["equivalent"] == 3
    assert "names no mutant" not in fx_mut["err"]  # no note is stale
    progress = [json.loads(l) for l in (fx_mut["out_dir"] / "progress.jsonl").read_text().splitlines()]
    assert {(r["id"], r["key"]) for r in progress} == set(keys.items())


def test_fixture_survivors_listed_with_diffs(fx_mut):
    text = (fx_mut["out_dir"] / "survivors.txt").read_text()
    k = fixture_keys()
    # the header gives the key to paste into equivalent.txt, then the position
    assert f"=== {k['lib/lib.c:26:14:arith']}  (lib/lib.c:26:14:arith)  [NOT KILLED]" in text
    assert "-    return x * 2;\n+    return x / 2;" in text
    assert (f"=== {k['lib/lib.c:21:19:const+1']}  (lib/lib.c:21:19:const+1)  "
            "[equivalent: the harness calls fx_check") in text
    # the equivalent ones are not printed as survivors on stdout
    assert f"=== {k['lib/lib.c:26:14:arith']}  (lib/lib.c:26:14:arith): survived" in fx_mut["out"]
    assert "(lib/lib.c:21:19:const+1): survived" not in fx_mut["out"]


def test_fixture_stops_at_the_first_kill_cheapest_first(fx_mut):
    r = fx_mut["results"]["lib/lib.c:8:14:arith"]
    # the run ended at the catch: nothing after it, the sanitizer build untouched
    assert len(r["catchers"]) == 1 and r["ran"][-1] == "unit:test_add", r
    assert not any(x.startswith("asan:") for x in r["ran"]), r
    # a survivor ran the whole suite: units, scenarios at both strategies, the sanitizer build
    ran = fx_mut["results"]["lib/lib.c:26:14:arith"]["ran"]
    assert {"unit:test_add", "scenario:basic.scn", "asan:test_add", "asan:test_spin"} <= set(ran), ran
    assert ran.index("asan:test_add") > ran.index("scenario:basic.scn")


def test_fixture_report_is_stryker_schema(fx_mut):
    if not rp.SCHEMA.exists():  # as test_sabotage.py's npm_packages: pinned by the lock file
        assert shutil.which("npm"), "npm is needed for the report schema (ci/deps.sh node installs it; make test runs that)"
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=SAB, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((fx_mut["out_dir"] / "mutation-report.json").read_text())
    assert rp.validate_report(rep) == []
    # the report names a mutant by key (stable across commits); location is today's
    k = fixture_keys()
    muts = {m["id"]: m for f in rep["files"].values() for m in f["mutants"]}
    assert set(muts) == set(k.values())
    assert muts[k["lib/lib.c:8:14:arith"]]["status"] == "Killed"
    assert muts[k["lib/lib.c:8:14:arith"]]["location"]["start"] == {"line": 8, "column": 14}
    assert muts[k["lib/lib.c:26:14:arith"]]["status"] == "Survived"
    assert muts[k["lib/lib.c:4:28:rel-negate"]]["status"] == "CompileError"
    assert muts[k["lib/lib.c:8:14:arith"]]["mutatorName"] == "arith"


def test_fixture_fail_under(fx, tmp_path):
    rc, out, err = run_mutants(fx, tmp_path, "--only", "lib/lib.c:26:14:arith", "--fail-under", "90")
    assert rc == 1 and "score 0.0%" in out, out + err
    # --only takes a key as well as an id
    key = fixture_keys()["lib/lib.c:8:14:arith"]
    rc, out, err = run_mutants(fx, tmp_path, "--only", key, "--fail-under", "90")
    assert rc == 0 and "score 100.0%" in out and "1 run of 19" in out, out + err


def test_fixture_run_warns_of_a_stale_note(fx, tmp_path):
    """A note whose statement changed names no mutant: the run says so (the
    note is judged again, not silently dropped or moved)."""
    eq = tmp_path / "eq.txt"
    eq.write_text("lib/lib.c:arith:000000000000  judged on a statement since edited\n"
                  "lib/lib.c:const+1:ec208babef8f  sizeof(int) >= 3 on every target\n")
    rc, out, err = run_mutants(fx, tmp_path, "--only", "lib/lib.c:8:14:arith", "--equivalent", str(eq))
    assert rc == 0, out + err
    assert "equivalence note lib/lib.c:arith:000000000000 names no mutant" in err, err
    assert "ec208babef8f" not in err


def test_fixture_diff_keeps_only_changed_lines(fx, tmp_path):
    d = tmp_path / "repo"
    shutil.copytree(fx, d)
    lib = d / "lib" / "lib.c"
    lib.write_text(lib.read_text().replace("    return x * 2;", "    return x * 2 + 0;"))
    git(d, "-c", "user.email=m@test", "-c", "user.name=m", "commit", "-qam", "change")
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--checkout", str(d), "--files", "lib/*.c",
                        "--diff", "HEAD~1", "--list"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    ids = [l.split("\t")[0] for l in p.stdout.splitlines()]
    assert ids and all(i.startswith("lib/lib.c:26:") for i in ids), ids
    # --list gives id, key, change
    assert [l.split("\t")[1] for l in p.stdout.splitlines()] == [
        m.key for m in mutagen.generate("lib/lib.c", lib.read_text()) if m.line == 26]
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--checkout", str(d), "--files", "lib/*.c",
                        "--diff", "HEAD", "--list"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "", p.stdout


def test_layers_judge_by_the_chosen_layers_alone(fx, tmp_path):
    """--layers unit: the mutant only a scenario catches survives, the units'
    kill stays, and nothing of another layer ran (the generate layer alone is
    measured so: docs/generate.md, "As a catcher")."""
    rc, out, err = run_mutants(fx, tmp_path, "--layers", "unit", "--only", "lib/lib.c:21:17:rel-negate",
                               "--only", "lib/lib.c:8:14:arith")
    assert rc == 0, out + err
    r = {x["id"]: x for x in json.loads((tmp_path / "out" / "results.json").read_text())}
    assert r["lib/lib.c:21:17:rel-negate"]["outcome"] == "survived", r
    assert r["lib/lib.c:8:14:arith"]["catcher"] == "unit:test_add"
    assert all(c.startswith("unit:") for x in r.values() for c in x["ran"]), r
    score = json.loads((tmp_path / "out" / "score.json").read_text())
    assert score["layers"] == ["unit"] and score["sanitizer"] is None and score["pytest"] == [], score
    assert "judged by the unit layer(s) only" in out


def test_bad_invocations_exit_two(fx, tmp_path):
    base = [PY, str(SAB / "mutants.py"), "--checkout", str(fx)]
    for extra in (["--operators", "nope"], ["--files", "nothing/*.c"], ["--sample", "0"],
                  ["--only", "lib/lib.c:1:1:arith"], ["--only", "lib/lib.c:arith:000000000000"],
                  ["--no-such-flag"], ["--layers", "unit,fuzz"], ["--layers", ","]):
        p = subprocess.run(base + extra + ["--list"], capture_output=True, text=True)
        assert p.returncode == 2, (extra, p.stdout, p.stderr)
    eq = tmp_path / "eq.txt"
    k = "lib/lib.c:arith:b58ba229e033"
    for text, want in ((f"{k}  ok\nnot-a-key\n", ":2:1: expected 'FILE:OPERATOR:HASH"),
                       (f"{k}\n", ":1:1: expected"),
                       # a position is refused: after an edit it would name another mutant
                       ("lib/lib.c:8:14:arith  ok\n", ":1:1: 'lib/lib.c:8:14:arith' is a mutant's position"),
                       (f"{k}  a\n{k}  b\n", ":2:1: mutant")):
        eq.write_text(text)
        p = subprocess.run(base + ["--files", "lib/*.c", "--equivalent", str(eq),
                                   "--work", str(tmp_path / "w")], capture_output=True, text=True)
        assert p.returncode == 2 and f"{eq}{want}" in p.stderr, (text, p.stderr)


def project_note_problems(eq):
    """The notes of {key: reason} whose key no mutant of today's tree has."""
    have = {}
    for f in sorted({k.split(":")[0] for k in eq}):
        p = REPO / f
        have[f] = {m.key for m in mutagen.generate(f, p.read_text())} if p.is_file() else None
    problems = []
    for key, reason in eq.items():
        f = key.split(":")[0]
        if have[f] is None:
            problems.append(f"{key}: {f} is gone ({reason})")
        elif key not in have[f]:
            problems.append(f"{key}: stale, no mutant of {f} has this key any more -- the mutated "
                            f"lines changed; re-judge the mutant and write the key `mutants.py --list` "
                            f"gives it ({reason})")
    return problems


def test_project_equivalence_notes_name_real_mutants():
    """Every key in ci/mutants/equivalent.txt is a mutant the generator makes
    today (a note whose statement has changed is stale, and must be judged
    again rather than carried over)."""
    eq = mutants.load_equivalent(REPO / mutants.EQUIV)
    assert len(eq) >= 27  # the notes migrated from positional ids, none lost
    problems = project_note_problems(eq)
    assert not problems, "\n".join(problems)


def test_a_stale_project_note_is_reported_clearly():
    eq = {"core/src/registry.c:stmt-swap:000000000000": "a judgement of some other statement"}
    [msg] = project_note_problems(eq)
    assert "stale" in msg and "core/src/registry.c:stmt-swap:000000000000" in msg


def test_summarize_reads_the_progress_file(fx_mut):
    """A run stopped part-way is summarized from progress.jsonl, one line per
    finished mutant, with the same counts the finished run reports."""
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--summarize", str(fx_mut["out_dir"]),
                        "--equivalent", str(fx_mut["out_dir"].parent / "equivalent.txt")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    counts = json.loads(p.stdout.splitlines()[0])
    s = fx_mut["score"]
    for k in ("killed", "timeout", "survived", "equivalent", "same-object-code", "compile-error", "score"):
        assert counts[k] == s[k], (k, counts, s)
    assert f"=== {fixture_keys()['lib/lib.c:26:14:arith']}  (lib/lib.c:26:14:arith)  [NOT KILLED]" in p.stdout


def test_summarize_lets_a_later_run_rejudge_a_mutant(fx_mut, tmp_path):
    """--summarize A B: B's result for a key replaces A's (a sample's survivor
    run again with --only after a test was added), and keys only A holds stay."""
    rows = [json.loads(l) for l in (fx_mut["out_dir"] / "progress.jsonl").read_text().splitlines() if l]
    survivor = next(r for r in rows if r["outcome"] == "survived")
    later = tmp_path / "rerun"
    later.mkdir()
    (later / "progress.jsonl").write_text(json.dumps(dict(survivor, outcome="caught", kind="assertion")) + "\n")
    eq = str(fx_mut["out_dir"].parent / "equivalent.txt")
    both = subprocess.run([PY, str(SAB / "mutants.py"), "--summarize", str(fx_mut["out_dir"]), str(later),
                           "--equivalent", eq], capture_output=True, text=True)
    assert both.returncode == 0, both.stderr
    counts = json.loads(both.stdout.splitlines()[0])
    s = fx_mut["score"]
    assert counts["killed"] == s["killed"] + 1 and counts["survived"] == s["survived"] - 1, (counts, s)
    assert sum(counts[k] for k in ("killed", "timeout", "survived", "equivalent", "same-object-code",
                                   "compile-error", "stale")) == len(rows)
    assert f"=== {survivor['key']}  " not in both.stdout


def test_a_samples_score_carries_its_wilson_interval():
    """The interval is Wilson's at 95% (published values: 0 of 10 -> 0-27.8%,
    10 of 10 -> 72.2-100%, 20 of 50 -> 27.6-53.8%), and summarize reports it."""
    assert mutants.wilson_interval(0, 10) == [0.0, 27.8]
    assert mutants.wilson_interval(10, 10) == [72.2, 100.0]
    assert mutants.wilson_interval(20, 50) == [27.6, 53.8]
    assert mutants.wilson_interval(0, 0) is None
    c = mutants.summarize([{"outcome": "caught", "kind": "assertion", "key": "a"},
                           {"outcome": "survived", "key": "b"}, {"outcome": "survived", "key": "c"}], {"c": "why"})
    assert c["score"] == 50.0 and c["interval95"] == mutants.wilson_interval(1, 2)


def test_declarations_of_any_type_name_are_not_statements():
    """`sched_lock *sl;`, `sim_packet copy = *pk;`, `sim_obj *o = pk->obj;`: a
    name, stars and a name then `;`, `=`, `,` or `[` declares whatever the type
    is called (as an expression it would be a product with no effect, or an
    assignment to one), so no statement mutant is made of it; a fresh
    harness/sched sample had drawn a swap of two such lines."""
    text = ("void f(sched *s, sim_packet *pk)\n{\n    sched_lock *sl;\n    sched_waitq *sq;\n"
            "    sim_packet copy = *pk;\n    sim_obj *o = pk->obj;\n    a = b * c;\n    g(s);\n}\n")
    ms = by_id(mutagen.generate("y.c", text))
    assert not any(m.line in (3, 4, 5, 6) and m.operator in ("stmt-delete", "stmt-swap") for m in ms.values()), \
        sorted(ms)
    assert "y.c:8:5:call-delete" in ms and "y.c:7:5:stmt-delete" in ms


def test_pointer_declarations_are_not_statements():
    """`tph_pool_entry *e;` is a declaration: deleting it cannot compile and
    moving it past a statement changes nothing (C11), so neither is made."""
    text = ("void f(int *p, int x)\n{\n    tph_pool_entry *e;\n    tph_thing *q = p;\n"
            "    tph_thing **r = &q;\n    lock_it(p);\n    *p = x;\n    g(x);\n}\n")
    ms = by_id(mutagen.generate("y.c", text))
    assert not any(m.line in (3, 4, 5) and m.operator in ("stmt-delete", "stmt-swap") for m in ms.values())
    assert "y.c:6:5:lock-delete" in ms and "y.c:8:5:call-delete" in ms


def test_the_sanitizer_layer_runs_with_make_tests_options(monkeypatch):
    """A unit executable of the sanitizer build runs in the sweep (and so in the
    mutant runner) with the ASan and UBSan options ci/test_unit.py gives it in
    `make test`: a mutant only detect_stack_use_after_return shows (a live fiber
    throwing its fake stack away) survived the runner while make test failed."""
    import sanitizer_options
    import sweep_worker
    seen = {}

    def fake_run_bounded(cmd, bound, cwd=None, env=None, fresh=False):
        seen["env"] = env
        return 0, "", 0.0

    class Catcher:
        kind, name, label = "asan", "test_sched", "asan:test_sched"

    class Stub:
        src = pathlib.Path(".")

        def command(self, c):
            return ["true"]

    monkeypatch.setattr(sweep_worker, "run_bounded", fake_run_bounded)
    monkeypatch.delenv("ASAN_OPTIONS", raising=False)
    monkeypatch.delenv("UBSAN_OPTIONS", raising=False)
    sweep_worker.Worker.run(Stub(), Catcher(), 10)
    assert seen["env"]["ASAN_OPTIONS"] == sanitizer_options.ASAN_OPTIONS
    assert "detect_stack_use_after_return=1" in seen["env"]["ASAN_OPTIONS"]
    assert seen["env"]["UBSAN_OPTIONS"] == sanitizer_options.UBSAN_OPTIONS
