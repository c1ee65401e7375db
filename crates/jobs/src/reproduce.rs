//! The `reproduce` job: re-run a paper's evaluation (`nearflash-reproduce`) and write
//! `DIR/summary.json` and `DIR/report.html`. Returns the reproduction (its summary is the JSON
//! of `summary.json`, its text the terminal table).

use crate::error::JobError;
use nearflash_reproduce::{Fidelity, Options, Reproduced};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The options of `nearflash reproduce`, by the same names.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReproduceOptions {
    /// timing (default) | functional.
    pub fidelity: Option<String>,
    /// Output directory (default: `reproduce-<paper>`).
    pub out: Option<PathBuf>,
    pub preset: Option<String>,
    pub overrides: Vec<String>,
    pub seed: Option<u64>,
    pub dataset: Option<String>,
    pub max_functional_mib: Option<u64>,
    pub only: Vec<String>,
    /// Simulations side by side (default: the machine's cores).
    pub jobs: Option<usize>,
    pub volume_mib: Option<u64>,
    pub foreground_mb_s: Vec<f64>,
    pub splits: Vec<f64>,
    /// Hayagui: the genome data sets divided by this (1: full size).
    pub genome_scale: Option<u64>,
    /// Hayagui: db_bench's N.
    pub db_num: Option<i64>,
    /// Hayagui: YCSB's record count (and operation count).
    pub ycsb_records: Option<i64>,
}

/// The outputs a reproduction writes into its directory.
const OUTPUTS: [&str; 2] = ["summary.json", "report.html"];

/// The directory a reproduction of `paper` writes to.
pub fn out_dir(paper: &str, opts: &ReproduceOptions) -> PathBuf {
    opts.out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{paper}")))
}

/// Runs the reproduction, `progress(done, total)` as simulations finish (from any thread),
/// and writes its two files.
pub fn reproduce(
    paper: &str,
    opts: &ReproduceOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Reproduced, JobError> {
    let fidelity: Fidelity = opts
        .fidelity
        .as_deref()
        .unwrap_or("timing")
        .parse()
        .map_err(|e: nearflash_sim::UnknownFidelity| JobError::Workload(e.to_string()))?;
    let jobs = opts.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let out = out_dir(paper, opts);
    let mut o = Options::new(fidelity);
    o.preset = opts.preset.clone();
    o.overrides = opts.overrides.clone();
    o.seed = opts.seed.unwrap_or(1);
    o.only = opts.only.clone();
    o.dataset = opts.dataset.clone();
    o.max_functional_mib = opts.max_functional_mib;
    o.volume_mib = opts.volume_mib;
    o.foreground_mb_s = opts.foreground_mb_s.clone();
    o.splits = opts.splits.clone();
    o.genome_scale = opts.genome_scale;
    o.db_num = opts.db_num;
    o.ycsb_records = opts.ycsb_records;
    nearflash_reproduce::check(paper, &o, jobs)?;
    let created = !out.exists();
    prepare_out(&out)?;
    let r = match nearflash_reproduce::run(paper, &o, jobs, progress) {
        Ok(r) => r,
        Err(e) => {
            // A refused or failed run leaves no empty output directory behind (it removes
            // only the directory it created, and only while it is empty).
            if created {
                let _ = std::fs::remove_dir(&out);
            }
            return Err(e.into());
        }
    };
    nearflash_report::write_dir(&out, &r.summary, &r.page)?;
    Ok(r)
}

/// Before any work: the output directory must take files, and the previous run's outputs
/// are removed — a rerun killed half-way must not leave the old `summary.json` looking like
/// its result. (The new ones are written atomically at the end.)
fn prepare_out(out: &Path) -> Result<(), JobError> {
    crate::output::check_dir("--out", out)?;
    for name in OUTPUTS {
        let p = out.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(JobError::Io {
                    what: format!("removing the stale {}", p.display()),
                    source: e,
                })
            }
        }
    }
    Ok(())
}
