"""Trivial compiler equivalence for generated mutants: a mutant whose
source file compiles to the same object bytes as the original, in every
build the catchers run, cannot behave differently, so no test can kill it.
Such a mutant is set apart (outcome `same-object-code`) instead of costing
a whole pass of the suite and then a hand-written equivalence note
(Papadakis et al., "Trivial Compiler Equivalence", ICSE 2015: 7-21% of
mutants, found for the price of a compile).  A file that no build here
compiles at all (a backend of another platform, `#if`-ed out whole) is the
degenerate case: its mutants change no byte that runs.

The object files of a source come from the build's compile_commands.json;
the original's digests are taken once per copy after its unpatched build
(snapshot, called by the sweep's set-up).  The judgement is conservative: an object the
mutant's build did not rewrite, or one missing from the snapshot, answers
"unknown" and the mutant runs the suite as usual.  Debug sections are left
out of the comparison (they name the copy's directory); a line number the
code itself holds (an assertion's __LINE__) is still compared."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import tempfile


def compile_db(build):
    """{absolute source path: [object paths]} from build/compile_commands.json,
    or None when the build wrote none."""
    try:
        rows = json.loads((pathlib.Path(build) / "compile_commands.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    db = {}
    for r in rows:
        d, f, o = r.get("directory", ""), r.get("file", ""), r.get("output") or output_of(r)
        if not f or not o:
            return None  # a row whose object cannot be named: judge nothing
        db.setdefault(os.path.realpath(os.path.join(d, f)), []).append(os.path.join(d, o))
    return db


def output_of(row):
    """The object a row writes, from its `-o` (CMake's Makefile generators
    leave the `output` field out)."""
    args = row.get("arguments")
    if args is None:
        try:
            args = shlex.split(row.get("command", ""))
        except ValueError:
            return None
    for i, a in enumerate(args):
        if a == "-o" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("-o") and len(a) > 2:
            return a[2:]
    return None


def digest(path):
    """sha256 of the object without its debug sections: those carry the
    copy's directory, which differs when ccache hands one copy another's
    compile, so comparing them would call equal code different.  Without
    objcopy the whole file is hashed (stricter, never wrong)."""
    data = None
    if shutil.which("objcopy"):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "o")
            p = subprocess.run(["objcopy", "--strip-debug", str(path), out], capture_output=True)
            if p.returncode == 0:
                data = pathlib.Path(out).read_bytes()
    try:
        if data is None:
            data = pathlib.Path(path).read_bytes()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest()


def snapshot(build):
    """{object path: sha256} of every object the build has made, or None
    without a compile database."""
    db = compile_db(build)
    if db is None:
        return None
    return {o: digest(o) for objs in db.values() for o in objs if os.path.exists(o)}


def same_code(build, baseline, source, since):
    """For one build: 'none' (it compiles `source` into nothing the catchers
    run), 'same' (every object of `source` was rewritten after `since` and
    equals the original's), 'different', or 'unknown'."""
    db = compile_db(build)
    if db is None or baseline is None:
        return "unknown"
    # Only the objects the catchers' build made count: an object of a target
    # no catcher links (the installable shared library, a bench program)
    # runs in no test, whatever its bytes.
    objs = [o for o in db.get(os.path.realpath(source), []) if o in baseline]
    if not objs:
        return "none"
    for o in objs:
        try:
            if os.path.getmtime(o) < since:
                return "unknown"  # not rebuilt for this mutant: no evidence
        except OSError:
            return "unknown"
        if baseline.get(o) is None:
            return "unknown"
        if digest(o) != baseline[o]:
            return "different"
    return "same"


def verdict(states):
    """The mutant's verdict over the builds' states: a summary when no
    catcher can tell it from the original, else None."""
    if any(s in ("different", "unknown") for s in states):
        return None
    if all(s == "none" for s in states):
        return "no build here compiles this file into anything the suite runs: the mutant changes no byte it runs"
    return ("compiles to the same object code as the original in every build the suite runs "
            "(trivial compiler equivalence)")
