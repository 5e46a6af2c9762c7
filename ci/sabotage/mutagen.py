"""Mutant generation for C sources: the defects the suite was never tuned to.

Deterministic: the same text gives the same mutants in the same order.  Each
mutant has two names:
  id   `file:line:col:operator` (1-based; the column of the token or statement
       changed): where it is today, for reading and for `--only`; it moves
       with any edit above it.
  key  `file:operator:H` or `file:operator:H#n`: what it changes.  H is the
       first 12 hex digits of the SHA-1 of the changed lines before and after
       the mutation (comments on them included), each with its whitespace
       runs collapsed and its ends stripped (statement_hash); `#n` (n = 2,
       3, ...) is added only when n-1 earlier mutants of the same file (in
       id order) share that file:operator:H, e.g. the same statement deleted
       in two functions.  Editing other lines, or re-indenting these, keeps
       the key; changing the mutated statement (or, for a swap, either
       statement) changes it.  Equivalence notes (ci/mutants/equivalent.txt)
       name mutants by key.

Works on tokens, so comments, string and character
literals and preprocessor lines are never mutated; code in a branch of an
`#if` that the sweep's builds never compile (the `!TPHEAL_SELF_HEAL` and
`_MSC_VER`/`_WIN32` branches) is skipped, since no catcher could see it.

Operators (docs/mutation.md has the table):
  rel-boundary  < <-> <=, > <-> >=
  rel-negate    == <-> !=, < <-> >=, > <-> <=
  logical       && <-> ||
  arith         binary + <-> -, * <-> /, % -> *, ++ <-> --, += <-> -=
  const+1 / const-1   an integer literal n -> n+1 / n-1
  stmt-delete   a one-line simple statement removed
  call-delete   a one-line call statement removed
  lock-delete   a one-line lock/unlock (enter/leave, acquire/release) call removed
  atomic-plain  a seam atomic (tph_os_load32 ...) replaced by the plain access
  stmt-swap     two adjacent one-line statements exchanged

Python 3.11 standard library only.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

OPERATORS = ("rel-boundary", "rel-negate", "logical", "arith", "const+1", "const-1",
             "stmt-delete", "call-delete", "lock-delete", "atomic-plain", "stmt-swap")

# Macros whose value the sweep's builds fix (CMakeLists.txt options): a branch
# they rule out is never compiled by any catcher.  Anything else is "maybe".
DEFINED = {"TPHEAL_SELF_HEAL": 1}
UNDEFINED = {"_MSC_VER", "_WIN32", "_WIN64", "__MINGW32__"}

LOCK_RE = re.compile(r"(^|_)(lock|unlock|enter|leave|acquire|release)($|_)")
# The seam's atomics (core/src/os.h) and how each reads as a plain access.
ATOMICS = {
    "load": lambda a: f"(*({a[0]}))",
    "store": lambda a: f"(void)(*({a[0]}) = ({a[1]}))",
    "fetch_add": lambda a: f"((*({a[0]}) += ({a[1]})) - ({a[1]}))",
    "fetch_sub": lambda a: f"((*({a[0]}) -= ({a[1]})) + ({a[1]}))",
    "cas": lambda a: (f"(*({a[0]}) == *({a[1]}) ? (*({a[0]}) = ({a[2]}), 1) "
                      f": (*({a[1]}) = *({a[0]}), 0))"),
}
# tph_os_gate_load32/store32 are the trace gate's atomics (no scheduling point)
ATOMIC_RE = re.compile(r"^tph_os_(?:gate_)?(load|store|fetch_add|fetch_sub|cas)(32|64|_ptr)$")
DECL_START = {"int", "unsigned", "signed", "char", "short", "long", "float", "double", "void",
              "bool", "const", "static", "struct", "enum", "union", "volatile", "size_t",
              "extern", "typedef", "register", "_Bool", "inline"}
TYPE_SUFFIX_RE = re.compile(r"^(u?int(8|16|32|64|ptr)_t|tph_\w+|s?size_t|\w+_t)$")
NOT_STATEMENT_START = {"return", "if", "for", "while", "switch", "case", "default", "do", "else",
                       "goto", "sizeof"} | DECL_START

TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<number>(?:0[xX][0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|\.\.\.|[-+*/%<>=!&|^~?:;,.(){}\[\]#\\])
""", re.S | re.X)


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    line: int
    col: int
    start: int  # offset in the file


