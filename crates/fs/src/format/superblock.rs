//! Block 0: the superblock, and the region layout mkfs derives from the device size.
//! The superblock is written once by mkfs and never changes (free counts are recomputed from
//! the bitmaps at mount), so it needs no journaling.

use super::{crc, get_u32, get_u64, put_u32, put_u64};
use crate::error::{Corruption, FsError};
use crate::types::{BlockNo, Ino, BLOCK_BYTES, BLOCK_BYTES_U64, ROOT_INO};
use serde::{Deserialize, Serialize};

pub const SB_MAGIC: &[u8; 4] = b"NFFS";
pub const FS_VERSION: u32 = 1;
/// Feature flag: metadata is journaled (the only mode; a reader rejects unknown flags).
pub const FEATURE_JOURNAL: u32 = 1;
/// Inodes per inode-table block (256-byte inodes).
pub const INODES_PER_BLOCK: u32 = (BLOCK_BYTES / crate::format::inode::INODE_BYTES) as u32;
/// Bits per bitmap block.
pub const BITS_PER_BLOCK: u32 = (BLOCK_BYTES * 8) as u32;
/// The journal's descriptor lists at most this many home blocks.
pub const JOURNAL_BLOCKS_MAX: u32 = crate::format::journal::DESCRIPTOR_ENTRIES_MAX as u32 + 2;
pub const JOURNAL_BLOCKS_MIN: u32 = 32;
/// The default journal is 1/64 of the device up to this (1 MiB).
pub const JOURNAL_BLOCKS_DEFAULT_MAX: u32 = 256;

/// What mkfs may be told; `None` picks the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatOptions {
    /// Inode count (default: one per 4 blocks, i.e. per 16 KiB).
    pub inodes: Option<u32>,
    /// Journal size in blocks (default: 1/64 of the device, 32..=256; at most 1018).
    pub journal_blocks: Option<u32>,
}

/// The region layout, as recorded in the superblock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Superblock {
    pub total_blocks: u32,
    pub inode_count: u32,
    pub journal_start: BlockNo,
    pub journal_blocks: u32,
    pub inode_bitmap_start: BlockNo,
    pub inode_bitmap_blocks: u32,
    pub block_bitmap_start: BlockNo,
    pub block_bitmap_blocks: u32,
    pub inode_table_start: BlockNo,
    pub inode_table_blocks: u32,
    pub data_start: BlockNo,
    pub created_ns: u64,
}

