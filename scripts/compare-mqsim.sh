#!/usr/bin/env bash
# Side by side with MQSim (issue 27): runs the same drive and the same workloads on nearflash
# and on MQSim (CMU SAFARI, github.com/CMU-SAFARI/MQSim, built outside this tree) and prints
# ours vs MQSim with the ratio.
#
# Usage: scripts/compare-mqsim.sh MQSIM_DIR [--preset P] [--out DIR] [--set table.field=value]...
#          [--blocks-per-plane N | --full-size] [--mqsim-set Name=Value]... [--requests-scale F]
#          [--ss-write-requests N] [--only RUN[,RUN...]] [--table-only]
#   MQSIM_DIR       a built MQSim checkout: MQSIM_DIR/MQSim is the binary (`make` in MQSIM_DIR).
#   --preset P      nearflash preset (built-in name or TOML path); default ssd-970evo.
#   --set k=v       passed to every `nearflash io` run (after the script's own --set, so it wins)
#                   AND applied to the preset before MQSim's XML is derived from it, so a
#                   geometry or timing change reaches both simulators.
#   --blocks-per-plane N  scale the drive down to N blocks per plane (default 128: 96 GiB raw for
#                   ssd-970evo instead of 1 TiB, because MQSim's preconditioning alone takes 2-3 min
#                   of wall time at 128 blocks and grows with the drive; the bad-block spares
#                   scale with it). At 64 blocks MQSim's preconditioning stops with "It is not
#                   possible to assign PPA to all LPAs" for every working set tried (10-100%).
#                   --full-size keeps the preset's blocks.
#   --mqsim-set Name=Value  overrides one element of the generated ssdconfig.xml (escape hatch).
#   --requests-scale F  multiplies every nearflash run's request count (default 1).
#   --ss-write-requests N  nearflash's steady-state 4 KiB writes (default 400000: with 256 KiB
#                   page groups that rewrites ~2x the scaled drive; with 4 KiB page-level
#                   mapping use >= the drive's 4 KiB units, e.g. 22000000 at 128 blocks).
#   --only RUN,...  runs only these (rr4k-qd1 rr4k-qd32 rw4k-ss-qd32 rw4k-fresh-qd32 sr128k-qd32
#                   sw128k-qd32); the table shows every run with results in OUT_DIR.
#   --table-only    prints the table from OUT_DIR's earlier runs.
# Output: OUT_DIR (default compare-mqsim-out/) holds ssdconfig.xml, one workload XML and one
# MQSim result XML per run (<run>_scenario_1.xml), nearflash's <run>.json, <run>.cmd with
# the exact commands, and table.md. Needs python3 (3.11: tomllib).
#
# How our preset maps onto MQSim's parameters (read from MQSim's source, src/exec/*.cpp,
# src/ssd/*.cpp; "≈" = the nearest MQSim can do, "✗" = cannot be matched):
#   flash.channels                        -> Flash_Channel_Count
#   flash.packages_per_channel × dies_per_package -> Chip_No_Per_Channel, Die_No_Per_Chip = 1.
#       MQSim's TSU issues to a *chip* only when the whole chip is idle (TSU_OutofOrder.cpp:
#       GetChipStatus != IDLE -> wait), so dies of one chip work in lock step; our backbone
#       times every die independently on its channel, which is MQSim's one-die chips.
#   flash.planes_per_die                  -> Plane_No_Per_Die
#   flash.blocks_per_plane − ftl.spare_blocks_per_plane -> Block_No_Per_Plane (MQSim has no
#       bad-block spares; ours never writes them)
#   flash.pages_per_block                 -> Page_No_Per_Block
#   flash.page_size_bytes                 -> Page_Capacity
#   flash.oob_size_bytes                  -> Page_Metadat_Capacity (✗ MQSim never moves it over
#       the channel; ours moves page + spare for every page read/program)
#   flash.read_latency_us ×1000           -> Page_Read_Latency_LSB = _CSB = _MSB (ns)
#   flash.program_latency_us ×1000        -> Page_Program_Latency_LSB = _CSB = _MSB (ns)
#   flash.erase_latency_us ×1000          -> Block_Erase_Latency (ns)
#   flash.endurance_pe_cycles             -> Block_PE_Cycles_Limit
#   flash.channel_rate_mb_s (8-bit bus)   -> Channel_Transfer_Rate (MT/s), Flash_Channel_Width 1.
#       ≈ MQSim's NVDDR2 channel takes t_RC = (integer ns)(1000 / rate) × 2 per two bytes
#       (SSD_Device.cpp, ONFI_Channel_NVDDR2.h): the rate is truncated to 1000/k MT/s, so
#       800 MT/s runs at 1000 MB/s. The script prints the effective rate.
#   flash.command_overhead_ns             -> ✗ MQSim's ONFI command/address cycle times are
#       fixed in ONFI_Channel_NVDDR2.cpp.
#   ftl.slc_cache.bits_per_cell           -> Flash_Technology (3 -> TLC; all page types get
#       the same latency, so it only sets MQSim's preconditioning estimate)
#   [ftl.slc_cache]                       -> ✗ MQSim has no SLC-mode cache: the script runs ours
#       with --set ftl.slc_cache.enabled=false (override with --set to see the difference).
#   ftl logical capacity (our JSON's logical_capacity_bytes) -> Overprovisioning_Ratio =
#       1 − logical / (MQSim's raw pages × page size), so both expose the same user capacity
#       (MQSim: total_logical_pages = physical × (1 − ratio), Address_Mapping_Unit_Base.cpp).
#   ftl.gc_policy greedy                  -> GC_Block_Selection_Policy GREEDY (round-robin ->
#       FIFO ≈; cost-benefit ✗ -> GREEDY)
#   ftl.gc_foreground_free_superblocks    -> GC_Exec_Threshold = that / Block_No_Per_Plane (a
#       superblock is one block per plane; MQSim triggers GC per plane when its free blocks
#       fall below threshold × blocks, GC_and_WL_Unit_Base.cpp)
#   ftl.gc_background_*, gc_idle_threshold_us -> ✗ MQSim has no idle-time GC (closed-loop runs
#       have no idle time anyway)
#   ftl.gc_parallel_copies                -> ✗ (MQSim: one GC per plane at a time)
#   ftl.wear_leveling_spread_pe           -> Static_Wearleveling_Threshold
#   ftl.checkpoint_interval_us            -> ✗ MQSim writes no checkpoints (its translation
#       pages are written only on CMT evictions)
#   ftl.mapping = "page-group"            -> ✗ MQSim maps one flash page (Page_Capacity) per LPA
#       (Address_Mapping_Unit_Page_Level.cpp); "page" (4 KiB units) ≈ MQSim's PAGE_LEVEL, but
#       MQSim's unit is the whole 16 KiB page: a 4 KiB write to a page holding other valid
#       sectors is a read-modify-write (an "update read" + a full page program).
#   ftl.mapping_cache_bytes (DFTL, when present) -> CMT_Capacity, Ideal_Mapping_Table false;
#       absent (the whole map in the scratchpad) -> Ideal_Mapping_Table true.
#   [write_cache] (the DRAM write buffer, when present and enabled) -> Data_Cache_Capacity
#       (its capacity_bytes), flows' Device_Level_Data_Caching_Mode WRITE_CACHE; absent or
#       disabled -> TURNED_OFF. (Story: this read a table named ftl.write_buffer that never
#       existed, so MQSim ran without a cache while ours had one.)
#   PCIe link: [nvme.link] / [ssd_nvme.link] generation and lanes when the preset has them,
#       else PCIe 3.0 ×4 (the 970 EVO's link) -> PCIe_Lane_Count, PCIe_Lane_Bandwidth (GB/s:
#       Gen3 0.985 = 8 GT/s × 128/130 / 8). ✗ MQSim fixes 128-byte TLP payloads and 28 B of
#       overhead (PCIe_Link.h); ours models the link of the preset's [nvme.link] (see
#       docs/design.md, "The NVMe path").
#   Host interface NVMe                   -> HostInterface_Type NVME, IO_Queue_Depth 1024
#   ✗ MQSim only: Transaction_Scheduling_Policy (OUT_OF_ORDER), Plane_Allocation_Scheme
#       (CWDP: channel first, like our page groups' striping), erase/program suspension (off),
#       DRAM data-cache timing (defaults).
# Workloads (one MQSim IO_Scenario with one synthetic QUEUE_DEPTH flow per run; sizes in
# 512-byte sectors, addresses aligned to the request; seed 1 in both). MQSim runs each for a
# whole number of simulated seconds (Stop_Time; its IOPS divide by whole seconds), ours for a
# request count:
#   rr4k-qd1, rr4k-qd32  4 KiB random reads over a span of ~16 GiB, a whole percent of the
#       capacity (Working_Set_Percentage is an integer). MQSim preconditions it
#       (Initial_Occupancy_Percentage 100: it fills ~90% of the span at random and creates
#       entries for the rest on first read); ours writes it first (reads' default).
#   rw4k-ss-qd32  steady-state 4 KiB random writes over the whole drive: MQSim is asked to precondition to
#       steady state analytically (FTL.cpp Perform_precondition: fills the drive, laying out
#       valid pages per block as steady state would); ours fills the drive (--precondition),
#       then measures --ss-write-requests writes.
#       MQSim's preconditioning of a full drive does not work on this drive: it services no
#       request (TURNED_OFF cache) or crashes (WRITE_CACHE); with 50-90% occupancy it stops in
#       Allocate_address_for_preconditioning (upstream issues #5, #31, #48). The run is then
#       marked "MQSim failed" and the next one covers random writes:
#   rw4k-fresh-qd32  4 KiB random writes over the whole drive from empty, both without
#       preconditioning (MQSim Enabled_Preconditioning false, ssdconfig-noprecond.xml).
#   sr128k-qd32  128 KiB sequential reads (MQSim STREAMING) over the read span. MQSim's
#       preconditioning of a STREAMING flow did not finish (7 CPU minutes, 26 wall minutes, still
#       in its LPA loop; upstream issue #31 reports an endless loop there), so MQSim runs it
#       without: a read of a never-written page gets a mapping entry on first access and still
#       reads flash (online_create_entry_for_reads); ours preconditions the span as usual.
#   sw128k-qd32  128 KiB sequential writes on an empty drive (no preconditioning in either).
set -euo pipefail

