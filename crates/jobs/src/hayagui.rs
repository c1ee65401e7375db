//! The Hayagui jobs (seed 003): the file-operation microbenchmark (`fileops`), LevelDB's
//! db_bench (`db_bench`), YCSB's core workloads (`ycsb`) and the genome application
//! (`genome`), each on the accelerator over the direct path or redirected to the host. Every
//! run checks its data: a read-back that differs, a YCSB read or scan that returns what was
//! not written, or genome matches that differ from the same pipeline run in memory is a
//! `JobError::Verification`, never a figure.

use crate::error::JobError;
use nearflash_flash::{Geometry, MemoryStore, NoStore, PageStore};
use nearflash_genome::DatasetSizes;
use nearflash_hayagui::dbbench::DbBenchRun;
use nearflash_hayagui::fileops::{FileOp, FileOpsReport};
use nearflash_hayagui::files::{fs_for, nvme_for};
use nearflash_hayagui::genome::GenomeRun;
use nearflash_hayagui::machine::{Ev, Machine, Run, Start};
use nearflash_hayagui::ycsb::YcsbRun;
use nearflash_hayagui::{Access, HayaguiConfig, Ve};
use nearflash_kvbench::{CoreWorkload, DbBenchConfig, YcsbConfig};
use nearflash_preset::Preset;
use nearflash_sim::{Fidelity, Schedule, Sim};
use serde::Deserialize;
use std::path::PathBuf;

/// Most bytes a file-operation run may move (size × count).
const FILEOPS_BYTES_MAX: u64 = 1 << 34;

/// `value` of option `name`, which must be at least 1.
fn at_least_one(name: &str, value: i64) -> Result<(), JobError> {
    if value < 1 {
        return Err(JobError::Workload(format!(
            "{name} must be at least 1, got {value}"
        )));
    }
    Ok(())
}

fn access(name: &str) -> Result<Access, JobError> {
    Ok(Access::parse(name)?)
}

/// The accelerator over `access` on the preset's SSD: kept in `image` (created if missing,
/// reopened with recovery if present), or fresh in memory — functional on a memory store,
/// timing on none.
pub fn build_ve(
    preset: &Preset,
    hay: &HayaguiConfig,
    access: Access,
    fidelity: Fidelity,
    image: Option<&std::path::Path>,
    seed: u64,
) -> Result<Ve, JobError> {
    let Some(path) = image else {
        let store: Box<dyn PageStore> = if fidelity.is_functional() {
            let pages = Geometry::from_config(&preset.flash).page_count();
            Box::new(MemoryStore::new(pages, preset.flash.page_size_bytes))
        } else {
            Box::new(NoStore)
        };
        return Ok(Ve::format(
            &preset.flash,
            &preset.ftl,
            &preset.write_cache,
            store,
            hay,
            access,
            seed,
        )?);
    };
    let mut sim: Sim<Ev> = Sim::new(seed);
    let mut q = sim.queue().map(nearflash_hayagui::machine::device_event);
    let (dev, start) = if path.exists() {
        let (stored, dev) = nearflash_image::open_device(path, &mut q)?;
        // The image keeps the drive it was created with: a preset or override that asks for
        // another one was dropped without a word (issue 28).
        if stored.flash != preset.flash || stored.ftl != preset.ftl {
            return Err(JobError::Workload(format!(
                "{}: the image holds a drive of preset '{}'; its [flash] and [ftl] differ from \
                 those of --preset '{}' with the --set given, which apply only when the image \
                 is created (drop them, or use a new image)",
                path.display(),
                stored.name,
                preset.name
            )));
        }
        (dev, Start::Mount)
    } else {
        (
            nearflash_image::create_device(preset, path, &mut q)?,
            Start::Format,
        )
    };
    // The job owns the loop: the recovered (or created) device goes into the machine, the
    // machine onto the loop, and the accelerator drives it.
    let m = Machine::new(
        dev,
        &preset.write_cache,
        &nvme_for(access, hay),
        fs_for(access, hay),
    )
    .map_err(nearflash_hayagui::FileError::from)?;
    Ok(Ve::over(Run::new(sim, m), start, hay, access)?)
}

