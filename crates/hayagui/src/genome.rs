//! The genome sequence-matching application (seed 003's fourth experiment) on the VE: the
//! six phases of `nearflash-genome` (load reference, index reference, save index, load
//! index, load target, matching) with their file I/O on the path under test and their
//! compute charged on a VE core from each phase's work counts (`hayagui.genome`), the same on
//! both paths. Each phase's simulated time is reported; every read's match is checked by the
//! caller against the brute-force matcher where the data set is small enough.

use crate::config::GenomeCostConfig;
use crate::files::{Access, FileError, OpenMode, PathStats, Ve};
use nearflash_genome::{
    GenomeConfig, GenomeError, GenomeIo, GenomeReport, Phase, PhaseCounts, PhaseObserver,
};
use nearflash_sim::SimTime;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Where the application's files live on the device.
pub const REFERENCE: &str = "/genome/reference.fa";
pub const TARGET: &str = "/genome/target.fa";
pub const INDEX: &str = "/genome/reference.idx";

fn io_err(what: &str, path: &str, e: FileError) -> GenomeError {
    GenomeError::Io {
        path: path.to_string(),
        reason: format!("{what}: {e}"),
    }
}

/// The pipeline's files through the VE's file API; appends go to a file's end.
struct VeIo<'a> {
    ve: &'a RefCell<&'a mut Ve>,
    open: BTreeMap<String, (crate::files::Fd, u64)>,
}

impl VeIo<'_> {
    fn fd(&mut self, path: &str, mode: OpenMode) -> Result<(crate::files::Fd, u64), GenomeError> {
        if let Some(&f) = self.open.get(path) {
            return Ok(f);
        }
        let mut ve = self.ve.borrow_mut();
        let fd = ve.open(path, mode).map_err(|e| io_err("open", path, e))?;
        let size = ve.size(path).map_err(|e| io_err("size", path, e))?;
        self.open.insert(path.to_string(), (fd, size));
        Ok((fd, size))
    }

    fn close_all(&mut self) -> Result<(), GenomeError> {
        let open = std::mem::take(&mut self.open);
        let mut ve = self.ve.borrow_mut();
        for (path, (fd, _)) in open {
            ve.sync(fd).map_err(|e| io_err("sync", &path, e))?;
            ve.close(fd).map_err(|e| io_err("close", &path, e))?;
        }
        Ok(())
    }
}

impl GenomeIo for VeIo<'_> {
    fn file_len_bytes(&mut self, path: &str) -> Result<u64, GenomeError> {
        Ok(self.fd(path, OpenMode::EXISTING)?.1)
    }

    fn read_at(&mut self, path: &str, offset: u64, buf: &mut [u8]) -> Result<usize, GenomeError> {
        let (fd, _) = self.fd(path, OpenMode::EXISTING)?;
        let got = self
            .ve
            .borrow_mut()
            .read_at(fd, offset, buf.len() as u64)
            .map_err(|e| io_err("read", path, e))?;
        buf[..got.len()].copy_from_slice(&got);
        Ok(got.len())
    }

    fn create(&mut self, path: &str) -> Result<(), GenomeError> {
        if let Some((fd, _)) = self.open.remove(path) {
            let _ = self.ve.borrow_mut().close(fd);
        }
        let fd = self
            .ve
            .borrow_mut()
            .open(path, OpenMode::CREATE_TRUNC)
            .map_err(|e| io_err("create", path, e))?;
        self.open.insert(path.to_string(), (fd, 0));
        Ok(())
    }

    fn append(&mut self, path: &str, data: &[u8]) -> Result<(), GenomeError> {
        let (fd, size) = self.fd(path, OpenMode::EXISTING)?;
        self.ve
            .borrow_mut()
            .write_at(fd, size, data)
            .map_err(|e| io_err("write", path, e))?;
        self.open
            .insert(path.to_string(), (fd, size + data.len() as u64));
        Ok(())
    }
}

/// Stamps each phase with simulated time and charges its compute when it ends.
struct Stamps<'a> {
    ve: &'a RefCell<&'a mut Ve>,
    cost: &'a GenomeCostConfig,
    started: SimTime,
    phases: Vec<PhaseTime>,
}

/// One phase: its simulated time and what it did.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseTime {
    pub phase: Phase,
    pub ns: u64,
    pub compute_ns: u64,
    pub counts: PhaseCounts,
}