die() { echo "compare-mqsim: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: scripts/compare-mqsim.sh MQSIM_DIR [--preset P] [--out DIR] [--set k=v]... (see the header)"
mqsim_dir=$1; shift
case $mqsim_dir in --*) die "the first argument must be MQSIM_DIR (a built MQSim checkout), got '$mqsim_dir'";; esac
[ -d "$mqsim_dir" ] || die "MQSIM_DIR '$mqsim_dir' is not a directory"
mqsim_dir=$(cd "$mqsim_dir" && pwd)
mqsim_bin=$mqsim_dir/MQSim
[ -x "$mqsim_bin" ] || die "no MQSim binary at $mqsim_bin: build it first (cd $mqsim_dir && make)"

cd "$(dirname "$0")/.."
preset=ssd-970evo
out=compare-mqsim-out
blocks=128
ss_requests=
table_only=0
only=
scale=1
sets=()
mqsim_sets=()
while [ $# -gt 0 ]; do
  case $1 in
    --preset) [ $# -ge 2 ] || die "--preset needs a value"; preset=$2; shift 2;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2;;
    --set) [ $# -ge 2 ] || die "--set needs table.field=value"; sets+=("$2"); shift 2;;
    --mqsim-set) [ $# -ge 2 ] || die "--mqsim-set needs Name=Value"; mqsim_sets+=("$2"); shift 2;;
    --blocks-per-plane) [ $# -ge 2 ] || die "--blocks-per-plane needs a value"; blocks=$2; shift 2;;
    --full-size) blocks=0; shift;;
    --requests-scale) [ $# -ge 2 ] || die "--requests-scale needs a value"; scale=$2; shift 2;;
    --ss-write-requests) [ $# -ge 2 ] || die "--ss-write-requests needs a value"; ss_requests=$2; shift 2;;
    --table-only) table_only=1; shift;;
    --only) [ $# -ge 2 ] || die "--only needs RUN[,RUN...]"; only=$2; shift 2;;
    *) die "unknown argument '$1' (see the header of $0)";;
  esac
