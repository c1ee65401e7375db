//! File-operation microbenchmarks (seed 003's first experiment): `read`, `write` and
//! `write` + `fdatasync` of one size, one call after another on one file, latency per call,
//! on either access path.
//!
//! - **write**, **write-sync**: `count` calls of `size` bytes, each at the end of a fresh
//!   file (write-sync syncs after each).
//! - **read**: a file of `count × size` bytes is written and synced first, every cache is
//!   dropped (AccelFS forgets a closed, clean file; the host drops its clean page cache), then
//!   `count` sequential calls read it.
//!
//! After the timed calls the whole file is read back and compared with what was written
//! (the data are a seeded pattern), so every run checks its own bytes; a mismatch is an
//! error, never a figure.

use crate::files::{FileError, OpenMode, PathStats, Ve};
use nearflash_sim::{LatencyHistogram, SimRng, SimTime};
use serde::Serialize;
use thiserror::Error;

/// The file the benchmark uses.
pub const FILE: &str = "/fileops.dat";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileOp {
    Read,
    Write,
    WriteSync,
}

impl FileOp {
    pub fn name(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Write => "write",
            FileOp::WriteSync => "write-sync",
        }
    }

    pub fn parse(s: &str) -> Result<FileOp, FileOpsError> {
        match s {
            "read" => Ok(FileOp::Read),
            "write" => Ok(FileOp::Write),
            "write-sync" => Ok(FileOp::WriteSync),
            other => Err(FileOpsError::UnknownOp(other.to_string())),
        }
    }
}

#[derive(Debug, Error)]
pub enum FileOpsError {
    #[error("unknown file operation '{0}' (read, write or write-sync)")]
    UnknownOp(String),
    #[error("{field} must be at least 1")]
    Zero { field: &'static str },
    #[error(transparent)]
    File(#[from] FileError),
    #[error("read-back mismatch: {bad_bytes} of {total_bytes} bytes differ from what was written (first at byte {first})")]
    Mismatch {
        bad_bytes: u64,
        total_bytes: u64,
        first: u64,
    },
}

/// Latency summary of the timed calls, in ns.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    pub mean_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Latency {
    pub fn of(h: &LatencyHistogram) -> Latency {
        Latency {
            mean_ns: h.mean_ns(),
            min_ns: h.min_ns(),
            p50_ns: h.quantile_ns(0.5),
            p99_ns: h.quantile_ns(0.99),
            max_ns: h.max_ns(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct FileOpsReport {
    pub access: crate::files::Access,
    pub op: FileOp,
    pub size_bytes: u64,
    pub count: u64,
    pub latency: Latency,
    /// Bytes moved by the timed calls over their summed time, MB/s (10^6 B/s).
    pub throughput_mb_s: f64,
    pub timed_ns: u64,
    pub verified_bytes: u64,
    pub path: PathStats,
    /// NVMe commands and FLUSHes of the run (preparation and read-back included; the
    /// file system's mkfs before it not).
    pub nvme_commands: u64,
    pub ssd_flushes: u64,
    pub events: u64,
    pub trace_hash: String,
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = SimRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

/// Runs `count` calls of `op` of `size_bytes` each on `ve` (fresh: the benchmark's file must
/// not exist), then checks the file's bytes.
pub fn run(
    ve: &mut Ve,
    op: FileOp,
    size_bytes: u64,
    count: u64,
    seed: u64,
) -> Result<FileOpsReport, FileOpsError> {
    if size_bytes == 0 {
        return Err(FileOpsError::Zero { field: "size" });
    }
    if count == 0 {
        return Err(FileOpsError::Zero { field: "count" });
    }
    let total = size_bytes * count;
    let nvme_at_start = ve.nvme_stats();
    let data = pattern(seed, total as usize);
    let chunk = |i: u64| &data[(i * size_bytes) as usize..((i + 1) * size_bytes) as usize];
    let mut h = LatencyHistogram::default();
    let mut timed_ns = 0u64;
    let mut time = |h: &mut LatencyHistogram, start: SimTime, end: SimTime| {
        let ns = end.as_ns() - start.as_ns();
        h.record(ns);
        timed_ns += ns;
    };
    match op {
        FileOp::Write | FileOp::WriteSync => {
            let fd = ve.open(FILE, OpenMode::CREATE_TRUNC)?;
            for i in 0..count {
                let start = ve.now();
                ve.write_at(fd, i * size_bytes, chunk(i))?;
                if op == FileOp::WriteSync {
                    ve.sync(fd)?;
                }
                time(&mut h, start, ve.now());
            }
            ve.sync(fd)?;
            ve.close(fd)?;
        }
        FileOp::Read => {
            let fd = ve.open(FILE, OpenMode::CREATE_TRUNC)?;
            for i in 0..count {
                ve.write_at(fd, i * size_bytes, chunk(i))?;
            }
            ve.sync(fd)?;
            ve.close(fd)?;
            ve.drop_caches()?;
            let fd = ve.open(FILE, OpenMode::EXISTING)?;
            for i in 0..count {
                let start = ve.now();
                let got = ve.read_at(fd, i * size_bytes, size_bytes)?;
                time(&mut h, start, ve.now());
                check(&got, chunk(i), i * size_bytes)?;
            }
            ve.close(fd)?;
        }
    }
    // Read everything back and compare.
    let fd = ve.open(FILE, OpenMode::EXISTING)?;
    let mut at = 0u64;
    while at < total {
        let n = (total - at).min(8 << 20);
        let got = ve.read_at(fd, at, n)?;
        check(&got, &data[at as usize..(at + n) as usize], at)?;
        at += n;
    }
    ve.close(fd)?;
    let nvme = ve.nvme_stats();
    Ok(FileOpsReport {
        access: ve.access(),
        op,
        size_bytes,
        count,
        latency: Latency::of(&h),
        throughput_mb_s: total as f64 * 1e3 / timed_ns.max(1) as f64,
        timed_ns,
        verified_bytes: total,
        path: ve.path_stats(),
        nvme_commands: nvme.commands - nvme_at_start.commands,
        ssd_flushes: nvme.flushes - nvme_at_start.flushes,
        events: ve.events(),
        trace_hash: ve.trace_hash(),
    })
}

fn check(got: &[u8], want: &[u8], at: u64) -> Result<(), FileOpsError> {
    if got == want {
        return Ok(());
    }
    let n = got.len().max(want.len());
    let bad = (0..n).filter(|&i| got.get(i) != want.get(i)).count() as u64;
    let first = (0..n).find(|&i| got.get(i) != want.get(i)).unwrap_or(0) as u64;
    Err(FileOpsError::Mismatch {
        bad_bytes: bad,
        total_bytes: want.len() as u64,
        first: at + first,
    })
}
