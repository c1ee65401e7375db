//! `nearflash io`: drive the simulated device with a synthetic workload or an MSR Cambridge
//! trace, then print the figures and optionally write them as JSON.

use crate::driver::{Driver, ListSource, StoreSpec};
use crate::error::CliError;
use crate::preset::Preset;
use crate::progress::Progress;
use crate::report::{IoReport, Measured, Precondition};
use crate::workload::{fill_requests, Amount, Draw, Generator, Pattern, SyntheticSpec};
use nearflash_ftl::{BlockOp, SECTOR_BYTES};
use nearflash_iotrace::{read_msr, MsrLimits, MsrOptions, TraceOp};
use nearflash_sim::SimDuration;
use std::path::PathBuf;
use std::time::Instant;

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
    /// Built-in preset name (flashabacus, test-min) or path to a preset TOML file.
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

/// Bytes of each preconditioning write.
const FILL_REQUEST_BYTES: u64 = 1 << 20;
/// Preconditioning queue depth.
const FILL_QUEUE_DEPTH: u32 = 16;
/// Most logical bytes a functional run may keep in RAM (the page store plus the reference
/// model); beyond it, `--store-file` keeps pages in a sparse file.
const FUNCTIONAL_MEMORY_BYTES_MAX: u64 = 8 << 30;
const GIB: f64 = (1u64 << 30) as f64;
/// Latest trace arrival accepted (ns after the first request): 2^62 ns, 146 years, leaving
/// three quarters of the u64-ns clock for preconditioning before and service after.
const ARRIVAL_NS_MAX: u64 = 1 << 62;

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
    let wall = Instant::now();
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
    let fidelity = nearflash_sim::Fidelity::from(args.fidelity).name();
    let capacity = probe_capacity(&preset)?;
    let plan = match &args.trace {
        Some(spec) => Plan::Trace(load_trace(spec, args, capacity)?),
        None => Plan::Synthetic(synthetic_spec(args, capacity)?),
    };
    let checked = match &plan {
        Plan::Synthetic(s) => s.span_bytes,
        Plan::Trace(_) => capacity,
    };
    if store == StoreSpec::Memory && checked > FUNCTIONAL_MEMORY_BYTES_MAX {
        return Err(CliError::Workload(format!(
            "functional fidelity in RAM would hold up to {:.1} GiB of pages (more than {} GiB); \
             lower --span-gib or keep pages on disk with --store-file PATH",
            checked as f64 / GIB,
            FUNCTIONAL_MEMORY_BYTES_MAX >> 30
        )));
    }
    let mut driver = Driver::new(&preset, &store, args.seed, checked)?;
    let progress_on = !args.quiet;

    let precondition_span = match &plan {
        Plan::Synthetic(s) => {
            let default = s.pattern.reads();
            let on = if args.no_precondition {
                false
            } else {
                args.precondition || default
            };
            on.then_some(s.span_bytes)
        }
        Plan::Trace(_) => args.precondition.then_some(capacity),
    };
    let precondition = match precondition_span {
        Some(span) => {
            let t0 = Instant::now();
            let bar = Progress::new("precondition", progress_on);
            let mut src = ListSource::new(fill_requests(span, FILL_REQUEST_BYTES).collect());
            let r = driver.run_closed(&mut src, FILL_QUEUE_DEPTH, &mut |d, t| bar.update(d, t))?;
            bar.finish();
            if r.failed > 0 {
                return Err(CliError::Workload(format!(
                    "preconditioning failed: {}",
                    r.first_failure.unwrap_or_default()
                )));
            }
            let cfg = &preset.ftl;
            let idle_us = cfg.checkpoint_interval_us.max(cfg.gc_idle_threshold_us);
            let settled = driver.settle(SimDuration::from_us_f64(idle_us))?;
            Some(Precondition {
                requests: r.requests,
                bytes: r.write_bytes,
                sim_s: r.end.since(r.start).as_ns() as f64 * 1e-9,
                settle_sim_s: settled.as_ns() as f64 * 1e-9,
                wall_s: t0.elapsed().as_secs_f64(),
            })
        }
        None => None,
    };

    let start = driver.snapshot();
    let measure_t0 = Instant::now();
    let bar = Progress::new("measure", progress_on);
    let (phase, workload) = match &plan {
        Plan::Synthetic(spec) => {
            let mut g = Generator::new(spec.clone());
            let phase =
                driver.run_closed(&mut g, spec.queue_depth, &mut |d, t| bar.update(d, t))?;
            (phase, serde_json::to_value(spec).expect("serialisable"))
        }
        Plan::Trace(t) => {
            let phase =
                driver.run_open(&t.requests, &t.arrivals_ns, &mut |d, t| bar.update(d, t))?;
            (phase, t.describe())
        }
    };
    bar.finish();
    let measured_wall_s = measure_t0.elapsed().as_secs_f64();
    let end = driver.snapshot();
    let report = IoReport::build(Measured {
        preset: &preset,
        seed: args.seed,
        fidelity,
        workload,
        precondition,
        phase: &phase,
        start: &start,
        end: &end,
        device: driver.device(),
        trace_hash: driver.trace_hash(),
        wall_s: wall.elapsed().as_secs_f64(),
        measured_wall_s,
        total_events: driver.events(),
        peak_rss_mb: crate::sysinfo::peak_rss_mb(),
    });
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

