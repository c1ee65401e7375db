#!/usr/bin/env python3
"""Compares the claims of two `nearflash reproduce` summaries (before and after a change).

Usage: scripts/compare-claims.py BEFORE/summary.json AFTER/summary.json [TOLERANCE_PERCENT]

Prints each claim's paper figure, the two measured values and the relative change, flags a
claim that moved beyond the tolerance (default 2%) or vanished, and exits 1 if any did.
"""
import json
import sys


def claims(path):
    with open(path) as f:
        return {c["id"]: c for c in json.load(f)["claims"]}


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    before, after = claims(sys.argv[1]), claims(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) == 4 else 2.0
    moved = 0
    print(f"{'claim':50} {'paper':>9} {'before':>10} {'after':>10} {'change %':>9}")
    for k, c in before.items():
        a = c["ours"]
        b = after.get(k, {}).get("ours")
        if b is None:
            print(f"{k:50} missing after")
            moved += 1
            continue
        rel = (b - a) / abs(a) * 100 if a else (0.0 if b == a else float("inf"))
        flag = "" if abs(rel) <= tol else "  MOVED"
        moved += bool(flag)
        paper = c.get("paper")
        paper = f"{paper:9.3g}" if isinstance(paper, (int, float)) else f"{'-':>9}"
        print(f"{k:50} {paper} {a:10.4g} {b:10.4g} {rel:9.2f}{flag}")
    for k in after:
        if k not in before:
            print(f"{k:50} new claim")
    print(f"{moved} of {len(before)} claims moved beyond ±{tol}%")
    sys.exit(1 if moved else 0)


if __name__ == "__main__":
    main()
