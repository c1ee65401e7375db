#!/usr/bin/env bash
# Checks, without compiling anything, that no crate is compiled twice for different feature
# sets: (1) `cargo build --release` followed by the README's main command
# (`cargo run --release -p nearflash`) compiles nothing more; (2) the Python wheel's build
# (maturin: `-p nearflash-python --features extension-module`, profile ci) after the tests'
# build (`cargo test --workspace --profile ci`) compiles only pyo3 and the extension.
# It compares Cargo's unit graphs (`--unit-graph`, a nightly-only flag that RUSTC_BOOTSTRAP=1
# enables on stable; nothing is built): a unit compiles again if it, its features, its profile
# or any unit below it differs. Prints what would compile; exit status 1 if (1) or (2) fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
graph() { # out-file, cargo args...
  local out=$1; shift
  RUSTC_BOOTSTRAP=1 cargo "$@" --unit-graph -Z unstable-options >"$out"
}
graph "$tmp/build.json" build --release
graph "$tmp/run.json" build --release -p nearflash
graph "$tmp/test.json" test --workspace --profile ci
graph "$tmp/wheel.json" build --profile ci -p nearflash-python --features extension-module --lib
python3 - "$tmp" <<'PY'
import json, sys

def load(path):
    units = json.load(open(path))["units"]
    keys = {}

    def key(i):
        if i not in keys:
            u = units[i]
            keys[i] = (u["pkg_id"], u["target"]["name"], tuple(u["target"]["kind"]),
                       tuple(sorted(u["features"])), u["mode"],
                       json.dumps(u["profile"], sort_keys=True), u["platform"],
                       tuple(sorted(key(d["index"]) for d in u["dependencies"])))
        return keys[i]

    return units, [key(i) for i in range(len(units))]

def again(before, after):
    _, a = load(before)
    units, b = load(after)
    seen = set(a)
    return sorted({package(units[i]["pkg_id"]) for i, k in enumerate(b) if k not in seen})

def package(pkg_id):
    base, _, frag = pkg_id.partition("#")
    return frag.split("@")[0] if "@" in frag else base.rstrip("/").split("/")[-1]

d = sys.argv[1]
ok = True
run = again(f"{d}/build.json", f"{d}/run.json")
print(f"cargo build --release, then cargo run --release -p nearflash: {len(run)} crates compile again {run}")
ok &= not run
wheel = again(f"{d}/test.json", f"{d}/wheel.json")
allowed = {"nearflash-python", "pyo3", "pyo3-build-config", "pyo3-ffi", "pyo3-macros",
           "pyo3-macros-backend", "target-lexicon"}
print(f"the tests' build, then the wheel's: compiles {wheel}")
extra = sorted(set(wheel) - allowed)
if extra:
    print(f"  beyond pyo3 and the extension: {extra} (align them in crates/python/Cargo.toml)")
    ok = False
sys.exit(0 if ok else 1)
PY
