//! The host as a sans-IO component over a block device `D` (the conventional SSD: an NVMe
//! front end over the FTL). `read`, `write` and `fsync` start an operation at `now`;
//! it moves on by events (CPU work done, a block request submitted, the device's own) and
//! ends as a [`HostCompletion`]. Nothing blocks and nothing here owns the clock.
//!
//! A buffered operation goes chunk by chunk (`io_request_bytes` of the file at a time), so
//! its memory is one chunk plus read-ahead however large the operation: pages missing from
//! the cache are reserved (evicting LRU clean pages) and read in; the data is then copied
//! between kernel and user on a core. Writes dirty pages; beyond `dirty_background_ratio`
//! the flusher writes back the oldest, beyond `dirty_ratio` the writer waits. `fsync` writes
//! back the file's dirty pages, waits, then flushes the device. O_DIRECT skips the cache:
//! after writing back (and, for writes, dropping) cached pages of its range, requests go from
//! the user buffer straight to the device. At most `io_queue_depth` block requests are in
//! flight; the rest wait in the stack's queue.

use crate::cache::{PageCache, PageKey, PAGE_BYTES};
use crate::config::HostConfig;
use crate::error::HostError;
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, SECTOR_BYTES};
use nearflash_sim::{
    EventQueue, KeyMap, Model, Schedule, SimDuration, SimRng, SimTime, TraceEvent,
};
use serde::{Deserialize, Serialize};
use std::collections::hash_map::Entry;
use std::collections::VecDeque;
use std::ops::Range;

mod block_io;
mod pages;
mod writeback;

/// Page-cache and CPU parameters of the host model (the storage-stack costs are in
/// [`HostConfig`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PageCacheConfig {
    /// Assumption: 1 GiB of page cache (memory the model lets file pages use).
    pub capacity_bytes: u64,
    /// Read-ahead window: Linux's default `read_ahead_kb` = 128 (block/blk-settings.c
    /// `VM_READAHEAD_PAGES`, Documentation/ABI/stable/sysfs-block).
    pub read_ahead_bytes: u64,
    /// Writers wait beyond this share of the cache dirty: Linux `vm.dirty_ratio` default 20
    /// (Documentation/admin-guide/sysctl/vm.rst), applied to the cache's capacity.
    pub dirty_ratio_percent: u32,
    /// The flusher starts beyond this share dirty: Linux `vm.dirty_background_ratio` default
    /// 10 (same source).
    pub dirty_background_ratio_percent: u32,
    /// Assumption: 100 ns of storage stack per page (page allocation, LRU insertion, adding
    /// the page to the bio) on top of the per-request `io_stack_request_ns`.
    pub stack_page_ns: u64,
    /// CPU cores serving system calls, the stack and copies, FIFO: the Xeon E5-2620 v3 has 6
    /// cores (Intel ARK).
    pub cores: u32,
}

impl Default for PageCacheConfig {
    fn default() -> Self {
        PageCacheConfig {
            capacity_bytes: 1 << 30,
            read_ahead_bytes: 128 << 10,
            dirty_ratio_percent: 20,
            dirty_background_ratio_percent: 10,
            stack_page_ns: 100,
            cores: 6,
        }
    }
}

impl PageCacheConfig {
    /// Checks the values against each other and the host's request size (called by
    /// [`HostConfig::validate`]).
    pub fn validate(&self, host: &HostConfig) -> Result<(), HostError> {
        let err = |field: &'static str, reason: String| HostError::Config { field, reason };
        if !host.io_request_bytes.is_multiple_of(PAGE_BYTES) {
            return Err(err(
                "io_request_bytes",
                format!("the host model needs a multiple of the {PAGE_BYTES}-byte page"),
            ));
        }
        if self.capacity_bytes == 0
            || !self.capacity_bytes.is_multiple_of(PAGE_BYTES)
            || self.capacity_bytes < 4 * (host.io_request_bytes + self.read_ahead_bytes)
        {
            return Err(err(
                "page_cache.capacity_bytes",
                format!(
                    "must be a multiple of {PAGE_BYTES} and at least 4 × (io_request_bytes + read_ahead_bytes) = {}, got {}",
                    4 * (host.io_request_bytes + self.read_ahead_bytes),
                    self.capacity_bytes
                ),
            ));
        }
        if !self.read_ahead_bytes.is_multiple_of(PAGE_BYTES) {
            return Err(err(
                "page_cache.read_ahead_bytes",
                format!("must be a multiple of {PAGE_BYTES}"),
            ));
        }
        if !(1..=100).contains(&self.dirty_ratio_percent) {
            return Err(err(
                "page_cache.dirty_ratio_percent",
                "must be 1..=100".into(),
            ));
        }
        if self.dirty_background_ratio_percent == 0
            || self.dirty_background_ratio_percent > self.dirty_ratio_percent
        {
            return Err(err(
                "page_cache.dirty_background_ratio_percent",
                "must be at least 1 and at most dirty_ratio_percent".into(),
            ));
        }
        if self.cores == 0 {
            return Err(err("page_cache.cores", "must be at least 1".into()));
        }
        Ok(())
    }

