//! `nearflash fileops`: Hayagui's file-operation microbenchmark — `read`, `write` or
//! `write-sync` calls of one size from the accelerator, over the direct path (AccelFS and
//! the in-accelerator NVMe engine) or redirected to the host — latency per call, the bytes
//! checked after the run.

use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct FileopsArgs {
    /// Built-in preset name or path to a TOML preset with a [hayagui] table.
    #[arg(long, default_value = "hayagui")]
    pub preset: String,
    /// Override a preset field, e.g. --set hayagui.redirect.copy=accelerated-io (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// direct (AccelFS, NVMe engine in the accelerator) or redirected (system calls to the
    /// host).
    #[arg(long)]
    pub access: String,
    /// read, write or write-sync.
    #[arg(long)]
    pub op: String,
    /// Bytes per call, in KiB.
    #[arg(long)]
    pub size_kib: u64,
    /// Calls to time.
    #[arg(long, default_value_t = 100)]
    pub count: u64,
    /// Seed of the run (the data pattern and the simulation's RNG).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &FileopsArgs) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    // Named as the command line spells them (the job names its options).
    for (flag, value) in [("--size-kib", args.size_kib), ("--count", args.count)] {
        if value == 0 {
            return Err(CliError::Workload(format!("{flag} must be at least 1")));
        }
    }
    let report = nearflash_jobs::fileops(&nearflash_jobs::FileopsOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        access: args.access.clone(),
        op: args.op.clone(),
        size_kib: args.size_kib,
        count: args.count,
        seed: args.seed,
    })?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "access", "op", "size", "calls", "mean µs", "p50 µs", "p99 µs", "MB/s",
    ]);
    let us = |ns: f64| format!("{:.1}", ns / 1e3);
    t.add_row(vec![
        args.access.clone(),
        args.op.clone(),
        format!("{} KiB", args.size_kib),
        args.count.to_string(),
        us(report.latency.mean_ns),
        us(report.latency.p50_ns as f64),
        us(report.latency.p99_ns as f64),
        format!("{:.1}", report.throughput_mb_s),
    ]);
    println!("{t}");
    println!(
        "verified {} bytes; {} NVMe commands; trace {}",
        report.verified_bytes, report.nvme_commands, report.trace_hash
    );
    Ok(())
}
