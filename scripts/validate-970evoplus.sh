#!/usr/bin/env bash
# Runs the `nearflash io` equivalents of the measured figures of the Samsung 970 EVO Plus 1 TB
# on the ssd-970evoplus preset (configs/ssd-970evoplus.toml) and prints ours against them.
# Measured: kitguru's review (kitguru.net/components/ssd-drives/simon-crisp/
# samsung-ssd-970-evo-plus-1tb-review/10), IOMeter 4 KiB random writes at "QD1" 163,140 IOPS and
# "QD32" 354,973 IOPS. The review page gives the queue depth; the worker count is not on it.
# Assumption: four workers, as kitguru's reviews run their 4K tests "four-threaded" (e.g.
# kitguru.net/components/ssd-drives/simon-crisp/crucial-p5-plus-1tb-ssd-review/8), so QD N
# means 4 x N requests in flight (163k IOPS at one request in flight would be 6 us per write,
# less than one NVMe round trip). A second table prints the datasheet's "up to" figures
# (digit.in, see the preset) beside ours for context only: they are not measurements.
# Usage: scripts/validate-970evoplus.sh [OUT_DIR]  (default: validate-970evoplus-out). Needs
# python3. TABLE_ONLY=1 prints the tables from an OUT_DIR of earlier runs; NEARFLASH=path uses
# that binary instead of building one. The preset is named by its path, so the file in the tree
# is what runs. Every figure of ours is read from the runs' --json output.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-validate-970evoplus-out}
mkdir -p "$out"
if [ "${TABLE_ONLY:-0}" != 1 ] && [ -z "${NEARFLASH:-}" ]; then
  cargo build --release -q -p nearflash
fi
nf=${NEARFLASH:-target/release/nearflash}
preset=configs/ssd-970evoplus.toml

run() { # name, args...
  local name=$1; shift
  [ "${TABLE_ONLY:-0}" = 1 ] && return 0
  echo "$name: nearflash io --preset $preset $*" >"$out/$name.cmd"
  "$nf" io --preset "$preset" "$@" --quiet --json "$out/$name.json"
}

# Measured: 4 KiB random writes, 4 workers x QD 1 and x QD 32, on a fresh drive (whole capacity).
run rw4k-qd4 --pattern rand-write --request-kib 4 --queue-depth 4 --requests 50000
run rw4k-qd128 --pattern rand-write --request-kib 4 --queue-depth 128 --requests 50000
# Context (datasheet): random reads QD1 T1 and QD32 T4 over a 16 GiB preconditioned span;
# 128 KiB sequential reads and writes at QD 32; the post-cache write rate with the cache off.
run rr4k-qd1 --pattern rand-read --request-kib 4 --queue-depth 1 --requests 20000 --span-gib 16
run rr4k-qd128 --pattern rand-read --request-kib 4 --queue-depth 128 --requests 400000 --span-gib 16
run sr128k-qd32 --pattern seq-read --request-kib 128 --queue-depth 32 --total-gib 16 --span-gib 16
run sw128k-qd32 --pattern seq-write --request-kib 128 --queue-depth 32 --total-gib 16
run sw128k-qd32-tlc --pattern seq-write --request-kib 128 --queue-depth 32 --total-gib 16 \
  --set ftl.slc_cache.enabled=false

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(n):
    return json.load(open(os.path.join(out, n + ".json")))
def value(run, fig):
    d = load(run)
    return {"iops": d["iops"], "lat": d["latency_us"]["mean"],
            "rd": d["read_bandwidth_mb_s"], "wr": d["write_bandwidth_mb_s"]}[fig]
def fmt(fig, x):
    return f"{x/1e3:.1f}k" if fig == "iops" else f"{x:,.1f}"
def table(rows, head):
    print(f"| test | figure | nearflash | {head} | ours / {head} |")
    print("|---|---|---|---|---|")
    for test, run, fig, ref, unit in rows:
        v = value(run, fig)
        print(f"| {test} | {unit} | {fmt(fig, v)} | {fmt(fig, ref)} | {v/ref:.2f} |")
    print()
measured = [
    # (test, run, figure, kitguru's value, unit)
    ("4 KiB rand write, QD1 (4 workers)", "rw4k-qd4", "iops", 163140, "IOPS"),
    ("4 KiB rand write, QD32 (4 workers)", "rw4k-qd128", "iops", 354973, "IOPS"),
]
datasheet = [
    ("4 KiB rand read, QD1 T1", "rr4k-qd1", "iops", 19e3, "IOPS"),
    ("4 KiB rand read, QD32 T4", "rr4k-qd128", "iops", 600e3, "IOPS"),
    ("4 KiB rand write, QD1 T1", "rw4k-qd4", "iops", 60e3, "IOPS (ours at 4 in flight)"),
    ("4 KiB rand write, QD32 T4", "rw4k-qd128", "iops", 550e3, "IOPS"),
    ("128 KiB seq read, QD32", "sr128k-qd32", "rd", 3500, "MB/s"),
    ("128 KiB seq write, QD32, in the SLC cache", "sw128k-qd32", "wr", 3300, "MB/s"),
    ("128 KiB seq write, QD32, after the cache", "sw128k-qd32-tlc", "wr", 1700, "MB/s"),
]
print("Measured (kitguru, IOMeter):")
print()
table(measured, "kitguru")
print("Context only, the datasheet's \"up to\" figures (not measurements):")
print()
table(datasheet, "datasheet")
print("| run | mean latency (us) | WAF | SLC written (GB) | straight to TLC (GB) | sim time (s) | channel / die busy |")
print("|---|---|---|---|---|---|---|")
for run in ["rw4k-qd4", "rw4k-qd128", "rr4k-qd1", "rr4k-qd128", "sr128k-qd32", "sw128k-qd32", "sw128k-qd32-tlc"]:
    d = load(run)
    s = d.get("slc_cache") or {}
    waf = "-" if d["waf"] is None else f"{d['waf']:.2f}"
    print(f"| {run} | {d['latency_us']['mean']:,.1f} | {waf} | {s.get('slc_write_bytes', 0)/1e9:.2f} | "
          f"{s.get('tlc_direct_write_bytes', 0)/1e9:.2f} | {d['sim_time_s']:.2f} | "
          f"{100*d['utilization']['channel_mean']:.0f}% / {100*d['utilization']['die_mean']:.0f}% |")
print()
print("| run | command |")
print("|---|---|")
for run in ["rw4k-qd4", "rw4k-qd128", "rr4k-qd1", "rr4k-qd128", "sr128k-qd32", "sw128k-qd32", "sw128k-qd32-tlc"]:
    name, cmd = open(os.path.join(out, run + ".cmd")).read().strip().split(": ", 1)
    print(f"| {name} | `{cmd}` |")
PY