done
command -v python3 >/dev/null || die "python3 is needed"
python3 -c 'import tomllib' 2>/dev/null || die "python3 >= 3.11 is needed (tomllib)"

mkdir -p "$out"
nf=${NEARFLASH:-target/release/nearflash}
if [ "$table_only" = 0 ] && [ -z "${NEARFLASH:-}" ]; then
  cargo build --release -q -p nearflash
fi
[ -x "$nf" ] || die "no nearflash binary at $nf (cargo build --release -p nearflash, or NEARFLASH=path)"

# The preset's text, then python does the rest (derives the XML, runs both, prints the table).
"$nf" presets "$preset" >"$out/preset.toml" || die "nearflash presets $preset failed"

export CMP_MQSIM_BIN=$mqsim_bin CMP_NF=$nf CMP_PRESET=$preset CMP_OUT=$out CMP_BLOCKS=$blocks \
  CMP_TABLE_ONLY=$table_only CMP_SCALE=$scale CMP_SS_REQUESTS=$ss_requests CMP_ONLY=$only
python3 - "${#sets[@]}" ${sets[@]+"${sets[@]}"} ${mqsim_sets[@]+"${mqsim_sets[@]}"} <<'PY'
import json, math, os, subprocess, sys, tomllib

n_sets = int(sys.argv[1])
user_sets = sys.argv[2:2 + n_sets]
mqsim_sets = sys.argv[2 + n_sets:]
E = os.environ
mqsim_bin, nf, preset, out = E["CMP_MQSIM_BIN"], E["CMP_NF"], E["CMP_PRESET"], E["CMP_OUT"]
blocks_scaled = int(E["CMP_BLOCKS"])
table_only = E["CMP_TABLE_ONLY"] == "1"
req_scale = float(E["CMP_SCALE"])
GIB = 1 << 30

