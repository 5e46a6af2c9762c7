#!/usr/bin/env python3
"""Markdown summary of pytest JUnit XML files, for $GITHUB_STEP_SUMMARY.
   junit_summary.py [--title T] report.xml...
A missing or unreadable report is itself reported (the job already failed)."""
import argparse
import sys
import xml.etree.ElementTree as ET


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--title", default="tests")
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args(argv)
    total = failed = skipped = 0
    failures = []
    problems = []
    for path in a.reports:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            problems.append(f"{path}: {e}")
            continue
        for case in root.iter("testcase"):
            total += 1
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            if bad is not None:
                failed += 1
                msg = (bad.get("message") or bad.text or "").strip().splitlines()
                failures.append((name, msg[0][:200] if msg else ""))
            elif case.find("skipped") is not None:
                skipped += 1
    print(f"### {a.title}: {total - failed - skipped} passed, {failed} failed, {skipped} skipped\n")
    for p in problems:
        print(f"- report problem: `{p}`")
    if failures:
        print("| failed test | first line |\n|---|---|")
        for name, msg in failures:
            print(f"| `{name}` | {msg.replace('|', '/')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
