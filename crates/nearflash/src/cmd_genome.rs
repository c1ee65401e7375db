//! `nearflash genome`: the genome sequence-matching application on Hayagui's accelerator,
//! direct or redirected: generated reference and target FASTA (sizes named after the paper's
//! data sets, scaled down by `--scale`), the six phases timed in simulated time, and the
//! matches compared with the same pipeline run in memory (so the storage path delivered
//! every byte intact).

use crate::cmd_dbbench::{build_ve, err};
use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_genome::{DatasetSizes, GenomeConfig, GenomeIo, MemIo, NoObserver};
use nearflash_hayagui::{Access, HayaguiConfig};
use nearflash_preset::Preset;
use nearflash_sim::Fidelity;
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
    let access = Access::parse(&args.access).map_err(err)?;
    let fidelity: Fidelity = args.fidelity.parse().map_err(err)?;
    let full = DatasetSizes::full(&args.dataset).ok_or_else(|| {
        err(format!(
            "unknown data set '{}' (bacteria, killifish, mouse or tiny)",
            args.dataset
        ))
    })?;
    if args.scale == 0 {
        return Err(err("--scale must be at least 1"));
    }
    let sizes = if args.dataset == "tiny" {
        full
    } else {
        full.scaled(args.scale)
    };
    let preset = Preset::load(&args.preset, &args.overrides)?;
    let hay: HayaguiConfig = preset.require()?;
    let ds = nearflash_genome::generate(&sizes, args.seed);
    let mut ve = build_ve(&preset, &hay, access, fidelity, None, args.seed)?;
    let (run, report) =
        nearflash_hayagui::genome::run(&mut ve, &ds.reference_fasta, &ds.target_fasta, &hay.genome)
            .map_err(err)?;
    // The same pipeline over memory: what the run must have found.
    let mut mem = MemIo::default();
    for (p, d) in [
        (nearflash_hayagui::genome::REFERENCE, &ds.reference_fasta),
        (nearflash_hayagui::genome::TARGET, &ds.target_fasta),
    ] {
        mem.create(p).map_err(err)?;
        mem.append(p, d).map_err(err)?;
    }
    let mut cfg = GenomeConfig::new(
        nearflash_hayagui::genome::REFERENCE,
        nearflash_hayagui::genome::TARGET,
        nearflash_hayagui::genome::INDEX,
    );
    cfg.chunk_size_bytes = hay.genome.chunk_bytes;
    let want = nearflash_genome::run_pipeline(&mut mem, &cfg, &mut NoObserver).map_err(err)?;
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
        access.name(),
        run.total_ns as f64 / 1e9
    );
    println!("{t}");
    let same = report.hits == want.hits;
    println!(
        "{} of {} reads mapped; {} the in-memory run; trace {}",
        run.mapped,
        run.reads,
        if same {
            "identical to"
        } else {
            "DIFFERENT from"
        },
        run.trace_hash
    );
    if !same {
        eprintln!("error: the matches differ from the same pipeline run in memory");
    }
    Ok(same)
}
