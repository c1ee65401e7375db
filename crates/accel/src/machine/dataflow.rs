//! How data move between flash and DDR3L: Flashvisor's page-group cache (`DdrCache`).
//!
//! * A unit's reads: each page group of its read footprint is looked up in DDR3L. A hit costs
//!   nothing on flash; a group already being read for another unit of the same instance is
//!   waited for; a miss is read from flash (runs of consecutive missed groups, at most
//!   `flash_request_bytes_max` per request). The unit computes once every group is in DDR3L.
//! * A unit's writes go to DDR3L: its groups become dirty there.
//! * Eviction (least recently used, when DDR3L is full) writes a dirty group back to flash;
//!   a read of a group whose write-back is in flight is served from DDR3L.
//! * When an instance's last unit is done, Flashvisor writes its remaining dirty groups back;
//!   the kernel completes — and releases its range locks — once they are on flash.
//!
//! Flash requests wait in per-worker queues (write-backs in Flashvisor's own) and are issued
//! round robin while fewer than `flash_queue_depth` are outstanding at the FTL. Cache keys
//! name (instance, group) pairs (`CacheKeys`): instances do not share DDR3L copies, as each
//! kernel maps its own data sections (§4.3).
//!
//! Functional fidelity hooks: a completed read fills whole groups of the instance's image
//! (`Functional::fill`), a group first written without having been read is filled before
//! the write lands (so the image holds every byte of every resident group), and a
//! write-back's payload is Flashvisor's write-back copy as the request is issued.

use super::{State, Q};
use crate::config::AccelConfig;
use crate::ddr_cache::Evicted;
use crate::layout::Layout;
use nearflash_ftl::BlockOp;
use std::ops::Range;

/// Who waits for a flash request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// A worker's unit (reads of missed groups).
    Unit(usize),
    /// Flashvisor writing dirty groups back (eviction or kernel end).
    WriteBack,
}

/// A page group's flash traffic in flight.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GroupIo {
    /// Being read from flash (by one unit; others wait in `State::waiters`).
    pub(super) reading: bool,
    /// Write-backs of it in flight.
    pub(super) writebacks: u32,
}

/// One flash request of a page-group run of one section of one instance.
#[derive(Clone, Copy, Debug)]
pub(super) struct IoReq {
    op: BlockOp,
    instance: usize,
    section: usize,
    /// Absolute page groups.
    groups: (u64, u64),
    owner: Owner,
}

/// Page groups DDR3L holds for data: its capacity less the kernel descriptions downloaded
/// into it (one per instance).
pub(super) fn ddr_capacity_groups(cfg: &AccelConfig, instances: usize, group_bytes: u64) -> u64 {
    let descriptions = cfg.kernel_description_bytes * instances as u64;
    (cfg.ddr_bytes.saturating_sub(descriptions) / group_bytes).max(1)
}

/// Dense cache keys, `0..count`, for the (instance, group) pairs a run may cache: instance
/// 0's sections in section order, then instance 1's, and so on, each section's groups in
/// order. The DDR3L cache, and the in-flight reads and write-backs, are indexed by them.
#[derive(Clone, Debug)]
pub(super) struct CacheKeys {
    /// Per instance: its first section's entry in `sections`.
    first_section: Vec<usize>,
    /// Per (instance, section), ascending by `first_key`.
    sections: Vec<SectionKeys>,
    count: u32,
}

#[derive(Clone, Copy, Debug)]
struct SectionKeys {
    first_key: u32,
    groups: u64,
    instance: usize,
    section: usize,
    /// The section's first absolute page group.
    first_group: u64,
}

impl CacheKeys {
    /// Keys for `layout`, whose instance `i` has sections of `section_bytes[i]`.
    pub(super) fn new(layout: &Layout, section_bytes: &[Vec<u64>]) -> Self {
        assert_eq!(layout.offsets.len(), section_bytes.len());
        let mut first_section = Vec::with_capacity(section_bytes.len());
        let mut sections = Vec::new();
        let mut next_key = 0u64;
        for (i, bytes) in section_bytes.iter().enumerate() {
            first_section.push(sections.len());
            for (s, &b) in bytes.iter().enumerate() {
                let groups = layout.section_groups(i, s, b);
                sections.push(SectionKeys {
                    first_key: u32::try_from(next_key).expect("cache keys fit in u32"),
                    groups: groups.end - groups.start,
                    instance: i,
                    section: s,
                    first_group: groups.start,
                });
                next_key += groups.end - groups.start;
            }
        }
        let count = u32::try_from(next_key).expect("cache keys fit in u32");
        CacheKeys {
            first_section,
            sections,
            count,
        }
    }

