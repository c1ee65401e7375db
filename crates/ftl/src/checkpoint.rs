//! The mapping checkpoint Storengine writes periodically ("dumps the scratchpad to flash").
//! A checkpoint is a byte string spread over consecutive rows (page groups) of one of two
//! checkpoint slots (appended after the previous checkpoint; a full slot hands over to the
//! other, so the newest complete checkpoint survives while the next is written). A slot is
//! a whole number of superblocks per way and its rows rotate over them: slot row `r` is page
//! `r / n` of the slot's `r % n`-th superblock (`n` superblocks per slot, see
//! `Layout::ckpt_row`), so consecutive rows lie on different ways and are programmed in
//! parallel, one row per way in flight, each block still in page order:
//!
//! ```text
//! header  (64 B): magic "NFCK", version u32, ckpt_seq u64, next_write_seq u64,
//!                 next_epoch u64, logical_groups u64, superblocks u32, group_pages u32,
//!                 payload_bytes u64, payload_crc u32, zero pad
//! payload:        logical_groups × (pgn u32, seq u64)
//!                 superblocks × (epoch u64, state u8)
//!                 superblocks × group_pages × remapped block u32
//!                 extension bytes (Flexible Data Placement's, `crate::fdp::checkpoint_bytes`:
//!                 none while it is off)
//! ```
//!
//! Each page of a checkpoint carries an OOB record of kind `Checkpoint` with
//! `seq = ckpt_seq` and `lpn` = its index in the checkpoint (so 0 marks a checkpoint's
//! start, always the first page of a row); a checkpoint is valid only if every page it
//! needs decodes with the same `ckpt_seq` and the payload CRC matches. Rows in flight
//! together can be cut in any order, so a torn checkpoint may leave a later row programmed
//! after an erased one; only the checkpoint being written can have such a hole, and it fails
//! validation (the pages of the missing row do not decode).

use crate::superblock::SbState;
use thiserror::Error;

