//! The cached mapping table (`ftl.mapping_cache_bytes`; DFTL, Gupta et al., ASPLOS'09): a
//! page-level mapping table too large for the controller's DRAM lives on flash, in 4 KiB
//! *translation units* of 1,024 entries, and an LRU cache of whole translation units serves
//! lookups.
//!
//! - A host read or write of a unit whose translation unit is cached is a hit (it becomes
//!   the most recent). A miss reads the translation unit from flash — a unit read like any
//!   other, or nothing if it was never written (all its units unmapped) — and the request
//!   waits for it; misses on a unit already being loaded wait for the same read.
//! - A mapping change (a write programmed, a trim, a GC copy) dirties its cached translation
//!   unit; a change to an uncached one loads it first (DFTL's batch update: one read, then
//!   the later write-back carries every change made meanwhile).
//! - Loading into a full cache evicts the least recent translation unit; a dirty one is
//!   written back: its entries go into the host stream's fill as a unit of its own, so
//!   translation data are packed into flash pages, programmed, collected by GC and counted
//!   in the write amplification like any unit.
//! - The directory of where each translation unit lives (DFTL's GTD) is the mapping of the
//!   translation units themselves, kept in DRAM (`translation_units × 4 B` of scratchpad).
//!
//! The firmware's authoritative table stays in the simulator's memory (`Mapping`), so a
//! power cut recovers from the spare-area records as without the cache. The translation
//! units written hold the real entries; a unit loaded with no change pending since its
//! write-back is checked against the table (`translation_mismatches` counts differences and
//! must stay 0). After a recovery the flash copies may predate the recovered table: each
//! translation unit's first load marks it dirty, so it is rewritten.

use super::jobs::{FlashJob, Segment, TranslationReadId, UnitWriteId};
use super::{Device, Event};
use crate::config::{ENTRIES_PER_TRANSLATION_UNIT, TRANSLATION_UNIT_BYTES};
use crate::layout::Lun;
use nearflash_flash::FlashCompletion;
use nearflash_lru::Recency;
use nearflash_sim::{Schedule, SimDuration};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// What the cached mapping table did (`FtlStats::mapping_cache`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MappingCacheStats {
    /// Translation units the cache holds.
    pub capacity_units: u64,
    /// Host lookups (a unit read, write or trim) that found their translation unit cached.
    pub hits: u64,
    /// Host lookups that had to load it.
    pub misses: u64,
    /// Mapping changes to an uncached translation unit (GC copies, late host updates): it
    /// is loaded to take the change.
    pub update_loads: u64,
    /// Translation units read from flash (misses and update loads share a read in flight).
    pub translation_reads: u64,
    /// Loads served without a flash read: the unit was never written, or its newest copy
    /// was still in the write buffer.
    pub translation_loads_without_flash: u64,
    /// Dirty translation units written back on eviction.
    pub translation_writes: u64,
    /// Translation units read from flash with no change pending since their write-back,
    /// whose entries were checked against the table (functional fidelity)...
    pub translation_reads_checked: u64,
    /// ...and the entries that differed (a defect if ever non-zero).
    pub translation_mismatches: u64,
}

impl MappingCacheStats {
    /// Hits over lookups (1 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            1.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// Who waits for a translation unit being loaded.
#[derive(Clone, Copy, Debug)]
pub(super) enum CmtWaiter {
    /// A host unit read, resumed with its lookup.
    Read(Segment),
    /// A host unit write or trim job (holding its unit's lock), resumed.
    Write(UnitWriteId),
    /// A mapping change: the unit is dirty once loaded.
    Update,
}

#[derive(Clone)]
struct Cached {
    dirty: bool,
}

/// The cache's state.
#[derive(Clone)]
pub(crate) struct Cmt {
    capacity: usize,
    cached: HashMap<u32, Cached>,
    /// The cached translation units, least recently used first.
    order: Recency,
    /// Translation units being loaded and who waits for each.
    loading: BTreeMap<u32, Vec<CmtWaiter>>,
    /// Translation units whose flash copy may predate the table (after a recovery).
    stale: Vec<bool>,
}

impl Cmt {
    /// The cache for `cache_bytes` of DRAM and its counters; `recovered`: the device came
    /// up from a power cut (every flash copy may predate the recovered table).
    pub(super) fn new(
        cache_bytes: u64,
        translation_units: u64,
        recovered: bool,
    ) -> (Self, MappingCacheStats) {
        let capacity = (cache_bytes / TRANSLATION_UNIT_BYTES).max(1);
        let cmt = Cmt {
            capacity: capacity as usize,
            cached: HashMap::new(),
            order: Recency::new(
                u32::try_from(translation_units).expect("translation units are numbered in u32"),
            ),
            loading: BTreeMap::new(),
            stale: vec![recovered; translation_units as usize],
        };
        let stats = MappingCacheStats {
            capacity_units: capacity,
            ..MappingCacheStats::default()
        };
        (cmt, stats)
    }

