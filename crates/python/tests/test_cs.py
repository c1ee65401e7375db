"""`nearflash.cs.Device`: the Computational Programs and SLM command sets one command at a time
from Python — the same drive, latencies and trace as `nearflash cs script`, real programs
(examples/cs, compiled here) computing what a host computation computes, and every refusal a
`CommandError` carrying its NVMe status with the device still usable."""

import json
import subprocess
from pathlib import Path

import pytest

from nearflash import cs

from test_jobs import ROOT, cli

SLM_OUT = 1 << 20


def compile_c(tmp_path, args, src, out):
    out = tmp_path / out
    subprocess.run(["clang", *args, out, ROOT / "examples" / "cs" / src], check=True)
    return out


@pytest.fixture
def filter_o(tmp_path):
    return compile_c(tmp_path, ["-target", "bpf", "-O2", "-c", "-o"], "ebpf/filter.c", "filter.o")


@pytest.fixture
def lines(tmp_path):
    text = "".join(f"{i},{i % 17},{'needle' if i % 9 == 4 else 'hay'}\n" for i in range(20_000))
    p = tmp_path / "in.txt"
    p.write_text(text)
    return p, sum(1 for line in text.splitlines() if "needle" in line)


def run_filter(dev, program, data):
    dev.write_nvm(data)
    dev.load_program(program)
    dev.activate()
    rsid = dev.create_range_set([(0, len(data)), (SLM_OUT, 4096)])
    dev.memory_copy([(0, dev.lbas(len(data)))])
    n = dev.execute(rsid, cparam1=cs.text_param("needle"), cparam2=6)
    return dev.memory_read(SLM_OUT, (n + 3) // 4 * 4)[:n]


def test_a_filter_counts_what_a_host_count_counts_on_every_engine(tmp_path, filter_o, lines):
    wasm = compile_c(
        tmp_path,
        ["--target=wasm32-wasi", "-O2", "-Wl,--strip-all", "-o"],
        "wasm/filter.c",
        "filter.wasm",
    )
    path, hits = lines
    data = path.read_bytes()
    dev = cs.Device(preset="test-min")
    assert dev.engines, "test-min has compute engines"
    for engine in dev.engines:
        for program in (filter_o, wasm):
            d = cs.Device(preset="test-min")
            d.write_nvm(data)
            d.load_program(program)
            d.activate()
            rsid = d.create_range_set([(0, len(data)), (SLM_OUT, 4096)], engine=engine)
            d.memory_copy([(0, d.lbas(len(data)))])
            n = d.execute(rsid, cparam1=cs.text_param("needle"), cparam2=6, engine=engine)
            assert d.memory_read(SLM_OUT, (n + 3) // 4 * 4)[:n] == f"{hits}\n".encode()
            steps = d.steps()
            assert [s["command"] for s in steps][:2] == ["write_nvm", "Load Program"]
            assert all(s["latency_us"] > 0 and s["status"] == "SUCCESS" for s in steps)
            assert d.now_us >= sum(s["latency_us"] for s in steps) * 0.999


def test_the_device_times_commands_as_the_cs_script_command_does(tmp_path, filter_o, lines):
    path, _ = lines
    script = tmp_path / "s.toml"
    script.write_text(
        f"""
[[command]]
op = "write_nvm"
file = "{path.name}"
[[command]]
op = "load_program"
file = "{filter_o.name}"
[[command]]
op = "activate"
[[command]]
op = "create_range_set"
ranges = [{{ start_bytes = 0 }}, {{ start_bytes = {SLM_OUT}, len_bytes = 4096 }}]
[[command]]
op = "copy_from_nvm"
[[command]]
op = "execute"
cparam = ["str:needle", 6]
[[command]]
op = "memory_read"
offset_bytes = {SLM_OUT}
"""
    )
    out = tmp_path / "s.json"
    subprocess.run(
        [cli(), "cs", "script", script, "--preset", "test-min", "--seed", "5", "--json", out],
        check=True,
        cwd=tmp_path,
    )
    want = json.loads(out.read_text())["commands"]
    dev = cs.Device(preset="test-min", seed=5)
    run_filter(dev, filter_o, path.read_bytes())
    got = dev.steps()
    assert [s["command"] for s in got] == [s["command"] for s in want]
    assert [s["latency_us"] for s in got] == [s["latency_us"] for s in want]
    again = cs.Device(preset="test-min", seed=5)
    run_filter(again, filter_o, path.read_bytes())
    assert again.trace_hash == dev.trace_hash


def test_refused_commands_raise_their_status_and_leave_the_device_usable(filter_o, lines):
    path, hits = lines
    data = path.read_bytes()
    dev = cs.Device(preset="test-min")
    dev.write_nvm(data)
    dev.load_program(filter_o)
    rsid = dev.create_range_set([(0, len(data)), (SLM_OUT, 4096)])
    with pytest.raises(cs.CommandError) as e:
        dev.execute(rsid, cparam1=cs.text_param("needle"), cparam2=6)
    assert e.value.status == "PROGRAM_NOT_ACTIVATED"
    assert e.value.code[0] in (0, 1) and e.value.code[1] > 0
    assert dev.steps()[-1]["status"] == "PROGRAM_NOT_ACTIVATED"
    with pytest.raises(cs.CommandError) as e:
        dev.execute(rsid + 7)
    assert e.value.status in cs.STATUS_NAMES
    with pytest.raises(cs.CommandError) as e:
        dev.load_program(b"\x7fELF" + bytes(10 << 20), pind=1)
    assert e.value.status == "PROGRAM_TOO_BIG"
    # Still usable: the filter runs and counts right.
    dev.activate()
    dev.memory_copy([(0, dev.lbas(len(data)))])
    n = dev.execute(rsid, cparam1=cs.text_param("needle"), cparam2=6)
    assert dev.memory_read(SLM_OUT, (n + 3) // 4 * 4)[:n] == f"{hits}\n".encode()


def test_bad_arguments_are_named():
    with pytest.raises(cs.NearflashError, match="no-such-preset"):
        cs.Device(preset="no-such-preset")
    dev = cs.Device(preset="test-min")
    with pytest.raises(cs.NearflashError, match="engine 'gpu'"):
        dev.create_range_set([(0, 4096)], engine="gpu")
    with pytest.raises(cs.NearflashError, match="name it .o"):
        dev.load_program("prog.exe")
    with pytest.raises(cs.NearflashError, match="ptype"):
        dev.load_program(b"MZ\0\0")
    with pytest.raises(ValueError, match="longer than 8 bytes"):
        cs.text_param("123456789")
