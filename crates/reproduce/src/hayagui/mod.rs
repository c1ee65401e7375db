//! The Hayagui reproduction (`nearflash reproduce hayagui`): seed 003's four experiments on
//! both access paths — file-operation latency (read, write, write+sync, 4 KiB – 8 MiB),
//! LevelDB's db_bench, YCSB A–F, and the six-phase genome application — and the paper's four
//! published ranges plus the baseline genome's shape, each as claims whose notes are written
//! from the measured runs.
//!
//! Sizes (the paper gives none for db_bench and YCSB, and its genome data sets are named,
//! not sized). The caches the paper's data outgrew are LevelDB's (its block cache and 4 MiB
//! memtable) and AccelFS's (2 MiB per file); the host's page cache held it whole — the host
//! had 96 GB of memory (seed 003's testbed) and the paper calls its YCSB data "small- or
//! medium-sized" — so the redirected path's 2 GiB page cache holding every data set here is
//! the paper's ratio, not a shortcut.
//! - db_bench N = 500,000 (`--db-num`; 58 MB of keys and values, 14× rusty-leveldb's 4 MiB
//!   block cache — the ratio of db_bench's default N = 1,000,000, 116 MB, to C++ LevelDB's
//!   8 MiB cache, which Hayagui's fork keeps — so the read benchmarks reach the files as the
//!   paper's did; at 20,000 readreverse never left LevelDB's memory). The default N itself
//!   runs with `--db-num 1000000` (about 90 s of CPU on the direct path and 350 s on the
//!   redirected one, which alone would double the reproduction's time; the ignored test
//!   `db_bench_at_leveldbs_default_n_reaches_the_files` runs it).
//! - YCSB 50,000 records and as many operations: 10 fields of 100 B, 1,112 B a record in
//!   LevelDB, 56 MB — 13× the 4 MiB block cache, the ratio db_bench's default N has to C++
//!   LevelDB's 8 MiB cache (116 MB, 14×), which Hayagui's LevelDB fork keeps. At the 5,000
//!   records used before (5.6 MB) the block cache and memtable held most of the data, and
//!   the read-mostly workloads B–D made few file calls on either path.
//! - The genome data sets at 1/10 of the sizes `nearflash-genome` derives from the paper's
//!   table (`--genome-scale`; 1 is the full size: bacteria takes about 50 s of CPU and 4 GB a
//!   path — the ignored CLI test `the_bacteria_genome_at_full_size_matches_in_memory_on_both_paths`
//!   — mouse of the order of 20 GB). 1/10 keeps every file on the paper's side of each cache
//!   (`the_default_genome_scale_keeps_each_file_on_the_papers_side_of_each_cache`): the full-
//!   size mouse target would outgrow the 2 GiB page cache, and at 1/100 AccelFS's 2 MiB
//!   per-file cache would hold mouse's reference (and the k = 12 index's fixed 64 MiB offset
//!   table outweigh the target). The application reads its FASTA files through the VE C
//!   library's 4 KiB stream buffer, one read call per refill (`hayagui.genome`).
//!
//! Every run checks its data: fileops reads back each byte, YCSB checks every read and scan
//! against a model, the genome's matches must equal the same pipeline in memory.
//!
//! `--fidelity functional` keeps the bytes on the simulated flash (a memory page store) and
//! runs smaller workloads on a smaller drive (`Sizes`, `FUNCTIONAL_DRIVE`): the page store
//! holds every programmed page until GC erases it, and the FTL programs whole 256 KiB page
//! groups, so a synced 4 KiB write stores 256 KiB. It takes about 90 s and 11 GB of memory on
//! 2 cores.
//!
//! Here the experiments, their tasks and what they measured; `system` runs one task on a
//! fresh machine, `spread` sets each experiment's paired runs side by side, `claims` and
//! `figures` read them.

mod claims;
mod figures;
mod spread;
mod system;

use crate::{Options, Paper, ReproduceError};
use nearflash_hayagui::dbbench::DbBenchRun;
use nearflash_hayagui::fileops::{self, FileOp};
use nearflash_hayagui::genome::GenomeRun;
use nearflash_hayagui::ycsb::YcsbRun;
use nearflash_hayagui::{Access, HayaguiConfig};
use nearflash_kvbench::BenchResult;
use nearflash_preset::Preset;
use nearflash_report::html::Page;
use nearflash_report::{Claim, LatencyMs, Run, Summary};
use nearflash_sim::Fidelity;
use std::collections::BTreeMap;
use std::fmt::Write;

