//! The metadata journal's two records. A transaction occupies the journal from its first
//! block: the descriptor (block 0: sequence number and the home address of each image), the
//! images (blocks 1..=n), and the commit record (block n+1: sequence number, image count and
//! a checksum over the descriptor and every image). A transaction is committed iff its commit
//! record decodes, names the descriptor's sequence number and count, and the checksum matches.

use super::{crc, get_u32, get_u64, put_u32, put_u64};
use crate::error::Corruption;
use crate::types::{BlockNo, BLOCK_BYTES};

pub const DESCRIPTOR_MAGIC: &[u8; 4] = b"NFJD";
pub const COMMIT_MAGIC: &[u8; 4] = b"NFJC";
const DESCRIPTOR_HEADER: usize = 20;
pub const DESCRIPTOR_ENTRIES_MAX: usize = (BLOCK_BYTES - DESCRIPTOR_HEADER) / 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Descriptor {
    pub seq: u64,
    pub homes: Vec<BlockNo>,
}

impl Descriptor {
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.homes.len() <= DESCRIPTOR_ENTRIES_MAX);
        let mut b = vec![0u8; BLOCK_BYTES];
        b[0..4].copy_from_slice(DESCRIPTOR_MAGIC);
        put_u64(&mut b, 4, self.seq);
        put_u32(&mut b, 12, self.homes.len() as u32);
        for (i, h) in self.homes.iter().enumerate() {
            put_u32(&mut b, DESCRIPTOR_HEADER + 4 * i, h.0);
        }
        let end = DESCRIPTOR_HEADER + 4 * self.homes.len();
        let c = crc(&[&b[0..16], &b[DESCRIPTOR_HEADER..end]]);
        put_u32(&mut b, 16, c);
        b
    }

    pub fn decode(b: &[u8]) -> Result<Descriptor, Corruption> {
        let bad = Corruption::Journal;
        if &b[0..4] != DESCRIPTOR_MAGIC {
            return Err(bad("descriptor: bad magic"));
        }
        let n = get_u32(b, 12) as usize;
        if n > DESCRIPTOR_ENTRIES_MAX {
            return Err(bad("descriptor: too many entries"));
        }
        let end = DESCRIPTOR_HEADER + 4 * n;
        if crc(&[&b[0..16], &b[DESCRIPTOR_HEADER..end]]) != get_u32(b, 16) {
            return Err(bad("descriptor: checksum mismatch"));
        }
        Ok(Descriptor {
            seq: get_u64(b, 4),
            homes: (0..n)
                .map(|i| BlockNo(get_u32(b, DESCRIPTOR_HEADER + 4 * i)))
                .collect(),
        })
    }
}

/// The checksum a commit record carries: over the encoded descriptor and every image.
pub fn transaction_crc(descriptor: &[u8], images: &[&[u8]]) -> u32 {
    let mut parts = vec![descriptor];
    parts.extend_from_slice(images);
    crc(&parts)
}

pub fn encode_commit(seq: u64, count: u32, body_crc: u32) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK_BYTES];
    b[0..4].copy_from_slice(COMMIT_MAGIC);
    put_u64(&mut b, 4, seq);
    put_u32(&mut b, 12, count);
    put_u32(&mut b, 16, body_crc);
    let c = crc(&[&b[0..20]]);
    put_u32(&mut b, 20, c);
    b
}

/// True if `b` is the commit record of transaction `seq` with `count` images and body
/// checksum `body_crc`.
pub fn commit_matches(b: &[u8], seq: u64, count: u32, body_crc: u32) -> bool {
    &b[0..4] == COMMIT_MAGIC
        && crc(&[&b[0..20]]) == get_u32(b, 20)
        && get_u64(b, 4) == seq
        && get_u32(b, 12) == count
        && get_u32(b, 16) == body_crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_record_binds_sequence_count_and_body() {
        let d = Descriptor {
            seq: 9,
            homes: vec![BlockNo(50), BlockNo(7)],
        };
        let enc = d.encode();
        assert_eq!(Descriptor::decode(&enc), Ok(d));
        let img = vec![3u8; BLOCK_BYTES];
        let body = transaction_crc(&enc, &[&img, &img]);
        let c = encode_commit(9, 2, body);
        assert!(commit_matches(&c, 9, 2, body));
        assert!(
            !commit_matches(&c, 8, 2, body),
            "an older transaction's commit"
        );
        assert!(!commit_matches(&c, 9, 2, body ^ 1), "a torn image");
        let mut torn = enc.clone();
        torn[21] ^= 1;
        assert!(Descriptor::decode(&torn).is_err());
    }
}
