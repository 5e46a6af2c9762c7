"""The sweep's machine-readable report and its HTML page.

The JSON follows the mutation-testing-report-schema (the format Stryker and
mutation-testing-elements share), so the standard viewer renders it: each
sabotage is a mutant of the file it patches.  The HTML page is static: the
report is embedded, and so is the viewer's JS bundle from
ci/sabotage/node_modules (npm ci there; nothing is fetched by the page).
"""
from __future__ import annotations

import json
import os
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
SCHEMA = HERE / "node_modules/mutation-testing-report-schema/src/mutation-testing-report-schema.json"
BUNDLE = HERE / "node_modules/mutation-testing-elements/dist/mutation-test-elements.js"

# Outcome -> the schema's MutantStatus.  A catch that did not happen as
# declared (wrong kind, other catcher) is still a kill as far as the viewer's
# score goes; statusReason says what was wrong with it.
STATUS = {
    "caught": "Killed", "wrong-kind": "Killed", "caught-by-other": "Killed",
    "survived": "Survived", "timeout": "Timeout",
    "does-not-compile": "CompileError", "refused-by-build": "CompileError",
    "stale": "Ignored", "inert": "Ignored", "same-object-code": "Ignored",
}


def _location(source, find):
    i = source.find(find) if find else -1
    if i < 0:
        return {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 2}}
    line = source.count("\n", 0, i) + 1
    col = i - (source.rfind("\n", 0, i) + 1) + 1
    j = i + len(find)
    eline = source.count("\n", 0, j) + 1
    ecol = j - (source.rfind("\n", 0, j) + 1) + 1
    return {"start": {"line": line, "column": col}, "end": {"line": eline, "column": ecol}}


# An outcome that means the defect was caught, whatever was declared about it
# (a wrong kind or another catcher is still a catch); stale, inert and
# does-not-compile ran no catcher and are counted apart.
CAUGHT = ("caught", "caught-by-other", "wrong-kind", "timeout")
FRAMEWORK_VERSION = "2"


def tally(results):
    """The sweep's counts from result dicts: defects (caught / survived / not
    run) apart from controls and build checks, and the three verdicts
    (as declared, not as declared, nothing declared).  `percent` is the
    caught share of the defects that ran (None when none did)."""
    t = {"entries": len(results), "defects": 0, "caught": 0, "survived": 0, "notRun": 0,
         "percent": None,
         "controls": {"total": 0, "survived": 0, "caught": 0, "notRun": 0},
         "buildChecks": {"total": 0, "refused": 0, "accepted": 0, "other": 0},
         "asDeclared": 0, "notAsDeclared": 0, "undeclared": 0}
    for r in results:
        role, out = r.get("role", "defect"), r["outcome"]
        if role == "control":
            c = t["controls"]
            c["total"] += 1
            c["survived" if out == "survived" else "caught" if out in CAUGHT else "notRun"] += 1
        elif role == "build-check":
            c = t["buildChecks"]
            c["total"] += 1
            c["refused" if out == "refused-by-build" else "accepted" if out == "survived" else "other"] += 1
        elif out in CAUGHT:
            t["caught"] += 1
        elif out == "survived":
            t["survived"] += 1
        else:
            t["notRun"] += 1
        t["asDeclared" if r["ok"] is True else "notAsDeclared" if r["ok"] is False else "undeclared"] += 1
    t["defects"] = t["caught"] + t["survived"]
    if t["defects"]:
        t["percent"] = round(100.0 * t["caught"] / t["defects"], 1)
    return t


