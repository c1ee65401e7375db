//! The `io` job: drive the simulated device with a synthetic workload or a block trace (any
//! format of `nearflash-iotrace`) and return the run's report (`IoReport`, the JSON of `nearflash io --json`). Options
//! are typed; every combination that does not apply is refused with the CLI's message.

use crate::error::JobError;
use nearflash_ftl::SECTOR_BYTES;
use nearflash_iobench::trace::{TraceOptions, TracePlan};
use nearflash_iobench::workload::{Amount, Pattern, SyntheticSpec};
use nearflash_iobench::zoned::{ZonedReport, ZonedSpec};
use nearflash_iobench::{capacity_bytes, Bench, Interface, IoReport, Plan, Stage, StoreSpec};
use nearflash_iotrace::{BlkparseAction, ReadOptions};
use nearflash_preset::Preset;
use nearflash_sim::Fidelity;
use serde::Deserialize;
use std::path::PathBuf;

/// The options of `nearflash io`, by the same names (without dashes); defaults are the CLI's.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IoOptions {
    pub preset: String,
    /// `table.field=value` overrides.
    pub overrides: Vec<String>,
    pub pattern: Option<Pattern>,
    pub request_kib: Option<u64>,
    pub total_gib: Option<f64>,
    pub requests: Option<u64>,
    pub queue_depth: Option<u32>,
    pub read_percent: Option<u32>,
    pub span_gib: Option<f64>,
    /// `Some(true)`: fill the span first; `Some(false)`: skip it; `None`: the pattern's default.
    pub precondition: Option<bool>,
    /// `FORMAT:PATH` (msr, blkparse, iolog, systor, alibaba, tencent, fiu, spc, mqsim).
    pub trace: Option<String>,
    pub time_scale: f64,
    /// MSR's disk number (the older name of `trace_device` for msr traces).
    pub disk: Option<u32>,
    /// The trace's device to replay: MSR disk, SYSTOR LUN, Alibaba device, Tencent volume,
    /// SPC ASU, MQSim device, or blkparse/FIU `MAJ,MIN`.
    pub trace_device: Option<String>,
    /// blkparse: replay the `D` (issue, default) or `C` (completion) events.
    pub trace_action: BlkparseAction,
    /// Skip malformed trace lines (counted in the report) instead of failing.
    pub skip_bad_lines: bool,
    /// Requests held back to sort timestamps that go backwards (0: refuse any step back).
    pub trace_reorder_window: usize,
    pub fold_offsets: bool,
    /// Replay the trace in its order as fast as `queue_depth` allows, ignoring its
    /// timestamps (fio's `replay_no_stall`).
    pub replay_no_stall: bool,
    #[serde(deserialize_with = "crate::de_fidelity")]
    pub fidelity: Fidelity,
    pub store_file: Option<PathBuf>,
    pub seed: u64,
    pub trace_requests_max: u64,
    /// The path from the host to the FTL: `nvme` (the default: the preset's NVMe front end
    /// and PCIe link) or `bare`.
    pub interface: Interface,
    /// Zoned drive (`zns.enabled = true`) only: Zone Append instead of writes at the write
    /// pointer.
    pub zone_append: bool,
    /// Flexible Data Placement (`fdp.enabled = true`) only: spread the writes over placement
    /// handles 0 .. N by address region (`nearflash_iobench::placement`).
    pub placement_handles: Option<u32>,
    /// The rule that spreads them: `region` (the default: the address region a write starts
    /// in) or `stream` (a trace's stream id modulo N; `nearflash_iobench::placement`).
    pub placement_by: Option<String>,
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions {
            preset: "flashabacus".into(),
            overrides: Vec::new(),
            pattern: None,
            request_kib: None,
            total_gib: None,
            requests: None,
            queue_depth: None,
            read_percent: None,
            span_gib: None,
            precondition: None,
            placement_handles: None,
            placement_by: None,
            trace: None,
            time_scale: 1.0,
            disk: None,
            trace_device: None,
            trace_action: BlkparseAction::Issue,
            skip_bad_lines: false,
            trace_reorder_window: nearflash_iotrace::REORDER_WINDOW,
            fold_offsets: false,
            replay_no_stall: false,
            fidelity: Fidelity::Timing,
            store_file: None,
            seed: 1,
            trace_requests_max: nearflash_iotrace::REQUESTS_MAX,
            interface: Interface::Nvme,
            zone_append: false,
        }
    }
}