    pub(super) fn count(&self) -> u32 {
        self.count
    }

    /// The keys of section-relative groups `run` of section `s` of instance `i`.
    fn keys(&self, i: usize, s: usize, run: &Range<u64>) -> Range<u32> {
        let e = &self.sections[self.first_section[i] + s];
        assert!(run.end <= e.groups, "runs lie within their section");
        // In u32: below `e.first_key + e.groups`, at most `count`.
        e.first_key + run.start as u32..e.first_key + run.end as u32
    }

    /// The key of absolute group `g` of section `s` of instance `i`.
    fn key(&self, i: usize, s: usize, g: u64) -> u32 {
        let e = &self.sections[self.first_section[i] + s];
        let rel = g - e.first_group;
        assert!(rel < e.groups, "the group lies within its section");
        e.first_key + rel as u32
    }

    /// (instance, section, absolute group) of key `k`.
    fn group(&self, k: u32) -> (usize, usize, u64) {
        assert!(k < self.count);
        // The last section starting at or before `k`: empty sections share their successor's
        // first key, so this is the non-empty one holding `k`.
        let at = self.sections.partition_point(|e| e.first_key <= k) - 1;
        let e = &self.sections[at];
        (
            e.instance,
            e.section,
            e.first_group + u64::from(k - e.first_key),
        )
    }
}

impl State {
    /// Flashvisor handles worker `w`'s read request for its unit.
    pub(super) fn read_through_cache(&mut self, q: &mut Q, w: usize) {
        let i = self.workers[w].unit.expect("running").kernel;
        let runs = self.unit_plan(w).reads.clone();
        let mut evicted = Vec::new();
        let mut missed: Vec<(usize, Range<u64>)> = Vec::new();
        for (section, run) in &runs.runs {
            let keys = self.keys.keys(i, *section, run);
            for (g, k) in self.layout.groups(i, *section, run).zip(keys) {
                let resident = self.cache.read(k, i, &mut evicted);
                let io = &mut self.group_io[k as usize];
                if io.reading {
                    self.waiters.entry(k).or_default().push(w);
                    self.workers[w].io_pending += 1;
                    continue;
                }
                if resident || io.writebacks > 0 {
                    continue;
                }
                io.reading = true;
                match missed.last_mut() {
                    Some((s, r)) if *s == *section && r.end == g => r.end = g + 1,
                    _ => missed.push((*section, g..g + 1)),
                }
            }
        }
        self.evict(evicted);
        for (section, r) in missed {
            self.queue_runs(i, section, r, BlockOp::Read, Owner::Unit(w));
        }
        if self.workers[w].io_pending == 0 {
            self.reads_done(q, w);
        }
        self.issue_io(q);
    }

    /// Worker `w`'s unit wrote its outputs into DDR3L.
    pub(super) fn write_to_cache(&mut self, q: &mut Q, w: usize) {
        let i = self.workers[w].unit.expect("running").kernel;
        let runs = self.unit_plan(w).writes.clone();
        let mut evicted = Vec::new();
        for (section, run) in &runs.runs {
            let keys = self.keys.keys(i, *section, run);
            for (g, k) in self.layout.groups(i, *section, run).zip(keys) {
                let resident = self.cache.write(k, i, &mut evicted);
                if !resident && !self.group_io[k as usize].reading {
                    if let Some(f) = self.func.as_mut() {
                        let rel = g * self.layout.group_bytes - self.layout.offsets[i][*section];
                        f.fill(i, *section, rel, self.layout.group_bytes, None);
                    }
                }
            }
        }
        self.evict(evicted);
        self.issue_io(q);
    }

