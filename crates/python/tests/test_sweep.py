"""Sweeps from Python: the local and Ray backends give byte-identical tables, a killed
sweep resumes computing only the missing points, and bad input is a clear error."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nearflash
from nearflash import sweeps as sw

SPEC = {
    "job": "io",
    "preset": "test-min",
    "seeds": [1, 2],
    "metrics": ["iops", "waf", "latency_us.p99", "trace_hash"],
    "fixed": {"pattern": "rand-write", "requests": 400, "precondition": True},
    "grid": {"flash.channels": [1, 2], "ftl.gc_policy": ["greedy", "round-robin"]},
}


def test_local_and_ray_backends_give_identical_tables(tmp_path):
    t = nearflash.sweep(SPEC, out=tmp_path / "local", backend="local", jobs=2, progress=False)
    assert len(t) == 8 and t["iops"].gt(0).all()
    nearflash.sweep(SPEC, out=tmp_path / "ray", backend="ray", jobs=2, progress=False)
    local = (tmp_path / "local" / "results.csv").read_bytes()
    assert local == (tmp_path / "ray" / "results.csv").read_bytes()
    html = (tmp_path / "local" / "summary.html").read_text()
    assert "iops vs flash.channels" in html and "over flash.channels × ftl.gc_policy" in html


def test_a_killed_sweep_reruns_only_the_missing_points(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(sw._toml({**SPEC, "seeds": [1, 2, 3], "fixed": {**SPEC["fixed"], "requests": 3000}}))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "nearflash.sweeps", str(spec), "--out", str(out), "--jobs", "1", "--quiet"]
    p = subprocess.Popen(cmd)
    table = out / "results.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        if table.exists() and len(table.read_text().splitlines()) >= 3:  # header + 2 rows
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    rows_before = len(table.read_text().splitlines()) - 1
    assert 2 <= rows_before < 12, rows_before
    done = sw.run(spec, out=out, jobs=2, progress=False)
    assert done["points"] == 12 and done["computed"] == 12 - rows_before
    fresh = sw.run(spec, out=tmp_path / "fresh", jobs=2, progress=False)
    assert fresh["computed"] == 12
    assert table.read_bytes() == (tmp_path / "fresh" / "results.csv").read_bytes()


def test_bad_specs_and_an_unreachable_ray_are_clear_errors(tmp_path, monkeypatch):
    bad = {**SPEC, "colour": "red"}
    with pytest.raises(nearflash.NearflashError, match="unknown field `colour`"):
        nearflash.sweep(bad, out=tmp_path / "a")
    with pytest.raises(nearflash.NearflashError, match="grid.flash.channels is empty|grid.*empty"):
        nearflash.sweep({**SPEC, "grid": {"flash.channels": []}}, out=tmp_path / "b")
    with pytest.raises(nearflash.NearflashError, match="the grid is empty"):
        nearflash.sweep({**SPEC, "grid": {}}, out=tmp_path / "c")
    with pytest.raises(nearflash.NearflashError, match="unknown field `queue_dpeth`"):
        nearflash.sweep({**SPEC, "grid": {"queue_dpeth": [1]}}, out=tmp_path / "d")
    with pytest.raises(nearflash.NearflashError, match="cannot reach the Ray cluster at 127.0.0.1:9"):
        nearflash.sweep(SPEC, out=tmp_path / "e", backend="ray", address="127.0.0.1:9")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(nearflash.NearflashError, match=r"pip install 'ray\[default\]'"):
        nearflash.sweep(SPEC, out=tmp_path / "f", backend="ray")


def test_a_spec_that_is_none_or_not_a_spec_is_a_type_error(tmp_path):
    """Story (issue 28): sweep(None, ...) was parsed as the TOML text "None"."""
    for spec in (None, 42, [SPEC]):
        with pytest.raises(TypeError, match=f"spec must be a path to a TOML file, TOML text or a dict, not {type(spec).__name__}"):
            nearflash.sweep(spec, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_a_resumed_table_with_a_cell_that_is_not_a_figure_reruns_its_row(tmp_path, capsys):
    """Story (issue 28): a resume kept a non-numeric metric cell as if it were a result."""
    spec = {**SPEC, "seeds": [1], "grid": {"flash.channels": [1, 2]}}
    out = tmp_path / "out"
    sw.run(spec, out=out, jobs=1, progress=False)
    table = out / "results.csv"
    good = table.read_text()
    lines = good.splitlines()
    cells = lines[1].split(",")
    cells[3] = "oops"  # the iops cell of the first row
    table.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    done = sw.run(spec, out=out, jobs=1, progress=False)
    assert done["computed"] == 1
    assert table.read_text() == good
    err = capsys.readouterr().err
    assert f"point {cells[0]}" in err and "column iops holds 'oops'" in err, err


def test_ctrl_c_interrupts_a_local_sweep_within_a_second(tmp_path):
    """Story (issue 28): Ctrl-C was ignored until a long call ended. A terminal's Ctrl-C
    reaches the sweep's process and its workers (one process group)."""
    spec = {"job": "io", "preset": "test-min", "fixed": {"pattern": "rand-read", "requests": 50_000_000},
            "grid": {"queue_depth": [1, 2, 4, 8]}}
    code = (
        "import sys, nearflash\n"
        "print('started', flush=True)\n"
        "try:\n"
        f"    nearflash.sweep({spec!r}, out={str(tmp_path / 'o')!r}, jobs=2, progress=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(0)\n"
        "sys.exit(1)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(3.0)  # the workers are inside their first points
        sent = time.monotonic()
        os.killpg(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        answered = time.monotonic() - sent
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 0 and "interrupted" in out, out
    assert answered < 1.5, f"answered Ctrl-C after {answered:.1f} s"
