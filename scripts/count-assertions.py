#!/usr/bin/env python3
"""Counts functions and invariant assertions per crate (issue 30: "assertions per function by
crate, before and after").

For every crates/*/src/**/*.rs file it skips test code (a `#[cfg(test)]` item through its
closing brace, and files under a `tests` directory or named `tests.rs`), then counts
function definitions (`fn name`) and assertion macros (`assert!`, `assert_eq!`, `assert_ne!`,
`debug_assert!`, `debug_assert_eq!`, `debug_assert_ne!`, `unreachable!`). Strings and comments
are stripped first, so a macro named in a message or a doc comment does not count.

Usage: scripts/count-assertions.py [--json] [REPO]   (REPO defaults to the current directory)
"""

import json
import pathlib
import re
import sys

ASSERT = re.compile(r"\b(?:debug_)?assert(?:_eq|_ne)?!|\bunreachable!")
FN = re.compile(r"\bfn\s+[A-Za-z_][A-Za-z0-9_]*")
STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', re.S)


def strip(text: str) -> str:
    """Blanks comments, string and char literals (keeping line structure irrelevant)."""
    return STRIP.sub(lambda m: " " if m.group(0).startswith(("//", "/*")) else '""', text)


def without_tests(text: str) -> str:
    """Drops every `#[cfg(test)]` item: from the attribute to its matching closing brace."""
    out, i = [], 0
    while True:
        j = text.find("#[cfg(test)]", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("{", j)
        semi = text.find(";", j)
        if k < 0 or (0 <= semi < k):  # `#[cfg(test)] mod tests;` or a use line
            i = semi + 1 if semi >= 0 else len(text)
            continue
        depth = 0
        for pos in range(k, len(text)):
            if text[pos] == "{":
                depth += 1
            elif text[pos] == "}":
                depth -= 1
                if depth == 0:
                    i = pos + 1
                    break
        else:
            return "".join(out)


def count(repo: pathlib.Path) -> dict:
    rows = {}
    for src in sorted(repo.glob("crates/*/src")):
        fns = asserts = 0
        for f in src.rglob("*.rs"):
            rel = f.relative_to(src).parts
            if "tests" in rel[:-1] or f.name == "tests.rs":
                continue
            body = without_tests(strip(f.read_text(encoding="utf-8", errors="replace")))
            fns += len(FN.findall(body))
            asserts += len(ASSERT.findall(body))
        crate = src.parent.name
        rows[crate] = {
            "functions": fns,
            "assertions": asserts,
            "per_function": round(asserts / fns, 3) if fns else 0.0,
        }
    return rows


def main(argv: list) -> int:
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    repo = pathlib.Path(args[0] if args else ".")
    if not (repo / "crates").is_dir():
        print(f"{repo}: no crates/ directory (give the repository's root)", file=sys.stderr)
        return 2
    rows = count(repo)
    if as_json:
        print(json.dumps(rows, indent=1, sort_keys=True))
        return 0
    print(f"{'crate':<12} {'functions':>9} {'assertions':>10} {'per fn':>7}")
    for crate, r in rows.items():
        print(f"{crate:<12} {r['functions']:>9} {r['assertions']:>10} {r['per_function']:>7.2f}")
    fns = sum(r["functions"] for r in rows.values())
    asserts = sum(r["assertions"] for r in rows.values())
    print(f"{'all':<12} {fns:>9} {asserts:>10} {asserts / max(fns, 1):>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
