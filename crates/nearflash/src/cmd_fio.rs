//! `nearflash fio JOBFILE`: run a fio job file on the simulated drive and print fio's report
//! (normal text, JSON or JSON+), to stdout or atomically to `--output` (the job itself is
//! `nearflash_fio`).

use crate::cmd_io::Fidelity;
use crate::error::CliError;
use crate::progress::Progress;
use nearflash_fio::{jobfile, OutputFormat, RunOptions};
use nearflash_iobench::{Interface, Stage};
use std::path::PathBuf;

/// fio's `--output-format` values nearflash writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Normal,
    Json,
    /// JSON with the completion-latency histogram bins (`clat_ns.bins`).
    #[value(name = "json+")]
    JsonPlus,
}

#[derive(clap::Args, Debug)]
pub struct FioArgs {
    /// The fio job file.
    pub jobfile: PathBuf,
    /// Built-in preset name or path to a preset TOML file.
    #[arg(long, default_value = "flashabacus")]
    pub preset: String,
    /// Override a preset field, e.g. --set flash.channels=8 (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// Seed of the run: the device's RNG and the jobs' random offsets (unless a job sets
    /// randseed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// timing: no data (fast); functional: store and verify data (fio's verify compares
    /// real digests).
    #[arg(long, value_enum, default_value = "timing")]
    pub fidelity: Fidelity,
    /// The path from the host to the FTL: nvme (front end and PCIe link) or bare.
    #[arg(long, value_enum, default_value = "nvme")]
    pub interface: Interface,
    /// fio's output format.
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: Format,
    /// Write the report to this file (atomically) instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Fill the regions of every job first (default: those of reading jobs, as fio lays
    /// out a file before reading it).
    #[arg(long, conflicts_with = "no_precondition")]
    pub precondition: bool,
    /// Skip filling (reads of never-written blocks then cost no flash access).
    #[arg(long)]
    pub no_precondition: bool,
    /// Exit 0 even if requests failed or a verify pass found mismatches.
    #[arg(long)]
    pub allow_failures: bool,
}

/// Runs the command; `Ok(false)` when a job failed and `--allow-failures` was not given.
pub fn run(args: &FioArgs) -> Result<bool, CliError> {
    if let Some(path) = &args.output {
        crate::output::check_file("--output", path)?;
    }
    let file = jobfile::parse_file(&args.jobfile, &jobfile::System)?;
    let opts = RunOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        seed: args.seed,
        fidelity: args.fidelity.into(),
        interface: args.interface,
        precondition: match (args.precondition, args.no_precondition) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            (false, false) => None,
        },
    };
    let mut bar: Option<(Stage, Progress)> = None;
    let result = nearflash_fio::run(&file, &args.jobfile, &opts, &mut |stage, done, total| {
        if bar.as_ref().is_none_or(|(s, _)| *s != stage) {
            if let Some((_, old)) = &bar {
                old.finish();
            }
            bar = Some((stage, Progress::new(stage.name(), true)));
        }
        if let Some((_, b)) = &bar {
            // A time-based job's total is unknown: show the count alone.
            b.update(done, if total == u64::MAX { done } else { total });
        }
    });
    if let Some((_, b)) = &bar {
        b.finish();
    }
    let run = result?;
    for (path, text) in &run.iologs {
        crate::output::write_atomic(path, text.as_bytes())?;
    }
    let format = match args.output_format {
        Format::Normal => OutputFormat::Normal,
        Format::Json => OutputFormat::Json,
        Format::JsonPlus => OutputFormat::JsonPlus,
    };
    let text = nearflash_fio::render(&run, format);
    match &args.output {
        Some(path) => crate::output::write_atomic(path, text.as_bytes())?,
        None => print!("{text}"),
    }
    if run.failed() && !args.allow_failures {
        let bad: Vec<String> = run
            .jobs
            .iter()
            .filter(|j| j.error != 0)
            .map(|j| {
                format!(
                    "{} (err={}: {} failed requests, {} verify mismatches)",
                    j.spec.name, j.error, j.stats.errors, j.stats.verify_errors
                )
            })
            .collect();
        eprintln!(
            "error: jobs failed: {}; pass --allow-failures if failures are expected",
            bad.join(", ")
        );
        return Ok(false);
    }
    Ok(true)
}
