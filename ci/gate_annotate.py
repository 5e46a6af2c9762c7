#!/usr/bin/env python3
"""The gate's failures where a pull request shows them: one GitHub annotation
per failing check, on the line that failed, and a table in the job summary.

    gate_annotate.py [--harness-json DIR] [--stress RESULTS.json]
                     [--sabotage MUTATION-REPORT.json]... [--summary FILE] [--title T]

  --harness-json DIR  *.jsonl files of `tpheal-harness run --json` output (ci/test_scenarios.py
                      keeps one a scenario there when TPHEAL_HARNESS_JSON_DIR names DIR): each
                      `failure` object becomes `::error file=SCENARIO,line=LINE::...` with the
                      shortest command that replays it
  --stress FILE       ci/stress.py's results.json: each failure the same way
  --sabotage FILE     the sweep's or the mutants' mutation-report.json (ci/sabotage/report.py):
                      each surviving sabotage entry or mutant on its core/src line
  --summary FILE      appends a Markdown table of the failures and their replay commands
                      ($GITHUB_STEP_SUMMARY in the gate)

A missing input is no failure (a job makes only some of them).  The harness's
JSON is read through ci/harness_json.py, never its prose: the file and line
are the failure object's `failure` and `line` (0: no line names the check, so
the annotation goes on line 1).  Exit 0 always: the gate's steps decide the
verdict; this only reports them.  Stdlib only."""
from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import harness_json as HJ  # noqa: E402  (the one reader of the harness's JSON)

# A pull request shows at most 10 error annotations a step (GitHub's limit);
# the rest are counted in the last line and all are in the summary.
MAX_ANNOTATIONS = 10


@dataclasses.dataclass
class Finding:
    file: str
    line: int
    title: str
    message: str
    replay: str = ""
    count: int = 1


def rel(path: str) -> str:
    """A path as the repository names it (annotations need it relative)."""
    p = pathlib.Path(path)
    try:
        return p.resolve().relative_to(REPO).as_posix() if p.is_absolute() or p.exists() else p.as_posix()
    except ValueError:
        return p.as_posix()


def shortest(*commands: str) -> str:
    cands = [c for c in commands if c]
    return min(cands, key=len) if cands else ""


def first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def add(found: dict, f: Finding):
    """One finding per file, line and what failed; the shortest replay of them."""
    key = (f.file, f.line, f.title)
    if key in found:
        old = found[key]
        old.count += 1
        old.replay = shortest(old.replay, f.replay)
    else:
        found[key] = f


def from_harness_json(directory: pathlib.Path, found: dict):
    for path in sorted(directory.glob("*.jsonl")):
        objs, _ = HJ.scan(path.read_text(encoding="utf-8", errors="replace"))
        for o in HJ.of_type(objs, "failure"):
            status = o.get("status", "")
            add(found, Finding(rel(o["failure"]), max(1, int(o.get("line", 0))),
                               f"scenario failed: {'a check' if status in ('ok', '') else status}",
                               first_line(o.get("failures", "")), shortest(o.get("replay", ""))))


def from_stress(path: pathlib.Path, found: dict):
    d = json.loads(path.read_text(encoding="utf-8"))
    for f in d.get("failures", []):
        what = f"stress {f.get('mode', '')} failed ({f.get('status', 'failed')})"
        if f.get("fault"):
            what += f" at fault {f['fault']}"
        add(found, Finding(rel(f.get("scenario", "?")), max(1, int(f.get("line") or 0)), what,
                           first_line(f.get("reason", "")),
                           shortest(f.get("replay", ""), f.get("replay_schedule", ""))))


def from_mutation_report(path: pathlib.Path, found: dict):
    d = json.loads(path.read_text(encoding="utf-8"))
    for file, entry in sorted(d.get("files", {}).items()):
        for m in entry.get("mutants", []):
            if m.get("status") != "Survived":
                continue
            line = int(m.get("location", {}).get("start", {}).get("line", 1))
            add(found, Finding(file, line, f"sabotage {m.get('id')} survived",
                               first_line(m.get("description", "")) or first_line(m.get("statusReason", ""))))


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    msg = f.message
    if f.count > 1:
        msg += f" ({f.count} failures here)"
    if f.replay:
        msg += f"\nreplay: {f.replay}"
    return (f"::error file={escape_property(f.file)},line={f.line},title={escape_property(f.title)}::"
            f"{escape_data(msg)}")


def cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def summary(findings: list[Finding], title: str) -> str:
    out = [f"### {title}: {len(findings)} failure{'s' if len(findings) != 1 else ''} annotated\n",
           "| where | what | replay |", "|---|---|---|"]
    for f in findings:
        out.append(f"| `{f.file}:{f.line}` | {cell(f.title)}: {cell(f.message)}"
                   f"{f' ({f.count} failures here)' if f.count > 1 else ''} | "
                   f"{'`' + cell(f.replay) + '`' if f.replay else ''} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--harness-json", type=pathlib.Path)
    ap.add_argument("--stress", type=pathlib.Path)
    ap.add_argument("--sabotage", type=pathlib.Path, action="append", default=[])
    ap.add_argument("--summary", type=pathlib.Path)
    ap.add_argument("--title", default="gate")
    a = ap.parse_args(argv)
    found: dict = {}
    if a.harness_json and a.harness_json.is_dir():
        from_harness_json(a.harness_json, found)
    if a.stress and a.stress.is_file():
        from_stress(a.stress, found)
    for rep in a.sabotage:
        if rep.is_file():
            from_mutation_report(rep, found)
    findings = list(found.values())
    for f in findings[:MAX_ANNOTATIONS]:
        print(annotation(f))
    if len(findings) > MAX_ANNOTATIONS:
        print(f"::error title=more failures::{len(findings) - MAX_ANNOTATIONS} more failures: "
              "the job summary lists every one")
    if a.summary and findings:
        with open(a.summary, "a", encoding="utf-8") as s:
            s.write(summary(findings, a.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