def fail(msg):
    sys.exit(f"compare-mqsim: {msg}")

doc = tomllib.load(open(os.path.join(out, "preset.toml"), "rb"))

def get(path, default=None, required=True):
    node = doc
    for k in path.split("."):
        if not isinstance(node, dict) or k not in node:
            if required and default is None:
                fail(f"preset {preset} has no {path}; pass it with --set {path}=...")
            return default
        node = node[k]
    return node

def apply_set(s):
    if "=" not in s:
        fail(f"--set '{s}' is not table.field=value")
    key, val = s.split("=", 1)
    try:
        v = tomllib.loads(f"v = {val}")["v"]
    except tomllib.TOMLDecodeError:
        v = val
    node = doc
    parts = key.split(".")
    for k in parts[:-1]:
        node = node.setdefault(k, {})
    node[parts[-1]] = v

# The script's own overrides, then the user's (later wins, in nearflash too).
own_sets = []
blocks_full = get("flash.blocks_per_plane")
if blocks_scaled > 0 and blocks_scaled != blocks_full:
    spares_full = get("ftl.spare_blocks_per_plane", 0, required=False)
    spares = max(1, round(spares_full * blocks_scaled / blocks_full)) if spares_full else 0
    own_sets += [f"flash.blocks_per_plane={blocks_scaled}", f"ftl.spare_blocks_per_plane={spares}"]
if get("ftl.slc_cache.enabled", False, required=False):
    own_sets.append("ftl.slc_cache.enabled=false")
nf_sets = own_sets + user_sets
for s in nf_sets:
    apply_set(s)

# ---- the drive, in MQSim's terms -------------------------------------------------------------
ch = get("flash.channels")
chips = get("flash.packages_per_channel") * get("flash.dies_per_package")
planes = get("flash.planes_per_die")
blocks = get("flash.blocks_per_plane") - get("ftl.spare_blocks_per_plane", 0, required=False)
pages = get("flash.pages_per_block")
page = get("flash.page_size_bytes")
oob = get("flash.oob_size_bytes", 0, required=False)
rate = get("flash.channel_rate_mb_s")
ns = lambda us: int(round(float(us) * 1000))
t_rc_half = int(1000.0 / rate)  # MQSim: (sim_time_type)(1000 / rate), then x2 per two bytes
if t_rc_half < 1:
    fail(f"flash.channel_rate_mb_s={rate} is faster than MQSim's 1 ns per byte can express")
rate_eff = 1000.0 / t_rc_half
bits = get("ftl.slc_cache.bits_per_cell", 3, required=False)
tech = {1: "SLC", 2: "MLC", 3: "TLC"}.get(bits, "TLC")
policy = {"greedy": "GREEDY", "round-robin": "FIFO", "cost-benefit": "GREEDY"}[get("ftl.gc_policy", "greedy", required=False)]
gc_fg = get("ftl.gc_foreground_free_superblocks", 2, required=False)
wl_spread = get("ftl.wear_leveling_spread_pe", 100, required=False)
mapping = get("ftl.mapping", "page-group", required=False)
cmt_bytes = get("ftl.mapping_cache_bytes", 0, required=False)
wb = get("write_cache", {}, required=False) or {}
wb_on = bool(wb) and wb.get("enabled", False)
wb_bytes = wb.get("capacity_bytes", 0) if wb_on else 0
link = get("nvme.link", None, required=False) or get("ssd_nvme.link", None, required=False) or {}
gen, lanes = link.get("generation", 3), link.get("lanes", 4)
lane_gb_s = {1: 0.25, 2: 0.5, 3: 8 * 128 / 130 / 8, 4: 16 * 128 / 130 / 8, 5: 32 * 128 / 130 / 8}[gen]
raw_bytes = ch * chips * planes * blocks * pages * page

