#!/usr/bin/env python3
"""Lists production functions longer than LINES_MAX lines.

A function may be longer when the doc comment above it says why, with the
words "Long because" (a table of routes, of error codes, of limits).
Test code (`#[cfg(test)]` modules, tests.rs, tests/ and benches/) and the
benchmark tool are not production code. Used by scripts/check-invariants.sh;
exits non-zero when it lists anything.

A line-based reading, not a parser: a function starts at a line
`[pub] [async] [const] [unsafe] fn name` and ends at the first line that
closes a brace at the same indentation. rustfmt's layout makes that exact
enough for this check.
"""
import os
import re
import sys

LINES_MAX = 80
ROOTS = ["crates", "bins/storesrv"]
FN = re.compile(r"^(\s*)(pub(\([^)]*\))? )?(async )?(const )?(unsafe )?fn (\w+)")


def is_test_path(path):
    return "/tests/" in path or "/benches/" in path or path.endswith("tests.rs")


def long_functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", lines[i]):
            return
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, name = len(m.group(1)), m.group(7)
        head = i
        while head < len(lines) and not lines[head].rstrip().endswith(("{", ";")):
            head += 1
        if head == len(lines) or lines[head].rstrip().endswith(";"):
            i = head + 1
            continue
        end = head + 1
        closing = " " * indent + "}"
        while end < len(lines) and not (
            lines[end].startswith(closing) and not lines[end][indent:indent + 1].isspace()
        ):
            end += 1
        length = end - i + 1
        doc = i - 1
        while doc >= 0 and lines[doc].strip().startswith(("///", "#[")):
            doc -= 1
        explained = any("Long because" in l for l in lines[doc + 1:i])
        if length > LINES_MAX and not explained:
            yield f"{path}:{i + 1}: fn {name} is {length} lines"
        i = head + 1


def main():
    found = []
    for root in ROOTS:
        for d, _, files in os.walk(root):
            for f in sorted(files):
                path = os.path.join(d, f)
                if f.endswith(".rs") and not is_test_path(path):
                    found.extend(long_functions(path))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