    /// Host CPU time of the storage stack for one block request of `len_bytes`: the
    /// per-request cost plus the per-page cost (every system on the shared host pays this).
    pub fn request_stack_ns(&self, host: &HostConfig, len_bytes: u64) -> u64 {
        host.io_stack_request_ns + len_bytes.div_ceil(PAGE_BYTES) * self.stack_page_ns
    }

    pub fn dirty_limit_bytes(&self) -> u64 {
        self.capacity_bytes / 100 * u64::from(self.dirty_ratio_percent)
    }

    pub fn dirty_background_bytes(&self) -> u64 {
        self.capacity_bytes / 100 * u64::from(self.dirty_background_ratio_percent)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpId(pub u64);

/// A run of a file on the block device: `len` bytes at `dev_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub dev_offset: u64,
    pub len: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpFlags {
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
    Fsync,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HostCompletion {
    pub op: OpId,
    pub kind: OpKind,
    pub file: FileId,
    pub offset: u64,
    pub len: u64,
    pub submitted: SimTime,
    pub completed: SimTime,
    pub result: Result<(), HostError>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    pub syscalls: u64,
    /// Pages a buffered operation found in the cache (up to date or being read in).
    pub hits: u64,
    /// Pages a buffered operation had to read in.
    pub misses: u64,
    pub readahead_pages: u64,
    pub writeback_pages: u64,
    pub evictions: u64,
    pub cache_bytes_max: u64,
    /// The most bytes dirty or under write-back at once.
    pub dirty_bytes_max: u64,
    pub throttled_writes: u64,
    pub copy_bytes: u64,
    pub direct_bytes: u64,
    pub device_requests: u64,
    pub device_in_flight_max: u32,
    pub cpu_busy_ns: u64,
}

/// The host's events, with the block device's own wrapped in `Device`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent<E> {
    Device(E),
    /// An operation's CPU work (system call entry, a copy) is done.
    Cpu(u64),
    /// The stack has built a block request; it joins the queue to the device.
    Submit(u64),
}

impl<E: TraceEvent> TraceEvent for HostEvent<E> {
    fn hash_word(&self) -> u64 {
        const HOST: u64 = 0x48 << 56;
        match *self {
            HostEvent::Device(ref e) => e.hash_word(),
            HostEvent::Cpu(op) => HOST | 1 << 48 ^ op,
            HostEvent::Submit(io) => HOST | 2 << 48 ^ io,
        }
    }
}

struct File {
    extents: Vec<Extent>,
    size: u64,
    /// Where the next sequential read starts (read-ahead follows sequential streams).
    seq_next: u64,
}

impl File {
    /// Device offset of file byte `offset`, and the bytes contiguous from there.
    fn map(&self, mut offset: u64) -> (u64, u64) {
        for e in &self.extents {
            if offset < e.len {
                return (e.dev_offset + offset, e.len - offset);
            }
            offset -= e.len;
        }
        unreachable!("offsets are checked against the file's size")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Syscall,
    /// Waiting for the chunk's pages (reads in flight, or memory to reserve).
    Pages,
    Copy,
    /// A writer over the dirty limit.
    Throttled,
    /// fsync / O_DIRECT waiting for the range's dirty pages to be written back.
    Unwritten,
    /// Waiting for its own block requests (O_DIRECT, fsync's flush).
    Io,
}

struct Op {
    kind: OpKind,
    file: FileId,
    offset: u64,
    len: u64,
    direct: bool,
    pos: u64,
    chunk_end: u64,
    /// Pages of this file below this index have been counted as hits or misses.
    counted_to: u64,
    stage: Stage,
    waiting: u32,
    /// Pages (indexes in `file`) a writer holds until its copy lands in them.
    pinned: Range<u64>,
    error: Option<HostError>,
    submitted: SimTime,
}

/// The pages one block request of the page cache reads in or writes back: pages of one
/// file, device-contiguous and in page order.
enum PageRun {
    /// Pages `first..first + count` of `file` (a run is consecutive in the file unless the
    /// file's extents put the pages between two of its pages elsewhere on the device).
    Span { file: u32, first: u64, count: u64 },
    /// Pages with gaps between them.
    Scattered(Vec<PageKey>),
}

impl PageRun {
    fn file(&self) -> u32 {
        match self {
            PageRun::Span { file, .. } => *file,
            PageRun::Scattered(keys) => keys[0].file,
        }
    }

    fn len(&self) -> u64 {
        match self {
            PageRun::Span { count, .. } => *count,
            PageRun::Scattered(keys) => keys.len() as u64,
        }
    }

    /// The run's `i`th page.
    fn key(&self, i: u64) -> PageKey {
        match self {
            PageRun::Span { file, first, .. } => PageKey {
                file: *file,
                index: first + i,
            },
            PageRun::Scattered(keys) => keys[i as usize],
        }
    }

    /// Appends `key`, a later page of the same file.
    fn push(&mut self, key: PageKey) {
        match self {
            PageRun::Span { first, count, .. } if key.index == *first + *count => *count += 1,
            PageRun::Span { .. } => {
                let mut keys: Vec<PageKey> = (0..self.len()).map(|i| self.key(i)).collect();
                keys.push(key);
                *self = PageRun::Scattered(keys);
            }
            PageRun::Scattered(keys) => keys.push(key),
        }
    }
}

enum Purpose {
    /// Pages read in; `waiter` the op that reserved them and waits for all of them.
    Fetch {
        pages: PageRun,
        waiter: Option<u64>,
    },
    Writeback(PageRun),
    Op(u64),
}

/// A block request the stack has built (the device gets it as a [`BlockRequest`]).
struct Io {
    op: BlockOp,
    offset_bytes: u64,
    len_bytes: u64,
    purpose: Purpose,
}

/// The operations waiting for a page being read in, in the order they came: the first
/// inline (a page rarely has a second).
struct Waiters {
    first: u64,
    more: Vec<u64>,
}

pub struct Host<D> {
    cfg: HostConfig,
    cache_cfg: PageCacheConfig,
    dev: D,
    cores_free_at: Vec<SimTime>,
    files: Vec<File>,
    cache: PageCache,
    ops: KeyMap<u64, Op>,
    next_op: u64,
    ios: KeyMap<u64, Io>,
    next_io: u64,
    ready: VecDeque<u64>,
    in_flight: u32,
    page_waiters: KeyMap<PageKey, Waiters>,
    /// Operations to retry when pages become clean or free.
    blocked: Vec<u64>,
    stats: HostStats,
    dev_done: Vec<BlockCompletion>,
    completions: Vec<HostCompletion>,
}

impl<D: BlockDevice> Host<D> {
    pub fn new(cfg: HostConfig, dev: D) -> Result<Self, HostError> {
        cfg.validate()?;
        let cache_cfg = cfg.page_cache.clone();
        if dev.is_functional() {
            return Err(HostError::FunctionalDevice);
        }
        Ok(Host {
            cores_free_at: vec![SimTime::ZERO; cache_cfg.cores as usize],
            cache: PageCache::new(cache_cfg.capacity_bytes / PAGE_BYTES),
            cfg,
            cache_cfg,
            dev,
            files: Vec::new(),
            ops: KeyMap::default(),
            next_op: 0,
            ios: KeyMap::default(),
            next_io: 0,
            ready: VecDeque::new(),
            in_flight: 0,
            page_waiters: KeyMap::default(),
            blocked: Vec::new(),
            stats: HostStats::default(),
            dev_done: Vec::new(),
            completions: Vec::new(),
        })
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    /// The block device, for work outside any host operation (untimed preconditioning
    /// before a run). Requests submitted here bypass the host: their completions must be
    /// taken from the device before the host handles another event.
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    pub fn stats(&self) -> HostStats {
        HostStats {
            evictions: self.cache.evictions(),
            ..self.stats
        }
    }

    pub fn cache(&self) -> &PageCache {
        &self.cache
    }

    /// Operations started and not yet taken as completions.
    pub fn outstanding(&self) -> usize {
        self.ops.len() + self.completions.len()
    }

    /// Declares a file laid out as `extents` on the device (page-aligned, within capacity).
    pub fn add_file(&mut self, extents: Vec<Extent>) -> Result<FileId, HostError> {
        self.check_extents(&extents)?;
        let size = extents.iter().map(|e| e.len).sum();
        let id = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        self.files.push(File {
            extents,
            size,
            seq_next: 0,
        });
        Ok(FileId(id))
    }

    /// The file's layout changed (a file system allocated or freed its blocks): `extents`
    /// replace the old ones. Refused while an operation (or a read-ahead beyond the new size)
    /// on the file is in flight. Cached
    /// pages beyond the new size are dropped (an error if one holds unwritten data); a
    /// cached page whose block moved is the caller's to drop first ([`Host::drop_cached`]).
    pub fn set_extents(&mut self, file: FileId, extents: Vec<Extent>) -> Result<(), HostError> {
        self.file(file)?;
        self.check_extents(&extents)?;
        if self.ops.values().any(|op| op.file == file) {
            return Err(HostError::FileBusy(file.0));
        }
        let size: u64 = extents.iter().map(|e| e.len).sum();
        let beyond = self
            .cache
            .cached_in(file.0, size.div_ceil(PAGE_BYTES), u64::MAX);
        for &key in &beyond {
            let state = self.cache.state(key).expect("listed");
            if state.dirty || state.writeback {
                return Err(HostError::UnwrittenBeyond {
                    file: file.0,
                    index: key.index,
                });
            }
            if !self.cache.can_drop(key) {
                return Err(HostError::FileBusy(file.0)); // being read ahead
            }
        }
        for key in beyond {
            assert!(self.cache.drop_clean(key));
        }
        let f = &mut self.files[file.0 as usize];
        f.extents = extents;
        f.size = size;
        f.seq_next = f.seq_next.min(size);
        Ok(())
    }

    /// `posix_fadvise(POSIX_FADV_DONTNEED)` over pages `first..=last` of `file`: drops the
    /// clean ones not in use (pages being read in, dirty, under write-back or held by a
    /// writer stay); how many were dropped.
    pub fn drop_cached(&mut self, file: FileId, first: u64, last: u64) -> Result<u64, HostError> {
        self.file(file)?;
        let mut dropped = 0;
        for key in self.cache.cached_in(file.0, first, last) {
            dropped += u64::from(self.cache.drop_clean(key));
        }
        Ok(dropped)
    }

    fn check_extents(&self, extents: &[Extent]) -> Result<(), HostError> {
        let capacity = self.dev.capacity_bytes();
        for (index, e) in extents.iter().enumerate() {
            let bad = |reason: &str| HostError::Extent {
                index,
                reason: reason.into(),
            };
            if e.len == 0
                || !e.len.is_multiple_of(PAGE_BYTES)
                || !e.dev_offset.is_multiple_of(PAGE_BYTES)
            {
                return Err(bad("offset and length must be non-zero multiples of 4096"));
            }
            if e.dev_offset
                .checked_add(e.len)
                .is_none_or(|end| end > capacity)
            {
                return Err(bad("lies beyond the device's capacity"));
            }
        }
        Ok(())
    }

    pub fn read<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        file: FileId,
        offset: u64,
        len: u64,
        flags: OpFlags,
        q: &mut S,
    ) -> Result<OpId, HostError> {
        self.start(OpKind::Read, file, offset, len, flags, q)
    }

    pub fn write<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        file: FileId,
        offset: u64,
        len: u64,
        flags: OpFlags,
        q: &mut S,
    ) -> Result<OpId, HostError> {
        self.start(OpKind::Write, file, offset, len, flags, q)
    }

    /// Writes back the file's dirty pages, waits for them, then flushes the device.
    pub fn fsync<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        file: FileId,
        q: &mut S,
    ) -> Result<OpId, HostError> {
        let size = self.file(file)?.size;
        self.start(OpKind::Fsync, file, 0, size, OpFlags::default(), q)
    }

    fn file(&self, file: FileId) -> Result<&File, HostError> {
        self.files
            .get(file.0 as usize)
            .ok_or(HostError::NoSuchFile(file.0))
    }

    fn start<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        kind: OpKind,
        file: FileId,
        offset: u64,
        len: u64,
        flags: OpFlags,
        q: &mut S,
    ) -> Result<OpId, HostError> {
        let size = self.file(file)?.size;
        if kind != OpKind::Fsync {
            if len == 0 {
                return Err(HostError::Empty);
            }
            if offset.checked_add(len).is_none_or(|end| end > size) {
                return Err(HostError::BeyondFile { offset, len, size });
            }
            if flags.direct
                && (!offset.is_multiple_of(SECTOR_BYTES) || !len.is_multiple_of(SECTOR_BYTES))
            {
                return Err(HostError::DirectUnaligned { offset, len });
            }
        }
        let id = self.next_op;
        self.next_op += 1;
        self.ops.insert(
            id,
            Op {
                kind,
                file,
                offset,
                len,
                direct: flags.direct,
                pos: offset,
                chunk_end: offset,
                counted_to: 0,
                stage: Stage::Syscall,
                waiting: 0,
                pinned: 0..0,
                error: None,
                submitted: q.now(),
            },
        );
        self.stats.syscalls += 1;
        let at = self.cpu(q.now(), self.cfg.syscall_ns);
        q.schedule_at(at, HostEvent::Cpu(id));
        Ok(OpId(id))
    }