# Our logical capacity: a one-request probe run (no precondition) reports it.
probe = os.path.join(out, "probe.json")
set_args = [a for s in nf_sets for a in ("--set", s)]
if not table_only:
    subprocess.run([nf, "io", "--preset", preset, *set_args, "--pattern", "rand-read",
                    "--requests", "1", "--queue-depth", "1", "--no-precondition", "--quiet",
                    "--json", probe], check=True, stdout=subprocess.DEVNULL)
logical = json.load(open(probe))["logical_capacity_bytes"]
op = 1.0 - logical / raw_bytes
if not 0.0 < op < 0.5:
    fail(f"derived Overprovisioning_Ratio {op:.4f} is out of range (logical {logical} B, raw {raw_bytes} B)")

dev = {
    "Seed": 1, "Enabled_Preconditioning": "true", "Memory_Type": "FLASH",
    "HostInterface_Type": "NVME", "IO_Queue_Depth": 1024, "Queue_Fetch_Size": 512,
    "Caching_Mechanism": "ADVANCED", "Data_Cache_Sharing_Mode": "SHARED",
    "Data_Cache_Capacity": wb_bytes if wb_on else 1 << 20,
    "Data_Cache_DRAM_Row_Size": 8192, "Data_Cache_DRAM_Data_Rate": 800,
    "Data_Cache_DRAM_Data_Busrt_Size": 4, "Data_Cache_DRAM_tRCD": 13, "Data_Cache_DRAM_tCL": 13,
    "Data_Cache_DRAM_tRP": 13, "Address_Mapping": "PAGE_LEVEL",
    "Ideal_Mapping_Table": "false" if cmt_bytes else "true",
    "CMT_Capacity": cmt_bytes if cmt_bytes else 2 << 20, "CMT_Sharing_Mode": "SHARED",
    "Plane_Allocation_Scheme": "CWDP", "Transaction_Scheduling_Policy": "OUT_OF_ORDER",
    "Overprovisioning_Ratio": f"{op:.6f}", "GC_Exec_Threshold": f"{gc_fg / blocks:.6f}",
    "GC_Block_Selection_Policy": policy, "Use_Copyback_for_GC": "false",
    "Preemptible_GC_Enabled": "false", "GC_Hard_Threshold": f"{1 / blocks:.6f}",
    "Dynamic_Wearleveling_Enabled": "true", "Static_Wearleveling_Enabled": "true",
    "Static_Wearleveling_Threshold": wl_spread,
    "Preferred_suspend_erase_time_for_read": 700000, "Preferred_suspend_erase_time_for_write": 700000,
    "Preferred_suspend_write_time_for_read": 100000,
    "Flash_Channel_Count": ch, "Flash_Channel_Width": 1, "Channel_Transfer_Rate": int(round(rate)),
    "Chip_No_Per_Channel": chips, "Flash_Comm_Protocol": "NVDDR2",
}
fl = {
    "Flash_Technology": tech, "CMD_Suspension_Support": "NONE",
    "Page_Read_Latency_LSB": ns(get("flash.read_latency_us")),
    "Page_Read_Latency_CSB": ns(get("flash.read_latency_us")),
    "Page_Read_Latency_MSB": ns(get("flash.read_latency_us")),
    "Page_Program_Latency_LSB": ns(get("flash.program_latency_us")),
    "Page_Program_Latency_CSB": ns(get("flash.program_latency_us")),
    "Page_Program_Latency_MSB": ns(get("flash.program_latency_us")),
    "Block_Erase_Latency": ns(get("flash.erase_latency_us")),
    "Block_PE_Cycles_Limit": get("flash.endurance_pe_cycles", 10000, required=False),
    "Suspend_Erase_Time": 700000, "Suspend_Program_Time": 100000,
    "Die_No_Per_Chip": 1, "Plane_No_Per_Die": planes, "Block_No_Per_Plane": blocks,
    "Page_No_Per_Block": pages, "Page_Capacity": page, "Page_Metadat_Capacity": oob,
}
host = {"PCIe_Lane_Bandwidth": f"{lane_gb_s:.6f}", "PCIe_Lane_Count": lanes,
        "SATA_Processing_Delay": 400000, "Enable_ResponseTime_Logging": "false",
        "ResponseTime_Logging_Period_Length": 1000000}