impl PhaseObserver for Stamps<'_> {
    fn phase_start(&mut self, _: Phase) {
        self.started = self.ve.borrow().now();
    }

    fn phase_end(&mut self, phase: Phase, c: &PhaseCounts) {
        let mut ve = self.ve.borrow_mut();
        let before = ve.compute_ns();
        let scalar = c.bytes_parsed as f64 * self.cost.parse_instructions_per_byte;
        ve.compute(scalar);
        let vector_ops = c.kmers_hashed as f64 * self.cost.ops_per_kmer
            + (c.offsets_scanned + c.index_bytes + c.votes + c.bases_compared) as f64
                * self.cost.ops_per_element;
        // Element operations at `vector_ops_per_cycle`: as instructions of one per cycle.
        ve.compute_at_cpi(vector_ops / self.cost.vector_ops_per_cycle, 1.0);
        self.phases.push(PhaseTime {
            phase,
            ns: ve.now().as_ns() - self.started.as_ns(),
            compute_ns: ve.compute_ns() - before,
            counts: *c,
        });
    }
}

/// A genome run on one path.
#[derive(Clone, Debug, Serialize)]
pub struct GenomeRun {
    pub access: Access,
    pub phases: Vec<PhaseTime>,
    pub total_ns: u64,
    pub mapped: u64,
    pub reads: u64,
    pub checksum: u64,
    pub path: PathStats,
    pub events: u64,
    pub trace_hash: String,
}

/// The pipeline's configuration on the VE: its files where `run` writes them, its index
/// calls and FASTA stream buffer from `cost`. A reference run in memory uses the same, so
/// that its matches can be compared.
pub fn pipeline_config(cost: &GenomeCostConfig) -> GenomeConfig {
    GenomeConfig {
        chunk_size_bytes: cost.chunk_bytes,
        fasta_buffer_bytes: cost.fasta_buffer_bytes,
        ..GenomeConfig::new(REFERENCE, TARGET, INDEX)
    }
}

/// The same pipeline over the same files in memory — the reference a run's matches are
/// checked against.
pub fn in_memory(
    reference_fasta: &[u8],
    target_fasta: &[u8],
    cost: &GenomeCostConfig,
) -> Result<GenomeReport, GenomeError> {
    let mut mem = nearflash_genome::MemIo::default();
    for (path, data) in [(REFERENCE, reference_fasta), (TARGET, target_fasta)] {
        mem.create(path)?;
        mem.append(path, data)?;
    }
    nearflash_genome::run_pipeline(
        &mut mem,
        &pipeline_config(cost),
        &mut nearflash_genome::NoObserver,
    )
}

/// Writes the data set's files (untimed preparation: the files exist before the
/// application starts, synced, caches dropped), then runs the six phases.
pub fn run(
    ve: &mut Ve,
    reference_fasta: &[u8],
    target_fasta: &[u8],
    cost: &GenomeCostConfig,
) -> Result<(GenomeRun, GenomeReport), GenomeError> {
    let prep = |ve: &mut Ve| -> Result<(), FileError> {
        if !ve.exists("/genome")? {
            ve.mkdir("/genome")?;
        }
        for (path, data) in [(REFERENCE, reference_fasta), (TARGET, target_fasta)] {
            let fd = ve.open(path, OpenMode::CREATE_TRUNC)?;
            for (i, piece) in data.chunks(8 << 20).enumerate() {
                ve.write_at(fd, (i * (8 << 20)) as u64, piece)?;
            }
            ve.sync(fd)?;
            ve.close(fd)?;
        }
        ve.sync_all()?;
        ve.drop_caches()
    };
    prep(ve).map_err(|e| io_err("preparing the data set", "/genome", e))?;
    let cell = RefCell::new(ve);
    let mut io = VeIo {
        ve: &cell,
        open: BTreeMap::new(),
    };
    let mut obs = Stamps {
        ve: &cell,
        cost,
        started: SimTime::ZERO,
        phases: Vec::new(),
    };
    let report = nearflash_genome::run_pipeline(&mut io, &pipeline_config(cost), &mut obs)?;
    io.close_all()?;
    let phases = std::mem::take(&mut obs.phases);
    let ve = cell.borrow();
    let run = GenomeRun {
        access: ve.access(),
        total_ns: phases.iter().map(|p| p.ns).sum(),
        phases,
        mapped: report.mapped,
        reads: report.hits.len() as u64,
        checksum: report.checksum,
        path: ve.path_stats(),
        events: ve.events(),
        trace_hash: ve.trace_hash(),
    };
    Ok((run, report))
}
