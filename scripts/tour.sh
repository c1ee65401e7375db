#!/usr/bin/env bash
# Runs the README's tour — every line of the ```sh block between `<!-- tour:begin -->` and
# `<!-- tour:end -->` — in order, in one shell, as a newcomer would from a fresh clone, and
# stops at the first line that fails (exit status 1, naming it). The tour is read from the
# README itself, so what the README shows is what runs.
#
# Usage: scripts/tour.sh [--small] [--in DIR]
#   --small   the slow lines with small sizes (the table SMALL below; every entry must change
#             exactly one line, so a tour line that changes fails here until the table follows)
#   --in DIR  run in DIR (made if missing) instead of a new temporary directory
# Environment: NEARFLASH_BIN, the binary the tour calls `nearflash` (default:
# target/release/nearflash, which `cargo build --release` leaves).
#
# The tour runs in a directory that holds links to the clone's files (README.md, configs/,
# crates/, examples/, ...; not target/) and target/release/nearflash linked to NEARFLASH_BIN:
# what the tour writes (out/, dev.img, m/, ...) lands there, not in the clone. The live-mode
# lines (FUSE: those using the mount point m) are skipped, saying so, only where the machine
# has no /dev/fuse. Each line's wall time is printed after it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

small=0
dir=
while [ $# -gt 0 ]; do
  case $1 in
    --small) small=1 ;;
    --in) dir=$2; shift ;;
    *) echo "usage: scripts/tour.sh [--small] [--in DIR]" >&2; exit 2 ;;
  esac
  shift
done

# The slow lines' small sizes: "text in the README's line|what it becomes".
SMALL=(
  "--total-gib 8|--total-gib 1"
  "--requests 20000 --precondition|--requests 2000 --precondition"
  "nearflash crashtest --preset test-min --seeds 1000|nearflash crashtest --preset test-min --seeds 10"
  "soak --seconds 60 --seed 1|soak --seconds 3 --seed 1"
  "fs crashtest --preset test-min --seeds 1000|fs crashtest --preset test-min --seeds 10"
  "--system intra-o3 --workload mx1|--system intra-o3 --workload mx1 --dataset small"
  "reproduce flashabacus --out out/fa|reproduce flashabacus --out out/fa --only atax --dataset mini"
  "reproduce insider --out out/insider|reproduce insider --out out/insider --fidelity functional"
  "i < 100000; i++|i < 5000; i++"
  "examples/sweeps/flash_gc.toml --out|flash_gc_small.toml --out"
  "reproduce active-flash --out out/af|reproduce active-flash --out out/af --volume-mib 16 --foreground-mb-s 20 --splits 0.5"
  "db-bench --access redirected --num 20000|db-bench --access redirected --num 1000"
  "--records 5000 --operations 5000|--records 500 --operations 500"
  "reproduce hayagui --out out/hayagui|reproduce hayagui --out out/hayagui --db-num 2000 --ycsb-records 2000 --genome-scale 1000"
  "--dataset mouse --scale 100|--dataset tiny"
)

mapfile -t tour < <(awk '
  /<!-- tour:begin -->/ { on = 1; next }
  /<!-- tour:end -->/ { on = 0 }
  on && /^```/ { fence = !fence; next }
  on && fence && NF && $1 !~ /^#/ { print }
' "$root/README.md")
if [ ${#tour[@]} -lt 10 ]; then
  echo "tour.sh: found ${#tour[@]} tour lines in README.md (markers <!-- tour:begin/end -->?)" >&2
  exit 1
fi

if [ $small = 1 ]; then
  for entry in "${SMALL[@]}"; do
    from=${entry%%|*}
    to=${entry#*|}
    hits=0
    for i in "${!tour[@]}"; do
      if [[ ${tour[$i]} == *"$from"* ]]; then
        tour[$i]=${tour[$i]/"$from"/"$to"}
        hits=$((hits + 1))
      fi
    done
    if [ $hits -ne 1 ]; then
      echo "tour.sh: the small-size entry '$from' matches $hits tour lines, not 1: update SMALL" >&2
      exit 1
    fi
  done
fi

bin=${NEARFLASH_BIN:-$root/target/release/nearflash}
if [ ! -x "$bin" ]; then
  echo "tour.sh: $bin is missing: run \`cargo build --release\` (or set NEARFLASH_BIN)" >&2
  exit 1
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/nearflash-tour.XXXXXX")
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for f in "$root"/* "$root"/.gitignore; do
  name=$(basename "$f")
  [ "$name" = target ] || [ -e "$dir/$name" ] && continue
  # .gitignore is copied: git does not follow a symbolic link to it.
  if [ "$name" = .gitignore ]; then cp "$f" "$dir/$name"; else ln -s "$f" "$dir/$name"; fi
done
if [ $small = 1 ]; then
  # The small sweep: flash_gc.toml's grid on one seed, two die counts, a tenth of the requests.
  sed -e 's/^seeds = .*/seeds = [1]/' -e 's/^requests = .*/requests = 2000/' \
    -e 's/^"flash.dies_per_package" = .*/"flash.dies_per_package" = [1, 2]/' \
    "$root/examples/sweeps/flash_gc.toml" >"$dir/flash_gc_small.toml"
fi
mkdir -p "$dir/target/release"
ln -sf "$bin" "$dir/target/release/nearflash"
cd "$dir"
echo "tour: ${#tour[@]} lines in $dir$([ $small = 1 ] && echo ' (small sizes)')" >&2

fuse=1
[ -e /dev/fuse ] || fuse=0
# Anything left running in the background (the live-mode server) is stopped on the way out.
trap 'if [ -d m ] && command -v fusermount3 >/dev/null; then fusermount3 -u m 2>/dev/null || true; fi; jobs -p | xargs -r kill 2>/dev/null || true' EXIT

n=0
for line in "${tour[@]}"; do
  n=$((n + 1))
  if [ $fuse = 0 ] && [[ $line == *" m/"* || $line == *"--mount m"* || $line == *fusermount3* ]]; then
    echo "tour[$n] skipped: this machine has no /dev/fuse (live mode needs it): $line" >&2
    continue
  fi
  echo "tour[$n]\$ $line" >&2
  start=$(date +%s.%N)
  set +e
  eval "$line" </dev/null
  status=$?
  set -e
  end=$(date +%s.%N)
  if [ $status -ne 0 ]; then
    echo "tour.sh: tour line $n failed (exit status $status): $line" >&2
    exit 1
  fi
  awk -v a="$start" -v b="$end" -v n="$n" 'BEGIN { printf "tour[%d] ok, %.1f s\n", n, b - a }' >&2
done

# What the tour wrote must be covered by .gitignore (run in the clone, it must leave
# `git status` clean): every path here that is neither one of the links to the clone nor the
# script's own files.
if command -v git >/dev/null; then
  git init -q . 2>/dev/null
  uncovered=()
  for f in * .[!.]*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    case $f in .git | .gitignore | target | flash_gc_small.toml) continue ;; esac
    [ -L "$f" ] && [ "$(readlink "$f")" = "$root/$f" ] && continue
    git check-ignore -q --no-index "$f" || uncovered+=("$f")
  done
  if [ ${#uncovered[@]} -gt 0 ]; then
    echo "tour.sh: the tour wrote ${uncovered[*]}, which .gitignore does not cover" >&2
    exit 1
  fi
fi
echo "tour: all ${#tour[@]} lines ran" >&2
