//! `nearflash ycsb`: a YCSB core workload (A–F) against a real LevelDB on Hayagui's
//! accelerator, direct or redirected: the load phase, then the run phase; throughput and
//! latency percentiles per operation in simulated time; every read and scan checked against
//! a model of what was written.

use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct YcsbArgs {
    /// Built-in preset name or path to a TOML preset with a [hayagui] table.
    #[arg(long, default_value = "hayagui")]
    pub preset: String,
    /// Override a preset field (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// direct or redirected.
    #[arg(long)]
    pub access: String,
    /// YCSB core workload: a, b, c, d, e or f.
    #[arg(long)]
    pub workload: String,
    /// recordcount: records the load phase inserts.
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
    pub records: i64,
    /// operationcount: operations of the run phase.
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
    pub operations: i64,
    /// timing or functional.
    #[arg(long, default_value = "timing")]
    pub fidelity: String,
    /// Keep the device in this image file (created if missing, reopened if present).
    #[arg(long)]
    pub image: Option<PathBuf>,
    /// The database's directory on the device.
    #[arg(long, default_value = "/ycsb")]
    pub db: String,
    /// Seed of the workload's random stream and of the simulation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write both phases' reports and the machine's counters as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &YcsbArgs) -> Result<bool, CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    if let Some(path) = args.image.as_ref().filter(|p| p.exists()) {
        eprintln!("device: {} (reopened with recovery)", path.display());
    }
    // Named as the command line spells them (the job names its options).
    for (flag, value) in [
        ("--records", args.records),
        ("--operations", args.operations),
    ] {
        if value < 1 {
            return Err(CliError::Workload(format!("{flag} must be at least 1")));
        }
    }
    let run = nearflash_jobs::ycsb(&nearflash_jobs::YcsbOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        access: args.access.clone(),
        workload: args.workload.clone(),
        records: args.records,
        operations: args.operations,
        fidelity: args.fidelity.clone(),
        image: args.image.clone(),
        db: args.db.clone(),
        seed: args.seed,
    })?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&run).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "phase",
        "op",
        "count",
        "p50 µs",
        "p95 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
    ]);
    for phase in [&run.load, &run.run] {
        for o in &phase.per_op {
            let l = &o.latency;
            t.add_row(vec![
                phase.phase.clone(),
                format!("{:?}", o.op),
                o.count.to_string(),
                format!("{:.1}", l.p50_us),
                format!("{:.1}", l.p95_us),
                format!("{:.1}", l.p99_us),
                format!("{:.1}", l.p999_us),
                format!("{:.1}", l.max_us),
            ]);
        }
    }
    println!(
        "YCSB workload {} on LevelDB, {} access: load {:.0} ops/s, run {:.0} ops/s",
        run.workload,
        run.access.name(),
        run.load.throughput_ops_per_s,
        run.run.throughput_ops_per_s
    );
    println!("{t}");
    // The job refuses a run whose reads or scans returned what was not written.
    let check = run.run.check.clone().unwrap_or_default();
    println!(
        "checked {} reads and {} scans against the model: {} mismatches; trace {}",
        check.reads_checked, check.scans_checked, check.mismatches, run.trace_hash
    );
    Ok(true)
}
