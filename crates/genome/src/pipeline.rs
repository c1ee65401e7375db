//! The six phases of Hayagui's genome application (HAYAGUI.md §1.3), over the caller's
//! `GenomeIo`: load reference, index reference, save index, load index, load target, matching.
//! Each phase reports `PhaseCounts` — units of work the caller converts to time with its cost
//! model — and the caller's `PhaseObserver` hears each phase start and end (to stamp simulated
//! time). FASTA files are read `fasta_buffer_bytes` at a time — the refills of the C
//! library's stream buffer behind `fgets`, which is how the application reads them — and the
//! index's arrays are written and read in calls of `chunk_size_bytes`; the FASTA parser and
//! the index loader see only those pieces.

use crate::error::GenomeError;
use crate::fasta::{FastaParser, FastaRecord};
use crate::index::{KmerIndex, Reference};
use crate::io::GenomeIo;
use crate::matcher::{checksum, match_read, Hit, MatchCounts, MatchParams};
use serde::{Deserialize, Serialize};

/// The phases, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Read and parse the reference FASTA.
    LoadReference,
    /// Build the k-mer index.
    IndexReference,
    /// Write the serialised index.
    SaveIndex,
    /// Read the index back and check it.
    LoadIndex,
    /// Read and parse the target reads.
    LoadTarget,
    /// Match every read.
    Matching,
}

impl Phase {
    /// All phases in run order.
    pub const ALL: [Phase; 6] = [
        Phase::LoadReference,
        Phase::IndexReference,
        Phase::SaveIndex,
        Phase::LoadIndex,
        Phase::LoadTarget,
        Phase::Matching,
    ];

    /// The name in Hayagui's table.
    pub fn name(self) -> &'static str {
        match self {
            Phase::LoadReference => "load reference sequence",
            Phase::IndexReference => "index reference sequence",
            Phase::SaveIndex => "save reference index",
            Phase::LoadIndex => "load reference index",
            Phase::LoadTarget => "load target sequence",
            Phase::Matching => "matching",
        }
    }
}

/// Work done in one phase. Every field is a count of a unit the caller prices:
/// - `bytes_read` / `bytes_written`, `io_calls`: storage traffic through `GenomeIo`;
/// - `bases_parsed`: FASTA bytes scanned (`bytes_parsed`) and letters stored (`bases_parsed`);
/// - `kmers_hashed`: k-mers encoded while indexing (two passes) or seeds encoded while matching;
/// - `index_bytes`: bytes serialised or deserialised and checked;
/// - `offsets_scanned`: offset-table entries of the prefix sum;
/// - `seed_lookups`, `votes`: index lookups and the positions they returned;
/// - `candidates_verified`, `bases_compared`: Hamming verifications and their bases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseCounts {
    /// Bytes read from storage.
    pub bytes_read: u64,
    /// Bytes written to storage.
    pub bytes_written: u64,
    /// Calls made to `GenomeIo`.
    pub io_calls: u64,
    /// FASTA bytes scanned.
    pub bytes_parsed: u64,
    /// Sequence letters stored.
    pub bases_parsed: u64,
    /// k-mers (or seeds) encoded.
    pub kmers_hashed: u64,
    /// Offset-table entries scanned.
    pub offsets_scanned: u64,
    /// Index bytes serialised or deserialised.
    pub index_bytes: u64,
    /// Seed lookups.
    pub seed_lookups: u64,
    /// Positions returned by lookups.
    pub votes: u64,
    /// Candidate placements verified.
    pub candidates_verified: u64,
    /// Bases compared verifying.
    pub bases_compared: u64,
}

/// Told when each phase starts and ends.
pub trait PhaseObserver {
    /// `phase` is about to start.
    fn phase_start(&mut self, phase: Phase) {
        let _ = phase;
    }
    /// `phase` ended having done `counts`.
    fn phase_end(&mut self, phase: Phase, counts: &PhaseCounts) {
        let _ = (phase, counts);
    }
}

