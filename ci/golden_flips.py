"""Failing runs of the corpus, for the golden digests (ci/golden.py).

A passing corpus never shows the code that writes a failure: the oracle's
message with its values, the trace up to the failing check, the replay by
schedule and its verdict, the replay commands, the exit code.  Each
comparison of an `expect` or `assert` line of a scenario, negated on its own
(`==` <-> `!=`, `<` <-> `>=`, `>` <-> `<=`), makes a scenario that fails in
some or every run, the way a user's broken expectation does; its report,
with what names the build or the machine taken out, is deterministic and is
digested like the passing runs.  Every such line of the corpus has exactly
one comparison (checked here: a second one would make the flip ambiguous).
"""
from __future__ import annotations

import pathlib
import re

# The negation of each comparison.  Longest first in the pattern, so `<=`
# is never read as `<`.
NEGATE = {"==": "!=", "!=": "==", "<=": ">", ">": "<=", ">=": "<", "<": ">="}
COMPARISON = re.compile(r"==|!=|<=|>=|<|>")
CHECK_LINE = re.compile(r"^\s*(expect|assert)\s")
# A failing run's seeds per strategy: two random and two PCT reports each.
FLIP_SEEDS = 2


def flips(text: str) -> list[tuple[int, str]]:
    """(line number, the scenario with that line's comparison negated) for
    every `expect`/`assert` line that compares, in line order."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        body = line.split("#", 1)[0]
        if not CHECK_LINE.match(body):
            continue
        ops = list(COMPARISON.finditer(body))
        if not ops:
            continue
        if len(ops) > 1:
            raise ValueError(f"line {i + 1}: {len(ops)} comparisons, a flip must negate exactly one")
        m = ops[0]
        flipped = line[:m.start()] + NEGATE[m.group()] + line[m.end():]
        out.append((i + 1, "\n".join(lines[:i] + [flipped] + lines[i + 1:])))
    return out


def flip_name(scenario: pathlib.Path, line: int) -> str:
    """The flipped copy's file name: it appears in the report (FAILURE
    lines, replay commands), so it must not depend on where it is written."""
    return f"{scenario.stem}.L{line}.scn"