    /// Instance `i`'s last unit is done: write its dirty groups back, then complete it.
    pub(super) fn flush(&mut self, q: &mut Q, i: usize) {
        self.finishing[i] = true;
        let mut dirty: Vec<(u64, usize)> = (self.cache.take_dirty(i).into_iter())
            .map(|k| {
                let (ki, s, g) = self.keys.group(k);
                debug_assert_eq!(ki, i, "take_dirty returns the instance's own groups");
                (g, s)
            })
            .collect();
        // In group order, as write-backs are queued.
        dirty.sort_unstable();
        let mut runs: Vec<(usize, Range<u64>)> = Vec::new();
        for (g, s) in dirty {
            match runs.last_mut() {
                Some((rs, r)) if *rs == s && r.end == g => r.end = g + 1,
                _ => runs.push((s, g..g + 1)),
            }
        }
        for (s, r) in runs {
            self.write_back(i, s, r);
        }
        if self.flush_pending[i] == 0 {
            self.kernel_finished(q, i);
        }
        self.issue_io(q);
    }

    fn evict(&mut self, evicted: Vec<Evicted>) {
        for e in evicted.into_iter().filter(|e| e.dirty) {
            let (i, s, g) = self.keys.group(e.key);
            debug_assert_eq!(i, e.owner, "keys are per instance");
            self.write_back(i, s, g..g + 1);
        }
    }

    fn write_back(&mut self, i: usize, section: usize, groups: Range<u64>) {
        for g in groups.clone() {
            self.group_io[self.keys.key(i, section, g) as usize].writebacks += 1;
        }
        self.queue_runs(i, section, groups, BlockOp::Write, Owner::WriteBack);
    }

    /// Splits a run into requests of at most `flash_request_bytes_max` and queues them.
    fn queue_runs(&mut self, i: usize, section: usize, run: Range<u64>, op: BlockOp, owner: Owner) {
        let g = self.layout.group_bytes;
        let max_groups = (self.cfg.flash_request_bytes_max / g).max(1);
        let queue = match owner {
            Owner::Unit(w) => w,
            Owner::WriteBack => self.io_waiting.len() - 1,
        };
        let mut at = run.start;
        while at < run.end {
            let len = max_groups.min(run.end - at);
            self.io_waiting[queue].push_back(IoReq {
                op,
                instance: i,
                section,
                groups: (at, at + len),
                owner,
            });
            match owner {
                Owner::Unit(w) => self.workers[w].io_pending += 1,
                Owner::WriteBack => self.flush_pending[i] += 1,
            }
            match op {
                BlockOp::Read => self.flash_read_bytes += len * g,
                _ => self.flash_write_bytes += len * g,
            }
            at += len;
        }
    }

    /// Submits waiting requests, round robin over the queues, while the FTL has room.
    fn issue_io(&mut self, q: &mut Q) {
        let n = self.io_waiting.len();
        let g = self.layout.group_bytes;
        while self.io_outstanding < self.cfg.flash_queue_depth {
            let Some(turn) = (0..n)
                .map(|k| (self.io_turn + k) % n)
                .find(|&k| !self.io_waiting[k].is_empty())
            else {
                return;
            };
            let req = self.io_waiting[turn].pop_front().expect("non-empty");
            let (offset, len) = (req.groups.0 * g, (req.groups.1 - req.groups.0) * g);
            // Functional: the write-back copy as of now, so that of two writes to one page
            // group the later issued (applied last by the FTL) carries every byte.
            let data = match (&self.func, req.op) {
                (Some(f), BlockOp::Write) => {
                    let rel = offset - self.layout.offsets[req.instance][req.section];
                    f.payload(req.instance, req.section, rel, len)
                }
                _ => Vec::new(),
            };
            if req.op == BlockOp::Write {
                // The write-back's bytes leave DDR3L through its port (DMA to the flash
                // controllers); nothing waits for it but the port's later users.
                self.ddr.access(q.now(), len);
            }
            let id = self.submit(q, req.op, offset, len, data);
            self.io_owner.insert(id, req);
            self.io_outstanding += 1;
            self.io_turn = (turn + 1) % n;
        }
    }

    /// Every group worker `w`'s unit reads is in DDR3L: the LWP reads its footprint's
    /// cache lines through the DDR3L port.
    fn reads_done(&mut self, q: &mut Q, w: usize) {
        let bytes = self.unit_plan(w).read_line_bytes;
        let at = self.ddr.access(q.now(), bytes);
        self.schedule(q, at, super::Ev::DdrIn(w));
    }