/// An observer that does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoObserver;

impl PhaseObserver for NoObserver {}

/// Where the files are and how to process them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenomeConfig {
    /// The reference FASTA.
    pub reference_path: String,
    /// The target reads FASTA.
    pub target_path: String,
    /// Where the index is saved and loaded from.
    pub index_path: String,
    /// Bytes per read or write call of the index's arrays (`fwrite`/`fread` of a whole array
    /// bypass the stream buffer and go to the file system in large calls).
    pub chunk_size_bytes: u32,
    /// Bytes per read call while loading a FASTA file: the stream buffer that `fgets`
    /// refills with one `read` each time it runs dry.
    pub fasta_buffer_bytes: u32,
    /// k (default 12).
    pub k: u32,
    /// Matching parameters.
    pub params: MatchParams,
}

impl GenomeConfig {
    /// Defaults: k = 12, 1 MiB index calls, a 4 KiB FASTA stream buffer (glibc's
    /// `_IO_file_doallocate` sizes a file's buffer to its `st_blksize` — later releases when
    /// below `BUFSIZ` = 8192 — and Linux's ext4 reports 4096), default matching parameters.
    pub fn new(reference_path: &str, target_path: &str, index_path: &str) -> Self {
        Self {
            reference_path: reference_path.to_string(),
            target_path: target_path.to_string(),
            index_path: index_path.to_string(),
            chunk_size_bytes: 1 << 20,
            fasta_buffer_bytes: 4096,
            k: 12,
            params: MatchParams::default(),
        }
    }
}

/// The pipeline's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenomeReport {
    /// Work per phase, in phase order.
    pub phases: Vec<(Phase, PhaseCounts)>,
    /// Per read, its placement (or none).
    pub hits: Vec<Option<Hit>>,
    /// Reads mapped.
    pub mapped: u64,
    /// `matcher::checksum(hits)`.
    pub checksum: u64,
}

/// Reads `path` one stream-buffer refill of `buffer_bytes` at a time through the streaming
/// parser.
pub fn load_fasta(
    io: &mut dyn GenomeIo,
    path: &str,
    buffer_bytes: u32,
    counts: &mut PhaseCounts,
) -> Result<Vec<FastaRecord>, GenomeError> {
    let mut parser = FastaParser::new();
    let mut buf = vec![0u8; buffer_bytes as usize];
    let mut offset = 0u64;
    loop {
        let n = io.read_at(path, offset, &mut buf)?;
        counts.io_calls += 1;
        if n == 0 {
            break;
        }
        counts.bytes_read += n as u64;
        offset += n as u64;
        parser.push(&buf[..n])?;
    }
    let (records, parse) = parser.finish()?;
    counts.bytes_parsed += parse.bytes;
    counts.bases_parsed += parse.bases;
    Ok(records)
}

/// Writes `data` to `path` in chunks.
fn save(
    io: &mut dyn GenomeIo,
    path: &str,
    data: &[u8],
    chunk: u32,
    counts: &mut PhaseCounts,
) -> Result<(), GenomeError> {
    io.create(path)?;
    counts.io_calls += 1;
    for piece in data.chunks(chunk as usize) {
        io.append(path, piece)?;
        counts.io_calls += 1;
        counts.bytes_written += piece.len() as u64;
    }
    Ok(())
}

/// Reads the whole of `path` in chunks, bounded by its stated length.
fn load(
    io: &mut dyn GenomeIo,
    path: &str,
    chunk: u32,
    counts: &mut PhaseCounts,
) -> Result<Vec<u8>, GenomeError> {
    let len = io.file_len_bytes(path)?;
    counts.io_calls += 1;
    let mut data = Vec::with_capacity(len as usize);
    let mut buf = vec![0u8; chunk as usize];
    while (data.len() as u64) < len {
        let want = (len - data.len() as u64).min(u64::from(chunk)) as usize;
        let n = io.read_at(path, data.len() as u64, &mut buf[..want])?;
        counts.io_calls += 1;
        if n == 0 {
            return Err(GenomeError::Io {
                path: path.to_string(),
                reason: "file shorter than its length".to_string(),
            });
        }
        counts.bytes_read += n as u64;
        data.extend_from_slice(&buf[..n]);
    }
    Ok(data)
}

