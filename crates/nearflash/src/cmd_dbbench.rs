//! `nearflash db-bench`: LevelDB's db_bench (a faithful port) run by a real LevelDB
//! (rusty-leveldb) on Hayagui's accelerator over the direct path or redirected to the host;
//! printed as db_bench prints it. With `--image`, the database stays on a device image that
//! `nearflash fs export` copies out.

use crate::error::CliError;
use nearflash_flash::{Geometry, MemoryStore, NoStore, PageStore};
use nearflash_hayagui::machine::{Ev, Start};
use nearflash_hayagui::{Access, HayaguiConfig, Ve};
use nearflash_kvbench::DbBenchConfig;
use nearflash_preset::Preset;
use nearflash_sim::{Fidelity, Schedule, Sim};
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

pub(crate) fn err(e: impl std::fmt::Display) -> CliError {
    CliError::Workload(e.to_string())
}

/// The accelerator over `access` on the preset's SSD: kept in `image` (created if missing,
/// reopened with recovery if present), or fresh in memory — functional on a memory store,
/// timing on none.
pub(crate) fn build_ve(
    preset: &Preset,
    hay: &HayaguiConfig,
    access: Access,
    fidelity: Fidelity,
    image: Option<&std::path::Path>,
    seed: u64,
) -> Result<Ve, CliError> {
    Ok(match image {
        Some(path) => {
            let mut sim: Sim<Ev> = Sim::new(seed);
            let mut q = sim
                .queue()
                .map(|e| Ev::Dev(nearflash_nvme::NvmeEvent::Device(e)));
            let (dev, start) = if path.exists() {
                let (stored, dev) = nearflash_image::open_device(path, &mut q)?;
                // The image keeps the drive it was created with: a --preset or --set that
                // asks for another one was dropped without a word (issue 28).
                if stored.flash != preset.flash || stored.ftl != preset.ftl {
                    return Err(err(format!(
                        "{}: the image holds a drive of preset '{}'; its [flash] and [ftl] \
                         differ from those of --preset '{}' with the --set given, which apply \
                         only when the image is created (drop them, or use a new image)",
                        path.display(),
                        stored.name,
                        preset.name
                    )));
                }
                eprintln!(
                    "device: {} (preset '{}', reopened with recovery)",
                    path.display(),
                    stored.name
                );
                (dev, Start::Mount)
            } else {
                (
                    nearflash_image::create_device(preset, path, &mut q)?,
                    Start::Format,
                )
            };
            Ve::over(sim, dev, start, hay, access).map_err(err)?
        }
        None => {
            let store: Box<dyn PageStore> = if fidelity.is_functional() {
                let pages = Geometry::from_config(&preset.flash).page_count();
                Box::new(MemoryStore::new(pages, preset.flash.page_size_bytes))
            } else {
                Box::new(NoStore)
            };
            Ve::format(&preset.flash, &preset.ftl, store, hay, access, seed).map_err(err)?
        }
    })
}

pub fn run(args: &DbBenchArgs) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    let access = Access::parse(&args.access).map_err(err)?;
    let fidelity: Fidelity = args.fidelity.parse().map_err(err)?;
    let mut cfg = match args.variant.as_str() {
        "hayagui" => DbBenchConfig::hayagui(),
        "upstream" => DbBenchConfig::upstream(),
        other => {
            return Err(err(format!(
                "unknown --variant '{other}' (hayagui or upstream)"
            )))
        }
    };
    if let Some(b) = &args.benchmarks {
        cfg.benchmarks = b
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        // An empty list ran nothing and exited 0, as if every benchmark had passed.
        if cfg.benchmarks.is_empty() {
            return Err(err(format!(
                "--benchmarks '{b}' names no benchmark (e.g. fillseq,readrandom)"
            )));
        }
    }
    cfg.num = args.num;
    cfg.reads = args.reads;
    cfg.value_size_bytes = args.value_size;
    cfg.validate().map_err(err)?;
    if !args.db.starts_with('/') || args.db.len() < 2 {
        return Err(err(format!(
            "--db must be an absolute directory below the root, got '{}'",
            args.db
        )));
    }
    let preset = Preset::load(&args.preset, &args.overrides)?;
    let hay: HayaguiConfig = preset.require()?;
    let ve = build_ve(
        &preset,
        &hay,
        access,
        fidelity,
        args.image.as_deref(),
        args.seed,
    )?;
    let (result, mut ve) = nearflash_hayagui::dbbench::run(ve, &cfg, &args.db, &hay.leveldb);
    let run = result.map_err(err)?;
    ve.sync_all().map_err(err)?;
    if args.image.is_some() {
        nearflash_image::store_health(ve.machine().device())?;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&run).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    println!(
        "nearflash db-bench: LevelDB (rusty-leveldb) on the accelerator, {} access, {} fidelity",
        access.name(),
        if args.image.is_some() {
            "functional"
        } else {
            fidelity.name()
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