const OPS: [FileOp; 3] = [FileOp::Read, FileOp::Write, FileOp::WriteSync];
/// The workloads' sizes: timing fidelity's, and functional fidelity's smaller ones.
#[derive(Clone, Debug)]
pub struct Sizes {
    pub fileops_kib: Vec<u64>,
    pub db_num: i64,
    pub ycsb_records: i64,
    pub genome_scale: u64,
}

impl Sizes {
    fn for_fidelity(f: Fidelity) -> Sizes {
        match f {
            Fidelity::Timing => Sizes {
                fileops_kib: vec![4, 64, 1024, 8192],
                // db_bench's data against LevelDB's block cache in the paper's ratio: its
                // default N = 1,000,000 (`FLAGS_num`, benchmarks/db_bench.cc) against C++
                // LevelDB's 8 MiB cache is 14×; here 500,000 against rusty-leveldb's 4 MiB.
                db_num: 500_000,
                ycsb_records: 50_000,
                genome_scale: 10,
            },
            // A functional page store holds every programmed page until GC erases it, and
            // the FTL programs whole 256 KiB page groups (a synced 4 KiB write programs
            // 256 KiB): smaller runs on a smaller drive keep memory to a few GB.
            Fidelity::Functional => Sizes {
                fileops_kib: vec![4, 64, 1024],
                db_num: 2_000,
                ycsb_records: 1_000,
                genome_scale: 1_000,
            },
        }
    }
}

/// Functional fidelity's drive: the 970 EVO with 400 blocks per plane (a 300 GB array, its
/// 6 GB static SLC cache kept), so GC bounds what the page store holds sooner.
const FUNCTIONAL_DRIVE: [&str; 1] = ["flash.blocks_per_plane=400"];
const PATHS: [Access; 2] = [Access::Direct, Access::Redirected];
const YCSB_WORKLOADS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
/// Seed 003 slide 3: the baseline's (redirected) phase times, seconds, per data set, in
/// `Phase::ALL`'s order (load reference, index reference, save index, load index, load
/// target, matching); each row sums to the table's total (22.284, 55.768, 156.717 s).
const GENOME_DATASETS: [(&str, [f64; 6]); 3] = [
    ("bacteria", [0.032, 0.634, 0.093, 0.028, 19.997, 1.500]),
    ("killifish", [0.010, 0.259, 0.101, 0.101, 53.943, 1.354]),
    ("mouse", [2.282, 33.859, 2.019, 1.463, 113.768, 3.326]),
];

/// The paper's time for `phase` of a data set's row, seconds.
fn paper_phase_s(row: &[f64; 6], phase: nearflash_genome::Phase) -> f64 {
    let i = nearflash_genome::Phase::ALL
        .iter()
        .position(|&p| p == phase)
        .expect("every phase is in ALL");
    row[i]
}

/// One independent simulation.
#[derive(Clone, Debug)]
pub enum Task {
    FileOps {
        access: Access,
        op: FileOp,
        size_kib: u64,
    },
    DbBench {
        access: Access,
    },
    Ycsb {
        access: Access,
        workload: &'static str,
    },
    Genome {
        access: Access,
        dataset: &'static str,
    },
}

pub enum Outcome {
    FileOps(fileops::FileOpsReport),
    DbBench(nearflash_hayagui::dbbench::DbBenchRun),
    Ycsb(nearflash_hayagui::ycsb::YcsbRun),
    Genome(nearflash_hayagui::genome::GenomeRun),
}

pub struct Measured {
    sizes: Sizes,
    fileops: Vec<fileops::FileOpsReport>,
    db: Vec<nearflash_hayagui::dbbench::DbBenchRun>,
    ycsb: Vec<nearflash_hayagui::ycsb::YcsbRun>,
    genome: Vec<(String, nearflash_hayagui::genome::GenomeRun)>,
    cfg: HayaguiConfig,
    /// The drive's DRAM write buffer, bytes (0: none).
    write_cache_bytes: u64,
}

pub struct Hayagui {
    sizes: Sizes,
    preset: Preset,
    cfg: HayaguiConfig,
    fidelity: Fidelity,
    seed: u64,
}

