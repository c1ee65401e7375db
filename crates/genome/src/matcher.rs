//! Read matching (WORKLOADS.md §6, MB2): for each strand, seeds at read offsets 0, k, 2k, …;
//! seeds with more than `seed_occurrence_cap` hits are skipped; each hit votes for the diagonal
//! `pos − offset`; diagonals with at least `min_votes` votes that lie inside one record are
//! verified by Hamming distance (a non-ACGT base on either side counts as a mismatch); the best
//! placement (fewest mismatches, then lower position, then forward strand) is reported when its
//! mismatches are at most `⌊max_mismatch_fraction · R⌋`.
//!
//! When no seed is capped and `⌊R/k⌋ − max_mismatches ≥ min_votes`, every placement within
//! the threshold has at least `min_votes` exact seeds (pigeonhole), so this matcher returns
//! exactly what `match_read_brute_force` — every position, both strands — returns. The tests
//! check that equality.

use crate::dataset::reverse_complement;
use crate::error::GenomeError;
use crate::index::{base_code, KmerIndex, Reference};
use serde::{Deserialize, Serialize};

/// Matching parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatchParams {
    /// Seeds with more occurrences than this are skipped.
    pub seed_occurrence_cap: u32,
    /// Votes a diagonal needs to be verified.
    pub min_votes: u32,
    /// Largest share of mismatching bases for a reported match.
    pub max_mismatch_fraction: f64,
}

impl Default for MatchParams {
    fn default() -> Self {
        Self {
            seed_occurrence_cap: 500,
            min_votes: 2,
            max_mismatch_fraction: 0.05,
        }
    }
}

impl MatchParams {
    /// Checks the fields.
    pub fn validate(&self) -> Result<(), GenomeError> {
        if self.min_votes < 1 {
            return Err(GenomeError::InvalidParameter {
                field: "min_votes",
                value: self.min_votes.to_string(),
                reason: "must be at least 1",
            });
        }
        if !(0.0..=1.0).contains(&self.max_mismatch_fraction) {
            return Err(GenomeError::InvalidParameter {
                field: "max_mismatch_fraction",
                value: self.max_mismatch_fraction.to_string(),
                reason: "must be in [0, 1]",
            });
        }
        Ok(())
    }

    /// The mismatch threshold for a read of `len` bases.
    pub fn max_mismatches(&self, len: usize) -> u32 {
        (self.max_mismatch_fraction * len as f64).floor() as u32
    }
}

/// A read's placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Hit {
    /// Mismatching bases.
    pub mismatches: u32,
    /// Global position in the concatenated reference.
    pub position: u64,
    /// Whether the read's reverse complement matched.
    pub reverse: bool,
}

/// Work done matching.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchCounts {
    /// Reads processed.
    pub reads: u64,
    /// Seeds encoded (k-mers hashed).
    pub seeds_hashed: u64,
    /// Seed lookups that returned a position list.
    pub seed_lookups: u64,
    /// Positions read from the index (votes cast).
    pub votes: u64,
    /// Candidate placements verified.
    pub candidates_verified: u64,
    /// Bases compared during verification.
    pub bases_compared: u64,
}

/// Hamming distance of `read` against the reference at `pos`; non-ACGT bases mismatch.
pub fn hamming(reference: &[u8], pos: usize, read: &[u8]) -> u32 {
    reference[pos..pos + read.len()]
        .iter()
        .zip(read)
        .filter(|(r, q)| r != q || base_code(**r).is_none())
        .count() as u32
}

/// Encodes the k-mer at `read[offset..offset + k]`, `None` if it holds a non-ACGT base.
fn encode(read: &[u8], offset: usize, k: usize) -> Option<u64> {
    read[offset..offset + k]
        .iter()
        .try_fold(0u64, |acc, &b| base_code(b).map(|c| (acc << 2) | c))
}

/// Matches one read with the index.
pub fn match_read(
    reference: &Reference,
    index: &KmerIndex,
    params: &MatchParams,
    read: &[u8],
    counts: &mut MatchCounts,
) -> Option<Hit> {
    counts.reads += 1;
    let k = index.k() as usize;
    let len = read.len();
    let threshold = params.max_mismatches(len);
    let mut best: Option<Hit> = None;
    let mut diagonals: Vec<u64> = Vec::new();
    for reverse in [false, true] {
        let owned;
        let strand: &[u8] = if reverse {
            owned = reverse_complement(read);
            &owned
        } else {
            read
        };
        diagonals.clear();
        let mut offset = 0;
        while len >= k && offset + k <= len {
            counts.seeds_hashed += 1;
            if let Some(kmer) = encode(strand, offset, k) {
                let hits = index.lookup(kmer);
                counts.seed_lookups += 1;
                if hits.len() <= params.seed_occurrence_cap as usize {
                    counts.votes += hits.len() as u64;
                    diagonals.extend(
                        hits.iter()
                            .filter(|&&p| p as usize >= offset)
                            .map(|&p| (p as usize - offset) as u64),
                    );
                }
            }
            offset += k;
        }
        diagonals.sort_unstable();
        let mut i = 0;
        while i < diagonals.len() {
            let d = diagonals[i];
            let run = diagonals[i..].iter().take_while(|&&x| x == d).count();
            i += run;
            if (run as u32) < params.min_votes || d as usize + len > reference.seq.len() {
                continue;
            }
            let (_, _, record_end) = reference.record_of(d);
            if d + len as u64 > record_end {
                continue;
            }
            counts.candidates_verified += 1;
            counts.bases_compared += len as u64;
            let mismatches = hamming(&reference.seq, d as usize, strand);
            let hit = Hit {
                mismatches,
                position: d,
                reverse,
            };
            if mismatches <= threshold && best.is_none_or(|b| hit < b) {
                best = Some(hit);
            }
        }
    }
    best
}

/// The independent reference: every position of every record, both strands, by Hamming
/// distance; the same tie order (fewest mismatches, lower position, forward first).
pub fn match_read_brute_force(
    reference: &Reference,
    params: &MatchParams,
    read: &[u8],
) -> Option<Hit> {
    let threshold = params.max_mismatches(read.len());
    let rc = reverse_complement(read);
    let mut best: Option<Hit> = None;
    for w in reference.record_starts.windows(2) {
        let (start, end) = (w[0] as usize, w[1] as usize);
        if end - start < read.len() {
            continue;
        }
        for pos in start..=end - read.len() {
            for (reverse, strand) in [(false, read), (true, rc.as_slice())] {
                let mismatches = hamming(&reference.seq, pos, strand);
                let hit = Hit {
                    mismatches,
                    position: pos as u64,
                    reverse,
                };
                if mismatches <= threshold && best.is_none_or(|b| hit < b) {
                    best = Some(hit);
                }
            }
        }
    }
    best
}

/// The exact checksum of a matching: Σ over reads of FNV-1a-64(read index, position, strand,
/// mismatches), unmapped reads contributing their index only; wrapping addition.
pub fn checksum(hits: &[Option<Hit>]) -> u64 {
    let fnv = |words: &[u64]| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for w in words {
            for b in w.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    };
    hits.iter().enumerate().fold(0u64, |acc, (i, h)| {
        let term = match h {
            Some(h) => fnv(&[
                i as u64,
                h.position,
                u64::from(h.reverse),
                u64::from(h.mismatches),
            ]),
            None => fnv(&[i as u64, u64::MAX]),
        };
        acc.wrapping_add(term)
    })
}