for s in mqsim_sets:
    k, _, v = s.partition("=")
    if not v:
        fail(f"--mqsim-set '{s}' is not Name=Value")
    for table in (host, dev, fl):
        if k in table:
            table[k] = v
            break
    else:
        fail(f"--mqsim-set: no element {k} in the generated ssdconfig.xml")

def elems(d, indent):
    return "".join(f"{indent}<{k}>{v}</{k}>\n" for k, v in d.items())

ssdconfig = ('<?xml version="1.0" encoding="us-ascii"?>\n<Execution_Parameter_Set>\n'
             f"\t<Host_Parameter_Set>\n{elems(host, chr(9) * 2)}\t</Host_Parameter_Set>\n"
             f"\t<Device_Parameter_Set>\n{elems(dev, chr(9) * 2)}"
             f"\t\t<Flash_Parameter_Set>\n{elems(fl, chr(9) * 3)}\t\t</Flash_Parameter_Set>\n"
             "\t</Device_Parameter_Set>\n</Execution_Parameter_Set>\n")

# ---- workloads -----------------------------------------------------------------------------
# Read span: a whole percent of the capacity (MQSim's Working_Set_Percentage is an integer),
# about 16 GiB (as validate-970evo.sh reads), at least 1%. MQSim only preconditions a partial working set at 100% occupancy
# (a smaller Initial_Occupancy_Percentage stops in Allocate_address_for_preconditioning with
# "It is not possible to assign PPA to all LPAs"); it then fills ~90% of the span.
span_pct = max(1, min(100, round(16 * GIB / logical * 100)))
span_gib = logical * span_pct / 100 / GIB
R = lambda n: max(1, int(n * req_scale))
ss_requests = int(E["CMP_SS_REQUESTS"]) if E.get("CMP_SS_REQUESTS") else R(400000)
# MQSim runs for a simulated time, not a count: its IOPS and bandwidth divide by the whole
# seconds of simulated time (IO_Flow_Base.cpp: Time() / SIM_TIME_TO_SECONDS_COEFF, integer
# division), so a run shorter than 1 s reports "inf" and a run of S.x s divides by S. Each
# MQSim run therefore stops generating at a whole number of seconds.
# (run, pattern, KiB, QD, our requests, MQSim Stop_Time s, span%, occupancy% (None: MQSim's
# preconditioning off), our extra args)
runs = [
    ("rr4k-qd1", "rand-read", 4, 1, R(10000), 1, span_pct, 100, ["--span-gib", f"{span_gib:.4f}"]),
    ("rr4k-qd32", "rand-read", 4, 32, R(200000), 1, span_pct, 100, ["--span-gib", f"{span_gib:.4f}"]),
    ("rw4k-ss-qd32", "rand-write", 4, 32, ss_requests, 2, 100, 100, ["--precondition"]),
    ("rw4k-fresh-qd32", "rand-write", 4, 32, R(50000), 1, 100, None, []),
    ("sr128k-qd32", "seq-read", 128, 32, R(20000), 1, span_pct, None, ["--span-gib", f"{span_gib:.4f}"]),
    ("sw128k-qd32", "seq-write", 128, 32, R(40000), 2, 100, None, []),
]
only = [r for r in E.get("CMP_ONLY", "").split(",") if r]
unknown = set(only) - {r[0] for r in runs}
if unknown:
    fail(f"--only: no run named {', '.join(sorted(unknown))} (runs: {', '.join(r[0] for r in runs)})")