impl Superblock {
    /// Lays out a file system on a device of `capacity_bytes`.
    pub fn plan(
        capacity_bytes: u64,
        opts: FormatOptions,
        created_ns: u64,
    ) -> Result<Superblock, FsError> {
        let total = (capacity_bytes / BLOCK_BYTES_U64).min(u64::from(u32::MAX)) as u32;
        let journal_blocks = opts
            .journal_blocks
            .unwrap_or((total / 64).min(JOURNAL_BLOCKS_DEFAULT_MAX))
            .clamp(JOURNAL_BLOCKS_MIN, JOURNAL_BLOCKS_MAX);
        let inode_count = opts
            .inodes
            .unwrap_or(total / 4)
            .max(INODES_PER_BLOCK)
            .next_multiple_of(INODES_PER_BLOCK);
        let inode_bitmap_blocks = inode_count.div_ceil(BITS_PER_BLOCK);
        let block_bitmap_blocks = total.div_ceil(BITS_PER_BLOCK).max(1);
        let inode_table_blocks = inode_count / INODES_PER_BLOCK;
        let journal_start = 1u32;
        let inode_bitmap_start = journal_start + journal_blocks;
        let block_bitmap_start = inode_bitmap_start + inode_bitmap_blocks;
        let inode_table_start = block_bitmap_start + block_bitmap_blocks;
        let data_start = u64::from(inode_table_start) + u64::from(inode_table_blocks);
        // At least as many data blocks as metadata blocks, and 16 at the very least.
        let needed = (2 * data_start).max(data_start + 16);
        if u64::from(total) < needed {
            return Err(FsError::DeviceTooSmall {
                capacity_bytes,
                needed_bytes: needed * BLOCK_BYTES_U64,
            });
        }
        Ok(Superblock {
            total_blocks: total,
            inode_count,
            journal_start: BlockNo(journal_start),
            journal_blocks,
            inode_bitmap_start: BlockNo(inode_bitmap_start),
            inode_bitmap_blocks,
            block_bitmap_start: BlockNo(block_bitmap_start),
            block_bitmap_blocks,
            inode_table_start: BlockNo(inode_table_start),
            inode_table_blocks,
            data_start: BlockNo(data_start as u32),
            created_ns,
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK_BYTES];
        b[0..4].copy_from_slice(SB_MAGIC);
        put_u32(&mut b, 4, FS_VERSION);
        put_u32(&mut b, 8, BLOCK_BYTES as u32);
        put_u32(&mut b, 12, FEATURE_JOURNAL);
        put_u32(&mut b, 16, self.total_blocks);
        put_u32(&mut b, 20, self.inode_count);
        put_u32(&mut b, 24, self.journal_start.0);
        put_u32(&mut b, 28, self.journal_blocks);
        put_u32(&mut b, 32, self.inode_bitmap_start.0);
        put_u32(&mut b, 36, self.inode_bitmap_blocks);
        put_u32(&mut b, 40, self.block_bitmap_start.0);
        put_u32(&mut b, 44, self.block_bitmap_blocks);
        put_u32(&mut b, 48, self.inode_table_start.0);
        put_u32(&mut b, 52, self.inode_table_blocks);
        put_u32(&mut b, 56, self.data_start.0);
        put_u32(&mut b, 60, ROOT_INO.0);
        put_u64(&mut b, 64, self.created_ns);
        let c = crc(&[&b[0..72]]);
        put_u32(&mut b, 72, c);
        b
    }

    /// Decodes and checks block 0 against a device of `capacity_bytes`.
    pub fn decode(b: &[u8], capacity_bytes: u64) -> Result<Superblock, Corruption> {
        let bad = Corruption::Superblock;
        if b.len() != BLOCK_BYTES || &b[0..4] != SB_MAGIC {
            return Err(bad("bad magic (not a nearflash file system)"));
        }
        if crc(&[&b[0..72]]) != get_u32(b, 72) {
            return Err(bad("checksum mismatch"));
        }
        if get_u32(b, 4) != FS_VERSION {
            return Err(bad("unsupported version"));
        }
        if get_u32(b, 8) != BLOCK_BYTES as u32 {
            return Err(bad("unsupported block size"));
        }
        if get_u32(b, 12) != FEATURE_JOURNAL {
            return Err(bad("unknown feature flags"));
        }
        if get_u32(b, 60) != ROOT_INO.0 {
            return Err(bad("unexpected root inode"));
        }
        let sb = Superblock {
            total_blocks: get_u32(b, 16),
            inode_count: get_u32(b, 20),
            journal_start: BlockNo(get_u32(b, 24)),
            journal_blocks: get_u32(b, 28),
            inode_bitmap_start: BlockNo(get_u32(b, 32)),
            inode_bitmap_blocks: get_u32(b, 36),
            block_bitmap_start: BlockNo(get_u32(b, 40)),
            block_bitmap_blocks: get_u32(b, 44),
            inode_table_start: BlockNo(get_u32(b, 48)),
            inode_table_blocks: get_u32(b, 52),
            data_start: BlockNo(get_u32(b, 56)),
            created_ns: get_u64(b, 64),
        };
        // The regions must be exactly what `plan` would lay out for these sizes.
        let replan = Superblock::plan(
            u64::from(sb.total_blocks) * BLOCK_BYTES_U64,
            FormatOptions {
                inodes: Some(sb.inode_count),
                journal_blocks: Some(sb.journal_blocks),
            },
            sb.created_ns,
        )
        .map_err(|_| bad("layout does not fit its own size"))?;
        if replan != sb {
            return Err(bad("regions do not match the recorded sizes"));
        }
        if u64::from(sb.total_blocks) * BLOCK_BYTES_U64 > capacity_bytes {
            return Err(bad("file system is larger than the device"));
        }
        Ok(sb)
    }

    /// The inode-table block holding `ino` and the inode's byte offset in it.
    pub fn inode_location(&self, ino: Ino) -> (BlockNo, usize) {
        debug_assert!(self.valid_ino(ino), "{ino} out of range");
        let slot = ino.0 - 1;
        (
            BlockNo(self.inode_table_start.0 + slot / INODES_PER_BLOCK),
            (slot % INODES_PER_BLOCK) as usize * crate::format::inode::INODE_BYTES,
        )
    }

    pub fn valid_ino(&self, ino: Ino) -> bool {
        ino.0 >= 1 && ino.0 <= self.inode_count
    }

    /// A block that may hold file data or directory/extent blocks.
    pub fn is_data_block(&self, b: BlockNo) -> bool {
        b.0 >= self.data_start.0 && b.0 < self.total_blocks
    }

    /// The bitmap block and bit of block `b`.
    pub fn block_bit(&self, b: BlockNo) -> (BlockNo, usize) {
        (
            BlockNo(self.block_bitmap_start.0 + b.0 / BITS_PER_BLOCK),
            (b.0 % BITS_PER_BLOCK) as usize,
        )
    }

    /// The bitmap block and bit of inode `ino`.
    pub fn inode_bit(&self, ino: Ino) -> (BlockNo, usize) {
        let i = ino.0 - 1;
        (
            BlockNo(self.inode_bitmap_start.0 + i / BITS_PER_BLOCK),
            (i % BITS_PER_BLOCK) as usize,
        )
    }

    /// The i-th journal block.
    pub fn journal_block(&self, i: u32) -> BlockNo {
        debug_assert!(i < self.journal_blocks);
        BlockNo(self.journal_start.0 + i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_lays_regions_back_to_back_and_round_trips() {
        let sb = Superblock::plan(10 << 20, FormatOptions::default(), 7).unwrap();
        assert_eq!(sb.total_blocks, 2560);
        assert_eq!(sb.journal_start, BlockNo(1));
        assert_eq!(sb.journal_blocks, 40);
        assert_eq!(sb.inode_count, 640);
        assert_eq!(sb.inode_table_blocks, 40);
        assert_eq!(sb.data_start.0, 1 + 40 + 1 + 1 + 40);
        let enc = sb.encode();
        assert_eq!(Superblock::decode(&enc, 10 << 20), Ok(sb));
        assert_eq!(
            sb.inode_location(Ino(17)),
            (BlockNo(sb.inode_table_start.0 + 1), 0)
        );
    }

    #[test]
    fn a_flipped_bit_or_a_smaller_device_is_named() {
        let sb = Superblock::plan(10 << 20, FormatOptions::default(), 7).unwrap();
        let mut enc = sb.encode();
        enc[20] ^= 1;
        assert_eq!(
            Superblock::decode(&enc, 10 << 20),
            Err(Corruption::Superblock("checksum mismatch"))
        );
        let e = Superblock::decode(&sb.encode(), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("larger than the device"), "{e}");
        let e = Superblock::decode(&[0u8; BLOCK_BYTES], 10 << 20).unwrap_err();
        assert!(e.to_string().contains("magic"), "{e}");
    }

    #[test]
    fn a_tiny_device_is_too_small() {
        let e = Superblock::plan(64 << 10, FormatOptions::default(), 0).unwrap_err();
        assert!(matches!(e, FsError::DeviceTooSmall { .. }), "{e}");
    }
}
