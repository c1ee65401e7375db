#!/bin/bash
# Issue 34's speed acceptance: simulated host writes per wall second (measured phase; zoned:
# writes + appends over the run's wall time), best of 3, of 200 k × 16 KiB sequential writes at
# QD 8 on test-min through NVMe — ordinary writes, FDP writes and zoned writes / Zone Appends.
# Usage: scripts/zoned-fdp-speed.sh [path/to/nearflash]   (default: nearflash on PATH)
set -u
B=${1:-nearflash}
json=$(mktemp)
trap 'rm -f "$json"' EXIT
common=(--preset test-min --pattern seq-write --request-kib 16 --requests 200000 --queue-depth 8 --quiet)
rate() {
    python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
if 'sim_ops_per_wall_s' in r:
    print((r['writes'] + r['appends']) / r['wall_s'])
else:
    print(r['requests'] / r['speed']['measured']['wall_s'])
" "$json"
}
run() {
    local name=$1 best=0 v
    shift
    for _ in 1 2 3; do
        "$B" io "${common[@]}" "$@" --json "$json" >/dev/null || { echo "$name: failed"; return; }
        v=$(rate)
        best=$(python3 -c "print(max($best, $v))")
    done
    printf '%-45s %12.0f\n' "$name" "$best"
}
run "ordinary writes, conventional drive"
run "ordinary writes, page-mapped" --set 'ftl.mapping="page"'
run "FDP writes, 4 handles" --set 'ftl.mapping="page"' --set fdp.enabled=true --placement-handles 4
run "FDP writes, 4 handles, 2 reclaim groups" --set 'ftl.mapping="page"' --set fdp.enabled=true \
    --set fdp.reclaim_groups=2 --placement-handles 4
run "zoned writes" --set zns.enabled=true
run "Zone Appends" --set zns.enabled=true --zone-append
