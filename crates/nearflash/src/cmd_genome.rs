//! `nearflash genome`: the genome sequence-matching application on Hayagui's accelerator,
//! direct or redirected: generated reference and target FASTA (sizes named after the paper's
//! data sets, scaled down by `--scale`), the six phases timed in simulated time, and the
//! matches compared with the same pipeline run in memory (so the storage path delivered
//! every byte intact).

use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct GenomeArgs {
    /// Built-in preset name or path to a TOML preset with a [hayagui] table.
    #[arg(long, default_value = "hayagui")]
    pub preset: String,
    /// Override a preset field (repeatable).
    #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// direct or redirected.
    #[arg(long)]
    pub access: String,
    /// bacteria, killifish, mouse (full sizes in crates/genome/src/dataset.rs) or tiny.
    #[arg(long)]
    pub dataset: String,
    /// Divide the data set's reference and target by this (1: full size, which needs memory
    /// of the order of the target's size).
    #[arg(long, default_value_t = 100)]
    pub scale: u64,
    /// timing or functional.
    #[arg(long, default_value = "timing")]
    pub fidelity: String,
    /// Seed of the data set and of the simulation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the phases and counters as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &GenomeArgs) -> Result<bool, CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    if args.scale == 0 {
        return Err(CliError::Workload("--scale must be at least 1".into()));
    }
    let options = nearflash_jobs::GenomeOptions {
        preset: args.preset.clone(),
        overrides: args.overrides.clone(),
        access: args.access.clone(),
        dataset: args.dataset.clone(),
        scale: args.scale,
        fidelity: args.fidelity.clone(),
        seed: args.seed,
    };
    let sizes = nearflash_jobs::hayagui::genome_sizes(&options)?;
    // The job compares the matches with the same pipeline run in memory and refuses a run
    // whose matches differ.
    let run = nearflash_jobs::genome(&options)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&run).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "phase",
        "seconds",
        "compute s",
        "MB read",
        "MB written",
    ]);
    for p in &run.phases {
        t.add_row(vec![
            format!("{:?}", p.phase),
            format!("{:.4}", p.ns as f64 / 1e9),
            format!("{:.4}", p.compute_ns as f64 / 1e9),
            format!("{:.2}", p.counts.bytes_read as f64 / 1e6),
            format!("{:.2}", p.counts.bytes_written as f64 / 1e6),
        ]);
    }
    println!(
        "genome {} (reference {} bp, {} reads of {} bp), {} access: total {:.4} s",
        sizes.name,
        sizes.reference_len_bases,
        sizes.read_count,
        sizes.read_len_bases,
        run.access.name(),
        run.total_ns as f64 / 1e9
    );
    println!("{t}");
    println!(
        "{} of {} reads mapped; identical to the in-memory run; trace {}",
        run.mapped, run.reads, run.trace_hash
    );
    Ok(true)
}