/// The options of a file-operation microbenchmark run (`nearflash fileops`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileopsOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    /// direct | redirected.
    pub access: String,
    /// read | write | write-sync.
    pub op: String,
    pub size_kib: u64,
    pub count: u64,
    pub seed: u64,
}

impl Default for FileopsOptions {
    fn default() -> Self {
        FileopsOptions {
            preset: "hayagui".into(),
            overrides: Vec::new(),
            access: "direct".into(),
            op: "read".into(),
            size_kib: 4,
            count: 100,
            seed: 1,
        }
    }
}

/// `count` calls of `size_kib` from the accelerator; the bytes are checked after the run.
pub fn fileops(o: &FileopsOptions) -> Result<FileOpsReport, JobError> {
    let access = access(&o.access)?;
    let op = FileOp::parse(&o.op)?;
    at_least_one("size_kib", i64::try_from(o.size_kib).unwrap_or(i64::MAX))?;
    at_least_one("count", i64::try_from(o.count).unwrap_or(i64::MAX))?;
    let size_bytes = o
        .size_kib
        .checked_mul(1024)
        .filter(|b| {
            b.checked_mul(o.count)
                .is_some_and(|t| t <= FILEOPS_BYTES_MAX)
        })
        .ok_or_else(|| JobError::Workload("size_kib × count must stay within 16 GiB".into()))?;
    let preset = Preset::load(&o.preset, &o.overrides)?;
    let cfg: HayaguiConfig = preset.require()?;
    let mut ve = Ve::format(
        &preset.flash,
        &preset.ftl,
        &preset.write_cache,
        Box::new(NoStore),
        &cfg,
        access,
        o.seed,
    )?;
    match nearflash_hayagui::fileops::run(&mut ve, op, size_bytes, o.count, o.seed) {
        Err(e @ nearflash_hayagui::fileops::FileOpsError::Mismatch { .. }) => {
            Err(JobError::Verification(e.to_string()))
        }
        r => Ok(r?),
    }
}

/// The options of a db_bench run (`nearflash db-bench`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DbBenchOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    /// direct | redirected.
    pub access: String,
    /// Benchmark names in db_bench's spelling (empty: the variant's list).
    pub benchmarks: Vec<String>,
    /// Keys in the database (db_bench's --num).
    pub num: i64,
    /// Read operations (db_bench's --reads; none: `num`).
    pub reads: Option<i64>,
    /// Bytes per value (db_bench's --value_size).
    pub value_size: i64,
    /// hayagui (the fork the paper ran) | upstream (LevelDB's own db_bench).
    pub variant: String,
    /// timing | functional.
    pub fidelity: String,
    /// Keep the device in this image file (created if missing, reopened if present).
    pub image: Option<PathBuf>,
    /// The database's directory on the device.
    pub db: String,
    pub seed: u64,
}

impl Default for DbBenchOptions {
    fn default() -> Self {
        DbBenchOptions {
            preset: "hayagui".into(),
            overrides: Vec::new(),
            access: "direct".into(),
            benchmarks: Vec::new(),
            // LevelDB's db_bench default.
            num: 1_000_000,
            reads: None,
            value_size: 100,
            variant: "hayagui".into(),
            fidelity: "timing".into(),
            image: None,
            db: "/db".into(),
            seed: 1,
        }
    }
}

fn check_db_dir(db: &str) -> Result<(), JobError> {
    if !db.starts_with('/') || db.len() < 2 {
        return Err(JobError::Workload(format!(
            "db must be an absolute directory below the root, got '{db}'"
        )));
    }
    Ok(())
}

