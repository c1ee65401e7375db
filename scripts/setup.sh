#!/usr/bin/env bash
# Installs what the tests need beyond Rust, if missing (Debian; run as root):
#   python3-plyvel — Python bindings of Google's C++ LevelDB, with which a test opens the
#   LevelDB database `nearflash db-bench --image` leaves on a device image (exported with
#   `nearflash fs export`), as "standard LevelDB tools" would. The tests call Debian's
#   /usr/bin/python3, where the package installs.
# and, into the default `python3` (pip, from PyPI), what the Python package's tests need:
#   maturin (builds crates/python's wheel), pytest, pandas and Ray (the sweeps' ray backend).
set -euo pipefail
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
need=()
if ! /usr/bin/python3 -c 'import plyvel' >/dev/null 2>&1; then
  need+=(python3-plyvel)
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${need[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: need root to install ${need[*]} (apt-get install ${need[*]})" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
/usr/bin/python3 -c 'import plyvel' || { echo "setup: python3-plyvel did not install" >&2; exit 1; }
