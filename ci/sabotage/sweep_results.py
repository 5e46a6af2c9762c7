"""What the sweep records: a Run (one catcher run) and a Result (one entry's
outcome, the row of results.json and, through ci/sabotage/report.py, of the
mutation report)."""
from __future__ import annotations

from dataclasses import dataclass, field

import manifest as mf


@dataclass
class Run:
    """One catcher run."""
    label: str
    cmd: list
    failed: bool
    kind: str | None
    seconds: float
    output: str
    rc: int | None
    schedules: int | None = None
    seed: str | None = None
    note: str = ""


@dataclass
class Result:
    entry: mf.Entry
    outcome: str
    ok: bool | None  # None: the entry declared nothing to judge it by
    summary: str
    seconds: float = 0.0
    catcher: str | None = None
    kind: str | None = None
    schedules: int | None = None
    seed: str | None = None
    ran: list = field(default_factory=list)
    catchers: list = field(default_factory=list)  # every failed catcher run
    transcript: str = ""
    diff: str = ""
    estimate_left: float | None = None  # seconds left when it finished (baseline costs)

    def as_dict(self):
        e = self.entry
        return {"name": e.name, "file": e.file, "find": e.find, "replace": e.replace,
                "expect": e.expect, "why": e.why, "failure": e.failure,
                "declared": [c.label for c in e.caught_by], "outcome": self.outcome,
                "ok": self.ok, "summary": self.summary, "seconds": round(self.seconds, 2),
                "catcher": self.catcher, "kind": self.kind, "schedules": self.schedules,
                "seed": self.seed, "ran": self.ran, "catchers": self.catchers,
                "judged": e.declared, "role": e.role,
                "estimateLeft": None if self.estimate_left is None else round(self.estimate_left, 2),
                "id": getattr(e, "mutant", None) and e.mutant.id,
                "key": getattr(e, "mutant", None) and e.mutant.key,
                "operator": getattr(e, "mutant", None) and e.mutant.operator,
                "location": getattr(e, "mutant", None) and e.mutant.location()}
