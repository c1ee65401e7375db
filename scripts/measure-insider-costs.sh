#!/bin/sh
# Measures INSIDER's applications' instruction counts and writes crates/iscapps/src/measured.rs
# (the method: crates/iscapps/src/measure.rs). `--check` re-measures and fails when the
# committed table differs. Needs the wasm32-wasip1 target: rustup target add wasm32-wasip1.
set -eu
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p nearflash-iscapps-wasm --target wasm32-wasip1
NEARFLASH_RUSTC_VERSION="$(rustc --version)" cargo run --profile ci -p nearflash-iscmeasure -- \
    "$target/wasm32-wasip1/release/nearflash_iscapps_wasm.wasm" . "$@"