@dataclass
class Mutant:
    id: str            # file:line:col:operator (its position today)
    file: str
    line: int          # first line the mutant changes (1-based)
    col: int
    operator: str
    first: int         # changed line range [first, last] (1-based, inclusive)
    last: int
    before: list       # original lines first..last (no newlines)
    after: list        # their replacement
    key: str = ""      # file:operator:hash[#n], set by generate (see the docstring)

    def apply(self, text):
        """The mutated file, or None when the lines are no longer there."""
        lines = text.split("\n")
        if lines[self.first - 1:self.last] != self.before:
            return None
        return "\n".join(lines[:self.first - 1] + self.after + lines[self.last:])

    def location(self):
        """The changed span, as the mutation-testing report schema wants it."""
        return {"start": {"line": self.first, "column": self.col},
                "end": {"line": self.last, "column": max(2, len(self.before[-1]) + 1)}}

    @property
    def description(self):
        a = " / ".join(s.strip() for s in self.before)
        b = " / ".join(s.strip() for s in self.after) or "(deleted)"
        return f"{self.operator}: {a}  ->  {b}"


def tokens(text):
    """Code tokens with positions; comments, whitespace and preprocessor lines
    (with their continuations) dropped, and code in dead #if branches too."""
    out = []
    line, col, i = 1, 1, 0
    at_line_start = True
    stack = []  # per open #if: [this branch live?, some branch taken?, parent live?]
    live = True
    while i < len(text):
        m = TOKEN_RE.match(text, i)
        if not m:
            kind, s = "other", text[i]
        else:
            kind, s = m.lastgroup, m.group()
        if kind == "op" and s == "#" and at_line_start:
            # a preprocessor line, continuations included
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = len(text)
                    break
                if text[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            directive = text[i:k]
            live = _directive(directive, stack, live)
            s = text[i:k]
            kind = "pp"
        if kind not in ("ws", "nl", "comment", "pp") and live:
            out.append(Tok(kind, s, line, col, i))
        nl = s.count("\n")
        if nl:
            line += nl
            col = len(s) - s.rfind("\n")
        else:
            col += len(s)
        if kind == "nl":
            at_line_start = True
        elif kind not in ("ws", "comment"):
            at_line_start = False
        i += len(s)
    return out


def _cond(expr):
    """True/False for the conditions the builds fix, None for anything else."""
    e = re.sub(r"/\*.*?\*/|//.*", "", expr).strip()
    neg = False
    while e.startswith("!"):
        neg, e = not neg, e[1:].strip()
    m = re.fullmatch(r"defined\s*\(?\s*(\w+)\s*\)?", e)
    if m:
        v = True if m.group(1) in DEFINED else (False if m.group(1) in UNDEFINED else None)
    elif re.fullmatch(r"\w+", e):
        v = bool(DEFINED[e]) if e in DEFINED else (False if e in UNDEFINED else None)
    else:
        v = None
    return v if v is None else (v != neg)


def _directive(d, stack, live):
    m = re.match(r"#\s*(\w+)\s*(.*)", d, re.S)
    if not m:
        return live
    word, rest = m.group(1), m.group(2)
    if word in ("if", "ifdef", "ifndef"):
        c = _cond(rest if word == "if" else
                  ("defined(" + rest.strip() + ")" if word == "ifdef" else "!defined(" + rest.strip() + ")"))
        this = c is not False
        stack.append([this, c is True, live])
        return live and this
    if not stack:
        return live
    top = stack[-1]
    if word == "elif":
        c = _cond(rest)
        this = not top[1] and c is not False
        top[0] = this
        top[1] = top[1] or c is True
        return top[2] and this
    if word == "else":
        top[0] = not top[1]
        return top[2] and top[0]
    if word == "endif":
        stack.pop()
        return top[2]
    return live


def _binary_context(prev):
    return prev is not None and (prev.kind in ("ident", "number") and prev.text not in DECL_START
                                 and prev.text not in ("return", "case", "sizeof")
                                 or prev.text in (")", "]"))


def _int_value(s):
    m = re.fullmatch(r"(0[xX][0-9A-Fa-f]+|\d+)([uUlL]*)", s)
    if not m or (len(m.group(1)) > 1 and m.group(1)[0] == "0" and m.group(1)[1] not in "xX"):
        return None  # floats and octal left alone
    return int(m.group(1), 0), m.group(1).lower().startswith("0x"), m.group(2)


def _fmt_int(v, hexa, suffix):
    return (hex(v) if hexa else str(v)) + suffix


def _matching(toks, i):
    """Index of the bracket closing toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text in "([{":
            depth += 1
        elif toks[j].text in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _statements(toks, lines):
    """One-line simple statements: (first token index, last token index, kind),
    kind in stmt/call/lock.  A statement qualifies when it starts after `;`,
    `{` or `}` (not an unbraced if/else/for body), is not a declaration or a
    return, and its tokens all sit on one line that holds nothing else."""
    out = []
    depth_at, d = [], 0
    for t in toks:
        depth_at.append(d)
        d += (t.text == "{") - (t.text == "}")
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        prev = toks[i - 1] if i else None
        # inside a function body (file scope holds no statements)
        starts = depth_at[i] > 0 and prev is not None and prev.text in (";", "{", "}")
        if not starts or t.kind != "ident" or t.text in NOT_STATEMENT_START \
                or _declares(toks, i):
            i += 1
            continue
        # find the ';' ending it, on the same line, brackets balanced
        j, depth, ok = i, 0, False
        while j < n and toks[j].line == t.line:
            x = toks[j].text
            if x in "([":
                depth += 1
            elif x in ")]":
                depth -= 1
            elif x in "{}":
                break
            elif x == ";" and depth == 0:
                ok = True
                break
            j += 1
        if not ok:
            i += 1
            continue
        if (j + 1 < n and toks[j + 1].line == t.line) or (prev and prev.line == t.line):
            i = j + 1
            continue
        # a label `name:` is not a statement start
        if i + 1 < n and toks[i + 1].text == ":":
            i += 1
            continue
        kind = "stmt"
        if toks[i + 1].text == "(" and _matching(toks, i + 1) == j - 1:
            kind = "lock" if LOCK_RE.search(t.text) else "call"
            if ATOMIC_RE.match(t.text):
                kind = "call"
        out.append((i, j, kind))
        i = j + 1
    return out


def _declares(toks, i):
    """`T name`, `T *name;`, `T **name = ...`: a declaration of type T."""
    j = i + 1
    while j < len(toks) and toks[j].text == "*":
        j += 1
    if j >= len(toks) or toks[j].kind != "ident":
        return False
    return j == i + 1 or (j + 1 < len(toks) and toks[j + 1].text in (";", "=", ",", "["))


def _split_args(toks, open_i, close_i):
    args, cur, depth = [], [], 0
    for t in toks[open_i + 1:close_i]:
        if t.text in "([{":
            depth += 1
        elif t.text in ")]}":
            depth -= 1
        if t.text == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    args.append(cur)
    return args


# A key as generate writes it: file:operator:12 hex digits, #n for n >= 2.
KEY_RE = re.compile(r"^(?P<file>[^\s:]+):(?P<op>[a-z0-9+-]+):(?P<hash>[0-9a-f]{12})"
                    r"(?:#(?P<n>[2-9]|[1-9][0-9]+))?$")


def statement_hash(before, after):
    """12 hex digits of SHA-1 over the changed lines, before then after, each
    line whitespace-normalized (runs collapsed to one space, ends stripped),
    so that re-indenting or moving the statement keeps it."""
    norm = [" ".join(s.split()) for s in before] + ["\0"] + [" ".join(s.split()) for s in after]
    return hashlib.sha1("\n".join(norm).encode("utf-8")).hexdigest()[:12]


def assign_keys(muts):
    """Set each mutant's key, in the order given (generate's: position):
    the first of a file to have a file:operator:hash gets it bare, the next
    ones `#2`, `#3`, ..."""
    seen = {}
    for m in muts:
        base = f"{m.file}:{m.operator}:{statement_hash(m.before, m.after)}"
        seen[base] = seen.get(base, 0) + 1
        m.key = base if seen[base] == 1 else f"{base}#{seen[base]}"
    return muts


def generate(rel, text, operators=OPERATORS):
    """Every mutant of one file, sorted by position then operator, each with
    its id and key."""
    toks = tokens(text)
    lines = text.split("\n")
    muts = []

    def token_mutant(t, op, new):
        ln = lines[t.line - 1]
        c = t.col - 1
        assert ln[c:c + len(t.text)] == t.text, (rel, t)
        muts.append(Mutant(f"{rel}:{t.line}:{t.col}:{op}", rel, t.line, t.col, op, t.line, t.line,
                           [ln], [ln[:c] + new + ln[c + len(t.text):]]))

    for k, t in enumerate(toks):
        prev = toks[k - 1] if k else None
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if t.kind == "op":
            s = t.text
            if s in ("<", "<=", ">", ">="):
                # `<`/`>` is always a comparison once #include lines are gone
                token_mutant(t, "rel-boundary", {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}[s])
                token_mutant(t, "rel-negate", {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[s])
            elif s in ("==", "!="):
                token_mutant(t, "rel-negate", "!=" if s == "==" else "==")
            elif s in ("&&", "||"):
                token_mutant(t, "logical", "||" if s == "&&" else "&&")
            elif s in ("+", "-") and _binary_context(prev):
                token_mutant(t, "arith", "-" if s == "+" else "+")
            elif s == "/" :
                token_mutant(t, "arith", "*")
            elif s == "%":
                token_mutant(t, "arith", "*")
            elif s == "*" and _binary_context(prev) and (prev.kind == "number" or prev.text in (")", "]")
                                                         or (nxt is not None and nxt.kind == "number")):
                token_mutant(t, "arith", "/")
            elif s in ("++", "--"):
                token_mutant(t, "arith", "--" if s == "++" else "++")
            elif s in ("+=", "-="):
                token_mutant(t, "arith", "-=" if s == "+=" else "+=")
        elif t.kind == "number":
            v = _int_value(t.text)
            if v is None or (prev is not None and prev.text in ("[",) and nxt is not None and nxt.text == "]"
                             and _is_declarator(toks, k)):
                continue
            val, hexa, suf = v
            token_mutant(t, "const+1", _fmt_int(val + 1, hexa, suf))
            if val > 0:
                token_mutant(t, "const-1", _fmt_int(val - 1, hexa, suf))
        elif t.kind == "ident" and ATOMIC_RE.match(t.text) and nxt is not None and nxt.text == "(":
            close = _matching(toks, k + 1)
            if close is None or toks[close].line != t.line:
                continue
            args = _split_args(toks, k + 1, close)
            fam = ATOMIC_RE.match(t.text).group(1)
            want = {"load": 1, "store": 2, "fetch_add": 2, "fetch_sub": 2, "cas": 3}[fam]
            if len(args) != want or not all(args):
                continue
            ln = lines[t.line - 1]
            texts = [ln[a[0].col - 1:a[-1].col - 1 + len(a[-1].text)] for a in args]
            new = ATOMICS[fam](texts)
            end = toks[close].col  # 1-based col of ')' -> slice end is col
            muts.append(Mutant(f"{rel}:{t.line}:{t.col}:atomic-plain", rel, t.line, t.col,
                               "atomic-plain", t.line, t.line, [ln],
                               [ln[:t.col - 1] + new + ln[end:]]))

    stmts = _statements(toks, lines)
    op_of = {"stmt": "stmt-delete", "call": "call-delete", "lock": "lock-delete"}
    for i, j, kind in stmts:
        t = toks[i]
        ln = lines[t.line - 1]
        muts.append(Mutant(f"{rel}:{t.line}:{t.col}:{op_of[kind]}", rel, t.line, t.col, op_of[kind],
                           t.line, t.line, [ln], [""]))
    for (i1, j1, _), (i2, j2, _) in zip(stmts, stmts[1:]):
        a, b = toks[i1], toks[i2]
        if b.line != a.line + 1 or j1 + 1 != i2:
            continue  # not adjacent in the same block
        la, lb = lines[a.line - 1], lines[b.line - 1]
        if la.strip() == lb.strip():
            continue
        muts.append(Mutant(f"{rel}:{a.line}:{a.col}:stmt-swap", rel, a.line, a.col, "stmt-swap",
                           a.line, b.line, [la, lb], [lb, la]))
    muts = [m for m in muts if m.operator in operators and m.before != m.after]
    muts.sort(key=lambda m: (m.line, m.col, OPERATORS.index(m.operator)))
    # a key's #n counts only mutants of its own operator, so an --operators
    # subset names each mutant as the whole run does
    return assign_keys(muts)


def _is_declarator(toks, k):
    """`name[N]` in a declaration (an array size): resizing it is not a
    behaviour change the suite could be asked to see, and often illegal."""
    j = k - 2
    return j >= 0 and toks[j].kind == "ident" and j - 1 >= 0 and \
        (toks[j - 1].kind == "ident" or toks[j - 1].text == "*")


def changed_lines(diff_text):
    """{file: set(new-side line numbers)} from `git diff -U0` output."""
    out = {}
    cur = None
    for line in diff_text.splitlines():
        if line.startswith("+++ "):
            p = line[4:].strip()
            cur = p[2:] if p.startswith("b/") else (None if p == "/dev/null" else p)
            if cur is not None:
                out.setdefault(cur, set())
        elif line.startswith("@@") and cur is not None:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            out[cur].update(range(start, start + count))
    return out


def on_changed_lines(m, changed):
    lines = changed.get(m.file)
    return bool(lines) and any(n in lines for n in range(m.first, m.last + 1))
