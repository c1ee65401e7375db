//! The buffer cache: a bounded LRU of 4 KiB blocks. Metadata blocks dirtied by the running
//! journal transaction are pinned (the write-ahead rule: they may reach their home only after
//! the transaction's commit record); every other block can be evicted, a dirty data block
//! after it has been written back by the caller. Pure bookkeeping — the I/O is the caller's.

use crate::types::{BlockNo, BLOCK_BYTES};
use nearflash_lru::Keyed;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a cached block holds: journaled metadata or file data (written in place).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockClass {
    Meta,
    Data,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Dirty blocks written back (at commit, or a dirty data block on eviction).
    pub writebacks: u64,
    pub evictions: u64,
}

struct Entry {
    data: Vec<u8>,
    class: BlockClass,
    dirty: bool,
    /// Linux's `PG_readahead`: reaching this block starts the next read-ahead window.
    ra_mark: bool,
}

pub struct BufferCache {
    capacity_blocks: usize,
    entries: BTreeMap<BlockNo, Entry>,
    /// The cached blocks, least recently used first.
    lru: Keyed<BlockNo>,
    dirty_meta: usize,
    stats: CacheStats,
}

impl BufferCache {
    pub fn new(capacity_blocks: usize) -> Self {
        assert!(capacity_blocks > 0);
        BufferCache {
            capacity_blocks,
            entries: BTreeMap::new(),
            lru: Keyed::new(),
            dirty_meta: 0,
            stats: CacheStats::default(),
        }
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn capacity_blocks(&self) -> usize {
        self.capacity_blocks
    }

    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity_blocks
    }

    /// Dirty metadata blocks (pinned until the running transaction commits).
    pub fn dirty_meta(&self) -> usize {
        self.dirty_meta
    }

    fn touch(&mut self, b: BlockNo) {
        let was = self.lru.touch(b);
        debug_assert!(was, "touching a cached block");
    }

    /// Looks `b` up, counting a hit or a miss; a hit becomes the most recently used. (A block
    /// keeps the class it was cached with: freed blocks leave the cache, so a block is seen
    /// under another class only on a corrupt image, where fsck reports the cross-link.)
    pub fn lookup(&mut self, b: BlockNo) -> bool {
        if self.entries.contains_key(&b) {
            self.stats.hits += 1;
            self.touch(b);
            true
        } else {
            self.stats.misses += 1;
            false
        }
    }

    /// Inserts a block (replacing any cached copy); `dirty` for new content. The caller made
    /// room first (`victim`/`remove`).
    pub fn insert(&mut self, b: BlockNo, class: BlockClass, data: Vec<u8>, dirty: bool) {
        assert_eq!(data.len(), BLOCK_BYTES);
        if self.entries.contains_key(&b) {
            self.remove(b);
        }
        assert!(!self.is_full(), "cache insert without room");
        if dirty && class == BlockClass::Meta {
            self.dirty_meta += 1;
        }
        self.entries.insert(
            b,
            Entry {
                data,
                class,
                dirty,
                ra_mark: false,
            },
        );
        let was = self.lru.touch(b);
        debug_assert!(!was && self.lru.len() == self.entries.len());
    }

    /// Whether `b` is cached (no hit or miss counted, no LRU change).
    pub fn contains(&self, b: BlockNo) -> bool {
        self.entries.contains_key(&b)
    }

    /// Marks a cached block as the read-ahead marker.
    pub fn set_readahead_mark(&mut self, b: BlockNo) {
        self.entries
            .get_mut(&b)
            .expect("marking a cached block")
            .ra_mark = true;
    }

    /// Whether `b` is cached and marked; clears the mark (`TestClearPageReadahead`).
    pub fn take_readahead_mark(&mut self, b: BlockNo) -> bool {
        self.entries
            .get_mut(&b)
            .is_some_and(|e| std::mem::take(&mut e.ra_mark))
    }

    /// Up to `n` least recently used clean blocks (read-ahead makes room without writing
    /// anything back, as Linux's read-ahead allocates without reclaim that waits).
    pub fn clean_victims(&self, n: usize) -> Vec<BlockNo> {
        self.lru
            .iter()
            .filter(|b| !self.entries[b].dirty)
            .take(n)
            .collect()
    }

    pub fn get(&self, b: BlockNo) -> &[u8] {
        &self.entries.get(&b).expect("block is cached").data
    }

    /// The block's bytes for modification; marks it dirty.
    pub fn get_mut(&mut self, b: BlockNo) -> &mut [u8] {
        let e = self.entries.get_mut(&b).expect("block is cached");
        if !e.dirty && e.class == BlockClass::Meta {
            self.dirty_meta += 1;
        }
        e.dirty = true;
        &mut e.data
    }

    /// Up to `n` least recently used blocks that may leave the cache (not pinned metadata),
    /// each with whether it is dirty data that must be written back first.
    pub fn victims(&self, n: usize) -> Vec<(BlockNo, bool)> {
        self.lru
            .iter()
            .filter_map(|b| {
                let e = &self.entries[&b];
                match (e.class, e.dirty) {
                    (BlockClass::Meta, true) => None,
                    (_, dirty) => Some((b, dirty)),
                }
            })
            .take(n)
            .collect()
    }