/// db_bench on a real LevelDB on the accelerator.
pub fn db_bench(o: &DbBenchOptions) -> Result<DbBenchRun, JobError> {
    let access = access(&o.access)?;
    let fidelity: Fidelity = o.fidelity.parse()?;
    let mut cfg = match o.variant.as_str() {
        "hayagui" => DbBenchConfig::hayagui(),
        "upstream" => DbBenchConfig::upstream(),
        other => {
            return Err(JobError::Workload(format!(
                "unknown variant '{other}' (hayagui or upstream)"
            )))
        }
    };
    if !o.benchmarks.is_empty() {
        cfg.benchmarks = o.benchmarks.clone();
    }
    cfg.num = o.num;
    cfg.reads = o.reads;
    cfg.value_size_bytes = o.value_size;
    cfg.validate()?;
    check_db_dir(&o.db)?;
    let preset = Preset::load(&o.preset, &o.overrides)?;
    let hay: HayaguiConfig = preset.require()?;
    let ve = build_ve(&preset, &hay, access, fidelity, o.image.as_deref(), o.seed)?;
    let (result, mut ve) = nearflash_hayagui::dbbench::run(ve, &cfg, &o.db, &hay.leveldb);
    let run = result?;
    ve.sync_all()?;
    if o.image.is_some() {
        nearflash_image::store_health(ve.machine().device())?;
    }
    Ok(run)
}

/// The options of a YCSB run (`nearflash ycsb`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct YcsbOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    /// direct | redirected.
    pub access: String,
    /// YCSB core workload: a–f.
    pub workload: String,
    /// recordcount: records the load phase inserts.
    pub records: i64,
    /// operationcount: operations of the run phase.
    pub operations: i64,
    /// timing | functional.
    pub fidelity: String,
    /// Keep the device in this image file (created if missing, reopened if present).
    pub image: Option<PathBuf>,
    /// The database's directory on the device.
    pub db: String,
    pub seed: u64,
}

impl Default for YcsbOptions {
    fn default() -> Self {
        YcsbOptions {
            preset: "hayagui".into(),
            overrides: Vec::new(),
            access: "direct".into(),
            workload: "a".into(),
            records: 1000,
            operations: 1000,
            fidelity: "timing".into(),
            image: None,
            db: "/ycsb".into(),
            seed: 1,
        }
    }
}

/// A YCSB core workload on a real LevelDB on the accelerator: the load phase, then the run
/// phase; every read and scan checked against a model of what was written.
pub fn ycsb(o: &YcsbOptions) -> Result<YcsbRun, JobError> {
    let access = access(&o.access)?;
    let fidelity: Fidelity = o.fidelity.parse()?;
    let workload = CoreWorkload::named(&o.workload)?;
    at_least_one("records", o.records)?;
    at_least_one("operations", o.operations)?;
    check_db_dir(&o.db)?;
    let mut cfg = YcsbConfig::new(workload, o.seed);
    cfg.record_count = o.records;
    cfg.operation_count = o.operations;
    cfg.check = true;
    let preset = Preset::load(&o.preset, &o.overrides)?;
    let hay: HayaguiConfig = preset.require()?;
    let ve = build_ve(&preset, &hay, access, fidelity, o.image.as_deref(), o.seed)?;
    let letter = o.workload.to_ascii_lowercase();
    let (result, mut ve) = nearflash_hayagui::ycsb::run(ve, &letter, cfg, &o.db, &hay.leveldb);
    let run = result?;
    ve.sync_all()?;
    if o.image.is_some() {
        nearflash_image::store_health(ve.machine().device())?;
    }
    let check = run.run.check.clone().unwrap_or_default();
    if check.mismatches > 0 {
        return Err(JobError::Verification(format!(
            "{} YCSB reads or scans returned what was not written (first: {})",
            check.mismatches,
            check.first_mismatch.unwrap_or_default()
        )));
    }
    Ok(run)
}