def flow(pattern, kib, qd, stop_s, span, occ):
    sectors = kib * 1024 // 512
    f = {
        "Priority_Class": "HIGH",
        "Device_Level_Data_Caching_Mode": "WRITE_CACHE" if wb_on else "TURNED_OFF",
        "Channel_IDs": ",".join(map(str, range(ch))), "Chip_IDs": ",".join(map(str, range(chips))),
        "Die_IDs": "0", "Plane_IDs": ",".join(map(str, range(planes))),
        "Initial_Occupancy_Percentage": occ or 0, "Working_Set_Percentage": span,
        "Synthetic_Generator_Type": "QUEUE_DEPTH",
        "Read_Percentage": 100 if "read" in pattern else 0,
        "Address_Distribution": "STREAMING" if pattern.startswith("seq") else "RANDOM_UNIFORM",
        "Percentage_of_Hot_Region": 0, "Generated_Aligned_Addresses": "true",
        "Address_Alignment_Unit": sectors, "Request_Size_Distribution": "FIXED",
        "Average_Request_Size": sectors, "Variance_Request_Size": 0, "Seed": 1,
        "Average_No_of_Reqs_in_Queue": qd, "Intensity": 32768, "Stop_Time": stop_s * 10**9,
        "Total_Requests_To_Generate": 0,
    }
    return ('<?xml version="1.0" encoding="us-ascii"?>\n<MQSim_IO_Scenarios>\n\t<IO_Scenario>\n'
            f"\t\t<IO_Flow_Parameter_Set_Synthetic>\n{elems(f, chr(9) * 3)}"
            "\t\t</IO_Flow_Parameter_Set_Synthetic>\n\t</IO_Scenario>\n</MQSim_IO_Scenarios>\n")

def sh(args):
    return " ".join(a if a and all(c.isalnum() or c in "-_./=,:+" for c in a) else repr(a) for a in args)

if not table_only:
    open(os.path.join(out, "ssdconfig.xml"), "w").write(ssdconfig)
    open(os.path.join(out, "ssdconfig-noprecond.xml"), "w").write(
        ssdconfig.replace("<Enabled_Preconditioning>true<", "<Enabled_Preconditioning>false<"))
    for name, pattern, kib, qd, n, stop_s, span, occ, extra in runs:
        if only and name not in only:
            continue
        wl = os.path.join(out, f"{name}.xml")
        open(wl, "w").write(flow(pattern, kib, qd, stop_s, span, occ))
        res = os.path.join(out, f"{name}_scenario_1.xml")
        if os.path.exists(res):
            os.remove(res)
        cfg = "ssdconfig.xml" if occ is not None else "ssdconfig-noprecond.xml"
        mq_cmd = [mqsim_bin, "-i", os.path.join(out, cfg), "-w", wl]
        nf_cmd = [nf, "io", "--preset", preset, *set_args, "--pattern", pattern,
                  "--request-kib", str(kib), "--queue-depth", str(qd), "--requests", str(n),
                  *extra, "--quiet", "--json", os.path.join(out, f"{name}.json")]
        open(os.path.join(out, f"{name}.cmd"), "w").write(f"nearflash: {sh(nf_cmd)}\nmqsim: {sh(mq_cmd)} </dev/null\n")
        print(f"[{name}] {sh(nf_cmd)}", file=sys.stderr, flush=True)
        subprocess.run(nf_cmd, check=True, stdout=subprocess.DEVNULL)
        print(f"[{name}] {sh(mq_cmd)} </dev/null", file=sys.stderr, flush=True)
        with open(os.path.join(out, f"{name}.mqsim.log"), "w") as log:
            rc = subprocess.run(mq_cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT).returncode
        # MQSim's preconditioning fails for some drives (upstream issues #5, #31, #48): it exits
        # with "It is not possible to assign PPA to all LPAs", crashes, or services no request.
        # The run is then marked failed in the table and the others go on.
        if rc != 0 or not os.path.exists(res):
            print(f"[{name}] MQSim failed (exit {rc}); see {out}/{name}.mqsim.log", file=sys.stderr)

# ---- results -------------------------------------------------------------------------------
import xml.etree.ElementTree as ET

def mqsim_result(name):
    path = os.path.join(out, f"{name}_scenario_1.xml")
    if not os.path.exists(path):
        return None
    root = ET.parse(path).getroot()
    flows = [e for e in root.iter() if e.tag.endswith(".IO_Flow") or e.tag == "Host.IO_Flow"]
    fl_ = flows[0]
    g = lambda k: float(fl_.find(k).text) if fl_.find(k) is not None else float(fl_.attrib[k])
    ftl = next(e for e in root.iter() if e.tag.endswith(".FTL"))
    f = lambda k: float(ftl.find(k).text) if ftl.find(k) is not None else float(ftl.attrib[k])
    prog_pages = f("Issued_Flash_Program_CMD") + planes * f("Issued_Flash_Multiplane_Program_CMD") \
        + f("Issued_Flash_Interleaved_Program_CMD") + planes * f("Issued_Flash_Interleaved_Multiplane_Program_CMD")
    wbytes = g("Bytes_Transferred_Write")
    if g("Request_Count") == 0 or g("Bytes_Transferred") == 0:
        return None  # nothing serviced (the stall after preconditioning)
    return {
        "iops": g("IOPS"), "mb_s": g("Bandwidth") / 1e6, "lat_us": g("Device_Response_Time"),
        "waf": prog_pages * page / wbytes if wbytes > 0 else None,
        "gc": f("Total_GC_Executions"),
        "reads": f("Issued_Flash_Read_CMD") + planes * f("Issued_Flash_Multiplane_Read_CMD"),
        "progs": prog_pages, "requests": g("Request_Count"),
    }

