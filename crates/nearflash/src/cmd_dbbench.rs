//! `nearflash db-bench`: LevelDB's db_bench (a faithful port) run by a real LevelDB
//! (rusty-leveldb) on Hayagui's accelerator over the direct path or redirected to the host;
//! printed as db_bench prints it. With `--image`, the database stays on a device image that
//! `nearflash fs export` copies out.

use crate::error::CliError;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DbBenchArgs {
    /// Built-in preset name or path to a TOML preset with a [hayagui] table.
    #[arg(long, default_value = "hayagui")]
    pub preset: String,
    /// Override a preset field (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// direct or redirected.
    #[arg(long)]
    pub access: String,
    /// Comma-separated benchmark names in db_bench's spelling (default: db_bench's list).
    #[arg(long)]
    pub benchmarks: Option<String>,
    /// Keys in the database (db_bench's --num).
    #[arg(long, default_value_t = 1_000_000, allow_negative_numbers = true)]
    pub num: i64,
    /// Read operations (db_bench's --reads; default: --num).
    #[arg(long, allow_negative_numbers = true)]
    pub reads: Option<i64>,
    /// Bytes per value (db_bench's --value_size).
    #[arg(long, default_value_t = 100, allow_negative_numbers = true)]
    pub value_size: i64,
    /// hayagui (the fork the paper ran: fillsync = N synchronous puts, 128-byte fragments,
    /// seed 1000 per benchmark) or upstream (LevelDB's own db_bench).
    #[arg(long, default_value = "hayagui")]
    pub variant: String,
    /// timing (the SSD keeps no bytes; a shadow copy answers reads) or functional (the bytes
    /// are on the simulated flash).
    #[arg(long, default_value = "timing")]
    pub fidelity: String,
    /// Keep the device in this image file (created if missing, reopened with recovery if
    /// present); implies functional fidelity.
    #[arg(long)]
    pub image: Option<PathBuf>,
    /// The database's directory on the device.
    #[arg(long, default_value = "/db")]
    pub db: String,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the run (db_bench's results, the machine's counters) as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &DbBenchArgs) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    let mut benchmarks = Vec::new();
    if let Some(b) = &args.benchmarks {
        benchmarks = b
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        // An empty list ran nothing and exited 0, as if every benchmark had passed.
        if benchmarks.is_empty() {
            return Err(CliError::Workload(format!(
                "--benchmarks '{b}' names no benchmark (e.g. fillseq,readrandom)"
            )));
        }
    }
    if let Some(path) = args.image.as_ref().filter(|p| p.exists()) {
        eprintln!("device: {} (reopened with recovery)", path.display());
    }
    // Named as the command line spells it (the job names its option `db`).
    if !args.db.starts_with('/') || args.db.len() < 2 {
        return Err(CliError::Workload(format!(
            "--db must be an absolute directory below the root, got '{}'",
            args.db
        )));
    }
    let run = nearflash_jobs::db_bench(&nearflash_jobs::DbBenchOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        access: args.access.clone(),
        benchmarks,
        num: args.num,
        reads: args.reads,
        value_size: args.value_size,
        variant: args.variant.clone(),
        fidelity: args.fidelity.clone(),
        image: args.image.clone(),
        db: args.db.clone(),
        seed: args.seed,
    })?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&run).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    println!(
        "nearflash db-bench: LevelDB (rusty-leveldb) on the accelerator, {} access, {} fidelity",
        run.access.name(),
        if args.image.is_some() {
            "functional"
        } else {
            &args.fidelity
        }
    );
    print!("{}", run.report.text());
    println!(
        "simulated {:.3} s ({:.3} s LevelDB compute); {} NVMe commands, {} flushes; trace {}",
        run.sim_ns as f64 / 1e9,
        run.compute_ns as f64 / 1e9,
        run.nvme_commands,
        run.ssd_flushes,
        run.trace_hash
    );
    Ok(())
}
