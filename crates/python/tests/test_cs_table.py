"""scripts/cs_table.py, the generator of docs/cs-measured.md, at small sizes: every example
runs, its output checked against the script's host computation, and the table and the
crossover text come out of the measured values."""

import subprocess
import sys

from test_jobs import ROOT, cli


def test_the_cs_table_is_generated_from_checked_runs(tmp_path):
    out = tmp_path / "t.md"
    subprocess.run(
        [sys.executable, ROOT / "scripts" / "cs_table.py", "--nearflash", cli(),
         "--sizes-mib", "1,2", "--preset", "test-min", "--out", out],
        check=True,
    )
    text = out.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| 1 MiB") or
            line.startswith("| 2 MiB")]
    assert len(rows) == 16, text
    for engine in ("drive-cores", "controller", "fpga"):
        assert f"On `{engine}`" in text
    assert "From 1 MiB to 2 MiB" in text


def test_bad_sizes_are_named(tmp_path):
    p = subprocess.run(
        [sys.executable, ROOT / "scripts" / "cs_table.py", "--nearflash", cli(),
         "--sizes-mib", "1,x", "--out", tmp_path / "t.md"],
        capture_output=True, text=True,
    )
    assert p.returncode != 0 and "--sizes-mib" in p.stderr
