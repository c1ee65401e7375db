//! `nearflash io`: drive the simulated device with a synthetic workload or an MSR Cambridge
//! trace, then print the figures and optionally write them as JSON.

use crate::error::CliError;
use crate::progress::Progress;
use nearflash_ftl::SECTOR_BYTES;
use nearflash_iobench::trace::{TraceOptions, TracePlan};
use nearflash_iobench::workload::{Amount, Pattern, SyntheticSpec};
use nearflash_iobench::{capacity_bytes, Bench, Plan, Stage, StoreSpec};
use nearflash_preset::Preset;
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
    /// Built-in preset name (flashabacus, test-min, insider, active-flash, ssd-970evo) or path
    /// to a preset TOML file.
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
    /// Requests kept in flight (closed loop) [default: 32].
    #[arg(long, conflicts_with = "trace")]
    pub queue_depth: Option<u32>,
    /// Share of reads in the mixed pattern, percent [default: 70].
    #[arg(long, conflicts_with = "trace")]
    pub read_percent: Option<u32>,
    /// Confine requests to the first GiB of the device (default: the whole logical capacity).
    #[arg(long, conflicts_with = "trace")]
    pub span_gib: Option<f64>,
    /// Fill the span first (default for read patterns; write patterns reach steady state).
    #[arg(long, conflicts_with = "no_precondition")]
    pub precondition: bool,
    /// Skip preconditioning (reads of never-written pages then cost no flash access).
    #[arg(long)]
    pub no_precondition: bool,
    /// Replay a trace instead: msr:PATH (MSR Cambridge CSV).
    #[arg(long, value_name = "msr:PATH")]
    pub trace: Option<String>,
    /// Multiply the trace's inter-arrival times (0.5 replays twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Replay only this disk of the trace.
    #[arg(long)]
    pub disk: Option<u32>,
    /// Fold trace offsets that lie past the device's capacity back into it (modulo the
    /// capacity, sector-aligned) instead of failing.
    #[arg(long)]
    pub fold_offsets: bool,
    /// timing: no data (fast, paper scale); functional: store and verify data.
    #[arg(long, value_enum, default_value = "timing")]
    pub fidelity: Fidelity,
    /// Functional fidelity: keep pages in a sparse file instead of RAM.
    #[arg(long, value_name = "PATH")]
    pub store_file: Option<PathBuf>,
    /// Seed of the run's one RNG.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every figure as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Failed requests are expected (fault-injection studies): exit 0 even if some failed.
    /// They are reported by kind and left out of IOPS, bandwidth and latency either way.
    #[arg(long)]
    pub allow_failures: bool,
    /// Most requests read from a trace; a longer (or endless) trace is refused.
    #[arg(long, default_value_t = nearflash_iotrace::REQUESTS_MAX)]
    pub trace_requests_max: u64,
    /// No progress bar and no table (JSON only, if --json).
    #[arg(long)]
    pub quiet: bool,
}

const GIB: f64 = (1u64 << 30) as f64;

fn gib_to_bytes(flag: &str, gib: f64) -> Result<u64, CliError> {
    if !(gib.is_finite() && gib > 0.0) {
        return Err(CliError::Workload(format!(
            "{flag} must be a positive number, got {gib}"
        )));
    }
    Ok(((gib * GIB) as u64) / SECTOR_BYTES * SECTOR_BYTES)
}

/// Runs the command; `Ok(false)` when requests failed and `--allow-failures` was not given.
pub fn run(args: &IoArgs) -> Result<bool, CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    if args.trace.is_none() && (args.disk.is_some() || args.fold_offsets || args.time_scale != 1.0)
    {
        return Err(CliError::Workload(
            "--disk, --fold-offsets and --time-scale apply to --trace only".into(),
        ));
    }
    let preset = Preset::load(&args.preset, &args.overrides)?;
    let store = match (args.fidelity, &args.store_file) {
        (Fidelity::Timing, Some(_)) => {
            return Err(CliError::Workload(
                "--store-file needs --fidelity functional".into(),
            ))
        }
        (Fidelity::Timing, None) => StoreSpec::None,
        (Fidelity::Functional, None) => StoreSpec::Memory,
        (Fidelity::Functional, Some(p)) => StoreSpec::File(p.clone()),
    };
    let capacity = capacity_bytes(&preset);
    let plan = match &args.trace {
        Some(spec) => Plan::Trace(TracePlan::load(
            spec,
            &TraceOptions {
                time_scale: args.time_scale,
                disk: args.disk,
                fold_offsets: args.fold_offsets,
                requests_max: args.trace_requests_max,
            },
            capacity,
        )?),
        None => Plan::Synthetic(synthetic_spec(args, capacity)?),
    };
    let bench = Bench {
        preset: &preset,
        plan: &plan,
        store,
        seed: args.seed,
        precondition: match (args.precondition, args.no_precondition) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            (false, false) => None,
        },
    };
    let mut bar: Option<(Stage, Progress)> = None;
    let result = bench.run(&mut |stage, done, total| {
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

fn synthetic_spec(args: &IoArgs, capacity: u64) -> Result<SyntheticSpec, CliError> {
    let pattern = args
        .pattern
        .expect("clap requires --pattern without --trace");
    if args.read_percent.is_some() && pattern != Pattern::Mixed {
        return Err(CliError::Workload(format!(
            "--read-percent applies to --pattern mixed only, not {pattern:?}"
        )));
    }
    let request_bytes = args
        .request_kib
        .unwrap_or(4)
        .checked_mul(1024)
        .ok_or_else(|| CliError::Workload("--request-kib is too large".into()))?;
    let amount = match (args.requests, args.total_gib) {
        (Some(n), None) => Amount::Requests(n),
        (None, Some(g)) => Amount::TotalBytes(gib_to_bytes("--total-gib", g)?),
        (None, None) => {
            return Err(CliError::Workload(
                "give the amount with --requests N or --total-gib X".into(),
            ))
        }
        (Some(_), Some(_)) => unreachable!("clap rejects both"),
    };
    let span_bytes = match args.span_gib {
        Some(g) => gib_to_bytes("--span-gib", g)?,
        None => capacity,
    };
    let spec = SyntheticSpec {
        pattern,
        request_bytes,
        queue_depth: args.queue_depth.unwrap_or(32),
        amount,
        read_percent: args.read_percent.unwrap_or(70),
        span_bytes,
    };
    spec.validate(capacity)?;
    Ok(spec)
}