/// The options of a genome run (`nearflash genome`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenomeOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    /// direct | redirected.
    pub access: String,
    /// bacteria | killifish | mouse | tiny.
    pub dataset: String,
    /// Divide the data set's reference and target by this (1: full size).
    pub scale: u64,
    /// timing | functional.
    pub fidelity: String,
    pub seed: u64,
}

impl Default for GenomeOptions {
    fn default() -> Self {
        GenomeOptions {
            preset: "hayagui".into(),
            overrides: Vec::new(),
            access: "direct".into(),
            dataset: "tiny".into(),
            scale: 100,
            fidelity: "timing".into(),
            seed: 1,
        }
    }
}

/// The data set's sizes `o` asks for.
pub fn genome_sizes(o: &GenomeOptions) -> Result<DatasetSizes, JobError> {
    let full = DatasetSizes::full(&o.dataset).ok_or_else(|| {
        JobError::Workload(format!(
            "unknown data set '{}' (bacteria, killifish, mouse or tiny)",
            o.dataset
        ))
    })?;
    if o.scale == 0 {
        return Err(JobError::Workload("scale must be at least 1".into()));
    }
    Ok(if o.dataset == "tiny" {
        full
    } else {
        full.scaled(o.scale)
    })
}

/// The genome application on generated FASTA files; its matches are compared with the same
/// pipeline run in memory, so the storage path delivered every byte intact.
pub fn genome(o: &GenomeOptions) -> Result<GenomeRun, JobError> {
    let access = access(&o.access)?;
    let fidelity: Fidelity = o.fidelity.parse()?;
    let sizes = genome_sizes(o)?;
    let preset = Preset::load(&o.preset, &o.overrides)?;
    let hay: HayaguiConfig = preset.require()?;
    let ds = nearflash_genome::generate(&sizes, o.seed);
    let mut ve = build_ve(&preset, &hay, access, fidelity, None, o.seed)?;
    let (run, report) = nearflash_hayagui::genome::run(
        &mut ve,
        &ds.reference_fasta,
        &ds.target_fasta,
        &hay.genome,
    )?;
    let want =
        nearflash_hayagui::genome::in_memory(&ds.reference_fasta, &ds.target_fasta, &hay.genome)?;
    if report.hits != want.hits {
        return Err(JobError::Verification(format!(
            "genome {}: the matches differ from the same pipeline run in memory",
            sizes.name
        )));
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each Hayagui job runs from its defaults (small sizes) and refuses a bad access path
    /// naming it.
    #[test]
    fn hayagui_jobs_run_and_name_bad_options() {
        let f = fileops(&FileopsOptions {
            count: 4,
            ..FileopsOptions::default()
        })
        .unwrap();
        assert!(f.verified_bytes >= 4 * 4096, "{}", f.verified_bytes);
        let y = ycsb(&YcsbOptions {
            records: 50,
            operations: 50,
            ..YcsbOptions::default()
        })
        .unwrap();
        assert_eq!(y.run.check.clone().unwrap_or_default().mismatches, 0);
        assert!(y.run.check.clone().unwrap_or_default().reads_checked > 0);
        let d = db_bench(&DbBenchOptions {
            num: 200,
            benchmarks: vec!["fillseq".into(), "readrandom".into()],
            ..DbBenchOptions::default()
        })
        .unwrap();
        assert!(d.sim_ns > 0);
        let g = genome(&GenomeOptions::default()).unwrap();
        assert!(
            g.mapped > 0 && g.mapped <= g.reads,
            "{} {}",
            g.mapped,
            g.reads
        );
        let e = ycsb(&YcsbOptions {
            access: "sideways".into(),
            ..YcsbOptions::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("sideways"), "{e}");
        let e = genome(&GenomeOptions {
            dataset: "yeast".into(),
            ..GenomeOptions::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("yeast"), "{e}");
    }
}