    /// Drops a block (evicted after any write-back, or freed); returns its bytes.
    pub fn remove(&mut self, b: BlockNo) -> Option<Vec<u8>> {
        let e = self.entries.remove(&b)?;
        let was = self.lru.remove(b);
        debug_assert!(was, "a cached block is on the recency list");
        if e.dirty && e.class == BlockClass::Meta {
            self.dirty_meta -= 1;
        }
        self.stats.evictions += 1;
        Some(e.data)
    }

    /// Drops every clean block (Linux's `echo 3 > /proc/sys/vm/drop_caches`: dirty blocks
    /// stay); returns how many left.
    pub fn drop_clean(&mut self) -> usize {
        let clean: Vec<BlockNo> = self
            .entries
            .iter()
            .filter(|(_, e)| !e.dirty)
            .map(|(&b, _)| b)
            .collect();
        for &b in &clean {
            self.remove(b);
        }
        clean.len()
    }

    /// Dirty blocks of `class`, in address order, with a copy of their bytes.
    pub fn dirty(&self, class: BlockClass) -> Vec<(BlockNo, Vec<u8>)> {
        self.entries
            .iter()
            .filter(|(_, e)| e.dirty && e.class == class)
            .map(|(&b, e)| (b, e.data.clone()))
            .collect()
    }

    /// Marks a block clean after it reached the device.
    pub fn mark_clean(&mut self, b: BlockNo) {
        if let Some(e) = self.entries.get_mut(&b) {
            if e.dirty {
                e.dirty = false;
                self.stats.writebacks += 1;
                if e.class == BlockClass::Meta {
                    self.dirty_meta -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blk(v: u8) -> Vec<u8> {
        vec![v; BLOCK_BYTES]
    }

    #[test]
    fn a_readahead_mark_is_taken_once_and_lost_with_its_block() {
        let mut c = BufferCache::new(4);
        c.insert(BlockNo(1), BlockClass::Data, blk(1), false);
        c.insert(BlockNo(2), BlockClass::Data, blk(2), true);
        c.set_readahead_mark(BlockNo(1));
        assert_eq!(
            c.clean_victims(4),
            vec![BlockNo(1)],
            "dirty blocks are not taken"
        );
        assert!(c.take_readahead_mark(BlockNo(1)));
        assert!(!c.take_readahead_mark(BlockNo(1)), "taking clears it");
        c.set_readahead_mark(BlockNo(1));
        c.remove(BlockNo(1));
        c.insert(BlockNo(1), BlockClass::Data, blk(1), false);
        assert!(
            !c.take_readahead_mark(BlockNo(1)),
            "an evicted block's mark is gone"
        );
    }

    #[test]
    fn dropping_clean_blocks_keeps_the_dirty_ones() {
        let mut c = BufferCache::new(8);
        c.insert(BlockNo(1), BlockClass::Data, blk(1), false);
        c.insert(BlockNo(2), BlockClass::Data, blk(2), true);
        c.insert(BlockNo(3), BlockClass::Meta, blk(3), true);
        c.insert(BlockNo(4), BlockClass::Meta, blk(4), false);
        assert_eq!(c.drop_clean(), 2);
        assert_eq!(c.len(), 2);
        assert_eq!(c.dirty_meta(), 1);
        assert_eq!(c.get(BlockNo(2)), &blk(2)[..]);
    }

    #[test]
    fn least_recently_used_block_is_the_victim_and_hits_refresh_it() {
        let mut c = BufferCache::new(3);
        for i in 0..3 {
            c.insert(BlockNo(i), BlockClass::Data, blk(i as u8), false);
        }
        assert!(c.lookup(BlockNo(0)));
        assert!(!c.lookup(BlockNo(9)));
        assert_eq!(c.victims(1), vec![(BlockNo(1), false)]);
        assert_eq!(c.stats().hits, 1);
        assert_eq!(c.stats().misses, 1);
    }

    #[test]
    fn dirty_metadata_is_pinned_until_marked_clean() {
        let mut c = BufferCache::new(2);
        c.insert(BlockNo(1), BlockClass::Meta, blk(1), true);
        c.insert(BlockNo(2), BlockClass::Data, blk(2), false);
        c.get_mut(BlockNo(2))[0] = 9;
        assert_eq!(c.dirty_meta(), 1);
        assert_eq!(
            c.victims(2),
            vec![(BlockNo(2), true)],
            "dirty data may go after write-back"
        );
        c.remove(BlockNo(2));
        assert!(c.victims(1).is_empty(), "only pinned metadata left");
        c.mark_clean(BlockNo(1));
        assert_eq!(
            (c.victims(1), c.dirty_meta()),
            (vec![(BlockNo(1), false)], 0)
        );
        assert_eq!(c.stats().writebacks, 1);
    }
}
