#!/usr/bin/env bash
# Installs what the tests need beyond Rust, if missing. Debian packages (run as root):
#   python3-plyvel — Python bindings of Google's C++ LevelDB, with which a test opens the
#   LevelDB database `nearflash db-bench --image` leaves on a device image (exported with
#   `nearflash fs export`), as "standard LevelDB tools" would. The tests call Debian's
#   /usr/bin/python3, where the package installs.
#   clang, lld, wasi-libc, libclang-rt-14-dev-wasm32 — Debian's C compiler, its WebAssembly
#   linker (wasm-ld), the WASI C library and clang's wasm32 builtins, with which a test builds
#   the C example programs (examples/programs/*.c) for `clang --target=wasm32-wasi` and runs
#   them in the simulator (crates/wasm/tests/examples.rs); clang's own BPF target builds the
#   eBPF examples (examples/cs/ebpf/*.c, `clang -target bpf`) for crates/cs's tests, checked
#   below.
#   fuse3 — `fusermount3`, with which `nearflash serve` mounts (and its tests unmount) the
#   simulated device through FUSE.
#   fio, sqlite3 — real programs the live-mode tests run on a mounted device (fio on the raw
#   device file, sqlite3 transactions across a kill -9 of the server).
# and, into the default `python3` (pip, from PyPI), what the Python package's tests need:
#   maturin (builds crates/python's wheel), pytest, pandas and Ray (the sweeps' ray backend).
set -euo pipefail

need=()
if ! /usr/bin/python3 -c 'import plyvel' >/dev/null 2>&1; then
  need+=(python3-plyvel)
fi
for pkg in clang lld wasi-libc libclang-rt-14-dev-wasm32 fuse3 fio sqlite3; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    need+=("$pkg")
  fi
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install ${need[*]} (apt-get install ${need[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  /usr/bin/python3 -c 'import plyvel' || { echo "setup: python3-plyvel did not install" >&2; exit 1; }
  for cmd in clang wasm-ld fusermount3 fio sqlite3; do
    command -v "$cmd" >/dev/null || { echo "setup: $cmd did not install" >&2; exit 1; }
  done
fi
# Debian's clang carries the BPF back end; a clang without it cannot build crates/cs's examples.
if ! echo 'int f(void) { return 0; }' | clang -target bpf -O2 -x c -c -o /dev/null - 2>/dev/null; then
  echo "setup: clang has no BPF target (clang -target bpf); crates/cs's tests need it" >&2
  exit 1
fi

py=(maturin pytest pandas ray)
py_need=()
for m in "${py[@]}"; do
  python3 -c "import $m" >/dev/null 2>&1 || py_need+=("$m")
done
if [ ${#py_need[@]} -gt 0 ]; then
  echo "setup: pip installing ${py_need[*]}" >&2
  pkgs=()
  for m in "${py_need[@]}"; do
    if [ "$m" = ray ]; then pkgs+=("ray[default]"); else pkgs+=("$m"); fi
  done
  python3 -m pip install --quiet "${pkgs[@]}"
  for m in "${py_need[@]}"; do
    python3 -c "import $m" || { echo "setup: $m did not install" >&2; exit 1; }
  done
fi
