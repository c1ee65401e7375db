#!/usr/bin/env bash
# Runs every test of nearflash on this machine (the README's test command). From a fresh clone
# on an idle 2-core machine: about 9 minutes, most of it compiling (README, "Start here").
#   1. scripts/setup.sh installs what the tests need beyond Rust (Debian packages and Python
#      packages), if missing;
#   2. the Rust workspace's tests in the `ci` profile (Cargo.toml: release optimisation, built
#      for compile time; the FUSE tests skip, saying so, only where the machine has no
#      /dev/fuse), their binaries run side by side, one per core (scripts/run-tests.py);
#   3. the Python package (crates/python): its wheel built by maturin in the same profile and
#      target directory, so that it reuses the test build's artifacts and compiles only pyo3
#      and the extension (this script fails, naming them, if anything else is compiled);
#      installed into the default python3, then its tests (pytest), which compare it with the
#      CLI the Rust tests built (target/ci/nearflash).
# It ends with a line giving the time of each part (compile, Rust tests, wheel, pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/setup.sh
setup_s=$((SECONDS - start))
cargo test --workspace --profile ci --no-run
compile_s=$((SECONDS - start - setup_s))
python3 scripts/run-tests.py --profile ci
rust_s=$((SECONDS - start - setup_s - compile_s))

wheels=target/ci/wheels
rm -rf "$wheels"
log=target/ci/maturin.log
if ! python3 -m maturin build --profile ci --manifest-path crates/python/Cargo.toml \
  --out "$wheels" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
grep -E '^ *(Compiling|Finished) ' "$log" || true
extra=$(grep -E '^ *Compiling ' "$log" | awk '{print $2}' \
  | grep -v -E '^(pyo3|pyo3-build-config|pyo3-ffi|pyo3-macros|pyo3-macros-backend|target-lexicon|nearflash-python)$' || true)
if [ -n "$extra" ]; then
  echo "test.sh: the wheel build compiled crates the test build had already compiled, for other" >&2
  echo "features: $(echo "$extra" | tr '\n' ' ')— align them in crates/python/Cargo.toml" >&2
  exit 1
fi
wheel_s=$((SECONDS - start - setup_s - compile_s - rust_s))
python3 -m pip uninstall --quiet --yes nearflash >/dev/null 2>&1 || true
python3 -m pip install --quiet "$wheels"/nearflash-*.whl
NEARFLASH_BIN=target/ci/nearflash python3 -m pytest -q crates/python/tests
pytest_s=$((SECONDS - start - setup_s - compile_s - rust_s - wheel_s))
echo "test.sh: ${SECONDS}s in all: setup ${setup_s}s, compile ${compile_s}s, Rust tests ${rust_s}s," \
  "wheel ${wheel_s}s, pytest ${pytest_s}s"
