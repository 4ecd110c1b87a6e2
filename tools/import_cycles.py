#!/usr/bin/env python3
"""Lists the import cycles between the files of each crate: groups of files that reach each
other through paths they name (`use crate::a::b`, `super::x`, `crate::a::f(...)` in code).

    python3 tools/import_cycles.py [crates/NAME ...]

A file names another when a path in it resolves to that file's module (or an item in it).
A parent module declaring `mod child;` is not an import. Prints each cycle (a strongly
connected group of two or more files) with its size; exits 0 either way.
"""

import os
import re
import sys

PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};", re.S)


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    found = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("lib", "main", "mod"):
                parts = parts[:-1]
            found[tuple(parts)] = os.path.join(root, name)
    return found


def resolve(path, here, mods):
    """The module a `crate::`/`super::`/`self::` path lands in (its longest module prefix)."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = (), parts[1:]
    else:
        base = list(here)
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
        base = tuple(base)
    best = None
    for k in range(len(rest) + 1):
        candidate = base + tuple(rest[:k])
        if candidate in mods:
            best = candidate
    return best


def paths_in(text):
    text = re.sub(r"//[^\n]*", "", text)
    out = set(PATH.findall(text))
    for prefix, body in USE_GROUP.findall(text):
        for item in re.split(r"[,\s{}]+", body):
            item = item.split(" as ")[0]
            if item and item != "self":
                out.add(prefix + "::" + item)
    return out


def strongly_connected(graph):
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            groups.append(group)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return groups


def crate_cycles(crate):
    src = os.path.join(crate, "src")
    mods = modules(src)
    graph = {}
    for mod, file in mods.items():
        # `super` in a file `a/b.rs` or `a/b/mod.rs` (module `a::b`) is `a`.
        here = mod
        with open(file, encoding="utf-8") as f:
            text = f.read()
        edges = set()
        for p in paths_in(text):
            target = resolve(p, here, mods)
            if target is not None and target != mod:
                edges.add(target)
        graph[mod] = edges
    return [g for g in strongly_connected(graph) if len(g) > 1], mods


def main():
    crates = sys.argv[1:] or sorted(
        os.path.join("crates", c) for c in os.listdir("crates") if os.path.isdir(os.path.join("crates", c, "src"))
    )
    total = 0
    for crate in crates:
        cycles, mods = crate_cycles(crate)
        for group in cycles:
            total += 1
            names = sorted(os.path.relpath(mods[m], crate) for m in group)
            print(f"{crate}: a cycle of {len(names)} files: {', '.join(names)}")
    print(f"{total} cycle(s)")


if __name__ == "__main__":
    main()