/// Runs the six phases.
pub fn run_pipeline(
    io: &mut dyn GenomeIo,
    config: &GenomeConfig,
    observer: &mut dyn PhaseObserver,
) -> Result<GenomeReport, GenomeError> {
    for (field, value) in [
        ("chunk_size_bytes", config.chunk_size_bytes),
        ("fasta_buffer_bytes", config.fasta_buffer_bytes),
    ] {
        if value == 0 {
            return Err(GenomeError::InvalidParameter {
                field,
                value: "0".to_string(),
                reason: "must be positive",
            });
        }
    }
    config.params.validate()?;
    let (chunk, fasta_buffer) = (config.chunk_size_bytes, config.fasta_buffer_bytes);
    let mut phases = Vec::with_capacity(6);
    let mut phase = |p: Phase, observer: &mut dyn PhaseObserver, c: PhaseCounts| {
        observer.phase_end(p, &c);
        phases.push((p, c));
    };

    observer.phase_start(Phase::LoadReference);
    let mut c = PhaseCounts::default();
    let reference = Reference::new(load_fasta(
        io,
        &config.reference_path,
        fasta_buffer,
        &mut c,
    )?);
    phase(Phase::LoadReference, observer, c);

    observer.phase_start(Phase::IndexReference);
    let (built, build) = KmerIndex::build(&reference, config.k)?;
    let c = PhaseCounts {
        kmers_hashed: build.kmers_hashed,
        offsets_scanned: build.offsets_scanned,
        ..PhaseCounts::default()
    };
    phase(Phase::IndexReference, observer, c);

    observer.phase_start(Phase::SaveIndex);
    let mut c = PhaseCounts::default();
    let mut bytes = Vec::new();
    built.serialize(&mut bytes);
    c.index_bytes = bytes.len() as u64;
    save(io, &config.index_path, &bytes, chunk, &mut c)?;
    drop((built, bytes));
    phase(Phase::SaveIndex, observer, c);

    observer.phase_start(Phase::LoadIndex);
    let mut c = PhaseCounts::default();
    let bytes = load(io, &config.index_path, chunk, &mut c)?;
    c.index_bytes = bytes.len() as u64;
    let index = KmerIndex::deserialize(&bytes)?;
    drop(bytes);
    if index.reference_len() != reference.seq.len() as u64 || index.k() != config.k {
        return Err(GenomeError::IndexInconsistent {
            reason: "index built over another reference or k",
        });
    }
    phase(Phase::LoadIndex, observer, c);

    observer.phase_start(Phase::LoadTarget);
    let mut c = PhaseCounts::default();
    let reads = load_fasta(io, &config.target_path, fasta_buffer, &mut c)?;
    phase(Phase::LoadTarget, observer, c);

    observer.phase_start(Phase::Matching);
    let mut m = MatchCounts::default();
    let hits: Vec<Option<Hit>> = reads
        .iter()
        .map(|r| match_read(&reference, &index, &config.params, &r.seq, &mut m))
        .collect();
    let c = PhaseCounts {
        kmers_hashed: m.seeds_hashed,
        seed_lookups: m.seed_lookups,
        votes: m.votes,
        candidates_verified: m.candidates_verified,
        bases_compared: m.bases_compared,
        ..PhaseCounts::default()
    };
    phase(Phase::Matching, observer, c);

    let mapped = hits.iter().filter(|h| h.is_some()).count() as u64;
    Ok(GenomeReport {
        checksum: checksum(&hits),
        phases,
        hits,
        mapped,
    })
}
