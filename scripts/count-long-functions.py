#!/usr/bin/env python3
"""Functions longer than a limit (default 70 lines) in the crates' non-test sources, longest
first, and the files over a line limit (default 700): what issue 30's "files hold one idea"
asks to keep short. A brace counter, not a parser: a function is counted from its `fn` line
to the brace that closes its body; the item a `#[cfg(test)]` gates is skipped (a `mod tests;`
line, or a block to its closing brace) and counting goes on after it; `tests.rs` and `tests/`
are skipped. A function whose comment block above it gives the reason it is long
(a line `// Long: <why>` or `/// Long: <why>`, e.g. one `match` over an instruction set) is
listed apart, with its reason, and not counted against the limit.

Usage: count-long-functions.py [--fn-lines N] [--file-lines N] [--top K]
"""

import argparse
import os
import re

FN = re.compile(r"\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", lines[i]):
            i = item_end(lines, i + 1)[0] + 1
            continue
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        j, block = item_end(lines, i)
        if block:
            yield m.group(6), i + 1, j - i + 1, reason_above(lines, i)
            i = j + 1
        else:
            i += 1


def item_end(lines, i):
    """The last line of the item starting at line `i`, and whether it is a block: a
    declaration ends at its `;` before any brace, a block at the brace that closes it."""
    depth, started = 0, False
    while i < len(lines):
        for ch in lines[i]:
            if ch == "{":
                depth += 1
                started = True
            elif ch == "}":
                depth -= 1
        if started and depth == 0:
            return i, True
        if not started and lines[i].rstrip().endswith(";"):
            return i, False
        i += 1
    return i, started


REASON = re.compile(r"\s*///?\s*Long:\s*(.*)")


def reason_above(lines, i):
    """The `Long:` reason in the comment and attribute lines right above line `i`, if any."""
    k = i - 1
    while k >= 0 and re.match(r"\s*(///|//|#\[)", lines[k]):
        m = REASON.match(lines[k])
        if m:
            return m.group(1).strip()
        k -= 1
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fn-lines", type=int, default=70)
    ap.add_argument("--file-lines", type=int, default=700)
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    long_fns, explained, long_files = [], [], []
    for root, _, files in os.walk("crates"):
        if "/tests" in root or "/target" in root:
            continue
        for f in files:
            if not f.endswith(".rs") or f == "tests.rs":
                continue
            p = os.path.join(root, f)
            n = sum(1 for _ in open(p, encoding="utf-8"))
            if n > a.file_lines:
                long_files.append((n, p))
            for name, line, k, why in functions(p):
                if k > a.fn_lines:
                    (explained if why else long_fns).append((k, p, line, name, why))
    long_fns.sort(reverse=True)
    explained.sort(reverse=True)
    long_files.sort(reverse=True)
    print(f"{len(long_fns)} functions over {a.fn_lines} lines without a reason "
          f"({len(explained)} more give one); {len(long_files)} files over {a.file_lines} lines")
    for k, p, line, name, _ in long_fns[: a.top]:
        print(f"{k:5} {p}:{line} {name}")
    for k, p, line, name, why in explained:
        print(f"{k:5} {p}:{line} {name} — long: {why}")
    for n, p in long_files[: a.top]:
        print(f"{n:5} {p}")


if __name__ == "__main__":
    main()
