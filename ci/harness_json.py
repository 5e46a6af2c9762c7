"""The harness's JSON lines, as ci/ reads them: one reader for the contract
tpheal-harness writes (harness/scenario/scn_json.c, described by
harness/json-schema.json).  Every stdout line that starts with '{' is one
object {"v": 1, "type": ..., ...}; a line of another version is refused
rather than half-understood, so a changed field cannot be misread silently.

    objects(text)         -> the objects, in order (JSONDecodeError or
                             VersionMismatch on a line that is not the contract)
    scan(text)            -> (objects, lines that did not parse): for output a
                             crash may have cut short; VersionMismatch still raised
    of_type(objs, t)      -> those of one type
    problems(obj)         -> what is wrong with obj against the schema ([] if nothing)
"""
from __future__ import annotations

import functools
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
SCHEMA_PATH = HERE.parent / "harness" / "json-schema.json"
VERSION = 1

sys.path.insert(0, str(HERE / "sabotage"))
from report import validate  # noqa: E402  (the stdlib draft-07 subset the sweep's report uses)


class VersionMismatch(ValueError):
    pass


def objects(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        obj = json.loads(line)
        if not isinstance(obj, dict) or obj.get("v") != VERSION:
            raise VersionMismatch(f"harness JSON line of version {obj.get('v') if isinstance(obj, dict) else '?'!r},"
                                  f" this ci/ reads version {VERSION}: {line[:120]}")
        out.append(obj)
    return out


def scan(text: str) -> tuple[list[dict], int]:
    objs, unparsed = [], 0
    for line in text.splitlines():
        try:
            objs += objects(line)
        except json.JSONDecodeError:
            unparsed += 1
    return objs, unparsed


def of_type(objs: list[dict], t: str) -> list[dict]:
    return [o for o in objs if o.get("type") == t]


@functools.lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def problems(obj: dict) -> list[str]:
    s = schema()
    errs = validate(obj, s)
    if errs:
        return errs
    return validate(obj, s["definitions"][obj["type"]], s, f"$<{obj['type']}>")