    /// The recency list holds exactly the cached units (`check_invariants`; O(units)).
    pub(super) fn check(&self) {
        self.order.check();
        assert_eq!(
            self.order.len() as usize,
            self.cached.len(),
            "one list entry per cached unit"
        );
        assert!(
            self.cached.len() <= self.capacity,
            "the mapping cache holds its limit"
        );
        for &t in self.cached.keys() {
            assert!(
                self.order.contains(t),
                "cached unit {t} is on the recency list"
            );
        }
    }

    fn touch(&mut self, t: u32) {
        let was = self.order.touch(t);
        debug_assert!(was && self.cached.contains_key(&t), "touched while cached");
    }
}

impl Device {
    fn cmt_stats(&mut self) -> &mut MappingCacheStats {
        self.stats
            .mapping_cache
            .as_mut()
            .expect("a mapping cache keeps counters")
    }
}

/// A translation unit's entries: each unit's physical unit + 1, or 0, as u32 little-endian.
fn encode(dev: &Device, t: u32) -> Vec<u8> {
    let mut out = vec![0u8; TRANSLATION_UNIT_BYTES as usize];
    for (i, e) in entries(dev, t).enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&e.to_le_bytes());
    }
    out
}

/// The table's entries for translation unit `t` (past the last host unit: 0).
fn entries(dev: &Device, t: u32) -> impl Iterator<Item = u32> + '_ {
    let first = u64::from(t) * ENTRIES_PER_TRANSLATION_UNIT;
    let host = dev.layout.host_entries();
    (first..first + ENTRIES_PER_TRANSLATION_UNIT).map(move |u| {
        if u < host {
            dev.map.lookup_unit(Lun(u as u32)).map_or(0, |p| p.0 + 1)
        } else {
            0
        }
    })
}

impl Device {
    /// Looks up host unit `lun`'s translation: true if it is in DRAM (the whole table, or a
    /// cache hit); false if `waiter` now waits for it to load.
    pub(super) fn cmt_lookup(
        &mut self,
        lun: Lun,
        waiter: CmtWaiter,
        q: &mut impl Schedule<Event>,
    ) -> bool {
        let Some(cmt) = self.cmt.as_mut() else {
            return true;
        };
        let t = self.layout.translation_of(lun);
        if cmt.cached.contains_key(&t) {
            cmt.touch(t);
            self.cmt_stats().hits += 1;
            return true;
        }
        self.cmt_stats().misses += 1;
        self.cmt_load(t, waiter, q);
        false
    }

    /// Host unit `lun`'s mapping changed: dirty its translation unit, loading it if needed.
    pub(super) fn cmt_note_update(&mut self, lun: Lun, q: &mut impl Schedule<Event>) {
        let Some(cmt) = self.cmt.as_mut() else {
            return;
        };
        if u64::from(lun.0) >= self.layout.host_entries() {
            // A translation unit moved: its place is in the DRAM directory.
            return;
        }
        let t = self.layout.translation_of(lun);
        if let Some(c) = cmt.cached.get_mut(&t) {
            c.dirty = true;
            return;
        }
        if let Some(w) = cmt.loading.get_mut(&t) {
            if !w.iter().any(|w| matches!(w, CmtWaiter::Update)) {
                w.push(CmtWaiter::Update);
            }
            return;
        }
        self.cmt_stats().update_loads += 1;
        self.cmt_load(t, CmtWaiter::Update, q);
    }

