//! One Hayagui simulation: a fresh Vector Engine over the preset's drive on one access path
//! (`Ve::format`), running one experiment — a file operation at one size, db_bench, one
//! YCSB workload or one genome data set — and checking its data (YCSB's reads and scans
//! against a model, the genome's matches against the same pipeline in memory).

use super::{Hayagui, Outcome, Task};
use crate::ReproduceError;
use nearflash_flash::NoStore;
use nearflash_hayagui::fileops::{self, FileOp};
use nearflash_hayagui::genome;
use nearflash_hayagui::{Access, Ve};
use nearflash_kvbench::{CoreWorkload, DbBenchConfig, YcsbConfig};
use nearflash_sim::Fidelity;

const DB_BENCHMARKS: &str = "fillseq,fillsync,fillrandom,overwrite,readrandom,readseq,readreverse";

/// File operations made at `size_kib` a call.
fn calls_for(size_kib: u64) -> u64 {
    // At least 4 MiB and at least 8 calls per size: enough to cover the chunk and page
    // cache's alternation (every other 4 KiB read hits AccelFS's 8 KiB chunk).
    (4096 / size_kib).clamp(8, 256)
}

impl Hayagui {
    /// Runs one task on a fresh machine.
    pub(super) fn run_task(&self, task: &Task) -> Result<Outcome, ReproduceError> {
        match *task {
            Task::FileOps {
                access,
                op,
                size_kib,
            } => self.fileops(access, op, size_kib),
            Task::DbBench { access } => self.db_bench(access),
            Task::Ycsb { access, workload } => self.ycsb(access, workload),
            Task::Genome { access, dataset } => self.genome(access, dataset),
        }
    }

    /// A fresh Vector Engine over the preset's drive on `access`.
    fn ve(&self, access: Access) -> Result<Ve, ReproduceError> {
        // Both fidelities keep real bytes for the programs (a timing SSD answers reads from
        // a shadow copy); functional fidelity keeps them on the simulated flash, in memory.
        let store: Box<dyn nearflash_flash::PageStore> = match self.fidelity {
            Fidelity::Timing => Box::new(NoStore),
            Fidelity::Functional => {
                let pages = nearflash_flash::Geometry::from_config(&self.preset.flash).page_count();
                Box::new(nearflash_flash::MemoryStore::new(
                    pages,
                    self.preset.flash.page_size_bytes,
                ))
            }
        };
        Ok(Ve::format(
            &self.preset.flash,
            &self.preset.ftl,
            &self.preset.write_cache,
            store,
            &self.cfg,
            access,
            self.seed,
        )?)
    }

    /// `op` at `size_kib` a call, every byte read back.
    fn fileops(
        &self,
        access: Access,
        op: FileOp,
        size_kib: u64,
    ) -> Result<Outcome, ReproduceError> {
        let mut ve = self.ve(access)?;
        let r = fileops::run(&mut ve, op, size_kib << 10, calls_for(size_kib), self.seed)?;
        Ok(Outcome::FileOps(r))
    }

    /// LevelDB's db_bench, Hayagui's benchmarks over N values.
    fn db_bench(&self, access: Access) -> Result<Outcome, ReproduceError> {
        let mut cfg = DbBenchConfig::hayagui();
        cfg.benchmarks = DB_BENCHMARKS.split(',').map(str::to_string).collect();
        cfg.num = self.sizes.db_num;
        let (r, _) =
            nearflash_hayagui::dbbench::run(self.ve(access)?, &cfg, "/db", &self.cfg.leveldb);
        Ok(Outcome::DbBench(r?))
    }

    /// YCSB `workload`, every read and scan checked against a model.
    fn ycsb(&self, access: Access, workload: &'static str) -> Result<Outcome, ReproduceError> {
        let mut cfg = YcsbConfig::new(CoreWorkload::named(workload)?, self.seed);
        cfg.record_count = self.sizes.ycsb_records;
        cfg.operation_count = self.sizes.ycsb_records;
        cfg.check = true;
        let (r, _) = nearflash_hayagui::ycsb::run(
            self.ve(access)?,
            workload,
            cfg,
            "/ycsb",
            &self.cfg.leveldb,
        );
        let r = r?;
        let check = r.run.check.clone().unwrap_or_default();
        if check.mismatches > 0 {
            return Err(ReproduceError::Disagrees {
                what: format!("YCSB {workload} on {}", access.name()),
                reason: format!(
                    "{} reads or scans differ from what was written",
                    check.mismatches
                ),
            });
        }
        Ok(Outcome::Ycsb(r))
    }

    /// The genome application on `dataset` (scaled), its matches checked against the same
    /// pipeline in memory.
    fn genome(&self, access: Access, dataset: &'static str) -> Result<Outcome, ReproduceError> {
        let sizes = nearflash_genome::DatasetSizes::full(dataset)
            .expect("a built-in data set")
            .scaled(self.sizes.genome_scale);
        let ds = nearflash_genome::generate(&sizes, self.seed);
        let mut ve = self.ve(access)?;
        let (run, report) = genome::run(
            &mut ve,
            &ds.reference_fasta,
            &ds.target_fasta,
            &self.cfg.genome,
        )?;
        let want = genome::in_memory(&ds.reference_fasta, &ds.target_fasta, &self.cfg.genome)?;
        if report.hits != want.hits {
            return Err(ReproduceError::Disagrees {
                what: format!("genome {dataset} on {}", access.name()),
                reason: "the matches differ from the same pipeline in memory".into(),
            });
        }
        Ok(Outcome::Genome(run))
    }
}