    /// Runs `ns` of work on the earliest free core; returns when it is done.
    fn cpu(&mut self, now: SimTime, ns: u64) -> SimTime {
        let core = (0..self.cores_free_at.len())
            .min_by_key(|&c| self.cores_free_at[c])
            .expect("at least one core");
        let start = self.cores_free_at[core].max(now);
        self.cores_free_at[core] = start + SimDuration::from_ns(ns);
        self.stats.cpu_busy_ns += ns;
        self.cores_free_at[core]
    }

    /// Handles one of the host's events at `q.now()`.
    pub fn handle_event<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        ev: HostEvent<D::Event>,
        q: &mut S,
        rng: &mut SimRng,
    ) {
        match ev {
            HostEvent::Device(e) => self.dev.handle(e, &mut q.map(HostEvent::Device), rng),
            HostEvent::Cpu(op) => self.cpu_done(op, q),
            HostEvent::Submit(io) => {
                self.ready.push_back(io);
                self.pump(q);
            }
        }
        self.drain_device(q);
        self.stats.cache_bytes_max = self.stats.cache_bytes_max.max(self.cache.bytes());
        self.stats.dirty_bytes_max = self.stats.dirty_bytes_max.max(self.cache.unwritten_bytes());
        assert!(self.cache.bytes() <= self.cache.capacity_bytes());
    }

    pub fn take_completions(&mut self, out: &mut Vec<HostCompletion>) {
        out.append(&mut self.completions);
    }

    fn cpu_done<S: Schedule<HostEvent<D::Event>>>(&mut self, id: u64, q: &mut S) {
        let op = self.ops.get_mut(&id).expect("a CPU event names a live op");
        match (op.stage, op.kind, op.direct) {
            (Stage::Syscall, OpKind::Fsync, _) | (Stage::Syscall, _, true) => {
                op.stage = Stage::Unwritten;
                self.unwritten(id, q);
            }
            (Stage::Syscall, _, false) => self.next_chunk(id, q),
            (Stage::Copy, _, _) => {
                op.pos = op.chunk_end;
                if op.kind == OpKind::Write {
                    self.balance_dirty(q);
                    if self.cache.unwritten_bytes() > self.cache_cfg.dirty_limit_bytes() {
                        let op = self.ops.get_mut(&id).expect("live");
                        op.stage = Stage::Throttled;
                        self.stats.throttled_writes += 1;
                        self.blocked.push(id);
                        return;
                    }
                }
                self.next_chunk(id, q);
            }
            (stage, kind, _) => unreachable!("no CPU work in {stage:?} of a {kind:?}"),
        }
    }

    fn finish(&mut self, id: u64, now: SimTime) {
        let op = self.ops.remove(&id).expect("an op finishes once");
        assert_eq!(op.waiting, 0, "nothing is pending for a finished op");
        self.cache.unpin_run(op.file.0, op.pinned);
        if op.kind == OpKind::Read && !op.direct {
            self.files[op.file.0 as usize].seq_next = op.offset + op.len;
        }
        self.completions.push(HostCompletion {
            op: OpId(id),
            kind: op.kind,
            file: op.file,
            offset: op.offset,
            len: op.len,
            submitted: op.submitted,
            completed: now,
            result: op.error.map_or(Ok(()), Err),
        });
    }
}

impl<D: BlockDevice> Model for Host<D> {
    type Event = HostEvent<D::Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.handle_event(ev, q, rng);
    }

    fn check_invariants(&self) {
        assert!(self.in_flight <= self.cfg.io_queue_depth);
        assert!(self.cache.bytes() <= self.cache.capacity_bytes());
        let waiting: usize = self.page_waiters.values().map(|w| 1 + w.more.len()).sum();
        assert!(
            self.ops
                .values()
                .map(|op| op.waiting as usize)
                .sum::<usize>()
                >= waiting,
            "every op waiting for a page counts it"
        );
        self.dev.check_invariants();
    }
}
