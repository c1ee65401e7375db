//! mkfs, mount (with journal replay) and commit.
//!
//! Commit (ordered mode, one transaction in the journal at a time):
//! 1. every dirty data block is written in place and awaited — so committed metadata never
//!    points at data that is not on the device;
//! 2. if the last transaction's checkpoint (or a replay, or mkfs) may still sit in a volatile
//!    write cache, FLUSH: its journal blocks are about to be overwritten, and a cut must find
//!    it either in the journal or at its homes;
//! 3. the descriptor and an image of every dirty metadata block go to the journal, awaited;
//!    then FLUSH — the data and the journal durable before the commit record (write-ahead);
//! 4. the commit record is written with FUA and awaited: the transaction is now durable;
//! 5. the images are written to their homes (checkpoint), awaited, and the blocks are clean
//!    (durable by step 2 of the next commit; until then the journal holds them).
//!
//! A commit with no metadata (a sync or fsync after data-only writes) writes the data and
//! FLUSHes. On a device without a volatile write cache the FLUSHes are skipped and FUA is a
//! plain write (every completed write is durable there; `Cx::flush`).
//!
//! The next transaction starts only after step 5, so the journal never needs more than the
//! last transaction, and replaying it again (a cut during step 5 or after) is harmless:
//! its images are exactly what the homes should hold.

use crate::cache::BlockClass;
use crate::config::FsConfig;
use crate::error::{Corruption, FsError};
use crate::exec::{Cx, IoKind, Mounted};
use crate::format::inode::{Inode, INODE_BYTES};
use crate::format::journal::{commit_matches, encode_commit, transaction_crc, Descriptor};
use crate::format::superblock::{FormatOptions, Superblock, BITS_PER_BLOCK};
use crate::types::{BlockNo, FileKind, BLOCK_BYTES, ROOT_INO};
use std::collections::BTreeSet;

/// Dirty metadata blocks above which an operation commits at its end: half the journal
/// (less its two records), leaving the other half for the largest single operation.
pub fn commit_threshold(journal_blocks: usize) -> usize {
    journal_blocks.saturating_sub(2) / 2
}

pub async fn commit(cx: &Cx) -> Result<(), FsError> {
    let data = cx.st.borrow().cache.dirty(BlockClass::Data);
    let written: Vec<BlockNo> = data.iter().map(|(b, _)| *b).collect();
    cx.write_raw(data, IoKind::DataWrite).await?;
    {
        let mut st = cx.st.borrow_mut();
        for b in written {
            st.cache.mark_clean(b);
        }
    }
    let meta = cx.st.borrow().cache.dirty(BlockClass::Meta);
    if meta.is_empty() {
        // A sync or fsync of data alone: durable before it returns.
        cx.flush().await?;
    } else {
        let sb = cx.sb()?;
        assert!(
            meta.len() + 2 <= sb.journal_blocks as usize,
            "transaction of {} blocks exceeds the journal",
            meta.len()
        );
        let seq = cx
            .st
            .borrow()
            .mounted
            .as_ref()
            .expect("mounted")
            .journal_seq
            + 1;
        let desc = Descriptor {
            seq,
            homes: meta.iter().map(|(b, _)| *b).collect(),
        }
        .encode();
        let images: Vec<&[u8]> = meta.iter().map(|(_, d)| d.as_slice()).collect();
        let body = transaction_crc(&desc, &images);
        let mut journal = vec![(sb.journal_block(0), desc)];
        for (i, (_, d)) in meta.iter().enumerate() {
            journal.push((sb.journal_block(1 + i as u32), d.clone()));
        }
        // Step 2: the homes of the transaction the journal holds are durable before the
        // journal is reused.
        if cx.unflushed(&[IoKind::MetaWrite]) {
            cx.flush().await?;
        }
        cx.write_raw(journal, IoKind::JournalWrite).await?;
        // Step 3's barrier: a commit record never reaches the media before its transaction
        // and the data it points at.
        cx.flush().await?;
        let n = meta.len() as u32;
        cx.write_raw_fua(
            vec![(sb.journal_block(1 + n), encode_commit(seq, n, body))],
            IoKind::JournalWrite,
        )
        .await?;
        {
            let mut st = cx.st.borrow_mut();
            st.mounted.as_mut().expect("mounted").journal_seq = seq;
            st.stats.commits += 1;
        }
        let homes: Vec<BlockNo> = meta.iter().map(|(b, _)| *b).collect();
        cx.write_raw(meta, IoKind::MetaWrite).await?;
        let mut st = cx.st.borrow_mut();
        for b in homes {
            st.cache.mark_clean(b);
        }
    }
    let mut st = cx.st.borrow_mut();
    if let Some(m) = st.mounted.as_mut() {
        m.freed_uncommitted.clear();
    }
    st.stats.syncs += 1;
    Ok(())
}