impl Hayagui {
    pub fn new(opts: &Options) -> Result<Self, ReproduceError> {
        if !opts.only.is_empty() {
            return Err(ReproduceError::Invalid(
                "reproduce hayagui runs its four experiments whole; --only does not apply".into(),
            ));
        }
        let mut overrides: Vec<String> = Vec::new();
        if opts.fidelity == Fidelity::Functional && opts.preset.is_none() {
            overrides.extend(FUNCTIONAL_DRIVE.iter().map(|s| s.to_string()));
        }
        overrides.extend(opts.overrides.iter().cloned());
        let preset = Preset::load(opts.preset.as_deref().unwrap_or("hayagui"), &overrides)?;
        let cfg: HayaguiConfig = preset.require()?;
        let mut sizes = Sizes::for_fidelity(opts.fidelity);
        if let Some(scale) = opts.genome_scale {
            if scale == 0 {
                return Err(ReproduceError::Invalid(
                    "--genome-scale must be at least 1 (1 is the full size)".into(),
                ));
            }
            sizes.genome_scale = scale;
        }
        if let Some(num) = opts.db_num {
            if num < 1 {
                return Err(ReproduceError::Invalid(format!(
                    "--db-num must be at least 1, got {num}"
                )));
            }
            sizes.db_num = num;
        }
        if let Some(records) = opts.ycsb_records {
            if records < 1 {
                return Err(ReproduceError::Invalid(format!(
                    "--ycsb-records must be at least 1, got {records}"
                )));
            }
            sizes.ycsb_records = records;
        }
        Ok(Hayagui {
            sizes,
            preset,
            cfg,
            fidelity: opts.fidelity,
            seed: opts.seed,
        })
    }
}

impl Paper for Hayagui {
    type Run = Task;
    type Measured = Outcome;
    type Evaluation = Measured;

    fn title(&self) -> &'static str {
        "Hayagui (seed 003)"
    }

    fn fidelity(&self) -> Fidelity {
        self.fidelity
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn runs(&self) -> Vec<Task> {
        let mut v = Vec::new();
        // The long runs first, so `--jobs` overlaps them with the short ones.
        for access in PATHS {
            v.push(Task::DbBench { access });
        }
        for (dataset, _) in GENOME_DATASETS {
            for access in PATHS {
                v.push(Task::Genome { access, dataset });
            }
        }
        for workload in YCSB_WORKLOADS {
            for access in PATHS {
                v.push(Task::Ycsb { access, workload });
            }
        }
        for op in OPS {
            for &size_kib in &self.sizes.fileops_kib {
                for access in PATHS {
                    v.push(Task::FileOps {
                        access,
                        op,
                        size_kib,
                    });
                }
            }
        }
        v
    }

    fn simulate(&self, task: &Task) -> Result<Outcome, ReproduceError> {
        self.run_task(task)
    }

    fn evaluate(&self, tasks: Vec<Task>, outs: Vec<Outcome>) -> Result<Measured, ReproduceError> {
        let mut m = Measured {
            sizes: self.sizes.clone(),
            fileops: Vec::new(),
            db: Vec::new(),
            ycsb: Vec::new(),
            genome: Vec::new(),
            cfg: self.cfg.clone(),
            write_cache_bytes: if self.preset.write_cache.enabled {
                self.preset.write_cache.capacity_bytes
            } else {
                0
            },
        };
        for (t, o) in tasks.into_iter().zip(outs) {
            match (t, o) {
                (_, Outcome::FileOps(r)) => m.fileops.push(r),
                (_, Outcome::DbBench(r)) => m.db.push(r),
                (_, Outcome::Ycsb(r)) => m.ycsb.push(r),
                (Task::Genome { dataset, .. }, Outcome::Genome(r)) => {
                    m.genome.push((dataset.to_string(), r))
                }
                _ => unreachable!("a genome outcome comes from a genome task"),
            }
        }
        Ok(m)
    }

    fn claims(&self, m: &Measured) -> Result<Vec<Claim>, ReproduceError> {
        Ok(claims::claims(m))
    }

    fn summary_runs(&self, m: &Measured) -> Vec<Run> {
        summary_runs(m)
    }

    fn figures(&self, m: &Measured) -> Result<Page, ReproduceError> {
        Ok(figures::page(m))
    }

    fn text(&self, m: &Measured, summary: &Summary) -> String {
        let mut out = crate::claims_table(&summary.claims, 1);
        out.push('\n');
        let _ = writeln!(
            out,
            "verified: {} bytes of file operations read back; {} YCSB reads and scans checked; \
             {} genome runs' matches equal to the in-memory run",
            m.fileops.iter().map(|r| r.verified_bytes).sum::<u64>(),
            m.ycsb
                .iter()
                .filter_map(|r| r.run.check.as_ref())
                .map(|c| c.reads_checked + c.scans_checked)
                .sum::<u64>(),
            m.genome.len()
        );
        out
    }
}