/// A `nearflash io` run's report: the ordinary drive's, or the zoned drive's.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum AnyIoReport {
    Drive(Box<IoReport>),
    Zoned(Box<ZonedReport>),
}

/// Runs `opts` as `nearflash io` does: on the zoned job when the preset's drive is zoned
/// (`zns.enabled = true`), on the ordinary one otherwise — what Python's `nearflash.io` and a
/// sweep's `job = "io"` call, so that `--set zns.enabled=true` works from every front door.
pub fn io_any(
    opts: &IoOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<AnyIoReport, JobError> {
    if Preset::load(&opts.preset, &opts.overrides)?.zns.enabled {
        Ok(AnyIoReport::Zoned(Box::new(io_zoned(opts)?)))
    } else {
        Ok(AnyIoReport::Drive(Box::new(io(opts, progress)?)))
    }
}

/// Runs `opts` on the preset's zoned drive (`zns.enabled = true`): the zone-aware
/// sequential pattern of `nearflash_iobench::zoned`, through `opts.interface` (the NVMe front
/// end by default, or bare) and in timing
/// fidelity. Options that a zoned run cannot honour are refused by name.
pub fn io_zoned(opts: &IoOptions) -> Result<ZonedReport, JobError> {
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    if !preset.zns.enabled {
        return Err(JobError::Workload(
            "io_zoned needs a zoned drive (--set zns.enabled=true)".into(),
        ));
    }
    let refuse = |what: &str, why: &str| {
        Err(JobError::Workload(format!(
            "{what} on a zoned drive: {why}"
        )))
    };
    if opts.trace.is_some() {
        return refuse(
            "--trace",
            "a trace's writes land at arbitrary offsets, and a zoned drive takes writes only at a \
             write pointer; replaying a trace needs a host-side mapping (not built yet)",
        );
    }
    if opts.fidelity != Fidelity::Timing || opts.store_file.is_some() {
        return refuse(
            "--fidelity functional / --store-file",
            "the zoned run is timing only",
        );
    }
    if opts.placement_handles.is_some() {
        return refuse(
            "--placement-handles",
            "a zoned namespace places data by zones, not placement handles (fdp.enabled)",
        );
    }
    if opts.span_gib.is_some() || opts.precondition.is_some() || opts.read_percent.is_some() {
        return refuse(
            "--span-gib / --precondition / --read-percent",
            "the zoned pattern writes whole zones in turn (seq-read writes before it reads)",
        );
    }
    let pattern = opts.pattern.ok_or_else(|| {
        JobError::Workload("give a pattern with --pattern seq-write or seq-read".into())
    })?;
    let request_bytes = opts
        .request_kib
        .unwrap_or(4)
        .checked_mul(1024)
        .ok_or_else(|| JobError::Workload("--request-kib is too large".into()))?;
    let requests = match (opts.requests, opts.total_gib) {
        (Some(n), None) => n,
        (None, Some(g)) => gib_to_bytes("--total-gib", g)?.div_ceil(request_bytes),
        _ => {
            return Err(JobError::Workload(
                "give the amount with --requests N or --total-gib X (one of them)".into(),
            ))
        }
    };
    let spec = ZonedSpec {
        pattern,
        request_bytes,
        requests,
        queue_depth: opts.queue_depth.unwrap_or(DEFAULT_QUEUE_DEPTH),
        zone_append: opts.zone_append,
        interface: opts.interface,
    };
    Ok(nearflash_iobench::zoned::run(&preset, &spec, opts.seed)?)
}

const GIB: f64 = (1u64 << 30) as f64;
/// `--queue-depth`'s default: 32, the depth of the NVMe consumer-drive datasheets' random
/// figures (Samsung 970 EVO: "QD32") that the presets are checked against.
const DEFAULT_QUEUE_DEPTH: u32 = 32;

fn gib_to_bytes(flag: &str, gib: f64) -> Result<u64, JobError> {
    if !(gib.is_finite() && gib > 0.0) {
        return Err(JobError::Workload(format!(
            "{flag} must be a positive number, got {gib}"
        )));
    }
    Ok(((gib * GIB) as u64) / SECTOR_BYTES * SECTOR_BYTES)
}

/// Runs the job; `progress(stage, done, total)` is called as requests complete. Failed
/// requests are in the report (`requests_failed`), not an error: the caller decides.
pub fn io(
    opts: &IoOptions,
    progress: &mut dyn FnMut(Stage, u64, u64),
) -> Result<IoReport, JobError> {
    check_flags(opts)?;
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    if preset.zns.enabled {
        return Err(JobError::Workload(
            "the preset has zns.enabled = true: a zoned drive runs through the zoned job \
             (`io_zoned`; `nearflash io` picks it by itself)"
                .into(),
        ));
    }
    if opts.zone_append {
        return Err(JobError::Workload(
            "--zone-append needs a zoned drive (--set zns.enabled=true)".into(),
        ));
    }
    let store = store_spec(opts)?;
    let plan = workload_plan(opts, &preset)?;
    let bench = Bench {
        preset: &preset,
        plan: &plan,
        interface: opts.interface,
        store,
        seed: opts.seed,
        precondition: opts.precondition,
        placement_handles: opts.placement_handles,
        placement_rule: placement_rule(opts)?,
    };
    Ok(bench.run(progress)?)
}

/// How a run's writes spread over placement handles (`--placement-by`).
fn placement_rule(
    opts: &IoOptions,
) -> Result<nearflash_iobench::placement::PlacementRule, JobError> {
    use nearflash_iobench::placement::PlacementRule;
    match opts.placement_by.as_deref() {
        None => Ok(PlacementRule::Regions),
        Some(name) => PlacementRule::from_name(name).ok_or_else(|| {
            JobError::Workload(format!("--placement-by {name}: give region or stream"))
        }),
    }
}

/// Refuses flags that apply to a trace only without one, those of a synthetic workload with
/// one, and a queue depth for a timed replay.
fn check_flags(opts: &IoOptions) -> Result<(), JobError> {
    let is_trace = opts.trace.is_some();
    if !is_trace
        && (opts.disk.is_some()
            || opts.trace_device.is_some()
            || opts.fold_offsets
            || opts.skip_bad_lines
            || opts.replay_no_stall
            || opts.time_scale != 1.0)
    {
        return Err(JobError::Workload(
            "--disk, --trace-device, --fold-offsets, --skip-bad-lines, --replay-no-stall and \
             --time-scale apply to --trace only"
                .into(),
        ));
    }
    if is_trace
        && (opts.pattern.is_some()
            || opts.request_kib.is_some()
            || opts.total_gib.is_some()
            || opts.requests.is_some()
            || opts.read_percent.is_some())
    {
        return Err(JobError::Workload(
            "--pattern, --request-kib, --total-gib, --requests and --read-percent do not \
             apply to --trace"
                .into(),
        ));
    }
    if is_trace && opts.queue_depth.is_some() && !opts.replay_no_stall {
        return Err(JobError::Workload(
            "--queue-depth applies to a trace replayed with --replay-no-stall; a timed replay \
             submits at the trace's arrival times"
                .into(),
        ));
    }
    Ok(())
}

/// Where the device keeps its pages: nowhere (timing), in RAM, or in `--store-file`.
fn store_spec(opts: &IoOptions) -> Result<StoreSpec, JobError> {
    Ok(match (opts.fidelity, &opts.store_file) {
        (Fidelity::Timing, Some(_)) => {
            return Err(JobError::Workload(
                "--store-file needs --fidelity functional".into(),
            ))
        }
        (Fidelity::Timing, None) => StoreSpec::None,
        (Fidelity::Functional, None) => StoreSpec::Memory,
        (Fidelity::Functional, Some(p)) => StoreSpec::File(p.clone()),
    })
}

/// The workload over the span: the trace loaded, or the synthetic spec from the options.
fn workload_plan(opts: &IoOptions, preset: &Preset) -> Result<Plan, JobError> {
    let capacity = capacity_bytes(preset);
    let span = match opts.span_gib {
        Some(g) => gib_to_bytes("--span-gib", g)?,
        None => capacity,
    };
    if opts.trace.is_some() && span > capacity {
        return Err(JobError::Workload(format!(
            "--span-gib covers {span} bytes, more than the device's {capacity}"
        )));
    }
    Ok(match &opts.trace {
        Some(spec) => Plan::Trace(Box::new(TracePlan::load(
            spec,
            &TraceOptions {
                read: read_options(opts, spec)?,
                fold_offsets: opts.fold_offsets,
                requests_max: opts.trace_requests_max,
                no_stall_depth: opts
                    .replay_no_stall
                    .then(|| opts.queue_depth.unwrap_or(DEFAULT_QUEUE_DEPTH)),
            },
            span,
            capacity,
        )?)),
        None => Plan::Synthetic(synthetic_spec(opts, span, capacity)?),
    })
}

/// The trace reading options; `disk` is MSR's name for the device selector.
fn read_options(opts: &IoOptions, spec: &str) -> Result<ReadOptions, JobError> {
    let select = match (opts.disk, &opts.trace_device) {
        (Some(_), Some(_)) => {
            return Err(JobError::Workload(
                "give the trace's device with --trace-device (or --disk for msr), not both".into(),
            ))
        }
        (Some(_), None) if !spec.starts_with("msr:") => {
            return Err(JobError::Workload(
                "--disk selects an MSR trace's disk; use --trace-device for other formats".into(),
            ))
        }
        (Some(disk), None) => Some(disk.to_string()),
        (None, device) => device.clone(),
    };
    Ok(ReadOptions {
        time_scale: opts.time_scale,
        select,
        blkparse_action: opts.trace_action,
        skip_bad_lines: opts.skip_bad_lines,
        reorder_window: opts.trace_reorder_window,
        iolog_redirect: false,
    })
}

fn synthetic_spec(
    opts: &IoOptions,
    span_bytes: u64,
    capacity: u64,
) -> Result<SyntheticSpec, JobError> {
    let pattern = opts
        .pattern
        .ok_or_else(|| JobError::Workload("give a --pattern (or a --trace to replay)".into()))?;
    if opts.read_percent.is_some() && pattern != Pattern::Mixed {
        return Err(JobError::Workload(format!(
            "--read-percent applies to --pattern mixed only, not {pattern:?}"
        )));
    }
    let request_bytes = opts
        .request_kib
        .unwrap_or(4)
        .checked_mul(1024)
        .ok_or_else(|| JobError::Workload("--request-kib is too large".into()))?;
    let amount = match (opts.requests, opts.total_gib) {
        (Some(n), None) => Amount::Requests(n),
        (None, Some(g)) => Amount::TotalBytes(gib_to_bytes("--total-gib", g)?),
        (None, None) => {
            return Err(JobError::Workload(
                "give the amount with --requests N or --total-gib X".into(),
            ))
        }
        (Some(_), Some(_)) => {
            return Err(JobError::Workload(
                "give the amount with --requests N or --total-gib X, not both".into(),
            ))
        }
    };
    let spec = SyntheticSpec {
        pattern,
        request_bytes,
        queue_depth: opts.queue_depth.unwrap_or(DEFAULT_QUEUE_DEPTH),
        amount,
        read_percent: opts.read_percent.unwrap_or(70),
        span_bytes,
    };
    spec.validate(capacity)?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> IoOptions {
        IoOptions {
            preset: "test-min".into(),
            pattern: Some(Pattern::RandRead),
            requests: Some(500),
            ..IoOptions::default()
        }
    }

    #[test]
    fn the_same_options_and_seed_give_the_same_report() {
        let a = io(&small(), &mut |_, _, _| {}).unwrap();
        let b = io(&small(), &mut |_, _, _| {}).unwrap();
        assert_eq!(a.trace_hash, b.trace_hash);
        assert_eq!(a.requests, 500);
        assert!(a.iops > 0.0);
    }

    /// A sweep point says `interface = "bare"` to drive the FTL directly; by default the
    /// requests cross the NVMe front end and its link, which the report says and measures.
    #[test]
    fn the_interface_option_chooses_the_path_and_the_report_names_it() {
        let o: IoOptions = toml::from_str(
            "preset = \"test-min\"\npattern = \"rand-read\"\nrequests = 500\nqueue_depth = 1\ninterface = \"bare\"\n",
        )
        .unwrap();
        assert_eq!(o.interface, Interface::Bare);
        let bare = io(&o, &mut |_, _, _| {}).unwrap();
        let qd1 = IoOptions {
            queue_depth: Some(1),
            ..small()
        };
        let nvme = io(&qd1, &mut |_, _, _| {}).unwrap();
        assert_eq!((bare.interface, nvme.interface), ("bare", "nvme"));
        assert!(bare.link.is_none());
        let link = nvme.link.as_ref().expect("the NVMe path reports its link");
        assert_eq!(link.commands, 500);
        assert!(link.up.payload_bytes >= 500 * 4096);
        // At QD1 the front end's path adds to every read (6.6 µs on the defaults).
        assert!(nvme.latency_us.mean > bare.latency_us.mean + 6.0);
    }

    /// Story (issue 28): a sweep's `pattern = 3` (or Python's `pattern=3`) was refused with
    /// "io: invalid type: integer `3`, expected string or map", naming neither the option nor
    /// the names it takes.
    #[test]
    fn a_mistyped_option_is_named_with_what_it_takes() {
        let doc = serde_json::json!({"preset": "test-min", "pattern": 3, "requests": 10});
        let e = crate::options_from::<IoOptions>("io", doc)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("io: pattern must be one of `seq-read`"),
            "{e}"
        );
        assert!(e.ends_with("not 3"), "{e}");
        let doc = serde_json::json!({"preset": "test-min", "queue_depth": "deep"});
        let e = crate::options_from::<IoOptions>("io", doc)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("io: queue_depth: invalid type: string"),
            "{e}"
        );
    }

    #[test]
    fn options_that_do_not_apply_are_refused_with_the_flag_named() {
        let o = IoOptions {
            read_percent: Some(50),
            ..small()
        };
        let e = io(&o, &mut |_, _, _| {}).unwrap_err().to_string();
        assert!(
            e.contains("--read-percent applies to --pattern mixed only"),
            "{e}"
        );
        let o = IoOptions {
            total_gib: Some(1.0),
            ..small()
        };
        let e = io(&o, &mut |_, _, _| {}).unwrap_err().to_string();
        assert!(e.contains("not both"), "{e}");
        let o = IoOptions {
            pattern: None,
            ..small()
        };
        let e = io(&o, &mut |_, _, _| {}).unwrap_err().to_string();
        assert!(e.contains("--pattern"), "{e}");
    }

    /// A sweep point or a Python call spreads its writes over placement handles with
    /// `placement_handles`; the report's FDP section shows bytes on exactly those handles,
    /// and a preset without FDP is refused naming `fdp.enabled`.
    #[test]
    fn placement_handles_is_an_option_of_sweeps_and_python_and_needs_fdp() {
        let doc = serde_json::json!({
            "preset": "test-min",
            "overrides": ["ftl.mapping=\"page\"", "fdp.enabled=true", "fdp.handles=4"],
            "pattern": "rand-write",
            "requests": 600,
            "placement_handles": 2,
        });
        let o: IoOptions = crate::options_from("io", doc).unwrap();
        let fdp = io(&o, &mut |_, _, _| {}).unwrap().fdp.expect("FDP is on");
        let host: Vec<u64> = fdp.handles.iter().map(|h| h.host_bytes_written).collect();
        assert!(
            host[0] > 0 && host[1] > 0 && host[2] == 0 && host[3] == 0,
            "{host:?}"
        );
        let plain = IoOptions {
            pattern: Some(Pattern::RandWrite),
            placement_handles: Some(2),
            ..small()
        };
        let e = io(&plain, &mut |_, _, _| {}).unwrap_err().to_string();
        assert!(e.contains("fdp.enabled"), "{e}");
    }

    /// A trace replayed with `placement_handles`: its writes are tagged by the address
    /// region they start in (the default rule), so the MSR example's writes, folded onto test-min, land on all four handles and the
    /// report names the rule.
    #[test]
    fn a_traces_writes_spread_over_placement_handles_by_address_region() {
        let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces/msr.csv");
        let o = IoOptions {
            overrides: vec![
                "ftl.mapping=\"page\"".into(),
                "fdp.enabled=true".into(),
                "fdp.handles=8".into(),
            ],
            pattern: None,
            requests: None,
            trace: Some(format!("msr:{trace}")),
            fold_offsets: true,
            placement_handles: Some(4),
            ..small()
        };
        let fdp = io(&o, &mut |_, _, _| {}).unwrap().fdp.expect("FDP is on");
        let host: Vec<u64> = fdp.handles.iter().map(|h| h.host_bytes_written).collect();
        assert!(host[..4].iter().all(|&b| b > 0), "{host:?}");
        assert!(host[4..].iter().all(|&b| b == 0), "{host:?}");
        assert!(fdp.placement.is_some_and(|p| p.contains("address regions")));
    }

    /// `placement_by = "stream"`: the FIU example's writes carry handle PID mod 4 — each
    /// handle gets exactly the bytes of its processes' writes, whatever their addresses — and
    /// the rule needs a trace at its arrival times.
    #[test]
    fn a_traces_writes_spread_over_placement_handles_by_process_id() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces/fiu.txt");
        let text = std::fs::read_to_string(path).unwrap();
        // Bytes per handle: each write's sectors on handle PID mod 4.
        let mut expected = [0u64; 8];
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let t: Vec<&str> = line.split_whitespace().collect();
            if t[t.len() - 4] == "W" {
                let sectors: u64 = t[t.len() - 5].parse().unwrap();
                expected[t[1].parse::<usize>().unwrap() % 4] += sectors * 512;
            }
        }
        let o = IoOptions {
            overrides: vec![
                "ftl.mapping=\"page\"".into(),
                "fdp.enabled=true".into(),
                "fdp.handles=8".into(),
            ],
            pattern: None,
            requests: None,
            trace: Some(format!("fiu:{path}")),
            fold_offsets: true,
            placement_handles: Some(4),
            placement_by: Some("stream".into()),
            ..small()
        };
        let fdp = io(&o, &mut |_, _, _| {}).unwrap().fdp.expect("FDP is on");
        let got: Vec<u64> = fdp.handles.iter().map(|h| h.host_bytes_written).collect();
        assert_eq!(got, expected);
        assert!(fdp
            .placement
            .is_some_and(|p| p.contains("stream id modulo 4")));
        let synthetic = IoOptions {
            pattern: Some(Pattern::RandWrite),
            trace: None,
            fold_offsets: false,
            requests: Some(100),
            ..o.clone()
        };
        let e = io(&synthetic, &mut |_, _, _| {}).unwrap_err().to_string();
        assert!(e.contains("--placement-by stream"), "{e}");
    }
}
