"""The Python package's jobs: the same fields as the CLI's JSON, overrides as dicts, errors
carrying the CLI's messages."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nearflash

ROOT = Path(__file__).resolve().parents[3]
# Figures that depend on the machine, not the model (IoReport's docs).
WALL_CLOCK = {"wall_s", "events_per_wall_s", "speed", "peak_rss_mb", "sim_ops_per_wall_s"}


def reproducible(doc):
    """`doc` without its wall-clock figures, at any depth (the precondition's wall_s too)."""
    if isinstance(doc, dict):
        return {k: reproducible(v) for k, v in doc.items() if k not in WALL_CLOCK}
    return doc


def cli():
    """The CLI binary the workspace's release build leaves (CI builds it before pytest)."""
    # Absolute: a test may run it from another working directory.
    exe = Path(os.environ.get("NEARFLASH_BIN", ROOT / "target" / "release" / "nearflash")).resolve()
    assert exe.exists(), f"{exe} is missing: build it with `cargo build --release -p nearflash`"
    return exe


def test_io_gives_the_cli_json_field_for_field(tmp_path):
    py = nearflash.io(preset="test-min", pattern="rand-read", requests=1000, queue_depth=8, seed=3)
    out = tmp_path / "io.json"
    subprocess.run(
        [cli(), "io", "--preset", "test-min", "--pattern", "rand-read", "--requests", "1000",
         "--queue-depth", "8", "--seed", "3", "--quiet", "--json", out],
        check=True,
    )
    want = json.loads(out.read_text())
    assert py.keys() == want.keys()
    assert reproducible(py) == reproducible(want)
    assert py["iops"] > 0


def test_io_on_a_zoned_drive_gives_the_cli_json_field_for_field(tmp_path):
    py = nearflash.io(preset="test-min", overrides={"zns.enabled": True}, pattern="seq-write",
                      request_kib=16, requests=2000, queue_depth=4, seed=3)
    out = tmp_path / "io.json"
    subprocess.run(
        [cli(), "io", "--preset", "test-min", "--set", "zns.enabled=true", "--pattern",
         "seq-write", "--request-kib", "16", "--requests", "2000", "--queue-depth", "4",
         "--seed", "3", "--quiet", "--json", out],
        check=True,
    )
    want = json.loads(out.read_text())
    assert reproducible(py) == reproducible(want)
    assert py["writes"] == 2000 and py["waf"] >= 1.0


def test_ycsb_gives_the_cli_json_field_for_field(tmp_path):
    py = nearflash.ycsb(workload="c", access="redirected", records=40, operations=40)
    out = tmp_path / "ycsb.json"
    subprocess.run(
        [cli(), "ycsb", "--workload", "c", "--access", "redirected", "--records", "40",
         "--operations", "40", "--json", out],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    assert reproducible(py) == reproducible(json.loads(out.read_text()))
    assert py["run"]["check"]["reads_checked"] > 0


def test_every_hayagui_job_runs_from_python():
    f = nearflash.fileops(access="direct", op="write-sync", size_kib=4, count=5)
    assert f["verified_bytes"] > 0 and f["latency"]["mean_ns"] > 0
    d = nearflash.db_bench(num=200, benchmarks=["fillseq", "readseq"])
    assert d["sim_ns"] > 0
    g = nearflash.genome(dataset="tiny", access="redirected")
    assert 0 < g["mapped"] <= g["reads"]
    with pytest.raises(nearflash.NearflashError, match="sideways"):
        nearflash.fileops(access="sideways")


def test_a_users_program_runs_from_python_as_the_cli_runs_it(tmp_path):
    data = tmp_path / "in.txt"
    data.write_text("abc\nxyz ABC\n" * 500)
    prog = ROOT / "examples" / "programs" / "grep.wat"
    py = nearflash.program(prog, input=data, engine="core", args=["ABC"])
    out = tmp_path / "p.json"
    subprocess.run(
        [cli(), "program", "run", prog, "--input", data, "--engine", "core", "--arg", "ABC",
         "--output", tmp_path / "matches.txt", "--json", out],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    assert py == json.loads(out.read_text())
    assert py["exit_code"] == 0 and py["run"]["bytes_out"] == len("xyz ABC\n") * 500


def test_active_flash_points_run_from_python():
    b = nearflash.active_flash(foreground_mb_s=20.0, volume_mib=4, fidelity="functional")
    assert b["background"]["fraction_compressed"] > 0 and b["verified_pages"] > 0
    s = nearflash.active_flash(experiment="split", controller_share=0.25, volume_mib=4)
    assert s["split"]["controller_pages"] > 0 and "background" not in s


def test_overrides_as_a_dict_reach_the_preset_and_the_run():
    p = nearflash.preset("test-min", {"flash.channels": 4, "ftl.gc_policy": "round-robin"})
    assert p["flash"]["channels"] == 4 and p["ftl"]["gc_policy"] == "round-robin"
    a = nearflash.io(preset="test-min", pattern="rand-read", requests=300)
    b = nearflash.io(preset="test-min", pattern="rand-read", requests=300,
                     overrides={"flash.channels": 4})
    assert a["trace_hash"] != b["trace_hash"]
    names = set(nearflash.presets()["name"])
    assert {"test-min", "flashabacus", "insider"} <= names


def test_tables_are_dataframes_on_a_plain_install():
    """What the README and the docstrings promise: presets() and reproduce()'s claims and runs
    are pandas DataFrames, and pandas is a dependency of the package (so `pip install
    ./crates/python` alone brings it)."""
    import importlib.metadata

    import pandas

    assert isinstance(nearflash.presets(), pandas.DataFrame)
    assert {"name", "tables", "description"} <= set(nearflash.presets().columns)
    requires = importlib.metadata.requires("nearflash") or []
    assert any(r.split(";")[0].strip() == "pandas" for r in requires), requires


def test_bad_input_raises_with_the_cli_message():
    with pytest.raises(nearflash.NearflashError, match="unknown preset 'nope'|nope"):
        nearflash.io(preset="nope", pattern="rand-read", requests=10)
    with pytest.raises(nearflash.NearflashError, match="unknown field `queue_dpeth`"):
        nearflash.io(preset="test-min", pattern="rand-read", requests=10, queue_dpeth=4)
    with pytest.raises(nearflash.NearflashError, match="--read-percent applies to --pattern mixed"):
        nearflash.io(preset="test-min", pattern="rand-read", requests=10, read_percent=50)
    with pytest.raises(nearflash.NearflashError, match="unknown field `chanels`"):
        nearflash.io(preset="test-min", pattern="rand-read", requests=10,
                     overrides={"flash.chanels": 2})


def test_flashabacus_insider_and_vfile_runs_return_their_figures():
    r = nearflash.run(system="intra-o3", workload="atax", dataset="mini")
    assert r["report"]["scheduler"] == "intra-o3" and r["report"]["throughput_mb_s"] > 0
    i = nearflash.insider(app="grep", system="insider")
    assert i["app"] == "grep" and i["throughput_mb_s"] > 0
    s = nearflash.insider_share(programs=2, duration_ms=4.0)
    assert s["programs"] == 2 and s["per_program_mb_s"] > 0
    d = nearflash.vfile_demo(size_mib=1)
    assert d["refused_requests"] == 0 and d["vread_bytes"] > 0


def test_reproduce_writes_its_directory_and_returns_claims_as_a_frame(tmp_path):
    s = nearflash.reproduce("flashabacus", out=tmp_path / "fa", only=["atax"], dataset="mini", jobs=2)
    assert (tmp_path / "fa" / "summary.json").exists()
    assert (tmp_path / "fa" / "report.html").exists()
    import pandas

    assert isinstance(s["claims"], pandas.DataFrame) and isinstance(s["runs"], pandas.DataFrame)
    # atax on SIMD and the four schedulers, under both cost models (timing fidelity)
    assert len(s["runs"]) == 2 * 5
    assert sorted(r["cost_model"] for r in s["runs"]["extra"]) == ["counted"] * 5 + ["table2"] * 5


def test_an_override_given_as_one_string_is_one_override():
    """Story (issue 28): overrides='flash.channels=2' was iterated as characters ('f', 'l',
    ...), each refused as an override."""
    p = nearflash.preset("test-min", overrides="flash.channels=2")
    assert p["flash"]["channels"] == 2
    r = nearflash.io(preset="test-min", pattern="rand-read", requests=100, overrides="flash.channels=2")
    assert r["requests"] == 100
    with pytest.raises(TypeError, match="overrides must be .* not int"):
        nearflash.preset("test-min", overrides=2)
    with pytest.raises(TypeError, match=r"each item must be a 'table.field=value' string, not int \(2\)"):
        nearflash.preset("test-min", overrides=["flash.channels=2", 2])


def test_ctrl_c_interrupts_a_long_call_within_a_second():
    """Story (issue 28): Ctrl-C was ignored until a long call ended (minutes here)."""
    code = (
        "import sys, time, nearflash\n"
        "print('started', flush=True)\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    nearflash.io(preset='test-min', pattern='rand-read', requests=200_000_000)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(0)\n"
        "print('ran to the end', flush=True)\n"
        "sys.exit(1)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(2.0)  # well inside the run
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        answered = time.monotonic() - sent
    finally:
        p.kill()
    assert p.returncode == 0 and "interrupted" in out, out
    assert answered < 1.5, f"answered Ctrl-C after {answered:.1f} s"
