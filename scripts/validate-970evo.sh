#!/usr/bin/env bash
# Runs the `nearflash io` equivalents of the fio measurements on Hayagui's host
# (../shared/HAYAGUI.md §1.7: Samsung 970 EVO 1 TB, kernel NVMe driver, fio psync, direct=1,
# so N jobs ~ queue depth N) on the ssd-970evo preset, and prints ours against fio's. Requests
# cross the drive's NVMe front end and PCIe 3.0 x4 link (nearflash io's default interface).
# Usage: scripts/validate-970evo.sh [OUT_DIR]  (default: validate-970evo-out). Needs python3.
# TABLE_ONLY=1 prints the table from an OUT_DIR of earlier runs without running them again.
# Every figure in the table is read from the runs' --json output; fio's are HAYAGUI's.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-validate-970evo-out}
mkdir -p "$out"
# NEARFLASH=PATH runs a binary already built (e.g. target/ci/nearflash) instead of building.
if [ -n "${NEARFLASH:-}" ]; then
  nf=$NEARFLASH
else
  [ "${TABLE_ONLY:-0}" = 1 ] || cargo build --release -q -p nearflash
  nf=target/release/nearflash
fi

run() { # name, args...
  local name=$1; shift
  [ "${TABLE_ONLY:-0}" = 1 ] && return 0
  echo "$name: nearflash io --preset ssd-970evo $*" >"$out/$name.cmd"
  "$nf" io --preset ssd-970evo "$@" --quiet --json "$out/$name.json"
}

# Reads: fio read a written drive. A 16 GiB span is preconditioned (written, then folded out
# of the SLC cache while the device settles) so that reads hit TLC on every die.
run rr4k-qd8 --pattern rand-read --request-kib 4 --queue-depth 8 --requests 200000 --span-gib 16
run rr4k-qd16 --pattern rand-read --request-kib 4 --queue-depth 16 --requests 400000 --span-gib 16
run rr32m-qd8 --pattern rand-read --request-kib 32768 --queue-depth 8 --requests 400 --span-gib 16
run rr32m-qd16 --pattern rand-read --request-kib 32768 --queue-depth 16 --requests 800 --span-gib 16
# Writes on a fresh drive, whole capacity.
run rw4k-qd8 --pattern rand-write --request-kib 4 --queue-depth 8 --requests 50000
run rw4k-qd16 --pattern rand-write --request-kib 4 --queue-depth 16 --requests 50000
# fio ran these for 10 s and 60 s; nearflash io runs an amount, so each writes what fio wrote
# in its time: 2,341 MiB/s x 10 s = 22.9 GiB and 1,180 MiB/s x 60 s = 69.1 GiB.
run rw32m-qd8 --pattern rand-write --request-kib 32768 --queue-depth 8 --total-gib 22.9
run rw32m-qd16 --pattern rand-write --request-kib 32768 --queue-depth 16 --total-gib 69.1
# The post-cache (TLC) rate: the same writes with the cache out of the way (a full cache sends
# every write straight to TLC; folding is idle-time work and does not run under this load).
run rw32m-qd16-tlc --pattern rand-write --request-kib 32768 --queue-depth 16 --total-gib 32 \
  --set ftl.slc_cache.enabled=false

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(n):
    return json.load(open(os.path.join(out, n + ".json")))
MIB = 1048576
rows = [
    # (test, run, figure, fio value, unit)
    ("4 KiB rand read, 8 jobs", "rr4k-qd8", "iops", 88.2e3, "IOPS"),
    ("4 KiB rand read, 8 jobs", "rr4k-qd8", "lat", 89.8, "us mean"),
    ("4 KiB rand read, 16 jobs", "rr4k-qd16", "iops", 182e3, "IOPS"),
    ("4 KiB rand read, 16 jobs", "rr4k-qd16", "lat", 87.0, "us mean"),
    ("4 KiB rand write, 8 jobs", "rw4k-qd8", "iops", 327e3, "IOPS"),
    ("4 KiB rand write, 8 jobs", "rw4k-qd8", "lat", 23.5, "us mean"),
    ("4 KiB rand write, 16 jobs", "rw4k-qd16", "iops", 361e3, "IOPS"),
    ("4 KiB rand write, 16 jobs", "rw4k-qd16", "lat", 43.0, "us mean"),
    ("32 MiB rand read, 8 jobs", "rr32m-qd8", "rd", 2360, "MiB/s"),
    ("32 MiB rand read, 16 jobs", "rr32m-qd16", "rd", 2668, "MiB/s"),
    ("32 MiB rand write, 8 jobs, 10 s", "rw32m-qd8", "wr", 2341, "MiB/s"),
    ("32 MiB rand write, 16 jobs, 60 s", "rw32m-qd16", "wr", 1180, "MiB/s"),
    ("32 MiB rand write, 16 jobs, 60 s (vs our TLC rate)", "rw32m-qd16-tlc", "wr", 1180, "MiB/s"),
]
print(f"| test | figure | nearflash | fio | ours / fio |")
print(f"|---|---|---|---|---|")
for test, run, fig, fio, unit in rows:
    d = load(run)
    v = {"iops": d["iops"], "lat": d["latency_us"]["mean"],
         "rd": d["read_bandwidth_mb_s"] * 1e6 / MIB,
         "wr": d["write_bandwidth_mb_s"] * 1e6 / MIB}[fig]
    fmt = (lambda x: f"{x/1e3:.1f}k") if fig == "iops" else (lambda x: f"{x:,.1f}")
    print(f"| {test} | {unit} | {fmt(v)} | {fmt(fio)} | {v/fio:.2f} |")
print()
print("| run | SLC written (GB) | straight to TLC (GB) | folds | sim time (s) | WAF | channel / die busy |")
print("|---|---|---|---|---|---|---|")
for run in ["rw4k-qd8", "rw4k-qd16", "rw32m-qd8", "rw32m-qd16", "rw32m-qd16-tlc"]:
    d = load(run)
    s = d.get("slc_cache") or {}
    print(f"| {run} | {s.get('slc_write_bytes', 0)/1e9:.2f} | "
          f"{s.get('tlc_direct_write_bytes', 0)/1e9:.2f} | {s.get('fold_runs', 0)} | "
          f"{d['sim_time_s']:.2f} | {d['waf'] if d['waf'] is None else round(d['waf'], 2)} | "
          f"{100*d['utilization']['channel_mean']:.0f}% / {100*d['utilization']['die_mean']:.0f}% |")
print()
print("| read run | channel / die busy | link up busy | link ceiling (MB/s) | ours (MB/s) | checkpoints in phase | page programs in phase |")
print("|---|---|---|---|---|---|---|")
for run in ["rr4k-qd8", "rr4k-qd16", "rr32m-qd8", "rr32m-qd16"]:
    d = load(run)
    link = d.get("link") or {}
    up = f"{100*link['up']['utilization']:.0f}%" if link else "-"
    ceiling = d["analytic_limits"].get("link_up_payload_mb_s")
    print(f"| {run} | {100*d['utilization']['channel_mean']:.0f}% / "
          f"{100*d['utilization']['die_mean']:.0f}% | {up} | "
          f"{'-' if ceiling is None else f'{ceiling:,.1f}'} | {d['read_bandwidth_mb_s']:,.1f} | "
          f"{d['checkpoints_written']} | {d['flash_page_programs']} |")
print()
print("| run | command |")
print("|---|---|")
for run in sorted({r[1] for r in rows}):
    name, cmd = open(os.path.join(out, run + ".cmd")).read().strip().split(": ", 1)
    print(f"| {name} | `{cmd}` |")
PY
