//! Deterministic synthetic datasets named after Hayagui's (bacteria, killifish, mouse) plus
//! `tiny`: a random reference genome and target reads, written as FASTA, with each read's true
//! origin.
//!
//! Sizes (`DatasetSizes::full`) follow HAYAGUI.md §1.3's hypothesis that the baseline reads at
//! ≈23 MB/s: reference bases ≈ load-reference time × 23 MB/s (bacteria 0.032 s → 0.74 Mbp,
//! killifish 0.010 s → 0.23 Mbp, mouse 2.282 s → 52 Mbp — the index times scale alike), and
//! target bases ≈ load-target time × 23 MB/s (bacteria 20.0 s → 460 Mbp; killifish and mouse the
//! whole genomes, N. furzeri 1.24 Gbp and mouse 2.7 Gbp, whose 2.2 size ratio matches the 2.11
//! time ratio). Whole genomes are far too large for CI, so a reproduction uses
//! `DatasetSizes::scaled(f)`, which divides both reference and target by `f` and keeps read
//! length, rates and line width; `tiny` is for unit tests.
//!
//! Reads: `read_len_bases` long, from a uniformly random place of a reference record (weighted
//! by length), with substitutions at `substitution_rate`, reverse-complemented half the time;
//! a `random_read_fraction` of the reads is fresh random sequence that must not map.

use crate::fasta::{write_fasta, FastaRecord};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// The size of a dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetSizes {
    /// Dataset name.
    pub name: String,
    /// Bases in the reference, all records together.
    pub reference_len_bases: u64,
    /// Records (chromosomes) the reference is split into.
    pub reference_record_count: u32,
    /// Target reads.
    pub read_count: u64,
    /// Bases per read.
    pub read_len_bases: u32,
    /// Probability that a read base is substituted.
    pub substitution_rate: f64,
    /// Share of reads that are random sequence.
    pub random_read_fraction: f64,
    /// FASTA line width.
    pub line_width: u32,
}

const READ_LEN_BASES: u32 = 100;

impl DatasetSizes {
    fn new(name: &str, reference_len_bases: u64, records: u32, target_bases: u64) -> Self {
        Self {
            name: name.to_string(),
            reference_len_bases,
            reference_record_count: records,
            read_count: target_bases / u64::from(READ_LEN_BASES),
            read_len_bases: READ_LEN_BASES,
            substitution_rate: 0.01,
            random_read_fraction: 0.1,
            line_width: 60,
        }
    }

    /// For unit tests: 20 kbp reference in 2 records, 200 reads.
    pub fn tiny() -> Self {
        Self::new("tiny", 20_000, 2, 20_000)
    }

    /// The full-size dataset named after the paper's (`bacteria`, `killifish`, `mouse`), or
    /// `tiny`; `None` for another name.
    pub fn full(name: &str) -> Option<Self> {
        Some(match name {
            "tiny" => Self::tiny(),
            "bacteria" => Self::new("bacteria", 740_000, 1, 460_000_000),
            "killifish" => Self::new("killifish", 230_000, 1, 1_240_000_000),
            "mouse" => Self::new("mouse", 52_000_000, 4, 2_700_000_000),
            _ => return None,
        })
    }

    /// Reference and target divided by `factor` (at least one read and k bases remain).
    pub fn scaled(&self, factor: u64) -> Self {
        assert!(factor > 0, "scale factor must be positive");
        Self {
            name: format!("{}/{factor}", self.name),
            reference_len_bases: (self.reference_len_bases / factor)
                .max(u64::from(self.read_len_bases) * u64::from(self.reference_record_count)),
            read_count: (self.read_count / factor).max(1),
            ..self.clone()
        }
    }

    /// Target bases (reads × read length).
    pub fn target_len_bases(&self) -> u64 {
        self.read_count * u64::from(self.read_len_bases)
    }
}

/// Where a read came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOrigin {
    /// From reference record `record` at `offset`, on the reverse strand if `reverse`, with
    /// `substitutions` bases changed.
    Reference {
        /// Record index.
        record: u32,
        /// Offset within the record.
        offset: u64,
        /// Reverse-complemented.
        reverse: bool,
        /// Bases substituted.
        substitutions: u32,
    },
    /// Random sequence.
    Random,
}

/// A generated dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The reference as FASTA.
    pub reference_fasta: Vec<u8>,
    /// The reads as FASTA (`>read<i>` headers).
    pub target_fasta: Vec<u8>,
    /// Each read's origin, in read order.
    pub truth: Vec<ReadOrigin>,
}

const BASES: [u8; 4] = *b"ACGT";

/// The reverse complement of an upper-case sequence (non-ACGT letters become `N`).
pub fn reverse_complement(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .rev()
        .map(|b| match b {
            b'A' => b'T',
            b'C' => b'G',
            b'G' => b'C',
            b'T' => b'A',
            _ => b'N',
        })
        .collect()
}

/// Generates `sizes` from `seed`, in memory (use `scaled` sizes).
pub fn generate(sizes: &DatasetSizes, seed: u64) -> Dataset {
    assert!(sizes.reference_record_count > 0 && sizes.read_len_bases > 0);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let records: Vec<FastaRecord> = (0..sizes.reference_record_count)
        .map(|i| {
            let len = sizes.reference_len_bases / u64::from(sizes.reference_record_count);
            let seq = (0..len).map(|_| BASES[rng.gen_range(0..4)]).collect();
            FastaRecord {
                id: format!("chr{}", i + 1),
                seq,
            }
        })
        .collect();
    let read_len = sizes.read_len_bases as usize;
    let eligible: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].seq.len() >= read_len)
        .collect();
    assert!(
        !eligible.is_empty(),
        "reference records shorter than a read"
    );
    let mut reads = Vec::with_capacity(sizes.read_count as usize);
    let mut truth = Vec::with_capacity(sizes.read_count as usize);
    for i in 0..sizes.read_count {
        let (seq, origin) = if rng.gen_bool(sizes.random_read_fraction) {
            let seq = (0..read_len).map(|_| BASES[rng.gen_range(0..4)]).collect();
            (seq, ReadOrigin::Random)
        } else {
            let record = eligible[rng.gen_range(0..eligible.len())];
            let r = &records[record].seq;
            let offset = rng.gen_range(0..=r.len() - read_len);
            let mut seq = r[offset..offset + read_len].to_vec();
            let mut substitutions = 0;
            for b in seq.iter_mut() {
                if rng.gen_bool(sizes.substitution_rate) {
                    let old = *b;
                    while *b == old {
                        *b = BASES[rng.gen_range(0..4)];
                    }
                    substitutions += 1;
                }
            }
            let reverse = rng.gen_bool(0.5);
            if reverse {
                seq = reverse_complement(&seq);
            }
            let origin = ReadOrigin::Reference {
                record: record as u32,
                offset: offset as u64,
                reverse,
                substitutions,
            };
            (seq, origin)
        };
        reads.push(FastaRecord {
            id: format!("read{i}"),
            seq,
        });
        truth.push(origin);
    }
    let mut reference_fasta = Vec::new();
    write_fasta(&records, sizes.line_width as usize, &mut reference_fasta);
    let mut target_fasta = Vec::new();
    write_fasta(&reads, sizes.line_width as usize, &mut target_fasta);
    Dataset {
        reference_fasta,
        target_fasta,
        truth,
    }
}
