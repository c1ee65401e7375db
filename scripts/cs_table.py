#!/usr/bin/env python3
"""Measures the computational-storage examples (examples/cs) with `nearflash cs run` at two
input sizes and writes the table and its explanation, generated from the measured values, as
Markdown (docs/cs-measured.md by default).

    scripts/cs_table.py [--nearflash target/release/nearflash] [--sizes-mib 64,1024]
                        [--preset ssd-970evo] [--out docs/cs-measured.md]

Each run's output is checked against a host computation written here in Python (line count,
column sum, zlib's Adler-32), independent of the programs; a mismatch stops the script. The
inputs are generated deterministically (CSV rows "i,i mod 17,needle|hay") in a temporary
directory. Needs clang with the bpf and wasm32-wasi targets (scripts/setup.sh installs them).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (example, program type, engine, CPARAM1, CPARAM2): every example on the default drive cores
# in both program types, and the filter on every engine.
MATRIX = [
    ("filter", "ebpf", "drive-cores", "str:needle", "6"),
    ("filter", "wasm", "drive-cores", "str:needle", "6"),
    ("aggregate", "ebpf", "drive-cores", "0", "0"),
    ("aggregate", "wasm", "drive-cores", "0", "0"),
    ("checksum", "ebpf", "drive-cores", "0", "0"),
    ("checksum", "wasm", "drive-cores", "0", "0"),
    ("filter", "ebpf", "controller", "str:needle", "6"),
    ("filter", "ebpf", "fpga", "str:needle", "6"),
]


def compile_programs(tmp):
    out = {}
    for name in sorted({m[0] for m in MATRIX}):
        o = tmp / f"{name}.o"
        subprocess.run(["clang", "-target", "bpf", "-O2", "-c", "-o", o,
                        ROOT / "examples/cs/ebpf" / f"{name}.c"], check=True)
        w = tmp / f"{name}.wasm"
        subprocess.run(["clang", "--target=wasm32-wasi", "-O2", "-Wl,--strip-all", "-o", w,
                        ROOT / "examples/cs/wasm" / f"{name}.c"], check=True)
        out[(name, "ebpf")] = o
        out[(name, "wasm")] = w
    return out


def make_input(path, size_bytes):
    """CSV rows until `size_bytes` (cut at a row's end), written in 1 MiB pieces."""
    i = 0
    written = 0
    with open(path, "wb") as f:
        while written < size_bytes:
            rows = []
            n = 0
            while n < (1 << 20) and written + n < size_bytes:
                row = f"{i},{i % 17},{'needle' if i % 9 == 4 else 'hay'}\n".encode()
                rows.append(row)
                n += len(row)
                i += 1
            piece = b"".join(rows)
            f.write(piece)
            written += len(piece)
    return written


def references(path):
    """What each example must print, computed here."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    hits = sum(1 for line in lines if b"needle" in line)
    count = 0
    total = 0
    for line in lines:
        first = line.split(b",", 1)[0]
        if first.isdigit():
            count += 1
            total += int(first)
    return {
        "filter": f"{hits}\n",
        "aggregate": f"{count} {total}\n",
        "checksum": f"{zlib.adler32(data)}\n",
    }


def run(nearflash, preset, program, inp, engine, p1, p2, tmp):
    out = tmp / "out.txt"
    js = tmp / "run.json"
    cmd = [nearflash, "cs", "run", "--preset", preset, "--program", program, "--input", inp,
           "--param", p1, "--param", p2, "--engine", engine, "--output", out, "--json", js]
    start = time.monotonic()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    doc = json.loads(js.read_text())
    doc["wall_s"] = wall
    doc["output"] = out.read_text()
    return doc


def step_us(doc, command):
    return sum(s["latency_us"] for s in doc["commands"] if s["command"] == command)


def ms(us):
    return f"{us / 1000:,.1f} ms"


def explain(rows):
    """The crossover, from the measured figures: per byte and per instruction costs."""
    big = max(r["input_bytes"] for r in rows)
    at = [r for r in rows if r["input_bytes"] == big]
    base = next(r for r in at if r["engine"] == "drive-cores" and r["type"] == "ebpf"
                and r["example"] == "filter")
    copy_ns_b = step_us(base, "Memory Copy") * 1e3 / big
    read_ns_b = base["host_only"]["read_us"] * 1e3 / big
    host_ns_i = base["host_only"]["compute_us"] * 1e3 / base["host_only"]["instructions"]
    ipb = [r["offload"]["instructions"] / r["input_bytes"] for r in at]
    text = [
        f"At {big >> 20} MiB the drive's Memory Copy moves a byte into SLM in "
        f"{copy_ns_b:.3f} ns ({1 / copy_ns_b:.2f} GB/s) while the host reads it through its "
        f"stack in {read_ns_b:.3f} ns ({1 / read_ns_b:.2f} GB/s); a host core spends "
        f"{host_ns_i:.3f} ns per instruction. These programs run "
        f"{min(ipb):.1f}–{max(ipb):.1f} instructions per byte, so computing, not moving, "
        "dominates both paths, and the ratio of the two is about the ratio of the engines' "
        "instruction rates."
    ]
    for r in at:
        if r["example"] != "filter" or r["type"] != "ebpf":
            continue
        execute_ns = step_us(r, "Execute Program") * 1e3
        eng_ns_i = execute_ns / r["offload"]["instructions"]
        name = r["engine"]
        if r["engine_kind"] == "slots":
            host_ns_b = r["host_only"]["total_us"] * 1e3 / big
            text.append(
                f"On `{name}` (FPGA-like slots: the program is a pipeline streaming its bytes, "
                f"so its instructions are not its cost) the filter's Execute takes "
                f"{execute_ns / big:.3f} ns per byte against the host path's {host_ns_b:.3f} ns: "
                "the offload wins for any program a slot can hold, bound by the slot's bytes "
                "per cycle and the SLM's DRAM port."
            )
        elif eng_ns_i < host_ns_i * 0.999:
            text.append(
                f"On `{name}` an instruction takes {eng_ns_i:.3f} ns, faster than the host's: "
                "the offload wins at any cost per byte, and by more the more a program computes "
                "per byte (the copy inside the drive is also faster than the host's read)."
            )
        else:
            gain = read_ns_b - copy_ns_b
            extra = eng_ns_i - host_ns_i
            crossover = gain / extra if extra > 0 else float("inf")
            text.append(
                f"On `{name}` the filter's Execute costs {eng_ns_i:.3f} ns per instruction "
                f"(the host {host_ns_i:.3f} ns): offloading there wins only for programs "
                f"cheaper than about {crossover:.2f} instructions per byte — where the "
                f"{gain:.3f} ns per byte saved on moving data outweighs the slower engine "
                f"(this filter runs {r['offload']['instructions'] / big:.1f})."
            )
    sizes = sorted({r["input_bytes"] for r in rows})
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        ratios = []
        for r in at:
            twin = next(s for s in rows if s["input_bytes"] == small and
                        (s["example"], s["type"], s["engine"]) ==
                        (r["example"], r["type"], r["engine"]))
            ratios.append(r["speedup"] / twin["speedup"])
        text.append(
            f"From {small >> 20} MiB to {large >> 20} MiB the speedups change by a factor of "
            f"{min(ratios):.3f}–{max(ratios):.3f}: both paths grow with the input, and the "
            "fixed costs (Load Program, activation, range sets: microseconds) vanish beside "
            "them, so the crossover is set by the cost per byte and the engines, not by size."
        )
    return "\n\n".join(text)


def markdown(rows, preset, command, load):
    out = [
        "# Computational storage: the examples measured",
        "",
        f"Generated by `{command}` (preset `{preset}`); do not edit by hand. Every output was "
        "checked against a host computation in the script. Times are simulated; the wall "
        "column is this machine's time for the whole `nearflash cs run` (offload, host-only "
        "path and their setup), at a 1-minute load average of "
        f"{min(load):.1f}–{max(load):.1f} while the script ran.",
        "",
        "| input | example | type | engine | Memory Copy | Execute | offload total | "
        "host-only (read + compute) | speedup | instr./byte | wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        h = r["host_only"]
        out.append(
            f"| {r['input_bytes'] >> 20} MiB | {r['example']} | {r['type']} | {r['engine']} | "
            f"{ms(step_us(r, 'Memory Copy'))} | {ms(step_us(r, 'Execute Program'))} | "
            f"{ms(r['offload']['total_us'])} | {ms(h['total_us'])} "
            f"({ms(h['read_us'])} + {ms(h['compute_us'])}) | {r['speedup']:.2f}× | "
            f"{r['offload']['instructions'] / r['input_bytes']:.1f} | {r['wall_s']:.1f} s |"
        )
    out += ["", "## Where the crossover lies", "", explain(rows), ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nearflash", default=str(ROOT / "target/release/nearflash"))
    ap.add_argument("--sizes-mib", default="64,1024")
    ap.add_argument("--preset", default="ssd-970evo")
    ap.add_argument("--out", default=str(ROOT / "docs/cs-measured.md"))
    a = ap.parse_args()
    nearflash = Path(a.nearflash).resolve()
    if not nearflash.exists():
        sys.exit(f"cs_table: {nearflash} is missing: build it (cargo build --release)")
    try:
        sizes = [int(s) << 20 for s in a.sizes_mib.split(",")]
    except ValueError:
        sys.exit(f"cs_table: --sizes-mib {a.sizes_mib!r}: a comma-separated list of MiB")
    if not sizes or any(s <= 0 for s in sizes):
        sys.exit("cs_table: --sizes-mib: positive sizes")
    rows = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        programs = compile_programs(tmp)
        for size in sizes:
            inp = tmp / "input.csv"
            make_input(inp, size)
            want = references(inp)
            for example, ptype, engine, p1, p2 in MATRIX:
                doc = run(nearflash, a.preset, programs[(example, ptype)], inp, engine, p1, p2,
                          tmp)
                if doc["output"] != want[example]:
                    sys.exit(f"cs_table: {example} ({ptype}, {engine}) at {size >> 20} MiB "
                             f"printed {doc['output']!r}, the host computes {want[example]!r}")
                doc.update(example=example, type=ptype, engine=engine)
                load.append(os.getloadavg()[0])
                rows.append(doc)
                print(f"{size >> 20} MiB {example} {ptype} {engine}: speedup "
                      f"{doc['speedup']:.2f}, {doc['wall_s']:.1f} s wall", file=sys.stderr)
    command = "scripts/cs_table.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in
        (("sizes_mib", a.sizes_mib), ("preset", a.preset)))
    text = markdown(rows, a.preset, command, load)
    out = Path(a.out)
    tmp_out = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp_out.write_text(text)
    os.replace(tmp_out, out)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
