"""nearflash: a deterministic full-system simulator of computational flash storage.

Every function runs the same job as the command of the same name (``nearflash io``,
``nearflash run``, ...) and returns the same fields as that command's JSON, as dicts; tabular
results (a sweep's table, a reproduction's claims and runs, the presets) come as pandas
DataFrames (pandas is a dependency of the package). Keyword arguments mirror the command-line
flags (``--queue-depth`` is ``queue_depth``); ``overrides`` takes ``{"table.field": value}``
like repeated ``--set`` (or a list of ``"table.field=value"`` strings, or one such string).
Long runs release the GIL and answer Ctrl-C (``KeyboardInterrupt``) within a fraction of a
second. Errors raise ``NearflashError`` with the CLI's message.

    >>> import nearflash
    >>> nearflash.io(preset="test-min", pattern="rand-read", requests=1000)["iops"]
"""

import json as _json

from . import _native
from ._native import NearflashError

__version__ = _native.VERSION
__all__ = [
    "NearflashError",
    "io",
    "run",
    "insider",
    "insider_share",
    "vfile_demo",
    "fileops",
    "db_bench",
    "ycsb",
    "genome",
    "program",
    "active_flash",
    "placement",
    "reproduce",
    "presets",
    "preset",
    "sweep",
    "cs",
]


def _overrides(overrides):
    """{"table.field": value}, a list of "table.field=value", or one such string ->
    ["table.field=value"]."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]  # one override, not a sequence of one-character ones
    if isinstance(overrides, dict):
        out = []
        for key, value in overrides.items():
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, str):
                text = _json.dumps(value)  # a TOML basic string
            else:
                text = repr(value)
            out.append(f"{key}={text}")
        return out
    try:
        items = list(overrides)
    except TypeError:
        raise TypeError(
            "overrides must be a dict {'table.field': value}, a list of 'table.field=value' "
            f"strings or one such string, not {type(overrides).__name__}"
        ) from None
    for o in items:
        if not isinstance(o, str):
            raise TypeError(
                f"overrides: each item must be a 'table.field=value' string, not "
                f"{type(o).__name__} ({o!r})"
            )
    return items


def _options(kwargs, overrides):
    opts = {k: v for k, v in kwargs.items() if v is not None}
    opts["overrides"] = _overrides(overrides)
    return _json.dumps(opts)


def _frame(rows):
    """A pandas DataFrame of a list of dicts (pandas is imported when a table is made)."""
    import pandas

    return pandas.DataFrame(rows)


def io(*, overrides=None, allow_failures=False, **options):
    """Block I/O on a preset's device (``nearflash io``): pattern, request_kib, requests or
    total_gib, queue_depth, read_percent, span_gib, precondition (True/False/None), trace
    ("FORMAT:PATH", FORMAT one of msr, blkparse, iolog, systor, alibaba, tencent, fiu, spc,
    mqsim), time_scale, disk, trace_device, trace_action ("D"/"C"), skip_bad_lines,
    trace_reorder_window, fold_offsets, replay_no_stall (with queue_depth), fidelity,
    store_file, seed, preset.

    Returns the report dict (``iops``, ``latency_us``, ``waf``...); on a zoned drive
    (``overrides={"zns.enabled": True}``; with zone_append) the zoned run's (``writes``,
    ``resets``, ``waf``, ``zone_full_errors``...). Failed requests raise unless
    ``allow_failures``, as the CLI's exit status does.
    """
    report = _json.loads(_native.io(_options(options, overrides)))
    if "zones" in report:
        failed = report["zone_full_errors"] + report["boundary_errors"] + report["other_errors"]
        if failed > 0 and not allow_failures:
            raise NearflashError(
                f"{failed} zoned requests failed (zone full {report['zone_full_errors']}, "
                f"boundary {report['boundary_errors']}, other {report['other_errors']}); "
                "pass allow_failures=True if failures are expected"
            )
        return report
    if report["requests_failed"] > 0 and not allow_failures:
        kinds = ", ".join(f"{k}: {n}" for k, n in report["requests_failed_by_kind"].items())
        raise NearflashError(
            f"{report['requests_failed']} of {report['requests']} requests failed ({kinds}); "
            "pass allow_failures=True if failures are expected"
        )
    return report


def run(*, system, workload, overrides=None, **options):
    """A workload on the FlashAbacus accelerator (``nearflash run``): system (simd | inter-st |
    inter-dy | intra-io | intra-o3), workload (a kernel or mx1..mx14), dataset, fidelity,
    max_functional_mib, seed, preset. Returns ``nearflash run --json``'s document."""
    options.update(system=system, workload=workload)
    return _json.loads(_native.run(_options(options, overrides)))


def insider(*, app, system="insider", overrides=None, **options):
    """One INSIDER application at the paper's size on one system (host-only, host-bypass,
    host-bypass-pipeline, insider, insider-no-reduction, arm): throughput, engine and PCIe
    utilization, simulated time."""
    options.update(app=app, system=system)
    return _json.loads(_native.insider(_options(options, overrides)))