fn check_device(cx: &Cx) -> Result<(), FsError> {
    if !cx.functional {
        return Err(FsError::NeedsFunctionalDevice);
    }
    if cx.st.borrow().mounted.is_some() {
        return Err(FsError::AlreadyMounted);
    }
    Ok(())
}

fn check_cache(cx: &Cx, sb: &Superblock) -> Result<(), FsError> {
    let min = FsConfig::cache_blocks_min(sb.journal_blocks);
    if cx.cfg.cache_blocks() < min {
        return Err(FsError::InvalidArgument(
            "fs.cache_bytes too small for this file system's journal (needs journal + 64 blocks)",
        ));
    }
    Ok(())
}

/// Writes an empty file system: superblock, an empty journal, bitmaps with the metadata
/// area and the root in use, and the root directory's inode. Then mounts it.
pub async fn format(cx: &Cx, opts: FormatOptions) -> Result<(), FsError> {
    check_device(cx)?;
    let now = cx.now().as_ns();
    let sb = Superblock::plan(cx.capacity_bytes, opts, now)?;
    check_cache(cx, &sb)?;
    let mut blocks = vec![
        (BlockNo(0), sb.encode()),
        (
            sb.journal_block(0),
            Descriptor {
                seq: 0,
                homes: Vec::new(),
            }
            .encode(),
        ),
    ];
    for i in 0..sb.inode_bitmap_blocks {
        let mut b = vec![0u8; BLOCK_BYTES];
        if i == 0 {
            b[0] = 1; // the root
        }
        blocks.push((BlockNo(sb.inode_bitmap_start.0 + i), b));
    }
    for i in 0..sb.block_bitmap_blocks {
        let mut b = vec![0u8; BLOCK_BYTES];
        for bit in 0..BITS_PER_BLOCK {
            let block = i * BITS_PER_BLOCK + bit;
            if block < sb.data_start.0 || block >= sb.total_blocks {
                b[(bit / 8) as usize] |= 1 << (bit % 8);
            }
        }
        blocks.push((BlockNo(sb.block_bitmap_start.0 + i), b));
    }
    let mut root = Inode::new(FileKind::Dir, 0o755, 0, 0, now);
    root.parent = ROOT_INO;
    root.generation = 1;
    let (blk, off) = sb.inode_location(ROOT_INO);
    let mut table = vec![0u8; BLOCK_BYTES];
    root.encode(&mut table[off..off + INODE_BYTES]);
    blocks.push((blk, table));
    cx.write_raw(blocks, IoKind::MetaWrite).await?;
    // mkfs is durable when it completes (on a volatile write cache a cut would otherwise
    // leave no file system to mount).
    cx.flush().await?;
    finish_mount(cx, sb, 0).await
}