/// Every run as `summary.json` lists it: each file operation and size, each db_bench
/// benchmark, each YCSB workload and each genome data set, on both paths.
fn summary_runs(m: &Measured) -> Vec<Run> {
    let mut runs: Vec<Run> = m.fileops.iter().map(fileops_run).collect();
    for r in &m.db {
        runs.extend(r.report.results.iter().map(|b| db_bench_run(r, b)));
    }
    runs.extend(m.ycsb.iter().map(ycsb_run));
    runs.extend(m.genome.iter().map(|(ds, r)| genome_run(ds, r)));
    runs
}

/// A run's extra figures: its trace hash.
fn trace_extra(hash: &str) -> BTreeMap<String, serde_json::Value> {
    let mut e = BTreeMap::new();
    e.insert("trace_hash".to_string(), serde_json::Value::from(hash));
    e
}

/// One file operation at one size on one path.
fn fileops_run(r: &fileops::FileOpsReport) -> Run {
    Run {
        system: r.access.name().into(),
        workload: format!("fileops {} {} KiB", r.op.name(), r.size_bytes >> 10),
        throughput_mb_s: Some(r.throughput_mb_s),
        latency_ms: Some(LatencyMs {
            min: r.latency.min_ns as f64 / 1e6,
            avg: r.latency.mean_ns / 1e6,
            max: r.latency.max_ns as f64 / 1e6,
        }),
        energy_j: BTreeMap::new(),
        utilization: None,
        sim_s: r.timed_ns as f64 / 1e9,
        extra: trace_extra(&r.trace_hash),
    }
}

/// One db_bench benchmark (`b`) of a path's run (`r`).
fn db_bench_run(r: &DbBenchRun, b: &BenchResult) -> Run {
    Run {
        system: r.access.name().into(),
        workload: format!("db_bench {}", b.name),
        throughput_mb_s: b.mb_per_s,
        latency_ms: Some(LatencyMs {
            min: b.micros_per_op / 1e3,
            avg: b.micros_per_op / 1e3,
            max: b.micros_per_op / 1e3,
        }),
        energy_j: BTreeMap::new(),
        utilization: None,
        sim_s: b.elapsed_us / 1e6,
        extra: trace_extra(&r.trace_hash),
    }
}

/// One YCSB workload on one path, with its throughput in operations.
fn ycsb_run(r: &YcsbRun) -> Run {
    let mut e = trace_extra(&r.trace_hash);
    e.insert(
        "throughput_ops_per_s".into(),
        serde_json::Value::from(r.run.throughput_ops_per_s),
    );
    Run {
        system: r.access.name().into(),
        workload: format!("ycsb {}", r.workload),
        throughput_mb_s: None,
        latency_ms: None,
        energy_j: BTreeMap::new(),
        utilization: None,
        sim_s: r.run.elapsed_us / 1e6,
        extra: e,
    }
}