def insider_share(*, app="statistics", overrides=None, **options):
    """``programs`` copies of an application's drive program side by side in the drive's
    slots (default one per slot, ``insider.app_slots``), each at most ``demand_mb_s``, for
    ``duration_ms``: per-program and total bandwidth against the max-min fair share."""
    options.update(app=app)
    return _json.loads(_native.insider_share(_options(options, overrides)))


def vfile_demo(*, overrides=None, **options):
    """INSIDER's virtual files walk-through (``nearflash vfile demo``) on real bytes: the
    simulated time of each step and the refused vopen. Options: size_mib, seed, preset."""
    return _json.loads(_native.vfile_demo(_options(options, overrides)))


def fileops(*, access="direct", op="read", size_kib=4, overrides=None, **options):
    """Hayagui's file-operation microbenchmark (``nearflash fileops``): ``count`` calls of
    ``size_kib`` (read, write or write-sync) from the accelerator over the direct path or
    redirected to the host; latency per call, the bytes checked after the run."""
    options.update(access=access, op=op, size_kib=size_kib)
    return _json.loads(_native.fileops(_options(options, overrides)))


def db_bench(*, access="direct", overrides=None, **options):
    """LevelDB's db_bench on a real LevelDB on Hayagui's accelerator (``nearflash db-bench``).
    Options: benchmarks (list), num (default 1,000,000 as db_bench), reads, value_size,
    variant (hayagui | upstream), fidelity, image, db, seed, preset."""
    options.update(access=access)
    return _json.loads(_native.db_bench(_options(options, overrides)))


def ycsb(*, workload, access="direct", overrides=None, **options):
    """A YCSB core workload (a–f) on a real LevelDB on Hayagui's accelerator
    (``nearflash ycsb``): load and run phases, throughput and latency percentiles; every read
    and scan checked. Options: records, operations, fidelity, image, db, seed, preset."""
    options.update(workload=workload, access=access)
    return _json.loads(_native.ycsb(_options(options, overrides)))


def genome(*, dataset="tiny", access="direct", overrides=None, **options):
    """The genome application on Hayagui's accelerator (``nearflash genome``): the six phases
    in simulated time, the matches checked against the same pipeline in memory. Options:
    scale (default 100), fidelity, seed, preset."""
    options.update(dataset=dataset, access=access)
    return _json.loads(_native.genome(_options(options, overrides)))


def program(program, *, input, engine="slot", args=None, overrides=None, **options):
    """A user's WebAssembly program (``nearflash program run``) over the file ``input``, next
    to the data: ``engine`` slot | core (INSIDER's drive), arm (the Active Flash controller) or
    host, beside the host-only run. Returns the report (``--json``'s fields); ``exit_code``
    says how the program ended. Options: fuel_max, memory_max_mib, seed, foreground_mb_s,
    preset, input_max_mib."""
    options.update(program=str(program), input=str(input), engine=engine, args=list(args or []))
    return _json.loads(_native.program(_options(options, overrides)))


def active_flash(*, experiment="background", overrides=None, **options):
    """One point of Active Flash's simulated drive (seed 004): ``experiment="background"``
    (Fig. 2: a foreground of 4 KiB random writes at ``foreground_mb_s``, compressed by the
    controller) or ``"split"`` (Fig. 3: a job split at ``controller_share``). Options:
    volume_mib, compress, charge_compute, fidelity (functional reads every extent back), seed,
    preset."""
    options.update(experiment=experiment)
    return _json.loads(_native.active_flash(_options(options, overrides)))


def placement(*, mode="all", overrides=None, **options):
    """A hot and a cold write stream on the conventional drive, on FDP with a placement
    handle per stream, and on zones placed by a host log-structured layer
    (``nearflash placement``, docs/placement.md). ``mode``: conventional, fdp, zns or all.
    Options: hot_fraction_percent, hot_write_percent, hot_request_kib, cold_request_kib,
    passes, queue_depth, seed, preset. Returns the dict of ``--json``; its ``modes`` is a
    DataFrame (one row per mode)."""
    options.update(mode=mode)
    run = _json.loads(_native.placement(_options(options, overrides)))
    run["modes"] = _frame(run["modes"])
    return run


def reproduce(paper, *, out=None, overrides=None, **options):
    """Re-run a paper's evaluation (``nearflash reproduce``) into ``out`` (summary.json,
    report.html). Returns the summary dict; its ``claims`` and ``runs`` are DataFrames."""
    if out is not None:
        options["out"] = str(out)
    summary = _json.loads(_native.reproduce(paper, _options(options, overrides)))
    summary["claims"] = _frame(summary["claims"])
    summary["runs"] = _frame(summary["runs"])
    return summary


def presets():
    """The built-in presets: a DataFrame with one row per preset (name, tables, description)."""
    return _frame(_json.loads(_native.presets()))


def preset(name, overrides=None):
    """A preset (built-in name or TOML path) after overrides, as a dict of its tables."""
    return _json.loads(_native.preset(name, _overrides(overrides)))


def sweep(spec, *, out, backend="local", address=None, jobs=None, progress=True):
    """Run a design-space sweep (see the ``nearflash.sweeps`` module); returns its table."""
    from .sweeps import sweep as _sweep

    return _sweep(spec, out=out, backend=backend, address=address, jobs=jobs, progress=progress)


from . import cs  # noqa: E402  (nearflash.cs.Device: computational storage, docs/cs.md)