def build(manifest, results, sources, perf, tests, fallback=None, baseline=None, extra=None):
    """results: list of result dicts (see sweep.Result.as_dict); sources:
    file -> original text; perf: {setup, initialRun, mutation} ms; tests:
    catcher labels that took part; fallback: what the fallback set ran and
    left out (sweep.fallback_info); baseline: [{catcher, fallback, seeds,
    strategy, seconds}] of the green baseline run (named catchers and the
    fallback set; the time-left estimate's costs); extra: more config keys (the --fail-under)."""
    files = {}
    for r in results:
        f = files.setdefault(r["file"], {"language": "c", "source": sources.get(r["file"], ""),
                                          "mutants": []})
        status = STATUS[r["outcome"]]
        if status == "Killed" and r.get("kind") == "timeout":
            status = "Timeout"
        m = {
            # a generated mutant's key: it names the mutant across commits,
            # as equivalent.txt does; `location` gives today's position
            "id": r.get("key") or r.get("id") or r["name"],
            "mutatorName": r.get("operator") or r.get("failure") or r["expect"] or "defect",
            "location": r.get("location") or _location(f["source"], r["find"]),
            "status": status,
            "description": r["why"],
            "replacement": r["replace"],
            "duration": round(r["seconds"] * 1000.0, 1),
            "testsCompleted": len(r.get("ran", [])),
            "statusReason": r["summary"],
        }
        if r.get("catchers"):
            m["killedBy"] = [c["catcher"] for c in r["catchers"]]
        elif r.get("catcher"):
            m["killedBy"] = [r["catcher"]]
        if r.get("declared"):
            m["coveredBy"] = list(r["declared"])
        f["mutants"].append(m)
    return {
        "schemaVersion": "2",
        "thresholds": {"high": 100, "low": 90},
        "projectRoot": manifest.root,
        "files": files,
        "testFiles": {"": {"tests": [{"id": t, "name": t} for t in sorted(tests)]}},
        "performance": {k: round(v, 1) for k, v in perf.items()},
        # 2: ok may be null (judged false: nothing declared), config.summary,
        # config.fallback, config.baseline, per-outcome role/judged
        "framework": {"name": "tpheal sabotage sweep", "version": FRAMEWORK_VERSION},
        "config": dict({"package": manifest.package, "manifest": os.path.basename(manifest.path),
                        "summary": tally(results),
                        "fallback": fallback or {"layers": {}, "leftOut": []},
                        "baseline": baseline or [],
                        "outcomes": {r["name"]: {"expect": r["expect"], "outcome": r["outcome"],
                                                 "ok": r["ok"], "judged": r.get("judged", True),
                                                 "role": r.get("role", "defect"),
                                                 "catcher": r.get("catcher"),
                                                 "schedules": r.get("schedules"),
                                                 "seed": r.get("seed"), "kind": r.get("kind"),
                                                 "estimateLeft": r.get("estimateLeft")}
                                     for r in results}}, **(extra or {})),
        "system": {"ci": bool(os.environ.get("CI"))},
    }


def html(report):
    """A self-contained page; the viewer bundle is inlined when installed."""
    data = json.dumps(report).replace("</", "<\\/")
    if BUNDLE.exists():
        js = BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")
        body = ('<mutation-test-report-app title-postfix="tpheal sabotage sweep">'
                '</mutation-test-report-app>\n<script>' + js + '</script>\n'
                '<script>document.querySelector("mutation-test-report-app").report = '
                + data + ';</script>')
    else:
        body = ("<p>The viewer bundle is not installed: run <code>npm ci</code> in "
                "ci/sabotage. The raw report follows.</p><pre>"
                + re.sub(r"[<&]", lambda m: {"<": "&lt;", "&": "&amp;"}[m.group()],
                         json.dumps(report, indent=1)) + "</pre>")
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<title>tpheal sabotage sweep</title></head><body>\n' + body + '\n</body></html>\n')


# ---- a small JSON-schema (draft-07 subset) validator -----------------------
# The schema package ships the schema but not a validator (ajv is only its
# devDependency), and the sweep is stdlib-only, so this covers exactly the
# keywords that schema uses; an unknown keyword is an error rather than
# silently ignored, so a new schema version cannot make the check vacuous.
KNOWN = {"$schema", "$id", "$ref", "title", "description", "examples", "type", "required",
         "properties", "additionalProperties", "items", "enum", "pattern", "minimum",
         "maximum", "uniqueItems", "format", "definitions", "default"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def validate(instance, schema, root=None, path="$"):
    root = root or schema
    errors = []
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{path}: schema uses unsupported keywords {sorted(unknown)}"]
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return [f"{path}: unsupported $ref {ref}"]
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return validate(instance, target, root, path)
    t = schema.get("type")
    if t:
        if t == "integer":
            ok = isinstance(instance, int) and not isinstance(instance, bool)
        elif t == "number":
            ok = isinstance(instance, (int, float)) and not isinstance(instance, bool)
        else:
            ok = isinstance(instance, TYPES[t]) and not (t != "boolean" and isinstance(instance, bool))
        if not ok:
            return [f"{path}: expected {t}, got {type(instance).__name__}"]
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{path}: {instance!r} not in {schema['enum']}")
    if "pattern" in schema and isinstance(instance, str) and not re.search(schema["pattern"], instance):
        errors.append(f"{path}: {instance!r} does not match {schema['pattern']}")
    if isinstance(instance, (int, float)) and not isinstance(instance, bool):
        if "minimum" in schema and instance < schema["minimum"]:
            errors.append(f"{path}: {instance} < {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            errors.append(f"{path}: {instance} > {schema['maximum']}")
    if isinstance(instance, dict):
        for k in schema.get("required", []):
            if k not in instance:
                errors.append(f"{path}: missing required '{k}'")
        props = schema.get("properties", {})
        for k, v in instance.items():
            if k in props:
                errors += validate(v, props[k], root, f"{path}.{k}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += validate(v, schema["additionalProperties"], root, f"{path}[{k!r}]")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected property '{k}'")
    if isinstance(instance, list):
        if "items" in schema:
            for i, v in enumerate(instance):
                errors += validate(v, schema["items"], root, f"{path}[{i}]")
        if schema.get("uniqueItems"):
            seen = [json.dumps(v, sort_keys=True) for v in instance]
            if len(set(seen)) != len(seen):
                errors.append(f"{path}: items are not unique")
    return errors


def validate_report(report):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return validate(report, schema)