    fn cmt_load(&mut self, t: u32, waiter: CmtWaiter, q: &mut impl Schedule<Event>) {
        let cmt = self.cmt.as_mut().expect("a mapping cache");
        if let Some(w) = cmt.loading.get_mut(&t) {
            w.push(waiter);
            return;
        }
        cmt.loading.insert(t, vec![waiter]);
        let tlun = self.layout.translation_lun(t);
        if self.page.is_buffered(tlun) || self.map.lookup_unit(tlun).is_none() {
            // In the write buffer, or never written: no flash read (ready at the end of
            // the instant, like the firmware's next step).
            self.cmt_stats().translation_loads_without_flash += 1;
            q.schedule_in(SimDuration::ZERO, Event::TranslationLoaded(t));
            return;
        }
        self.cmt_stats().translation_reads += 1;
        let pun = self.map.lookup_unit(tlun).expect("mapped");
        let job = self
            .jobs
            .translation_reads
            .insert(super::jobs::TranslationReadJob { unit: t, pun });
        self.submit_unit_read(FlashJob::TranslationRead(job), pun, q);
    }

    /// A translation unit's flash read finished.
    pub(super) fn on_translation_read_done(
        &mut self,
        id: TranslationReadId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let r = self.jobs.translation_reads.remove(id);
        let (pgn, _) = self.layout.split_pun(r.pun);
        self.on_media_read(&c, pgn);
        self.unpin(pgn, q);
        let bytes = if self.functional {
            self.unit_from_read(&c, r.pun, self.layout.translation_lun(r.unit))
                .ok()
        } else {
            None
        };
        self.on_translation_loaded(r.unit, bytes, q);
    }

    /// Translation unit `t` is in DRAM: cache it (evicting the least recent, written back
    /// if dirty) and resume whoever waited. `bytes`: what a flash read returned (functional
    /// fidelity), checked against the table when no change was pending.
    pub(super) fn on_translation_loaded(
        &mut self,
        t: u32,
        bytes: Option<Vec<u8>>,
        q: &mut impl Schedule<Event>,
    ) {
        let cmt = self.cmt.as_mut().expect("a mapping cache");
        let waiters = cmt.loading.remove(&t).unwrap_or_default();
        let stale = std::mem::replace(&mut cmt.stale[t as usize], false);
        let updated = waiters.iter().any(|w| matches!(w, CmtWaiter::Update));
        if let (Some(b), false, false) = (&bytes, updated, stale) {
            let wrong = entries(self, t)
                .enumerate()
                .filter(|&(i, e)| b[i * 4..i * 4 + 4] != e.to_le_bytes())
                .count();
            let stats = self.cmt_stats();
            stats.translation_reads_checked += 1;
            stats.translation_mismatches += wrong as u64;
        }
        self.cmt_insert(t, updated || stale, q);
        for w in waiters {
            match w {
                CmtWaiter::Read(seg) => self.unit_read_translated(seg, q),
                CmtWaiter::Write(job) => self.unit_write_translated(job, q),
                CmtWaiter::Update => {}
            }
        }
    }

    fn cmt_insert(&mut self, t: u32, dirty: bool, q: &mut impl Schedule<Event>) {
        loop {
            let cmt = self.cmt.as_mut().expect("a mapping cache");
            if cmt.cached.len() < cmt.capacity {
                break;
            }
            let victim = cmt.order.pop_oldest().expect("a full cache has entries");
            let c = cmt.cached.remove(&victim).expect("cached");
            if c.dirty {
                self.cmt_stats().translation_writes += 1;
                let data = self.functional.then(|| encode(self, victim));
                self.append_unit(self.layout.translation_lun(victim), data, None, q);
            }
        }
        let cmt = self.cmt.as_mut().expect("a mapping cache");
        cmt.cached.insert(t, Cached { dirty });
        let was = cmt.order.touch(t);
        assert!(!was, "a translation unit is inserted once");
        debug_assert!(
            cmt.cached.len() <= cmt.capacity && cmt.order.len() as usize == cmt.cached.len()
        );
    }
}