def ours(name):
    d = json.load(open(os.path.join(out, f"{name}.json")))
    return {"iops": d["iops"], "mb_s": d["read_bandwidth_mb_s"] + d["write_bandwidth_mb_s"],
            "lat_us": d["latency_us"]["mean"], "waf": d["waf"], "gc": d["gc_runs"], "d": d}

lines = []
p = lambda s="": lines.append(s)
p(f"Drive: preset {preset} with {' '.join('--set ' + s for s in nf_sets) or 'no overrides'}; "
  f"{ch} ch x {chips} dies x {planes} planes x {blocks} blocks x {pages} pages x {page} B; "
  f"user capacity {logical / 1e9:.2f} GB (MQSim Overprovisioning_Ratio {op:.4f}); "
  f"channel {rate:g} MT/s (MQSim effective {rate_eff:g} MT/s); PCIe Gen{gen} x{lanes} in MQSim "
  f"({lane_gb_s * lanes:.2f} GB/s); mapping ours {mapping}, MQSim page-level ({page} B units); "
  f"write cache {'%d B' % wb_bytes if wb_on else 'none (MQSim TURNED_OFF)'}.")
p()
p("| run | figure | nearflash | MQSim | ours / MQSim |")
p("|---|---|---|---|---|")
for name, pattern, kib, qd, n, stop_s, span, occ, extra in runs:
    if not os.path.exists(os.path.join(out, f"{name}.json")):
        continue
    o, m = ours(name), mqsim_result(name)
    if m is None:
        m = {"iops": None, "mb_s": None, "lat_us": None, "waf": None}
    figs = [("IOPS", "iops"), ("MB/s", "mb_s"), ("mean latency us", "lat_us")]
    if pattern == "rand-write" or pattern == "seq-write":
        figs.append(("WAF", "waf"))
    for label, k in figs:
        a, b = o[k], m[k]
        ratio = f"{a / b:.2f}" if a is not None and b not in (None, 0) else "-"
        if b is None:
            ratio = "MQSim failed"
        fmt = lambda x: "-" if x is None else (f"{x/1e3:,.1f}k" if k == "iops" else f"{x:,.2f}" if k == "waf" else f"{x:,.1f}")
        p(f"| {name} | {label} | {fmt(a)} | {fmt(b)} | {ratio} |")
p()
p("| run | ours: requests, flash page reads / programs per request, GC runs, channel / die busy, sim s | MQSim: requests, flash page reads / programs per request, GC executions |")
p("|---|---|---|")
for name, *_ in runs:
    if not os.path.exists(os.path.join(out, f"{name}.json")):
        continue
    o, m = ours(name), mqsim_result(name)
    d, u = o["d"], o["d"]["utilization"]
    if m is None:
        p(f"| {name} | {d['requests']} | MQSim failed: {name}.mqsim.log |")
        continue
    p(f"| {name} | {d['requests']}, {d['flash_page_reads'] / d['requests']:.2f} / "
      f"{d['flash_page_programs'] / d['requests']:.2f}, {o['gc']}, "
      f"{100 * u['channel_mean']:.0f}% / {100 * u['die_mean']:.0f}%, {d['sim_time_s']:.2f} | "
      f"{m['requests']:.0f}, {m['reads'] / m['requests']:.2f} / {m['progs'] / m['requests']:.2f}, {m['gc']:.0f} |")
p()
p("Commands:")
p()
for name, *_ in runs:
    if not os.path.exists(os.path.join(out, f"{name}.cmd")):
        continue
    for line in open(os.path.join(out, f"{name}.cmd")).read().strip().splitlines():
        p(f"    [{name}] {line}")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "table.md"), "w").write(text)
print(text, end="")
PY
