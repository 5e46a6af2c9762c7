#!/usr/bin/env python3
"""The import picture, generated from the #include lines (issue 20 item 5).

Reads every #include of core/src, core/include and harness/** and prints which
layer includes which.  A layer is a folder, except inside core/src, whose files
may not move (the mutation keys in ci/mutants/*.txt name core/src/<file>.c):
there LAYERS below assigns each file its layer, bottom first.  A header belongs
to the layer of the code that defines what it declares, so an include edge
points the way the calls go.

    python3 ci/import_graph.py            # the picture docs/architecture.md embeds
    python3 ci/import_graph.py --check    # also: exit 1 on an include circle

ci/test_import_graph.py checks the picture in the doc is this output and that
no circle runs across layers.  Python 3.11 standard library only."""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("core/src", "core/include", "harness")

# core/src, bottom layer first.  Every core/src file must be named here (a new
# file fails the test until it is given a layer); core/src/win/ is the real
# pool's backend, a folder of its own.
LAYERS = {
    "core/src:seam": ["os.h"],
    "core/src:trace": ["trace.c", "trace_point.h"],
    "core/src:registry": ["registry.c", "registry.h", "registration.h"],
    "core/src:objects": [
        "object.c", "object.h", "obligation.c", "obligation.h", "healer.c", "healer.h",
        "pool.c", "env.c", "handle.c", "work.c", "wait.c", "timer.c", "periodic.c", "io.c",
        "group.c", "native.c", "key.c", "error.c", "lock.c",
    ],
    "core/src:process": ["process_state.c", "process_state.h"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^">]+)[">]', re.M)


def sources():
    for root in ROOTS:
        for f in sorted((REPO / root).rglob("*")):
            if f.is_file() and (f.suffix in (".c", ".h") or f.name.endswith(".h.in")):
                yield f.relative_to(REPO).as_posix()


def layer_of(rel):
    """The node a file belongs to: its core/src layer, else its folder."""
    parts = rel.split("/")
    if rel.startswith("core/src/") and len(parts) == 3:
        for layer, files in LAYERS.items():
            if parts[2] in files:
                return layer
        raise SystemExit(f"import_graph.py: {rel} has no layer in LAYERS")
    if rel.startswith("core/include/"):
        return "core/include"
    if rel.startswith("harness/") and "/include/" in rel:
        return rel.split("/include/", 1)[0]  # a harness library's public headers are its own
    return "/".join(parts[:-1])


def resolve(rel, kind, name, by_name, files):
    """The repository file an include names, or None (a system header)."""
    if kind == "<":
        if not name.startswith("tpheal/"):
            return None
        cand = f"core/include/{name}"
        if cand in files or cand + ".in" in files:
            return cand if cand in files else cand + ".in"
        # an installed header of a harness library (harness/check/include/tpheal/check.h)
        hits = sorted(f for f in files if f.startswith("harness/") and f.endswith(f"/include/{name}"))
        return hits[0] if len(hits) == 1 else None
    here = rel.rsplit("/", 1)[0]
    cand = str(Path(here, name).as_posix())
    cand = "/".join(p for p in cand.split("/") if p != ".")
    while "/../" in cand:
        cand = re.sub(r"[^/]+/\.\./", "", cand, count=1)
    if cand in files:
        return cand
    # Found through an include directory (the build's -I): by its name, which
    # must then be unambiguous.
    hits = by_name.get(name.rsplit("/", 1)[-1], [])
    hits = [h for h in hits if h.endswith("/" + name) or h == name]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        return None  # generated or platform header (windows.h, a shim)
    raise SystemExit(f"import_graph.py: {rel}: #include \"{name}\" is ambiguous: {hits}")


def edges():
    """{layer: {included layer: [(file, included file), ...]}}, self edges left out."""
    files = set(sources())
    by_name = {}
    for f in files:
        by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    out = {}
    for rel in sorted(files):
        src = layer_of(rel)
        out.setdefault(src, {})
        text = (REPO / rel).read_text(errors="replace")
        for kind, name in INCLUDE.findall(text):
            target = resolve(rel, kind, name, by_name, files)
            if target is None:
                continue
            dst = layer_of(target)
            if dst != src:
                out[src].setdefault(dst, []).append((rel, target))
    return out


def circles(graph):
    """The strongly connected components of more than one layer (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def order(graph):
    """Layers top first: by height (the longest include chain beneath a layer),
    so every layer is printed above all it includes; ties by name.  A circle
    (reported apart) is cut where the walk meets it again."""
    nodes = sorted(set(graph) | {d for ds in graph.values() for d in ds})
    height = {}

    def h(n, seen):
        if n in height:
            return height[n]
        if n in seen:
            return 0
        below = [h(d, seen | {n}) + 1 for d in graph.get(n, {})]
        height[n] = max(below, default=0)
        return height[n]

    for n in nodes:
        h(n, frozenset())
    return sorted(nodes, key=lambda n: (-height[n], n))


def picture(graph=None):
    graph = edges() if graph is None else graph
    rank = {n: i for i, n in enumerate(order(graph))}
    width = max(len(n) for n in rank)
    lines = []
    for n in sorted(rank, key=rank.get):
        deps = sorted(graph.get(n, {}), key=rank.get)
        lines.append(f"{n:<{width}}  -> {', '.join(deps) if deps else '(nothing)'}")
    return "\n".join(lines) + "\n"


def main(argv):
    graph = edges()
    sys.stdout.write(picture(graph))
    found = circles(graph)
    for comp in found:
        print(f"circle across layers: {' <-> '.join(comp)}", file=sys.stderr)
        for a in comp:
            for b in comp:
                for f, t in graph.get(a, {}).get(b, []):
                    print(f"  {f} includes {t}", file=sys.stderr)
    return 1 if ("--check" in argv and found) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