enum Plan {
    Synthetic(SyntheticSpec),
    Trace(TracePlan),
}

/// The logical capacity of the preset's device (formatting a timing-only device is cheap).
fn probe_capacity(preset: &Preset) -> Result<u64, CliError> {
    let geo = nearflash_flash::Geometry::from_config(&preset.flash);
    Ok(nearflash_ftl::Layout::new(&geo, &preset.ftl).logical_bytes())
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

struct TracePlan {
    path: String,
    requests: Vec<Draw>,
    arrivals_ns: Vec<u64>,
    folded: u64,
    time_scale: f64,
}

impl TracePlan {
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "trace": self.path,
            "format": "msr",
            "requests": self.requests.len(),
            "time_scale": self.time_scale,
            "folded_offsets": self.folded,
            "span_ns": self.arrivals_ns.last().copied().unwrap_or(0),
        })
    }
}

fn load_trace(spec: &str, args: &IoArgs, capacity: u64) -> Result<TracePlan, CliError> {
    let path = spec.strip_prefix("msr:").ok_or_else(|| {
        CliError::Workload(format!(
            "--trace {spec}: expected msr:PATH (the only trace format supported)"
        ))
    })?;
    let file = std::fs::File::open(path).map_err(|e| CliError::Io {
        what: format!("trace {path}"),
        source: e,
    })?;
    let parsed = read_msr(
        std::io::BufReader::new(file),
        &MsrOptions {
            time_scale: args.time_scale,
            disk_number: args.disk,
        },
        &MsrLimits {
            line_bytes_max: nearflash_iotrace::LINE_BYTES_MAX,
            requests_max: args.trace_requests_max,
        },
    )
    .map_err(|e| CliError::Trace {
        path: path.to_string(),
        source: e,
    })?;
    let mut requests = Vec::with_capacity(parsed.len());
    let mut arrivals_ns = Vec::with_capacity(parsed.len());
    let mut folded = 0;
    for (i, r) in parsed.iter().enumerate() {
        let what = || format!("trace {path}: request #{} ", i + 1);
        // A block trace records sector-aligned I/O; widen anything else to whole sectors.
        let first = r.offset_bytes / SECTOR_BYTES * SECTOR_BYTES;
        let end = (r.offset_bytes + r.size_bytes).div_ceil(SECTOR_BYTES) * SECTOR_BYTES;
        let len = end - first;
        let offset = if end <= capacity {
            first
        } else if args.fold_offsets && len <= capacity {
            folded += 1;
            (first % (capacity - len + SECTOR_BYTES)) / SECTOR_BYTES * SECTOR_BYTES
        } else {
            return Err(CliError::PastCapacity {
                what: what(),
                offset_bytes: r.offset_bytes,
                len_bytes: r.size_bytes,
                capacity_bytes: capacity,
                hint: "; pass --fold-offsets to fold it into the device",
            });
        };
        if r.arrival_ns > ARRIVAL_NS_MAX {
            return Err(CliError::Workload(format!(
                "{}arrives {:.0} years after the first: past the simulated clock's range \
                 (lower --time-scale)",
                what(),
                r.arrival_ns as f64 / 3.156e16
            )));
        }
        requests.push(Draw {
            op: match r.op {
                TraceOp::Read => BlockOp::Read,
                TraceOp::Write => BlockOp::Write,
            },
            offset_bytes: offset,
            len_bytes: len,
        });
        arrivals_ns.push(r.arrival_ns);
    }
    Ok(TracePlan {
        path: path.to_string(),
        requests,
        arrivals_ns,
        folded,
        time_scale: args.time_scale,
    })
}
