#!/usr/bin/env bash
# Measures the figures the README and issue notes quote: backbone limits, GC behaviour and
# simulation speed. Usage: scripts/bench.sh [OUT_DIR]  (default: bench-out). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out}
mkdir -p "$out"
cargo build --release -q -p nearflash
nf=target/release/nearflash

run() { # name, args...
  local name=$1; shift
  "$nf" io "$@" --quiet --json "$out/$name.json"
}

run seq-read-128k-qd32 --preset flashabacus --pattern seq-read --request-kib 128 --total-gib 8 --queue-depth 32
for qd in 32 64 256; do
  run rand-read-8k-qd$qd --preset flashabacus --pattern rand-read --request-kib 8 --requests 1000000 --queue-depth $qd
done
run rand-write-8k-filled --preset flashabacus --pattern rand-write --request-kib 8 --requests 200000 --queue-depth 32 --precondition
run rand-write-64k-filled --preset flashabacus --pattern rand-write --request-kib 64 --requests 200000 --queue-depth 32 --precondition
# A 1 TiB device (32x the blocks of flashabacus; the map needs a 64 MiB scratchpad budget).
run rand-read-8k-1tib --preset flashabacus --set flash.blocks_per_plane=8192 \
  --set ftl.scratchpad_bytes=67108864 --pattern rand-read --request-kib 8 --requests 1000000 --queue-depth 64

python3 - "$out" <<'PY'
import json, sys, glob, os
rows = []
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(p))
    lim = d["analytic_limits"]
    pre = d["precondition"] or {}
    rows.append((os.path.basename(p)[:-5], d["iops"], d["read_bandwidth_mb_s"], d["write_bandwidth_mb_s"],
                 lim["read_bandwidth_mb_s"], lim["page_read_iops"], d["latency_us"]["p50"], d["latency_us"]["p99"],
                 d["waf"], d["gc_runs"], d["wall_s"], pre.get("wall_s", 0.0), d["events_per_wall_s"] / 1e6,
                 d["speed"]["measured"]["plane_ops_per_wall_s"] / 1e6, d["peak_rss_mb"]))
hdr = ("run", "IOPS", "rd MB/s", "wr MB/s", "rd limit", "IOPS limit", "p50 us", "p99 us", "WAF", "GC",
       "wall s", "(precond)", "Mev/s", "Mops/s", "RSS MB")
print(" | ".join(hdr))
for r in rows:
    print(" | ".join([r[0]] + [("-" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))) for v in r[1:]]))
PY
