//! The reference and its k-mer CSR index (WORKLOADS.md §6, MB1): count the occurrences of every
//! k-mer made only of ACGT (k-mers never span two records), take the exclusive prefix sum, then
//! scatter each k-mer's positions in ascending order.
//!
//! Serialised format, little-endian:
//! ```text
//! magic            8 bytes  "NFKMIDX\0"
//! version          u32      1
//! k                u32      1..=13
//! reference_len    u64      bases of the concatenated reference
//! position_count   u64
//! offsets          (4^k + 1) × u32, non-decreasing, offsets[0] = 0, offsets[4^k] = position_count
//! positions        position_count × u32, each + k ≤ reference_len
//! ```
//! Loading checks the magic, the version, k, the exact total length and the invariants above;
//! any failure is a typed error, never a panic.

use crate::error::GenomeError;
use crate::fasta::FastaRecord;

/// The index magic.
pub const INDEX_MAGIC: [u8; 8] = *b"NFKMIDX\0";
/// The format version written.
pub const INDEX_VERSION: u32 = 1;
/// The largest k (an offset table of 4^13 + 1 u32 is 256 MiB).
pub const K_MAX: u32 = 13;
const HEADER_BYTES: u64 = 8 + 4 + 4 + 8 + 8;

/// The 2-bit code of an upper-case base, `None` for anything but ACGT.
pub fn base_code(b: u8) -> Option<u64> {
    match b {
        b'A' => Some(0),
        b'C' => Some(1),
        b'G' => Some(2),
        b'T' => Some(3),
        _ => None,
    }
}

/// The reference's records concatenated, with where each starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// All records' bases, back to back.
    pub seq: Vec<u8>,
    /// Start of each record in `seq`, plus `seq.len()` at the end.
    pub record_starts: Vec<u64>,
    /// Record identifiers.
    pub ids: Vec<String>,
}

impl Reference {
    /// Concatenates `records`.
    pub fn new(records: Vec<FastaRecord>) -> Self {
        let mut seq = Vec::with_capacity(records.iter().map(|r| r.seq.len()).sum());
        let mut record_starts = Vec::with_capacity(records.len() + 1);
        let mut ids = Vec::with_capacity(records.len());
        for r in records {
            record_starts.push(seq.len() as u64);
            seq.extend_from_slice(&r.seq);
            ids.push(r.id);
        }
        record_starts.push(seq.len() as u64);
        Self {
            seq,
            record_starts,
            ids,
        }
    }

    /// The record holding global position `pos`, and the record's [start, end).
    pub fn record_of(&self, pos: u64) -> (usize, u64, u64) {
        assert!(pos < self.seq.len() as u64);
        let i = self.record_starts.partition_point(|&s| s <= pos) - 1;
        (i, self.record_starts[i], self.record_starts[i + 1])
    }
}

/// Calls `f(position, kmer)` for every ACGT-only k-mer inside one record, in position order.
pub fn for_each_kmer(reference: &Reference, k: u32, mut f: impl FnMut(u64, u64)) {
    let mask = (1u64 << (2 * k)) - 1;
    for w in reference.record_starts.windows(2) {
        let (start, end) = (w[0] as usize, w[1] as usize);
        let mut kmer = 0u64;
        let mut valid = 0u32;
        for (i, &b) in reference.seq[start..end].iter().enumerate() {
            match base_code(b) {
                Some(c) => {
                    kmer = ((kmer << 2) | c) & mask;
                    valid = (valid + 1).min(k);
                }
                None => valid = 0,
            }
            if valid == k {
                f((start + i + 1 - k as usize) as u64, kmer);
            }
        }
    }
}

/// The CSR k-mer index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KmerIndex {
    k: u32,
    reference_len: u64,
    offsets: Vec<u32>,
    positions: Vec<u32>,
}

/// Work done building the index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildCounts {
    /// k-mers encoded (each pass counts: count and scatter).
    pub kmers_hashed: u64,
    /// Offset-table entries scanned by the prefix sum.
    pub offsets_scanned: u64,
}

fn check_k(k: u32) -> Result<(), GenomeError> {
    if !(1..=K_MAX).contains(&k) {
        return Err(GenomeError::InvalidParameter {
            field: "k",
            value: k.to_string(),
            reason: "must be in 1..=13",
        });
    }
    Ok(())
}