pub const HEADER_BYTES: u64 = 64;
const MAGIC: &[u8; 4] = b"NFCK";
const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub ckpt_seq: u64,
    pub next_write_seq: u64,
    pub next_epoch: u64,
    pub l2p: Vec<u32>,
    pub seqs: Vec<u64>,
    pub sb_epochs: Vec<u64>,
    pub sb_states: Vec<SbState>,
    pub remap: Vec<u32>,
    /// Extensions' state, opaque here (FDP's section; empty while it is off). Its length is
    /// fixed by the configuration, as the rest is by the geometry.
    pub extension: Vec<u8>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum CheckpointError {
    #[error("checkpoint too short ({0} bytes)")]
    Short(usize),
    #[error("bad checkpoint magic or version")]
    Magic,
    #[error("checkpoint payload checksum mismatch")]
    Checksum,
    #[error("checkpoint geometry mismatch: {0}")]
    Geometry(&'static str),
}

/// Upper bound of an encoded checkpoint's size, with `extension_bytes` of extensions.
pub fn encoded_bytes_max(
    logical_groups: u64,
    superblocks: u32,
    group_pages: u32,
    extension_bytes: u64,
) -> u64 {
    HEADER_BYTES
        + logical_groups * 12
        + u64::from(superblocks) * 9
        + u64::from(superblocks) * u64::from(group_pages) * 4
        + extension_bytes
}

impl Snapshot {
    pub fn encoded_bytes(&self) -> u64 {
        encoded_bytes_max(
            self.l2p.len() as u64,
            self.sb_epochs.len() as u32,
            self.group_pages(),
            self.extension.len() as u64,
        )
    }

    fn group_pages(&self) -> u32 {
        if self.sb_epochs.is_empty() {
            0
        } else {
            (self.remap.len() / self.sb_epochs.len()) as u32
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        assert_eq!(self.l2p.len(), self.seqs.len());
        assert_eq!(self.sb_epochs.len(), self.sb_states.len());
        let mut payload = Vec::with_capacity(self.encoded_bytes() as usize);
        for (p, s) in self.l2p.iter().zip(&self.seqs) {
            payload.extend_from_slice(&p.to_le_bytes());
            payload.extend_from_slice(&s.to_le_bytes());
        }
        for (e, st) in self.sb_epochs.iter().zip(&self.sb_states) {
            payload.extend_from_slice(&e.to_le_bytes());
            payload.push(st.code());
        }
        for b in &self.remap {
            payload.extend_from_slice(&b.to_le_bytes());
        }
        payload.extend_from_slice(&self.extension);
        let mut out = Vec::with_capacity(HEADER_BYTES as usize + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&self.ckpt_seq.to_le_bytes());
        out.extend_from_slice(&self.next_write_seq.to_le_bytes());
        out.extend_from_slice(&self.next_epoch.to_le_bytes());
        out.extend_from_slice(&(self.l2p.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.sb_epochs.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.group_pages().to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        out.resize(HEADER_BYTES as usize, 0);
        out.extend_from_slice(&payload);
        out
    }

    /// Total encoded length announced by a header, so a reader knows how many pages to read.
    pub fn announced_len(header: &[u8]) -> Result<u64, CheckpointError> {
        if header.len() < HEADER_BYTES as usize {
            return Err(CheckpointError::Short(header.len()));
        }
        if &header[0..4] != MAGIC || u32_at(header, 4) != VERSION {
            return Err(CheckpointError::Magic);
        }
        Ok(HEADER_BYTES + u64_at(header, 48))
    }

    pub fn decode(
        bytes: &[u8],
        logical_groups: u64,
        superblocks: u32,
        group_pages: u32,
        extension_bytes: u64,
    ) -> Result<Snapshot, CheckpointError> {
        let total = Self::announced_len(bytes)?;
        if (bytes.len() as u64) < total {
            return Err(CheckpointError::Short(bytes.len()));
        }
        let payload = &bytes[HEADER_BYTES as usize..total as usize];
        if crc32fast::hash(payload) != u32_at(bytes, 56) {
            return Err(CheckpointError::Checksum);
        }
        if u64_at(bytes, 32) != logical_groups {
            return Err(CheckpointError::Geometry("logical group count"));
        }
        if u32_at(bytes, 40) != superblocks || u32_at(bytes, 44) != group_pages {
            return Err(CheckpointError::Geometry("superblock layout"));
        }
        if payload.len() as u64
            != encoded_bytes_max(logical_groups, superblocks, group_pages, extension_bytes)
                - HEADER_BYTES
        {
            return Err(CheckpointError::Geometry("payload length"));
        }
        let n = logical_groups as usize;
        let mut l2p = Vec::with_capacity(n);
        let mut seqs = Vec::with_capacity(n);
        for i in 0..n {
            l2p.push(u32_at(payload, i * 12));
            seqs.push(u64_at(payload, i * 12 + 4));
        }
        let mut at = n * 12;
        let mut sb_epochs = Vec::with_capacity(superblocks as usize);
        let mut sb_states = Vec::with_capacity(superblocks as usize);
        for _ in 0..superblocks {
            sb_epochs.push(u64_at(payload, at));
            sb_states.push(SbState::from_code(payload[at + 8]).ok_or(CheckpointError::Magic)?);
            at += 9;
        }
        let remap = (0..(superblocks * group_pages) as usize)
            .map(|i| u32_at(payload, at + i * 4))
            .collect();
        let extension = payload[at + (superblocks * group_pages) as usize * 4..].to_vec();
        debug_assert_eq!(extension.len() as u64, extension_bytes);
        Ok(Snapshot {
            ckpt_seq: u64_at(bytes, 8),
            next_write_seq: u64_at(bytes, 16),
            next_epoch: u64_at(bytes, 24),
            l2p,
            seqs,
            sb_epochs,
            sb_states,
            remap,
            extension,
        })
    }
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Snapshot {
        Snapshot {
            ckpt_seq: 4,
            next_write_seq: 99,
            next_epoch: 12,
            l2p: vec![3, u32::MAX, 7],
            seqs: vec![10, 0, 44],
            sb_epochs: vec![1, 2],
            sb_states: vec![SbState::Closed, SbState::Open],
            remap: vec![0, 0, 5, 1],
            extension: Vec::new(),
        }
    }

    #[test]
    fn snapshot_round_trips() {
        let s = snap();
        let bytes = s.encode();
        assert_eq!(bytes.len() as u64, s.encoded_bytes());
        assert_eq!(Snapshot::decode(&bytes, 3, 2, 2, 0), Ok(s));
    }

    #[test]
    fn corrupted_or_foreign_checkpoint_is_rejected() {
        let bytes = snap().encode();
        let mut b = bytes.clone();
        b[70] ^= 1;
        assert_eq!(
            Snapshot::decode(&b, 3, 2, 2, 0),
            Err(CheckpointError::Checksum)
        );
        assert_eq!(
            Snapshot::decode(&bytes, 4, 2, 2, 0),
            Err(CheckpointError::Geometry("logical group count"))
        );
        assert_eq!(
            Snapshot::decode(&bytes[..40], 3, 2, 2, 0),
            Err(CheckpointError::Short(40))
        );
        assert_eq!(
            Snapshot::decode(&[0xFF; 200], 3, 2, 2, 0),
            Err(CheckpointError::Magic)
        );
    }
}
