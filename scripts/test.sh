#!/usr/bin/env bash
# Runs every test of nearflash on this machine (the README's test command):
#   1. scripts/setup.sh installs what the tests need beyond Rust (Debian packages and Python
#      packages), if missing;
#   2. the Rust workspace's tests in release mode (the FUSE tests skip, saying so, only where
#      the machine has no /dev/fuse);
#   3. the Python package (crates/python) built from the tree and installed into the default
#      python3, then its tests (pytest), which compare it with the CLI the Rust tests built.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --release
python3 -m pip install --quiet --no-build-isolation ./crates/python
python3 -m pytest -q crates/python/tests