impl KmerIndex {
    /// Builds the index of `reference` (count → exclusive scan → scatter).
    pub fn build(reference: &Reference, k: u32) -> Result<(Self, BuildCounts), GenomeError> {
        check_k(k)?;
        if reference.seq.len() as u64 > u64::from(u32::MAX) {
            return Err(GenomeError::InvalidParameter {
                field: "reference_len",
                value: reference.seq.len().to_string(),
                reason: "positions are 32-bit: at most 4 Gbp",
            });
        }
        let table_len = 1usize << (2 * k);
        let mut counts = BuildCounts::default();
        let mut occurrences = vec![0u32; table_len];
        for_each_kmer(reference, k, |_, kmer| {
            occurrences[kmer as usize] += 1;
            counts.kmers_hashed += 1;
        });
        let mut offsets = Vec::with_capacity(table_len + 1);
        let mut sum = 0u32;
        for &c in &occurrences {
            offsets.push(sum);
            sum += c;
        }
        offsets.push(sum);
        counts.offsets_scanned = table_len as u64;
        let mut cursor = occurrences;
        cursor.copy_from_slice(&offsets[..table_len]);
        let mut positions = vec![0u32; sum as usize];
        for_each_kmer(reference, k, |pos, kmer| {
            let slot = &mut cursor[kmer as usize];
            positions[*slot as usize] = pos as u32;
            *slot += 1;
            counts.kmers_hashed += 1;
        });
        assert!(
            cursor.iter().zip(&offsets[1..]).all(|(c, o)| c == o),
            "scatter filled every bucket"
        );
        let index = Self {
            k,
            reference_len: reference.seq.len() as u64,
            offsets,
            positions,
        };
        Ok((index, counts))
    }

    /// k.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Positions of `kmer`, ascending.
    pub fn lookup(&self, kmer: u64) -> &[u32] {
        let i = kmer as usize;
        &self.positions[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Positions stored.
    pub fn position_count(&self) -> u64 {
        self.positions.len() as u64
    }

    /// The serialised length in bytes.
    pub fn serialized_len_bytes(&self) -> u64 {
        HEADER_BYTES + 4 * (self.offsets.len() as u64 + self.positions.len() as u64)
    }

    /// Serialises into `out` (appending).
    pub fn serialize(&self, out: &mut Vec<u8>) {
        out.reserve(self.serialized_len_bytes() as usize);
        out.extend_from_slice(&INDEX_MAGIC);
        out.extend_from_slice(&INDEX_VERSION.to_le_bytes());
        out.extend_from_slice(&self.k.to_le_bytes());
        out.extend_from_slice(&self.reference_len.to_le_bytes());
        out.extend_from_slice(&(self.positions.len() as u64).to_le_bytes());
        for v in self.offsets.iter().chain(&self.positions) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// Loads an index from `bytes`, checking every length and invariant.
    pub fn deserialize(bytes: &[u8]) -> Result<Self, GenomeError> {
        let actual_bytes = bytes.len() as u64;
        if bytes.len() < 8 || bytes[..8] != INDEX_MAGIC {
            return Err(GenomeError::IndexBadMagic);
        }
        if actual_bytes < HEADER_BYTES {
            return Err(GenomeError::IndexLength {
                expected_bytes: HEADER_BYTES,
                actual_bytes,
            });
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        if version != INDEX_VERSION {
            return Err(GenomeError::IndexVersion { version });
        }
        let k = u32_at(12);
        if !(1..=K_MAX).contains(&k) {
            return Err(GenomeError::IndexInconsistent {
                reason: "k out of range",
            });
        }
        let reference_len = u64_at(16);
        let position_count = u64_at(24);
        let table_len = 1u64 << (2 * k);
        let expected_bytes = (table_len + 1)
            .checked_add(position_count)
            .and_then(|n| n.checked_mul(4))
            .and_then(|n| n.checked_add(HEADER_BYTES))
            .ok_or(GenomeError::IndexInconsistent {
                reason: "position count overflows",
            })?;
        if expected_bytes != actual_bytes {
            return Err(GenomeError::IndexLength {
                expected_bytes,
                actual_bytes,
            });
        }
        let words = |from: u64, n: u64| -> Vec<u32> {
            (0..n as usize)
                .map(|i| u32_at(from as usize + 4 * i))
                .collect()
        };
        let offsets = words(HEADER_BYTES, table_len + 1);
        let positions = words(HEADER_BYTES + 4 * (table_len + 1), position_count);
        if offsets[0] != 0 || u64::from(offsets[table_len as usize]) != position_count {
            return Err(GenomeError::IndexInconsistent {
                reason: "offsets do not span the positions",
            });
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(GenomeError::IndexInconsistent {
                reason: "offsets decrease",
            });
        }
        if positions
            .iter()
            .any(|&p| u64::from(p) + u64::from(k) > reference_len)
        {
            return Err(GenomeError::IndexInconsistent {
                reason: "position beyond the reference",
            });
        }
        Ok(Self {
            k,
            reference_len,
            offsets,
            positions,
        })
    }

    /// Whether this index was built over a reference of `len` bases.
    pub fn reference_len(&self) -> u64 {
        self.reference_len
    }
}