/// Reads the superblock, replays the journal's transaction if it committed, and counts the
/// free blocks and inodes.
pub async fn mount(cx: &Cx) -> Result<(), FsError> {
    check_device(cx)?;
    let raw = cx.read_raw(BlockNo(0)).await?;
    let sb = Superblock::decode(&raw, cx.capacity_bytes)?;
    check_cache(cx, &sb)?;
    let desc = Descriptor::decode(&cx.read_raw(sb.journal_block(0)).await?)?;
    let n = desc.homes.len() as u32;
    if n > 0 && n + 2 <= sb.journal_blocks {
        let blocks: Vec<BlockNo> = (1..=n + 1).map(|i| sb.journal_block(i)).collect();
        let mut read = cx.read_raw_many(&blocks).await?;
        let commit_rec = read.pop().expect("commit block read");
        let enc = desc.encode();
        let images: Vec<&[u8]> = read.iter().map(|d| d.as_slice()).collect();
        if commit_matches(&commit_rec, desc.seq, n, transaction_crc(&enc, &images)) {
            if desc
                .homes
                .iter()
                .any(|&h| h.0 < sb.inode_bitmap_start.0 || h.0 >= sb.total_blocks)
            {
                return Err(
                    Corruption::Journal("a home block lies outside the file system").into(),
                );
            }
            cx.write_raw(
                desc.homes.iter().copied().zip(read).collect(),
                IoKind::MetaWrite,
            )
            .await?;
        }
    }
    finish_mount(cx, sb, desc.seq).await
}

async fn finish_mount(cx: &Cx, sb: Superblock, journal_seq: u64) -> Result<(), FsError> {
    let ibm: Vec<BlockNo> = (0..sb.inode_bitmap_blocks)
        .map(|i| BlockNo(sb.inode_bitmap_start.0 + i))
        .collect();
    let bbm: Vec<BlockNo> = (0..sb.block_bitmap_blocks)
        .map(|i| BlockNo(sb.block_bitmap_start.0 + i))
        .collect();
    let used_inodes = count_bits(&cx.read_raw_many(&ibm).await?, sb.inode_count);
    let used_blocks = count_bits(&cx.read_raw_many(&bbm).await?, sb.total_blocks);
    if used_blocks < u64::from(sb.data_start.0) || used_inodes == 0 {
        return Err(
            Corruption::Superblock("bitmaps do not cover the metadata area and root").into(),
        );
    }
    cx.st.borrow_mut().mounted = Some(Mounted {
        sb,
        journal_seq,
        free_blocks: u64::from(sb.total_blocks) - used_blocks,
        free_inodes: u64::from(sb.inode_count) - used_inodes,
        freed_uncommitted: BTreeSet::new(),
        block_cursor: sb.data_start.0,
        inode_cursor: 0,
    });
    Ok(())
}

/// Set bits among the first `n` of a bitmap (bit `i` is bit `i % 8` of byte `i / 8` of its
/// block), counted a byte at a time: a 1 TB drive's block bitmap holds 2^28 bits, which a
/// bit-at-a-time count took a tenth of a short run to walk at every mount.
fn count_bits(blocks: &[Vec<u8>], n: u32) -> u64 {
    let mut left = n;
    let mut count = 0u64;
    for b in blocks {
        if left == 0 {
            break;
        }
        let here = left.min(BITS_PER_BLOCK);
        let full = (here / 8) as usize;
        count += b[..full]
            .iter()
            .map(|x| u64::from(x.count_ones()))
            .sum::<u64>();
        let tail = here % 8;
        if tail > 0 {
            count += u64::from((b[full] & ((1u8 << tail) - 1)).count_ones());
        }
        left -= here;
    }
    debug_assert_eq!(left, 0, "a bitmap of {n} bits needs more blocks");
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Counting a byte at a time finds the set bits that testing each bit finds.
        #[test]
        fn count_bits_agrees_with_testing_every_bit(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 1..64),
            blocks in 1usize..3,
            n_frac in 0.0f64..=1.0,
        ) {
            let block_bytes = (BITS_PER_BLOCK / 8) as usize;
            let bitmap: Vec<Vec<u8>> = (0..blocks)
                .map(|k| (0..block_bytes).map(|j| bytes[(k * 7 + j) % bytes.len()] ^ (j as u8)).collect())
                .collect();
            let n = ((blocks as u64 * u64::from(BITS_PER_BLOCK)) as f64 * n_frac) as u32;
            let want = (0..n)
                .filter(|&i| {
                    let b = &bitmap[(i / BITS_PER_BLOCK) as usize];
                    let bit = (i % BITS_PER_BLOCK) as usize;
                    b[bit / 8] & (1 << (bit % 8)) != 0
                })
                .count() as u64;
            proptest::prop_assert_eq!(count_bits(&bitmap, n), want);
        }
    }
}
