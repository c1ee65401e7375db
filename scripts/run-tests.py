#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side, one per core (what `cargo test` does one
binary at a time). scripts/test.sh and .ci/run call it after `cargo test --no-run` has built
everything; extra arguments go to every binary (`-- --ignored --skip NAME`).

`cargo test` runs its ~120 binaries in turn and most of them hold one core: the README's tour
is one test of 30 s, the CLI's integration tests a handful each. Side by side, the Rust tests
of scripts/test.sh take about half the wall time on 2 cores.

Each binary runs as `cargo test` would run it: in its package's directory, with Cargo's
package variables and the build's library directories. Its output is printed whole when it
ends (never interleaved), a failing binary's in full; the run fails if any binary fails, or
exits without a `test result:` line, or outlives the watchdog (`--timeout-s`, killed and
reported). The doc tests run as one more job (`cargo test --doc`). The last lines give each
binary's time, slowest first, and the totals.

Usage: run-tests.py [--profile ci] [--jobs N] [--timeout-s S] [--no-doc] [-- ARGS...]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

RESULT = re.compile(r"test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored")
# A previous run's times order the next one's binaries, longest first.
TIMES_FILE = "test-times.json"


def test_binaries(profile, names):
    """Every test executable of the workspace, from Cargo's build messages (nothing is
    compiled: `cargo test --no-run` has just built them). `names`: package name by manifest
    path."""
    out = subprocess.run(
        ["cargo", "test", "--workspace", "--profile", profile, "--no-run",
         "--message-format=json"],
        check=True, capture_output=True, text=True).stdout
    bins = []
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg["profile"]["test"]:
            continue
        target = msg["target"]
        pkg_dir = os.path.dirname(msg["manifest_path"])
        label = f"{os.path.basename(pkg_dir)}::{target['name']}" \
            f"{' (' + target['kind'][0] + ')' if target['kind'][0] != 'test' else ''}"
        bins.append({"label": label, "exe": msg["executable"], "dir": pkg_dir,
                     "manifest": msg["manifest_path"], "pkg": names[msg["manifest_path"]]})
    return bins


def run_one(job, args, timeout_s, env_base):
    """Runs one job; returns (label, seconds, status, output, counts)."""
    env = dict(env_base)
    env["CARGO_MANIFEST_DIR"] = job["dir"]
    env["CARGO_MANIFEST_PATH"] = job.get("manifest", "")
    env["CARGO_PKG_NAME"] = job.get("pkg", "")
    cmd = job["cmd"] if "cmd" in job else [job["exe"], *args]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=job["dir"], env=env, capture_output=True, text=True,
                           timeout=timeout_s)
        out, code = p.stdout + p.stderr, p.returncode
        status = "ok" if code == 0 else f"failed (exit {code})"
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        status = f"killed by the watchdog after {timeout_s} s"
    secs = time.monotonic() - start
    counts = [0, 0, 0]
    results = RESULT.findall(out)
    for _, passed, failed, ignored in results:
        counts[0] += int(passed)
        counts[1] += int(failed)
        counts[2] += int(ignored)
    if status == "ok" and not results:
        status = "failed (no `test result:` line)"
    return job["label"], secs, status, out, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout-s", type=int, default=1800,
                    help="kill a binary that runs longer (default 1800)")
    ap.add_argument("--no-doc", action="store_true", help="skip the doc tests")
    ap.add_argument("args", nargs="*", help="arguments for every binary (after --)")
    opts = ap.parse_args()

    root = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version=1"],
                          check=True, capture_output=True, text=True)
    meta = json.loads(root.stdout)
    target_dir = os.path.join(meta["target_directory"], opts.profile)
    names = {p["manifest_path"]: p["name"] for p in meta["packages"]}
    jobs = test_binaries(opts.profile, names)
    if not jobs:
        sys.exit("run-tests: cargo listed no test binaries (was `cargo test --no-run` run?)")
    if not opts.no_doc:
        jobs.append({"label": "doc tests", "dir": meta["workspace_root"],
                     "cmd": ["cargo", "test", "--workspace", "--profile", opts.profile,
                             "--doc", "--", *opts.args]})

    times_path = os.path.join(target_dir, TIMES_FILE)
    try:
        with open(times_path) as f:
            known = json.load(f)
    except (OSError, ValueError):
        known = {}
    # Longest first (a fresh build: the CLI's integration tests, the slowest, first).
    jobs.sort(key=lambda j: -known.get(j["label"], 1000.0 if "nearflash::" in j["label"]
                                       else 0.0))

    env = dict(os.environ)
    libdirs = [os.path.join(target_dir, "deps"), target_dir]
    env["LD_LIBRARY_PATH"] = ":".join(libdirs + [env.get("LD_LIBRARY_PATH", "")]).rstrip(":")
    env.setdefault("CARGO", "cargo")

    lock = threading.Lock()
    results = []

    def report(fut):
        label, secs, status, out, counts = fut.result()
        with lock:
            results.append((label, secs, status, counts))
            print(f"── {label}: {status}, {counts[0]} passed, {counts[1]} failed, "
                  f"{counts[2]} ignored, {secs:.1f} s", flush=True)
            if status != "ok":
                print(out, flush=True)

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        for j in jobs:
            pool.submit(run_one, j, opts.args, opts.timeout_s, env).add_done_callback(report)
    wall = time.monotonic() - start

    times = {label: round(secs, 2) for label, secs, _, _ in results}
    tmp = times_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(times, f, indent=0, sort_keys=True)
    os.replace(tmp, times_path)

    failed = [r for r in results if r[2] != "ok"]
    total = [sum(r[3][i] for r in results) for i in range(3)]
    slowest = sorted(results, key=lambda r: -r[1])[:8]
    print("slowest: " + ", ".join(f"{r[0]} {r[1]:.1f} s" for r in slowest))
    print(f"run-tests: {len(results)} binaries on {opts.jobs} jobs in {wall:.0f} s: "
          f"{total[0]} passed, {total[1]} failed, {total[2]} ignored"
          + (f"; FAILED: {', '.join(r[0] for r in failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
