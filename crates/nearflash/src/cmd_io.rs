//! `nearflash io`: drive the simulated device with a synthetic workload or a block trace
//! (`--trace FORMAT:PATH`), then print the figures and optionally write them as JSON (the job itself is
//! `nearflash_jobs::io`).

use crate::error::CliError;
use crate::progress::Progress;
use nearflash_iobench::workload::Pattern;
use nearflash_iobench::{Interface, Stage};
use nearflash_jobs::IoOptions;
use std::path::PathBuf;

/// The command-line face of [`nearflash_sim::Fidelity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Fidelity {
    /// No data stored: costs only (paper-scale runs).
    Timing,
    /// Data stored and every read verified against a reference model.
    Functional,
}

impl From<Fidelity> for nearflash_sim::Fidelity {
    fn from(f: Fidelity) -> Self {
        match f {
            Fidelity::Timing => nearflash_sim::Fidelity::Timing,
            Fidelity::Functional => nearflash_sim::Fidelity::Functional,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct IoArgs {
    /// Built-in preset name (flashabacus, test-min, insider, active-flash, ssd-970evo,
    /// ssd-970evoplus, hayagui) or path to a preset TOML file.
    #[arg(long, default_value = "flashabacus")]
    pub preset: String,
    /// Override a preset field, e.g. --set flash.channels=8 (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// Synthetic access pattern (omit with --trace).
    #[arg(
        long,
        value_enum,
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    pub pattern: Option<Pattern>,
    /// Request size in KiB [default: 4].
    #[arg(long, conflicts_with = "trace")]
    pub request_kib: Option<u64>,
    /// Total data to transfer, in GiB.
    #[arg(long, conflicts_with_all = ["requests", "trace"])]
    pub total_gib: Option<f64>,
    /// Number of requests.
    #[arg(long, conflicts_with = "trace")]
    pub requests: Option<u64>,
    /// Requests kept in flight (closed loop; with a trace, --replay-no-stall) [default: 32].
    #[arg(long)]
    pub queue_depth: Option<u32>,
    /// Share of reads in the mixed pattern, percent [default: 70].
    #[arg(long, conflicts_with = "trace")]
    pub read_percent: Option<u32>,
    /// Confine requests to the first GiB of the device (default: the whole logical capacity);
    /// with a trace, the region its requests must lie in (and --precondition fills).
    #[arg(long)]
    pub span_gib: Option<f64>,
    /// Fill the span first (default for read patterns; write patterns reach steady state).
    #[arg(long, conflicts_with = "no_precondition")]
    pub precondition: bool,
    /// Skip preconditioning (reads of never-written pages then cost no flash access).
    #[arg(long)]
    pub no_precondition: bool,
    /// Replay a trace instead: FORMAT:PATH with FORMAT one of msr, blkparse, iolog, systor,
    /// alibaba, tencent, fiu, spc, mqsim (gzip read transparently).
    #[arg(long, value_name = "FORMAT:PATH")]
    pub trace: Option<String>,
    /// Multiply the trace's inter-arrival times (0.5 replays twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Replay only this disk of an MSR trace (the same as --trace-device for msr).
    #[arg(long, conflicts_with = "trace_device")]
    pub disk: Option<u32>,
    #[command(flatten)]
    pub trace_read: crate::cmd_trace::TraceReadArgs,
    /// Fold trace offsets that lie past the device's capacity back into it (modulo the
    /// capacity, sector-aligned) instead of failing.
    #[arg(long)]
    pub fold_offsets: bool,
    /// Replay the trace in its order as fast as --queue-depth allows, ignoring its timestamps
    /// (fio's replay_no_stall).
    #[arg(long, requires = "trace")]
    pub replay_no_stall: bool,
    /// timing: no data (fast, paper scale); functional: store and verify data.
    #[arg(long, value_enum, default_value = "timing")]
    pub fidelity: Fidelity,
    /// Functional fidelity: keep pages in a sparse file instead of RAM.
    #[arg(long, value_name = "PATH")]
    pub store_file: Option<PathBuf>,
    /// The path from the host to the FTL: nvme (the preset's NVMe front end and PCIe link,
    /// `[nvme]`) or bare (requests straight into the FTL, no front end and no link).
    #[arg(long, value_enum, default_value = "nvme")]
    pub interface: Interface,
    /// Seed of the run's one RNG.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Zoned drive (--set zns.enabled=true): write with Zone Append instead of writes at
    /// each zone's write pointer.
    #[arg(long)]
    pub zone_append: bool,
    /// Flexible Data Placement (--set fdp.enabled=true): spread the writes over placement
    /// handles 0..N, each write tagged by the address region it starts in (the span split
    /// into N equal regions); N at most fdp.handles.
    #[arg(long, value_name = "N")]
    pub placement_handles: Option<u32>,
    /// The rule of --placement-handles: `region` (the default: the address region a write
    /// starts in) or `stream` (a trace's stream id — the process for FIU and blkparse, else
    /// the device column — modulo N; traces at their arrival times only).
    #[arg(long, value_name = "RULE", requires = "placement_handles")]
    pub placement_by: Option<String>,
    /// Write every figure as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Failed requests are expected (fault-injection studies): exit 0 even if some failed.
    /// They are reported by kind and left out of IOPS, bandwidth and latency either way.
    #[arg(long)]
    pub allow_failures: bool,
    /// No progress bar and no table (JSON only, if --json).
    #[arg(long)]
    pub quiet: bool,
}

/// The job's options from the command line.
fn options(args: &IoArgs) -> IoOptions {
    IoOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        pattern: args.pattern,
        request_kib: args.request_kib,
        total_gib: args.total_gib,
        requests: args.requests,
        queue_depth: args.queue_depth,
        read_percent: args.read_percent,
        span_gib: args.span_gib,
        precondition: match (args.precondition, args.no_precondition) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            (false, false) => None,
        },
        trace: args.trace.clone(),
        time_scale: args.time_scale,
        disk: args.disk,
        trace_device: args.trace_read.trace_device.clone(),
        trace_action: args.trace_read.trace_action.into(),
        skip_bad_lines: args.trace_read.skip_bad_lines,
        trace_reorder_window: args.trace_read.trace_reorder_window,
        fold_offsets: args.fold_offsets,
        replay_no_stall: args.replay_no_stall,
        fidelity: args.fidelity.into(),
        store_file: args.store_file.clone(),
        seed: args.seed,
        trace_requests_max: args.trace_read.trace_requests_max,
        interface: args.interface,
        zone_append: args.zone_append,
        placement_handles: args.placement_handles,
        placement_by: args.placement_by.clone(),
    }
}

/// Runs the command; `Ok(false)` when requests failed and `--allow-failures` was not given.
pub fn run(args: &IoArgs) -> Result<bool, CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    if nearflash_preset::Preset::load(&args.preset, &args.overrides)?
        .zns
        .enabled
    {
        return run_zoned(args);
    }
    let mut bar: Option<(Stage, Progress)> = None;
    let result = nearflash_jobs::io(&options(args), &mut |stage, done, total| {
        if bar.as_ref().is_none_or(|(s, _)| *s != stage) {
            if let Some((_, old)) = &bar {
                old.finish();
            }
            bar = Some((stage, Progress::new(stage.name(), !args.quiet)));
        }
        if let Some((_, b)) = &bar {
            b.update(done, total);
        }
    });
    if let Some((_, b)) = &bar {
        b.finish();
    }
    let report = result?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    if !args.quiet {
        println!("{}", report.table());
    }
    if report.requests_failed > 0 && !args.allow_failures {
        eprintln!(
            "error: {} of {} requests failed ({}); pass --allow-failures if failures are expected",
            report.requests_failed,
            report.requests,
            report
                .requests_failed_by_kind
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(false);
    }
    Ok(true)
}

/// `nearflash io` on a zoned drive (`zns.enabled = true`): the zone-aware sequential pattern.
fn run_zoned(args: &IoArgs) -> Result<bool, CliError> {
    let report = nearflash_jobs::io_zoned(&options(args))?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    if !args.quiet {
        println!("{}", report.table());
    }
    let failed = report.zone_full_errors + report.boundary_errors + report.other_errors;
    if failed > 0 && !args.allow_failures {
        eprintln!(
            "error: {failed} zoned requests failed (zone full {}, boundary {}, other {}); pass \
             --allow-failures if failures are expected",
            report.zone_full_errors, report.boundary_errors, report.other_errors
        );
        return Ok(false);
    }
    Ok(true)
}
