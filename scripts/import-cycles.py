#!/usr/bin/env python3
"""Finds import circles between the modules of each crate (issue 32).

A module of a crate is a file or folder right under its `src/`; module A
uses B when A's production code (everything before its first
`#[cfg(test)]`) names `crate::B`, or a name the crate's root re-exports
from B (`crate::Part` for `pub use upload::Part`), or does either
through `super::` from a file right under `src/`. A circle is a set of
modules that each reach the others that way: such modules cannot be
read, tested or moved one at a time. Prints each circle and exits 1 when
there is one.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
USE = re.compile(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)")
GROUP = re.compile(r"\buse crate::\{([^}]*)\}", re.S)
# `pub use module::Name;`, `pub use module::{A, B};` in the crate's root.
REEXPORT = re.compile(r"\bpub use (?:self::)?([a-z_][a-z0-9_]*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)", re.S)
NAME = re.compile(r"(?:^|[{,])\s*(?:[a-z_][a-z0-9_]*::)*([A-Za-z_][A-Za-z0-9_]*)")


def production(text):
    """The file's code before its test module, without comment lines (a
    doc link names a path without importing it)."""
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def modules(src):
    """Each top-level module's name and its files."""
    found = {}
    for path in src.rglob("*.rs"):
        rel = path.relative_to(src).parts
        if rel[0] in ("lib.rs", "main.rs"):
            continue
        name = rel[0][:-3] if rel[0].endswith(".rs") else rel[0]
        found.setdefault(name, []).append(path)
    return found


def reexports(src, mods):
    """The names the crate's root re-exports, and the module of each."""
    owner = {}
    for root in ("lib.rs", "main.rs"):
        path = src / root
        if not path.exists():
            continue
        for module, items in REEXPORT.findall(production(path.read_text())):
            if module in mods:
                for name in NAME.findall(items.strip("{}")):
                    owner[name] = module
    return owner


def edges(src, mods):
    """Which modules each module names."""
    owner = reexports(src, mods)
    graph = {m: set() for m in mods}
    for m, files in mods.items():
        for f in files:
            text = production(f.read_text())
            if f.parent == src:
                # From a file right under src/, `super::` is the root.
                text = re.sub(r"\bsuper::", "crate::", text)
            names = set(USE.findall(text))
            for group in GROUP.findall(text):
                names.update(re.findall(r"(?:^|,)\s*([A-Za-z_][A-Za-z0-9_]*)", group))
            found = {n if n in mods else owner.get(n) for n in names}
            graph[m].update(n for n in found if n and n != m)
    return graph


def circles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    sys.setrecursionlimit(10000)
    found = False
    for src in sorted(ROOT.glob("*/*/src")):
        graph = edges(src, modules(src))
        for comp in circles(graph):
            found = True
            crate = src.parent.relative_to(ROOT)
            links = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
            print(f"{crate}: {', '.join(comp)} ({'; '.join(links)})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
