#!/usr/bin/env python3
"""Compares two reproduction outputs (summary.json files, or directories holding one) field
by field, wall-clock fields aside; exits 1 on any difference, listing the first ones.

    scripts/compare-summaries.py /tmp/base-insider /tmp/new-insider

Numbers must be equal exactly (the simulator is deterministic: a speed change that moves a
simulated figure by one ulp is a behaviour change). Fields named `wall_s`, or ending in
`_wall_s` or `per_wall_s`, are measured time and are skipped.
"""
import json
import os
import sys


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "summary.json")
    with open(path) as f:
        return json.load(f)


def wall(key):
    return key == "wall_s" or key.endswith("_wall_s") or key.endswith("per_wall_s")


def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if wall(k):
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'second' if k not in a else 'first'}")
                continue
            diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif type(a) is not type(b) or a != b:
        # NaN == NaN for this purpose (a missing figure is the same missing figure).
        if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
            return
        out.append(f"{path}: {a!r} vs {b!r}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    out = []
    diff(a, b, "$", out)
    runs = len(a.get("runs", [])) if isinstance(a, dict) else 0
    claims = len(a.get("claims", [])) if isinstance(a, dict) else 0
    if out:
        print(f"DIFFERENT: {len(out)} field(s)")
        for line in out[:40]:
            print("  " + line)
        sys.exit(1)
    print(f"identical ({runs} runs, {claims} claims; wall-clock fields aside)")


if __name__ == "__main__":
    main()
