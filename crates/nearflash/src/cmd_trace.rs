//! `nearflash trace stats FORMAT:PATH`: what a block trace holds — requests, read ratio,
//! sizes, footprint, duration, inter-arrival times, offsets — in one streaming pass before a
//! long replay; and the trace-reading flags `nearflash io --trace` shares with it.

use crate::error::CliError;
use nearflash_iotrace::{
    BlkparseAction, ReadOptions, TraceLimits, TraceReader, TraceSpec, TraceStats,
};

/// blkparse's events to replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceAction {
    /// Issued to the driver.
    D,
    /// Completed.
    C,
}

impl From<TraceAction> for BlkparseAction {
    fn from(a: TraceAction) -> Self {
        match a {
            TraceAction::D => BlkparseAction::Issue,
            TraceAction::C => BlkparseAction::Complete,
        }
    }
}

/// How to read a trace: the flags of `io --trace` and `trace stats`.
#[derive(clap::Args, Debug)]
pub struct TraceReadArgs {
    /// Keep one device of a multi-device trace: the MSR disk, SYSTOR LUN, Alibaba device id,
    /// Tencent volume id, SPC ASU, MQSim device, or blkparse/FIU MAJ,MIN.
    #[arg(
        long,
        value_name = "ID",
        visible_aliases = ["trace-volume", "trace-asu", "trace-lun"]
    )]
    pub trace_device: Option<String>,
    /// blkparse: replay the D (issue) or C (completion) events.
    #[arg(long, value_enum, ignore_case = true, default_value = "d")]
    pub trace_action: TraceAction,
    /// Skip malformed trace lines (counted and reported) instead of failing.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Requests held back to sort timestamps that go backwards; a request older than the
    /// window allows is an error (0 refuses any step back).
    #[arg(long, default_value_t = nearflash_iotrace::REORDER_WINDOW)]
    pub trace_reorder_window: usize,
    /// Most requests read from a trace; a longer (or endless) trace is refused.
    #[arg(long, default_value_t = nearflash_iotrace::REQUESTS_MAX)]
    pub trace_requests_max: u64,
}

#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum TraceCommand {
    /// Print what a trace holds: requests, read ratio, sizes, footprint, duration,
    /// inter-arrival times, offsets (one streaming pass, bounded memory).
    Stats(StatsArgs),
}

#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// FORMAT:PATH with FORMAT one of msr, blkparse, iolog, systor, alibaba, tencent, fiu,
    /// spc, mqsim (gzip read transparently).
    #[arg(value_name = "FORMAT:PATH")]
    pub trace: String,
    #[command(flatten)]
    pub read: TraceReadArgs,
    /// Multiply the inter-arrival times (as the replay would).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &TraceArgs) -> Result<(), CliError> {
    match &args.command {
        TraceCommand::Stats(a) => stats(a),
    }
}

fn stats(args: &StatsArgs) -> Result<(), CliError> {
    let trace_error = |path: &str| {
        let path = path.to_string();
        move |source| CliError::Trace { path, source }
    };
    let TraceSpec { format, path } =
        TraceSpec::parse(&args.trace).map_err(trace_error(&args.trace))?;
    let file = std::fs::File::open(&path).map_err(|source| CliError::Io {
        what: format!("trace {path}"),
        source,
    })?;
    let opts = ReadOptions {
        time_scale: args.time_scale,
        select: args.read.trace_device.clone(),
        blkparse_action: args.read.trace_action.into(),
        skip_bad_lines: args.read.skip_bad_lines,
        reorder_window: args.read.trace_reorder_window,
        iolog_redirect: false,
    };
    let limits = TraceLimits {
        line_bytes_max: nearflash_iotrace::LINE_BYTES_MAX,
        requests_max: args.read.trace_requests_max,
    };
    let reader = TraceReader::new(std::io::BufReader::new(file), format, &opts, &limits)
        .map_err(trace_error(&path))?;
    let s = TraceStats::collect(reader).map_err(trace_error(&path))?;
    if args.json {
        let mut v = serde_json::to_value(&s).expect("serialisable");
        v["trace"] = path.clone().into();
        println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("serialisable")
        );
    } else {
        println!("{}", table(&path, &s));
    }
    Ok(())
}

fn table(path: &str, s: &TraceStats) -> String {
    let mib = |b: u64| format!("{:.2} MiB", b as f64 / 1048576.0);
    let us = |ns: f64| format!("{:.3} µs", ns / 1e3);
    let r = &s.read;
    let mut rows: Vec<(String, String)> = vec![
        (
            "trace".into(),
            format!(
                "{path} ({}{})",
                r.format,
                if r.gzip { ", gzip" } else { "" }
            ),
        ),
        ("lines".into(), r.lines.to_string()),
        ("requests".into(), s.requests.to_string()),
        (
            "reads / writes / trims / flushes".into(),
            format!("{} / {} / {} / {}", s.reads, s.writes, s.trims, s.flushes),
        ),
        ("read ratio".into(), format!("{:.4}", s.read_ratio)),
        (
            "bytes read / written / trimmed".into(),
            format!(
                "{} / {} / {}",
                mib(s.read_bytes),
                mib(s.write_bytes),
                mib(s.trim_bytes)
            ),
        ),
        (
            "footprint (distinct 4 KiB units)".into(),
            format!(
                "{}{} units, {}",
                if s.footprint_capped { "at least " } else { "" },
                s.footprint_units,
                mib(s.footprint_bytes)
            ),
        ),
        (
            "offsets (min .. max end)".into(),
            format!("{} .. {} bytes", s.offset_bytes_min, s.end_bytes_max),
        ),
        (
            "duration".into(),
            format!("{:.6} s", s.duration_ns as f64 / 1e9),
        ),
        (
            "inter-arrival mean / p50 / p90 / p99 / max".into(),
            format!(
                "{} / {} / {} / {} / {}",
                us(s.inter_arrival.mean_ns),
                us(s.inter_arrival.p50_ns as f64),
                us(s.inter_arrival.p90_ns as f64),
                us(s.inter_arrival.p99_ns as f64),
                us(s.inter_arrival.max_ns as f64)
            ),
        ),
        ("other devices' requests".into(), r.filtered_out.to_string()),
        ("requests reordered".into(), r.reordered.to_string()),
        ("bad lines skipped".into(), r.bad_lines.to_string()),
    ];
    for e in &r.bad_line_errors {
        rows.push(("  skipped".into(), e.clone()));
    }
    for (kind, n) in &r.ignored {
        rows.push((format!("ignored: {kind}"), n.to_string()));
    }
    for b in &s.size_histogram {
        rows.push((
            format!("size <= {} B", b.size_bytes_max),
            b.requests.to_string(),
        ));
    }
    let mut t = comfy_table::Table::new();
    t.set_header(vec!["figure", "value"]);
    for (k, v) in rows {
        t.add_row(vec![k, v]);
    }
    t.to_string()
}
