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
def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    d = tmp_path_factory.mktemp("mutfixture") / "repo"
    shutil.copytree(FIXTURE, d)
    git(d, "init", "-q")
    git(d, "add", "-A")
    git(d, "-c", "user.email=m@test", "-c", "user.name=m", "commit", "-qm", "fixture")
    return d


def run_mutants(fx, tmp, *args):
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--checkout", str(fx), "--files", "lib/*.c",
                        "--config", str(fx / "sabotage.json"), "--seeds", "20",
                        "--work", str(tmp / "work"), "--out", str(tmp / "out"), *args],
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


EQUIV = """\
# id  reason
lib/lib.c:4:28:rel-boundary  sizeof(int) > 2 holds wherever >= 2 does on every target built
lib/lib.c:4:31:const+1  sizeof(int) >= 3 holds on every target built
lib/lib.c:4:31:const-1  sizeof(int) >= 1 always holds
"""


@pytest.fixture(scope="module")
def fx_mut(fx, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutrun")
    eq = tmp / "equivalent.txt"
    eq.write_text(EQUIV)
    rc, out, err = run_mutants(fx, tmp, "--equivalent", str(eq))
    results = {r["id"]: r for r in json.loads((tmp / "out" / "results.json").read_text())}
    score = json.loads((tmp / "out" / "score.json").read_text())
    return dict(rc=rc, out=out, err=err, results=results, score=score, out_dir=tmp / "out")


def test_fixture_kill_survive_and_compile_error(fx_mut):
    r = fx_mut["results"]
    assert fx_mut["rc"] == 0, fx_mut["out"] + fx_mut["err"]
    assert r["lib/lib.c:8:14:arith"]["outcome"] == "caught"            # a - b: test_add
    assert r["lib/lib.c:8:14:arith"]["catcher"] == "unit:test_add"
    assert r["lib/lib.c:21:17:rel-negate"]["catcher"].startswith("scenario:")  # every seed fails
    assert r["lib/lib.c:26:14:arith"]["outcome"] == "survived"         # fx_unused: no test
    assert r["lib/lib.c:4:28:rel-negate"]["outcome"] == "does-not-compile"
    s = fx_mut["score"]
    # 16 mutants: 5 killed, 1 compile error, 3 equivalent, 7 survived
    assert (s["population"], s["ran"]) == (16, 16), s
    assert (s["killed"] + s["timeout"], s["survived"], s["equivalent"], s["compile-error"]) == (5, 7, 3, 1), s
    assert s["score"] == round(100 * 5 / 12, 1)


def test_fixture_survivors_listed_with_diffs(fx_mut):
    text = (fx_mut["out_dir"] / "survivors.txt").read_text()
    assert "=== lib/lib.c:26:14:arith  [NOT KILLED]" in text
    assert "-    return x * 2;\n+    return x / 2;" in text
    assert "=== lib/lib.c:4:31:const+1  [equivalent: sizeof(int) >= 3" in text
    # the equivalent ones are not printed as survivors on stdout
    assert "=== lib/lib.c:26:14:arith: survived" in fx_mut["out"]
    assert "=== lib/lib.c:4:31:const+1: survived" not in fx_mut["out"]


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
        assert shutil.which("npm"), "npm is needed for the report schema (ci/deps.sh notes it)"
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=SAB, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((fx_mut["out_dir"] / "mutation-report.json").read_text())
    assert rp.validate_report(rep) == []
    muts = {m["id"]: m for f in rep["files"].values() for m in f["mutants"]}
    assert muts["lib/lib.c:8:14:arith"]["status"] == "Killed"
    assert muts["lib/lib.c:8:14:arith"]["location"]["start"] == {"line": 8, "column": 14}
    assert muts["lib/lib.c:26:14:arith"]["status"] == "Survived"
    assert muts["lib/lib.c:4:28:rel-negate"]["status"] == "CompileError"
    assert muts["lib/lib.c:8:14:arith"]["mutatorName"] == "arith"


def test_fixture_fail_under(fx, tmp_path):
    rc, out, err = run_mutants(fx, tmp_path, "--only", "lib/lib.c:26:14:arith", "--fail-under", "90")
    assert rc == 1 and "score 0.0%" in out, out + err
    rc, out, err = run_mutants(fx, tmp_path, "--only", "lib/lib.c:8:14:arith", "--fail-under", "90")
    assert rc == 0 and "score 100.0%" in out, out + err


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
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--checkout", str(d), "--files", "lib/*.c",
                        "--diff", "HEAD", "--list"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "", p.stdout


def test_bad_invocations_exit_two(fx, tmp_path):
    base = [PY, str(SAB / "mutants.py"), "--checkout", str(fx)]
    for extra in (["--operators", "nope"], ["--files", "nothing/*.c"], ["--sample", "0"],
                  ["--only", "lib/lib.c:1:1:arith"], ["--no-such-flag"]):
        p = subprocess.run(base + extra + ["--list"], capture_output=True, text=True)
        assert p.returncode == 2, (extra, p.stdout, p.stderr)
    eq = tmp_path / "eq.txt"
    eq.write_text("lib/lib.c:9:14:arith  ok\nnot-an-id\n")
    p = subprocess.run(base + ["--files", "lib/*.c", "--equivalent", str(eq), "--work", str(tmp_path / "w")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and f"{eq}:2:1: expected" in p.stderr, p.stderr


def test_project_equivalence_notes_name_real_mutants():
    """Every id in ci/mutants/equivalent.txt is a mutant the generator makes
    today (a note for a mutant that no longer exists is stale)."""
    eq = mutants.load_equivalent(REPO / mutants.EQUIV)
    files = sorted({i.split(":")[0] for i in eq})
    have = set()
    for f in files:
        p = REPO / f
        if p.is_file():
            have |= {m.id for m in mutagen.generate(f, p.read_text())}
    stale = sorted(set(eq) - have)
    assert not stale, stale


def test_summarize_reads_the_progress_file(fx_mut):
    """A run stopped part-way is summarized from progress.jsonl, one line per
    finished mutant, with the same counts the finished run reports."""
    p = subprocess.run([PY, str(SAB / "mutants.py"), "--summarize", str(fx_mut["out_dir"]),
                        "--equivalent", str(fx_mut["out_dir"].parent / "equivalent.txt")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    counts = json.loads(p.stdout.splitlines()[0])
    s = fx_mut["score"]
    for k in ("killed", "timeout", "survived", "equivalent", "compile-error", "score"):
        assert counts[k] == s[k], (k, counts, s)
    assert "=== lib/lib.c:26:14:arith  [NOT KILLED]" in p.stdout


def test_pointer_declarations_are_not_statements():
    """`tph_pool_entry *e;` is a declaration: deleting it cannot compile and
    moving it past a statement changes nothing (C11), so neither is made."""
    text = ("void f(int *p, int x)\n{\n    tph_pool_entry *e;\n    tph_thing *q = p;\n"
            "    tph_thing **r = &q;\n    lock_it(p);\n    *p = x;\n    g(x);\n}\n")
    ms = by_id(mutagen.generate("y.c", text))
    assert not any(m.line in (3, 4, 5) and m.operator in ("stmt-delete", "stmt-swap") for m in ms.values())
    assert "y.c:6:5:lock-delete" in ms and "y.c:8:5:call-delete" in ms