/// One genome data set (`ds`) on one path, with each phase's time.
fn genome_run(ds: &str, r: &GenomeRun) -> Run {
    let mut e = trace_extra(&r.trace_hash);
    for p in &r.phases {
        e.insert(
            format!("phase_s_{:?}", p.phase),
            serde_json::Value::from(p.ns as f64 / 1e9),
        );
    }
    Run {
        system: r.access.name().into(),
        workload: format!("genome {ds}"),
        throughput_mb_s: None,
        latency_ms: None,
        energy_j: BTreeMap::new(),
        utilization: None,
        sim_s: r.total_ns as f64 / 1e9,
        extra: e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_kvbench::{CoreWorkload, YcsbConfig};

    /// rusty-leveldb 4.0.2's block cache (`options.rs`: 1024 blocks of 4 KiB).
    const BLOCK_CACHE_BYTES: f64 = 4.0 * 1048576.0;
    /// C++ LevelDB's default block cache, 8 MiB (`include/leveldb/options.h`), and db_bench's
    /// default data: N = 1,000,000 keys of 16 B and values of 100 B (WORKLOADS.md §5).
    const CPP_BLOCK_CACHE_BYTES: f64 = 8.0 * 1048576.0;
    const DB_BENCH_DEFAULT_BYTES: f64 = 1e6 * 116.0;

    /// Story: YCSB's 5,000 records (5.6 MB) fitted in LevelDB's block cache and memtable, so
    /// workloads B–D made few file calls on either path. The default run's data outgrows the
    /// block cache in the ratio db_bench's own default N has to C++ LevelDB's cache.
    #[test]
    fn ycsb_data_outgrows_leveldbs_block_cache_as_db_benchs_default_does() {
        let sizes = Sizes::for_fidelity(Fidelity::Timing);
        let cfg = YcsbConfig::new(CoreWorkload::named("a").unwrap(), 1);
        // The record's encoding (kvbench's ycsb/record.rs): a u16 field count, then per field
        // a u8 name length, the name ("field0"…), a u32 value length and the value.
        let record_bytes = 2 + cfg.field_count * (1 + 6 + 4 + cfg.field_length_bytes);
        assert_eq!(record_bytes, 1112);
        let ratio = sizes.ycsb_records as f64 * f64::from(record_bytes) / BLOCK_CACHE_BYTES;
        let db_bench_ratio = DB_BENCH_DEFAULT_BYTES / CPP_BLOCK_CACHE_BYTES;
        assert!(
            (ratio / db_bench_ratio - 1.0).abs() < 0.1,
            "YCSB data {ratio:.1}× the block cache; db_bench's default {db_bench_ratio:.1}×"
        );
        // Functional fidelity stays small: its page store holds every programmed page.
        assert!(Sizes::for_fidelity(Fidelity::Functional).ycsb_records <= 1000);
    }

    /// Story: db_bench ran N = 20,000 (2 MB), which LevelDB's block cache and memtable held,
    /// so readreverse made no file call on either path. The default N outgrows rusty-leveldb's
    /// block cache in the ratio db_bench's own default has to C++ LevelDB's cache.
    #[test]
    fn db_bench_data_outgrows_leveldbs_block_cache_as_db_benchs_default_does() {
        let n = Sizes::for_fidelity(Fidelity::Timing).db_num as f64;
        let ratio = n * 116.0 / BLOCK_CACHE_BYTES;
        let default_ratio = DB_BENCH_DEFAULT_BYTES / CPP_BLOCK_CACHE_BYTES;
        assert!(
            (ratio / default_ratio - 1.0).abs() < 0.1,
            "db_bench data {ratio:.1}× the block cache; db_bench's default {default_ratio:.1}×"
        );
    }

    /// FASTA bytes of `bases` letters: at least the letters, at most a quarter more (a
    /// newline per 60 letters, a 100-base read's two newlines and `>read<i>` header).
    fn fasta_bytes_bounds(bases: u64) -> (u64, u64) {
        (bases, bases + bases / 4)
    }

    /// Which side of `cap` a file of `bases` letters lies on; the bounds must agree.
    fn over(bases: u64, cap: u64) -> bool {
        let (lo, hi) = fasta_bytes_bounds(bases);
        assert!(lo > cap || hi < cap, "{bases} bases straddle {cap} B");
        lo > cap
    }

    /// Story: the genome cannot run at full size by default (mouse's 3.1 GB target takes
    /// 20 GB of memory and minutes), so it runs scaled — and the scale keeps every file on
    /// the side of each cache the paper's data was on. AccelFS's per-file cache holds the
    /// reference of bacteria and killifish and not mouse's, holds no target, at full size
    /// and at the default scale alike; the host's page cache holds everything, as the
    /// paper's 96 GB host (seed 003's testbed) held its data — which the full-size mouse
    /// target would not be in our 2 GiB page cache.
    #[test]
    fn the_default_genome_scale_keeps_each_file_on_the_papers_side_of_each_cache() {
        const PAPER_HOST_BYTES: u64 = 96_000_000_000;
        let cfg = HayaguiConfig::default();
        let accelfs_cache = cfg.accelfs.chunk_bytes * u64::from(cfg.accelfs.cache_chunks_per_file);
        let page_cache = cfg.host_fs.page_cache_bytes;
        let scale = Sizes::for_fidelity(Fidelity::Timing).genome_scale;
        for (ds, _) in GENOME_DATASETS {
            let full = nearflash_genome::DatasetSizes::full(ds).unwrap();
            let scaled = full.scaled(scale);
            for (file, f, s) in [
                (
                    "reference",
                    full.reference_len_bases,
                    scaled.reference_len_bases,
                ),
                ("target", full.target_len_bases(), scaled.target_len_bases()),
            ] {
                assert_eq!(
                    over(f, accelfs_cache),
                    over(s, accelfs_cache),
                    "{ds} {file}: AccelFS's {accelfs_cache} B cache"
                );
                assert!(!over(f, PAPER_HOST_BYTES), "{ds} {file} at full size");
                assert!(!over(s, page_cache), "{ds} {file} at 1/{scale}");
            }
        }
        let mouse = nearflash_genome::DatasetSizes::full("mouse").unwrap();
        assert!(over(mouse.target_len_bases(), page_cache));
    }

    #[test]
    fn a_zero_record_count_is_refused_naming_the_flag() {
        let mut o = Options::new(Fidelity::Timing);
        o.ycsb_records = Some(0);
        let e = Hayagui::new(&o).err().expect("refused").to_string();
        assert!(e.contains("--ycsb-records must be at least 1"), "{e}");
    }
}