    fn unit_io_done(&mut self, q: &mut Q, w: usize) {
        let worker = &mut self.workers[w];
        worker.io_pending -= 1;
        if worker.io_pending == 0 {
            self.reads_done(q, w);
        }
    }

    pub(super) fn drain_completions(&mut self, q: &mut Q) -> Result<(), crate::AccelError> {
        // The buffer is taken out (and put back below) so that handling a completion can
        // borrow `self`; it keeps its capacity, so no event allocates it afresh.
        let mut done = std::mem::take(&mut self.completions);
        debug_assert!(done.is_empty());
        self.dev.take_completions(&mut done);
        self.ios_completed += done.len() as u64;
        for c in done.drain(..) {
            c.result.map_err(|source| crate::AccelError::Io {
                op: c.op,
                offset_bytes: c.offset_bytes,
                source,
            })?;
            let req = self
                .io_owner
                .remove(&c.id)
                .expect("a request Flashvisor issued");
            self.io_outstanding -= 1;
            let i = req.instance;
            match req.owner {
                Owner::Unit(w) => {
                    // The groups read land in DDR3L through its port (DMA from the flash
                    // controllers).
                    self.ddr.access(q.now(), c.len_bytes);
                    if let Some(f) = self.func.as_mut() {
                        let rel = c.offset_bytes - self.layout.offsets[i][req.section];
                        f.fill(i, req.section, rel, c.len_bytes, Some(&c.data));
                    }
                    for g in req.groups.0..req.groups.1 {
                        let k = self.keys.key(i, req.section, g);
                        let io = &mut self.group_io[k as usize];
                        assert!(io.reading, "a group is read once at a time");
                        io.reading = false;
                        let waiters = if self.waiters.is_empty() {
                            Vec::new()
                        } else {
                            self.waiters.remove(&k).unwrap_or_default()
                        };
                        for v in waiters {
                            self.unit_io_done(q, v);
                        }
                    }
                    self.unit_io_done(q, w);
                }
                Owner::WriteBack => {
                    for g in req.groups.0..req.groups.1 {
                        let k = self.keys.key(i, req.section, g);
                        let n = &mut self.group_io[k as usize].writebacks;
                        assert!(*n > 0, "counted at issue");
                        *n -= 1;
                    }
                    self.flush_pending[i] -= 1;
                    if self.finishing[i] && self.flush_pending[i] == 0 {
                        self.kernel_finished(q, i);
                    }
                }
            }
            self.issue_io(q);
        }
        self.completions = done;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_capacity_leaves_room_for_descriptions() {
        let cfg = AccelConfig::default();
        assert_eq!(
            ddr_capacity_groups(&cfg, 0, 64 << 10),
            cfg.ddr_bytes / (64 << 10)
        );
        assert!(ddr_capacity_groups(&cfg, 24, 64 << 10) < cfg.ddr_bytes / (64 << 10));
    }

    #[test]
    fn cache_keys_are_dense_and_round_trip() {
        // Instance 1 shares instance 0's input (section 0) and has an empty section between
        // two others.
        let layout = Layout {
            group_bytes: 512,
            offsets: vec![vec![0, 1024], vec![0, 4096, 4096, 8192]],
            preload: Vec::new(),
            end_bytes: 9216,
            reused_instances: 0,
            own_flash_bytes: 9216,
            capacity_bytes: 1 << 20,
        };
        let keys = CacheKeys::new(&layout, &[vec![1000, 600], vec![1000, 0, 100, 512]]);
        assert_eq!(keys.count(), 2 + 2 + 2 + 1 + 1);
        let mut seen = Vec::new();
        for (i, sections) in [vec![(0, 2), (1, 2)], vec![(0, 2), (2, 1), (3, 1)]]
            .into_iter()
            .enumerate()
        {
            for (s, groups) in sections {
                let ks = keys.keys(i, s, &(0..groups));
                for (g, k) in layout.groups(i, s, &(0..groups)).zip(ks) {
                    assert_eq!(keys.key(i, s, g), k);
                    assert_eq!(keys.group(k), (i, s, g));
                    seen.push(k);
                }
            }
        }
        assert_eq!(seen, (0..keys.count()).collect::<Vec<_>>());
    }
}
