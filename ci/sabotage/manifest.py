"""Reading and checking sabotage.json.

Every problem is reported as `file:line:col: message`, all of them at once, so
a manifest with three mistakes costs one run to fix rather than three.  The
standard json module reports positions only for syntax errors, so a small
position-recording parser runs after it: each value's (line, col) is kept
under its path (('sabotages', 3, 'find') and so on).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

EXPECTS = ("caught", "survives", "refused-by-build")
# What a catcher can report; "vacuous" is the harness saying a scenario ran
# without exercising what it exists for (a sabotaged harness must not pass).
KINDS = ("assertion", "oracle", "deadlock", "livelock", "misuse", "memory-error",
         "crash", "fail-fast", "timeout", "vacuous")
ENTRY_KEYS = {"name", "file", "find", "replace", "expect", "why", "buildError",
              "timeoutSeconds", "caughtBy", "failure"}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
CATCHER_RE = re.compile(r"^(unit|asan|scenario|pytest|generate):([A-Za-z0-9_.\-/]+)$")
# generate:<master seed>: `tpheal-harness generate` over that seed's first
# generatePrograms programs (sweep_config.py), a verdict that replays
CATCHER_KINDS = ("unit", "asan", "scenario", "pytest", "generate")


class ManifestError(Exception):
    def __init__(self, problems):
        super().__init__("\n".join(problems))
        self.problems = problems


class _PosParser:
    """Recursive-descent JSON reader that records where each value starts.
    Only runs on text json.loads already accepted, so it can be terse about
    errors; duplicate object keys (which json.loads silently merges) are the
    one thing it reports."""

    def __init__(self, text):
        self.t = text
        self.i = 0
        self.pos = {}
        self.dups = []
        self.dec = json.JSONDecoder()

    def ws(self):
        while self.i < len(self.t) and self.t[self.i] in " \t\r\n":
            self.i += 1

    def value(self, path):
        self.ws()
        self.pos[path] = self.i
        c = self.t[self.i]
        if c == "{":
            self.i += 1
            out = {}
            self.ws()
            if self.t[self.i] == "}":
                self.i += 1
                return out
            while True:
                self.ws()
                kpos = self.i
                key, self.i = json.decoder.scanstring(self.t, self.i + 1)
                if key in out:
                    self.dups.append((kpos, key))
                self.pos[path + (key, "@key")] = kpos
                self.ws()
                self.i += 1  # ':'
                out[key] = self.value(path + (key,))
                self.ws()
                c = self.t[self.i]
                self.i += 1
                if c == "}":
                    return out
        if c == "[":
            self.i += 1
            out = []
            self.ws()
            if self.t[self.i] == "]":
                self.i += 1
                return out
            while True:
                out.append(self.value(path + (len(out),)))
                self.ws()
                c = self.t[self.i]
                self.i += 1
                if c == "]":
                    return out
        val, end = self.dec.raw_decode(self.t, self.i)
        self.i = end
        return val


def line_col(text, offset):
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


@dataclass
class Catcher:
    kind: str                 # "unit", "asan", "scenario", "pytest" or "generate"
    name: str                 # executable, scenario file, pytest file (ci/test_x.py), or master seed
    seeds: int | None = None  # scenario: seeds per strategy; generate: per program and strategy
    strategy: str | None = None
    args: list = field(default_factory=list)
    failure: str | None = None  # overrides the entry's `failure` for this catcher
    programs: int | None = None  # generate: programs of the master seed (None: generatePrograms)

    @property
    def label(self):
        return f"{self.kind}:{self.name}"


@dataclass
class Entry:
    index: int
    name: str
    file: str
    find: str
    replace: str
    expect: str
    why: str
    build_error: str | None
    timeout: float | None
    caught_by: list
    failure: str | None
    line: int

    @property
    def declared(self):
        """Whether the entry declares what must happen, so that the sweep can
        judge it: a control, a build check, named catchers or a failure kind.
        A plain defect (no `caughtBy`, no `failure`, `expect` absent or
        `caught`) is a measurement: caught or survived, neither is wrong."""
        return self.expect != "caught" or bool(self.caught_by) or self.failure is not None

    @property
    def role(self):
        """defect, control (expected to survive) or build-check."""
        return {"survives": "control", "refused-by-build": "build-check"}.get(self.expect, "defect")

    def diff(self):
        import difflib
        return "".join(difflib.unified_diff(
            (self.find + "\n").splitlines(True), (self.replace + "\n").splitlines(True),
            f"a/{self.file}", f"b/{self.file}"))


@dataclass
class Manifest:
    path: str
    package: str
    root: str
    entries: list
    raw: dict


def _catcher(spec, where, problems):
    if isinstance(spec, str):
        m = CATCHER_RE.match(spec)
        if not m:
            problems.append(f"{where}: catcher '{spec}' is not 'unit:<executable>', "
                            f"'asan:<executable>', 'scenario:<file.scn>', 'pytest:<file.py>' "
                            f"or 'generate:<master seed>'")
            return None
        c = Catcher(m.group(1), m.group(2))
    elif isinstance(spec, dict):
        kinds = [k for k in CATCHER_KINDS if k in spec]
        extra = set(spec) - set(CATCHER_KINDS) - {"seeds", "strategy", "args", "failure", "programs"}
        if len(kinds) != 1 or extra:
            problems.append(f"{where}: a catcher object needs exactly one of 'unit', 'asan', "
                            f"'scenario', 'pytest' or 'generate' and only 'seeds', 'strategy', 'args', "
                            f"'failure', 'programs' besides"
                            + (f" (unknown: {', '.join(sorted(extra))})" if extra else ""))
            return None
        c = Catcher(kinds[0], str(spec[kinds[0]]))
        if "seeds" in spec:
            if not isinstance(spec["seeds"], int) or isinstance(spec["seeds"], bool) \
                    or not 1 <= spec["seeds"] <= 1000:
                problems.append(f"{where}: 'seeds' must be an integer 1..1000")
                return None
            c.seeds = spec["seeds"]
            if c.kind not in ("scenario", "generate"):
                problems.append(f"{where}: 'seeds' applies to scenario and generate catchers only")
                return None
        if "programs" in spec:
            if not isinstance(spec["programs"], int) or isinstance(spec["programs"], bool) \
                    or not 1 <= spec["programs"] <= 1_000_000 or c.kind != "generate":
                problems.append(f"{where}: 'programs' (an integer 1..1000000) applies to generate "
                                f"catchers only")
                return None
            c.programs = spec["programs"]
        if "strategy" in spec:
            if not isinstance(spec["strategy"], str):
                problems.append(f"{where}: 'strategy' must be a string")
                return None
            c.strategy = spec["strategy"]
        if "failure" in spec:
            if spec["failure"] not in KINDS:
                problems.append(f"{where}: the catcher's 'failure' must be one of {', '.join(KINDS)}")
                return None
            c.failure = spec["failure"]
        if "args" in spec:
            if not isinstance(spec["args"], list) or not all(isinstance(a, str) for a in spec["args"]):
                problems.append(f"{where}: 'args' must be an array of strings")
                return None
            c.args = spec["args"]
    else:
        problems.append(f"{where}: a catcher is a string or an object")
        return None
    if c.kind == "scenario" and not c.name.endswith(".scn"):
        problems.append(f"{where}: scenario catcher '{c.name}' must name a .scn file")
        return None
    if c.kind == "pytest" and not c.name.endswith(".py"):
        problems.append(f"{where}: pytest catcher '{c.name}' must name a .py file")
        return None
    if c.kind == "generate" and not (re.fullmatch(r"[0-9]{1,20}", c.name) and int(c.name) < 2 ** 64):
        problems.append(f"{where}: generate catcher '{c.name}' must name a master seed (a whole "
                        f"number below 2^64)")
        return None
    if c.kind == "generate" and c.strategy not in (None, "random", "pct", "both"):
        problems.append(f"{where}: a generate catcher's 'strategy' is random, pct or both")
        return None
    return c


def load(path, display=None):
    """Parse and validate; raises ManifestError with every problem found."""
    display = display or path
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ManifestError([f"{display}:1:1: cannot read: {e.strerror}"])
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise ManifestError([f"{display}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}"])
    p = _PosParser(text)
    data = p.value(())
    problems = []

    def at(path_):
        while path_ and path_ not in p.pos:
            path_ = path_[:-1]
        line, col = line_col(text, p.pos.get(path_, 0))
        return f"{display}:{line}:{col}"

    for off, key in p.dups:
        line, col = line_col(text, off)
        problems.append(f"{display}:{line}:{col}: duplicate key '{key}'")
    if not isinstance(data, dict):
        raise ManifestError(problems + [f"{at(())}: the manifest must be a JSON object"])
    if not isinstance(data.get("package"), str) or not data.get("package"):
        problems.append(f"{at(('package',))}: top-level 'package' (a non-empty string) is required")
    root = data.get("root", ".")
    if not isinstance(root, str) or root.startswith("/") or ".." in root.split("/"):
        problems.append(f"{at(('root',))}: 'root' must be a relative path inside the checkout")
        root = "."
    if "timeoutSeconds" in data and (not isinstance(data["timeoutSeconds"], (int, float))
                                     or isinstance(data["timeoutSeconds"], bool)
                                     or data["timeoutSeconds"] <= 0):
        problems.append(f"{at(('timeoutSeconds',))}: 'timeoutSeconds' must be a positive number")
    sabs = data.get("sabotages")
    if not isinstance(sabs, list) or not sabs:
        problems.append(f"{at(('sabotages',))}: 'sabotages' must be a non-empty array")
        raise ManifestError(problems)

    entries, seen = [], {}
    for i, e in enumerate(sabs):
        base = ("sabotages", i)
        if not isinstance(e, dict):
            problems.append(f"{at(base)}: entry {i} must be an object")
            continue
        n0 = len(problems)
        name = e.get("name")
        for k in sorted(set(e) - ENTRY_KEYS):
            if not k.startswith("why"):
                problems.append(f"{at(base + (k, '@key'))}: entry '{name}': unknown key '{k}'")
        if not isinstance(name, str) or not NAME_RE.match(name):
            problems.append(f"{at(base + ('name',))}: entry {i}: 'name' must match {NAME_RE.pattern}")
            name = f"#{i}"
        elif name == "baseline":
            problems.append(f"{at(base + ('name',))}: 'baseline' is reserved for the unpatched run")
        elif name in seen:
            problems.append(f"{at(base + ('name',))}: duplicate name '{name}' (first at entry {seen[name]})")
        else:
            seen[name] = i
        fil = e.get("file")
        if not isinstance(fil, str) or not fil or fil.startswith("/") or ".." in fil.split("/"):
            problems.append(f"{at(base + ('file',))}: entry '{name}': 'file' must be a relative path")
        lines = {}
        for k in ("find", "replace"):
            v = e.get(k)
            if not isinstance(v, list) or not all(isinstance(s, str) for s in v) or \
                    (k == "find" and not v):
                problems.append(f"{at(base + (k,))}: entry '{name}': '{k}' must be an array of "
                                f"strings{' (non-empty)' if k == 'find' else ''}")
            else:
                lines[k] = "\n".join(v)
        if "find" in lines and not lines["find"].strip():
            problems.append(f"{at(base + ('find',))}: entry '{name}': 'find' is only whitespace")
        if lines.get("find") is not None and lines.get("find") == lines.get("replace"):
            problems.append(f"{at(base + ('replace',))}: entry '{name}': 'replace' equals 'find' (inert)")
        # Without `expect` an entry is a defect to measure (as `caught` with
        # no catcher and no kind): judged caught or survived, never wrong.
        expect = e.get("expect", "caught")
        if expect not in EXPECTS:
            problems.append(f"{at(base + ('expect',))}: entry '{name}': 'expect' must be one of "
                            f"{', '.join(EXPECTS)}")
        why = e.get("why")
        if not isinstance(why, str) or not why.strip():
            problems.append(f"{at(base + ('why',))}: entry '{name}': 'why' (a non-empty string) is required")
        be = e.get("buildError")
        if expect == "refused-by-build":
            if not isinstance(be, str) or not be:
                problems.append(f"{at(base + ('buildError',))}: entry '{name}': 'refused-by-build' "
                                f"needs 'buildError', a substring the compiler must print")
        elif be is not None:
            problems.append(f"{at(base + ('buildError', '@key'))}: entry '{name}': 'buildError' "
                            f"only applies to expect 'refused-by-build'")
        to = e.get("timeoutSeconds")
        if to is not None and (not isinstance(to, (int, float)) or isinstance(to, bool) or to <= 0):
            problems.append(f"{at(base + ('timeoutSeconds',))}: entry '{name}': 'timeoutSeconds' "
                            f"must be a positive number")
            to = None
        catchers = []
        cb = e.get("caughtBy")
        if expect == "caught" and cb is not None:
            # Without caughtBy the entry is judged by the whole suite: caught
            # when anything in it fails (docs/sabotage.md, foreign manifests).
            if not isinstance(cb, list) or not cb:
                problems.append(f"{at(base + ('caughtBy',))}: entry '{name}': 'caughtBy', when "
                                f"given, must be a non-empty array of catchers")
            else:
                for j, spec in enumerate(cb):
                    c = _catcher(spec, f"{at(base + ('caughtBy', j))}: entry '{name}'", problems)
                    if c:
                        catchers.append(c)
                labels = [c.label for c in catchers]
                if len(set(labels)) != len(labels):
                    problems.append(f"{at(base + ('caughtBy',))}: entry '{name}': a catcher is named twice")
        elif cb is not None:
            problems.append(f"{at(base + ('caughtBy', '@key'))}: entry '{name}': 'caughtBy' only "
                            f"applies to expect 'caught'")
        failure = e.get("failure")
        if expect == "caught" and (cb is not None or failure is not None):
            if failure not in KINDS:
                problems.append(f"{at(base + ('failure',))}: entry '{name}': 'failure' must be one "
                                f"of {', '.join(KINDS)}")
        elif failure is not None:
            problems.append(f"{at(base + ('failure', '@key'))}: entry '{name}': 'failure' only "
                            f"applies to expect 'caught'")
        if len(problems) == n0:
            line, _ = line_col(text, p.pos[base])
            entries.append(Entry(i, name, fil, lines["find"], lines["replace"], expect, why,
                                 be, to, catchers, failure, line))
    if problems:
        raise ManifestError(problems)
    return Manifest(path, data["package"], root, entries, data)
