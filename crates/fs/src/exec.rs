//! The sans-IO shell around the file system: `Fs` queues operations (bounded), runs one at a
//! time as a Rust future, and polls it whenever something it may be waiting on happens — a
//! block completion or its CPU-time timer. The executor is a dozen lines: no threads, no
//! runtime, wakers that do nothing (a future is simply polled again after every completion).
//! The FS never reads a clock: `now` comes in with every call, block requests go out through
//! `poll_io` (or `poll_block_request`), the next instant it needs attention through
//! `poll_timeout`.
//!
//! Barriers: the journal asks for a FLUSH (`Cx::flush`) and for FUA writes
//! (`Cx::write_raw_fua`) where its ordering needs them. On a device without a volatile write
//! cache every completed write is durable, so — as Linux's block layer does for a queue
//! without `QUEUE_FLAG_WC` (`blk_flush_policy`) — the flush completes at once without a
//! request and FUA is a plain write: the FS's requests there are exactly what they were
//! before barriers existed. A FLUSH with no write completed since the last one is skipped too.

use crate::cache::{BlockClass, BufferCache, CacheStats};
use crate::config::FsConfig;
use crate::error::{ConfigError, FsError};
use crate::format::superblock::Superblock;
use crate::ops::{self, FsOp, FsReply};
use crate::types::{BlockNo, Caller, Fh, Ino, BLOCK_BYTES, BLOCK_BYTES_U64};

use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_sim::{SimDuration, SimTime};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// An operation's number, in submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct OpId(pub u64);

/// A finished operation.
#[derive(Debug)]
pub struct FsCompletion {
    pub id: OpId,
    pub result: Result<FsReply, FsError>,
    pub submitted: SimTime,
    pub started: SimTime,
    pub finished: SimTime,
}

/// What a block request the FS issued is for (crash tests aim power cuts with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum IoKind {
    Read,
    /// File data written in place (at commit, or a dirty block evicted).
    DataWrite,
    /// A journal descriptor, image or commit record.
    JournalWrite,
    /// A committed metadata block written to its home (journal checkpoint, replay, mkfs).
    MetaWrite,
    /// A FLUSH (only on a device with a volatile write cache).
    Flush,
}

/// A block request the FS hands to its device: submit `req` with
/// [`BlockDevice::submit_fua`] when `fua`, with [`BlockDevice::submit`] otherwise.
#[derive(Clone, Debug)]
pub struct FsIo {
    pub req: BlockRequest,
    /// Force Unit Access: asked for only on a device with a volatile write cache.
    pub fua: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FsStats {
    pub ops_completed: u64,
    pub ops_failed: u64,
    /// Journal transactions committed.
    pub commits: u64,
    /// Completed commits, with or without a transaction (after one, the device holds the
    /// whole in-memory state).
    pub syncs: u64,
    pub block_reads: u64,
    pub block_writes: u64,
    /// FLUSH requests sent (a device with a volatile write cache only).
    pub block_flushes: u64,
    /// Of `block_writes`, those sent with FUA (a device with a volatile write cache only).
    pub block_fua_writes: u64,
    /// Block writes (or write batches) that failed: the FS stops committing after one.
    pub write_errors: u64,
    /// Read-ahead: block requests issued, and the blocks they read (`fs.read_ahead_bytes`).
    pub readahead_requests: u64,
    pub readahead_blocks: u64,
    pub cache: CacheStats,
}

/// An open file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handle {
    pub ino: Ino,
    pub generation: u32,
    pub read: bool,
    pub write: bool,
    pub append: bool,
    /// The open file's read-ahead state (Linux keeps it in the `struct file`).
    pub ra: crate::readahead::RaState,
}

/// State of a mounted file system.
pub(crate) struct Mounted {
    pub sb: Superblock,
    pub journal_seq: u64,
    pub free_blocks: u64,
    pub free_inodes: u64,
    /// Blocks freed by the running transaction: not reused before it commits, so a crash
    /// can never leave a committed file pointing at another file's new data.
    pub freed_uncommitted: BTreeSet<BlockNo>,
    pub block_cursor: u32,
    pub inode_cursor: u32,
}

pub(crate) struct State {
    pub mounted: Option<Mounted>,
    pub cache: BufferCache,
    pub handles: BTreeMap<Fh, Handle>,
    pub next_fh: u32,
    /// The first I/O error of an operation that changes the file system, or of a failed
    /// write (a read-only operation's eviction write-back included): the in-memory state may
    /// be half-applied, so nothing more is served (like `errors=remount-ro`); remount to
    /// recover. A failed read of a read-only operation changes nothing: other blocks still
    /// read.
    pub poisoned: Option<FsError>,
    pub stats: FsStats,
    /// Blocks being read ahead: the request reading each, and whether it carries the
    /// read-ahead marker. They hold a place in the cache (counted against its capacity) and
    /// join it when their request completes, unless freed or overwritten meanwhile.
    pub ra_pending: BTreeMap<BlockNo, (u64, bool)>,
}

pub(crate) struct Io {
    now: SimTime,
    next_id: u64,
    outbox: VecDeque<FsIo>,
    inflight: BTreeMap<u64, IoKind>,
    done: BTreeMap<u64, BlockCompletion>,
    timer: Option<SimTime>,
    /// Kinds of the writes issued since the last FLUSH was issued (a device with a volatile
    /// write cache: what a FLUSH would make durable).
    unflushed: BTreeSet<IoKind>,
    /// Read-ahead requests in flight: their first block and block count. Their completions
    /// are taken by the FS itself, whatever operation runs (or none).
    readahead: BTreeMap<u64, (BlockNo, u32)>,
}

/// Everything an operation's future reaches: configuration, I/O plumbing, FS state.
/// Borrows of `io`/`st` never live across an `.await`.
pub(crate) struct Cx {
    pub cfg: FsConfig,
    pub capacity_bytes: u64,
    pub functional: bool,
    /// The device may hold completed writes in volatile memory and `cfg.barriers` is on: the
    /// journal sends FLUSH and FUA. Off, every completed write is taken as durable.
    pub barriers: bool,
    io: RefCell<Io>,
    pub st: RefCell<State>,
}

type OpFuture = Pin<Box<dyn Future<Output = Result<FsReply, FsError>>>>;

struct Queued {
    id: OpId,
    caller: Caller,
    op: FsOp,
    submitted: SimTime,
}

struct Running {
    id: OpId,
    submitted: SimTime,
    started: SimTime,
    fut: OpFuture,
}

/// The file system as a sans-IO component.
pub struct Fs {
    cx: Rc<Cx>,
    waiting: VecDeque<Queued>,
    running: Option<Running>,
    done: VecDeque<FsCompletion>,
    next_op: u64,
}

impl Fs {
    /// An unmounted file system over a block device of `capacity_bytes` *without a volatile
    /// write cache* (every completed write durable: the FTL, INSIDER's drive); submit
    /// `FsOp::Format` or `FsOp::Mount` first. Over any device, [`Fs::for_device`].
    pub fn new(cfg: FsConfig, capacity_bytes: u64, functional: bool) -> Result<Fs, ConfigError> {
        Fs::build(cfg, capacity_bytes, functional, false)
    }

    /// An unmounted file system over `dev`: its capacity, fidelity and volatile write cache
    /// (then, unless `cfg.barriers` is off, the journal's FLUSH and FUA requests go to it:
    /// take them with [`Fs::poll_io`]).
    pub fn for_device<D: BlockDevice>(cfg: FsConfig, dev: &D) -> Result<Fs, ConfigError> {
        let barriers = cfg.barriers && dev.volatile_write_cache();
        Fs::build(cfg, dev.capacity_bytes(), dev.is_functional(), barriers)
    }

    fn build(
        cfg: FsConfig,
        capacity_bytes: u64,
        functional: bool,
        barriers: bool,
    ) -> Result<Fs, ConfigError> {
        cfg.validate()?;
        let blocks = cfg.cache_blocks();
        Ok(Fs {
            cx: Rc::new(Cx {
                capacity_bytes,
                functional,
                barriers,
                io: RefCell::new(Io {
                    now: SimTime::ZERO,
                    next_id: 0,
                    outbox: VecDeque::new(),
                    inflight: BTreeMap::new(),
                    done: BTreeMap::new(),
                    timer: None,
                    unflushed: BTreeSet::new(),
                    readahead: BTreeMap::new(),
                }),
                st: RefCell::new(State {
                    mounted: None,
                    cache: BufferCache::new(blocks as usize),
                    handles: BTreeMap::new(),
                    next_fh: 1,
                    poisoned: None,
                    stats: FsStats::default(),
                    ra_pending: BTreeMap::new(),
                }),
                cfg,
            }),
            waiting: VecDeque::new(),
            running: None,
            done: VecDeque::new(),
            next_op: 0,
        })
    }

    /// Queues an operation at `now`; `Busy` when `queue_depth_max` are already waiting.
    pub fn submit(&mut self, now: SimTime, caller: Caller, op: FsOp) -> Result<OpId, FsError> {
        if self.waiting.len() >= self.cx.cfg.queue_depth_max {
            return Err(FsError::Busy(self.cx.cfg.queue_depth_max));
        }
        self.cx.set_now(now);
        let id = OpId(self.next_op);
        self.next_op += 1;
        self.waiting.push_back(Queued {
            id,
            caller,
            op,
            submitted: now,
        });
        self.run();
        Ok(id)
    }

    /// The next block request to hand to the device, with whether it is a FUA write.
    pub fn poll_io(&mut self) -> Option<FsIo> {
        self.cx.io.borrow_mut().outbox.pop_front()
    }

    /// The next block request to hand to the device, for a driver of a file system built
    /// with [`Fs::new`] (no volatile write cache, so never a FUA write).
    pub fn poll_block_request(&mut self) -> Option<BlockRequest> {
        let io = self.poll_io()?;
        assert!(
            !io.fua,
            "a FUA write: the driver of a file system over a volatile write cache takes its \
             requests with poll_io"
        );
        Some(io.req)
    }

    /// Whether the FS sends FLUSH and FUA requests (its device has a volatile write cache and
    /// `FsConfig::barriers` is on).
    pub fn issues_barriers(&self) -> bool {
        self.cx.barriers
    }

    /// A block request of ours finished at `now`.
    pub fn handle_block_completion(&mut self, now: SimTime, c: BlockCompletion) {
        self.cx.set_now(now);
        {
            let mut io = self.cx.io.borrow_mut();
            assert!(
                io.inflight.remove(&c.id).is_some(),
                "completion of a request the FS did not issue"
            );
            match io.readahead.remove(&c.id) {
                Some(run) => {
                    drop(io);
                    self.cx.readahead_done(c, run);
                }
                None => {
                    io.done.insert(c.id, c);
                }
            }
        }
        self.run();
    }

    /// When the running operation's CPU time ends, if it is computing.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.cx.io.borrow().timer
    }

    /// Time has reached `now` (a timer from `poll_timeout`).
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.cx.set_now(now);
        self.run();
    }

    pub fn poll_completion(&mut self) -> Option<FsCompletion> {
        self.done.pop_front()
    }

    /// Operations submitted and not yet taken as completions.
    pub fn outstanding(&self) -> u64 {
        (self.waiting.len() + usize::from(self.running.is_some()) + self.done.len()) as u64
    }

    /// Read-ahead requests in flight (they outlive the operation that issued them).
    pub fn readahead_in_flight(&self) -> usize {
        self.cx.io.borrow().readahead.len()
    }

    /// What the block requests in flight are for.
    pub fn io_in_flight(&self) -> BTreeSet<IoKind> {
        self.cx.io.borrow().inflight.values().copied().collect()
    }

    pub fn stats(&self) -> FsStats {
        let st = self.cx.st.borrow();
        FsStats {
            cache: st.cache.stats(),
            ..st.stats
        }
    }

    /// Free blocks and inodes of the mounted file system.
    pub fn free_counts(&self) -> Option<(u64, u64)> {
        let st = self.cx.st.borrow();
        st.mounted.as_ref().map(|m| (m.free_blocks, m.free_inodes))
    }

    /// Blocks and inodes of the mounted file system in all (for `statfs`), data and
    /// metadata areas together.
    pub fn total_counts(&self) -> Option<(u64, u64)> {
        let st = self.cx.st.borrow();
        st.mounted
            .as_ref()
            .map(|m| (u64::from(m.sb.total_blocks), u64::from(m.sb.inode_count)))
    }

    fn run(&mut self) {
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        loop {
            if self.running.is_none() {
                let Some(q) = self.waiting.pop_front() else {
                    return;
                };
                let now = self.cx.now();
                let op_cx = Rc::clone(&self.cx);
                self.running = Some(Running {
                    id: q.id,
                    submitted: q.submitted,
                    started: now,
                    fut: Box::pin(async move { ops::run(&op_cx, q.caller, q.op).await }),
                });
            }
            let r = self.running.as_mut().expect("an operation is running");
            match r.fut.as_mut().poll(&mut cx) {
                Poll::Pending => return,
                Poll::Ready(result) => {
                    let r = self.running.take().expect("running");
                    let mut st = self.cx.st.borrow_mut();
                    match result {
                        Ok(_) => st.stats.ops_completed += 1,
                        Err(_) => st.stats.ops_failed += 1,
                    }
                    drop(st);
                    self.done.push_back(FsCompletion {
                        id: r.id,
                        result,
                        submitted: r.submitted,
                        started: r.started,
                        finished: self.cx.now(),
                    });
                }
            }
        }
    }
}

/// Resolves when the block request `id` has completed.
struct IoWait<'a> {
    cx: &'a Cx,
    id: u64,
}

impl Future for IoWait<'_> {
    type Output = BlockCompletion;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<BlockCompletion> {
        match self.cx.io.borrow_mut().done.remove(&self.id) {
            Some(c) => Poll::Ready(c),
            None => Poll::Pending,
        }
    }
}

/// Resolves once simulated time reaches `until` (CPU time being spent).
struct Sleep<'a> {
    cx: &'a Cx,
    until: SimTime,
}

impl Future for Sleep<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let mut io = self.cx.io.borrow_mut();
        if io.now >= self.until {
            io.timer = None;
            Poll::Ready(())
        } else {
            io.timer = Some(self.until);
            Poll::Pending
        }
    }
}

impl Cx {
    pub fn now(&self) -> SimTime {
        self.io.borrow().now
    }

    fn set_now(&self, now: SimTime) {
        let mut io = self.io.borrow_mut();
        assert!(now >= io.now, "time went backwards: {now} < {}", io.now);
        io.now = now;
    }

    /// Spends `ns` of CPU time.
    pub async fn cpu(&self, ns: u64) {
        if ns > 0 {
            let until = self.now() + SimDuration::from_ns(ns);
            Sleep { cx: self, until }.await;
        }
    }

    fn issue(&self, op: BlockOp, b: BlockNo, data: Vec<u8>, kind: IoKind, fua: bool) -> u64 {
        assert!(
            !fua || (op == BlockOp::Write && self.barriers),
            "FUA only on writes to a volatile write cache"
        );
        let mut io = self.io.borrow_mut();
        let id = io.next_id;
        io.next_id += 1;
        io.inflight.insert(id, kind);
        if op == BlockOp::Write && !fua && self.barriers {
            io.unflushed.insert(kind);
        }
        let (offset_bytes, len_bytes) = if op == BlockOp::Flush {
            (0, 0)
        } else {
            (b.offset_bytes(), BLOCK_BYTES_U64)
        };
        io.outbox.push_back(FsIo {
            req: BlockRequest {
                id,
                op,
                offset_bytes,
                len_bytes,
                data,
            },
            fua,
        });
        id
    }

    /// Issues a read of `count` device-contiguous blocks from `first`, ahead of need: its
    /// completion is the FS's own (`Cx::readahead_done`), whatever runs then.
    pub(crate) fn issue_read_ahead(&self, first: BlockNo, count: u32) -> u64 {
        assert!(count > 0, "a read-ahead request reads at least one block");
        let mut io = self.io.borrow_mut();
        let id = io.next_id;
        io.next_id += 1;
        io.inflight.insert(id, IoKind::Read);
        io.readahead.insert(id, (first, count));
        io.outbox.push_back(FsIo {
            req: BlockRequest {
                id,
                op: BlockOp::Read,
                offset_bytes: first.offset_bytes(),
                len_bytes: u64::from(count) * BLOCK_BYTES_U64,
                data: Vec::new(),
            },
            fua: false,
        });
        id
    }

    /// Whether a write of one of `kinds` was issued since the last FLUSH (always false on a
    /// device without a volatile write cache: nothing there needs one).
    pub fn unflushed(&self, kinds: &[IoKind]) -> bool {
        let io = self.io.borrow();
        kinds.iter().any(|k| io.unflushed.contains(k))
    }

    /// Makes every write completed so far durable: a FLUSH to a device with a volatile write
    /// cache, if any write was issued since the last one; nothing otherwise (every completed
    /// write is already durable there). Called with no write of this FS in flight (its
    /// writes are awaited), so the FLUSH covers exactly the writes issued before it.
    pub async fn flush(&self) -> Result<(), FsError> {
        if !self.barriers || self.io.borrow().unflushed.is_empty() {
            return Ok(());
        }
        debug_assert!(
            !self
                .io
                .borrow()
                .inflight
                .values()
                .any(|k| *k != IoKind::Read),
            "a FLUSH is issued with no write in flight"
        );
        let id = self.issue(BlockOp::Flush, BlockNo(0), Vec::new(), IoKind::Flush, false);
        self.io.borrow_mut().unflushed.clear();
        self.st.borrow_mut().stats.block_flushes += 1;
        let c = IoWait { cx: self, id }.await;
        c.result.map_err(FsError::Io)
    }

    /// Reads one block from the device (bypassing the cache).
    pub async fn read_raw(&self, b: BlockNo) -> Result<Vec<u8>, FsError> {
        let mut out = self.read_raw_many(&[b]).await?;
        Ok(out.pop().expect("one block read"))
    }

    /// Reads blocks from the device, `io_depth_max` in flight at once, in the given order.
    pub async fn read_raw_many(&self, blocks: &[BlockNo]) -> Result<Vec<Vec<u8>>, FsError> {
        let mut out = Vec::with_capacity(blocks.len());
        for chunk in blocks.chunks(self.cfg.io_depth_max) {
            let ids: Vec<u64> = chunk
                .iter()
                .map(|&b| self.issue(BlockOp::Read, b, Vec::new(), IoKind::Read, false))
                .collect();
            self.st.borrow_mut().stats.block_reads += ids.len() as u64;
            let mut first_err = None;
            for id in ids {
                let c = IoWait { cx: self, id }.await;
                match c.result {
                    Ok(()) if c.data.len() == BLOCK_BYTES => out.push(c.data),
                    Ok(()) => {
                        first_err.get_or_insert(FsError::NeedsFunctionalDevice);
                    }
                    Err(e) => {
                        first_err.get_or_insert(FsError::Io(e));
                    }
                }
            }
            if let Some(e) = first_err {
                return Err(e);
            }
        }
        Ok(out)
    }

    /// Writes blocks to the device, `io_depth_max` in flight at once; returns once all have
    /// completed — durable on a device without a volatile write cache, and otherwise once a
    /// later [`Cx::flush`] completes. The first error wins.
    pub async fn write_raw(
        &self,
        blocks: Vec<(BlockNo, Vec<u8>)>,
        kind: IoKind,
    ) -> Result<(), FsError> {
        self.write_blocks(blocks, kind, false).await
    }

    /// [`Cx::write_raw`] with Force Unit Access: returns once the blocks are durable on any
    /// device (a plain write where every completed write is durable).
    pub async fn write_raw_fua(
        &self,
        blocks: Vec<(BlockNo, Vec<u8>)>,
        kind: IoKind,
    ) -> Result<(), FsError> {
        self.write_blocks(blocks, kind, self.barriers).await
    }

    async fn write_blocks(
        &self,
        blocks: Vec<(BlockNo, Vec<u8>)>,
        kind: IoKind,
        fua: bool,
    ) -> Result<(), FsError> {
        let mut first_err = None;
        let mut it = blocks.into_iter().peekable();
        while it.peek().is_some() {
            let ids: Vec<u64> = it
                .by_ref()
                .take(self.cfg.io_depth_max)
                .map(|(b, d)| {
                    debug_assert_eq!(d.len(), BLOCK_BYTES);
                    self.issue(BlockOp::Write, b, d, kind, fua)
                })
                .collect();
            {
                let stats = &mut self.st.borrow_mut().stats;
                stats.block_writes += ids.len() as u64;
                if fua {
                    stats.block_fua_writes += ids.len() as u64;
                }
            }
            for id in ids {
                let c = IoWait { cx: self, id }.await;
                if let Err(e) = c.result {
                    first_err.get_or_insert(FsError::Io(e));
                }
            }
        }
        match first_err {
            None => Ok(()),
            Some(e) => {
                self.st.borrow_mut().stats.write_errors += 1;
                Err(e)
            }
        }
    }

    /// Makes room for `n` more blocks in the cache: evicts least recently used blocks,
    /// writing dirty data back first.
    async fn make_room(&self, n: usize) -> Result<(), FsError> {
        let victims = {
            let st = self.st.borrow();
            let over = (st.cache.len() + st.ra_pending.len() + n)
                .saturating_sub(st.cache.capacity_blocks());
            if over == 0 {
                return Ok(());
            }
            let v = st.cache.victims(over);
            if v.len() < over {
                return Err(FsError::NoSpace(
                    "buffer cache full of uncommitted metadata",
                ));
            }
            v
        };
        let dirty: Vec<(BlockNo, Vec<u8>)> = {
            let st = self.st.borrow();
            victims
                .iter()
                .filter(|(_, d)| *d)
                .map(|&(b, _)| (b, st.cache.get(b).to_vec()))
                .collect()
        };
        if !dirty.is_empty() {
            self.write_raw(dirty, IoKind::DataWrite).await?;
        }
        let mut st = self.st.borrow_mut();
        for (b, d) in victims {
            if d {
                st.cache.mark_clean(b);
            }
            st.cache.remove(b);
        }
        Ok(())
    }

    /// Brings blocks into the cache (reading the missing ones in parallel).
    pub async fn load_many(&self, blocks: &[BlockNo], class: BlockClass) -> Result<(), FsError> {
        for &b in blocks {
            // A block being read ahead: wait for it (Linux waits on the locked page).
            self.read_ahead_wait(b).await;
        }
        let missing: Vec<BlockNo> = {
            let mut st = self.st.borrow_mut();
            let mut seen = BTreeSet::new();
            blocks
                .iter()
                .filter(|&&b| !st.cache.lookup(b) && seen.insert(b))
                .copied()
                .collect()
        };
        let batch = (self.st.borrow().cache.capacity_blocks() / 4).max(1);
        for chunk in missing.chunks(batch) {
            self.make_room(chunk.len()).await?;
            let data = self.read_raw_many(chunk).await?;
            let mut st = self.st.borrow_mut();
            for (&b, d) in chunk.iter().zip(data) {
                st.cache.insert(b, class, d, false);
            }
        }
        Ok(())
    }

    pub async fn load(&self, b: BlockNo, class: BlockClass) -> Result<(), FsError> {
        self.load_many(&[b], class).await
    }

    /// Puts new content for `b` in the cache, dirty (no read of the old content).
    pub async fn install(
        &self,
        b: BlockNo,
        class: BlockClass,
        data: Vec<u8>,
    ) -> Result<(), FsError> {
        let cached = {
            let mut st = self.st.borrow_mut();
            // New content: a read ahead of the old one in flight must not land over it.
            st.ra_pending.remove(&b);
            st.cache.remove(b).is_some()
        };
        if !cached {
            self.make_room(1).await?;
        }
        self.st.borrow_mut().cache.insert(b, class, data, true);
        Ok(())
    }

    /// Reads a cached block (loaded just before).
    pub fn with<R>(&self, b: BlockNo, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.st.borrow().cache.get(b))
    }

    /// Modifies a cached block (loaded just before); it becomes dirty.
    pub fn with_mut<R>(&self, b: BlockNo, f: impl FnOnce(&mut [u8]) -> R) -> R {
        f(self.st.borrow_mut().cache.get_mut(b))
    }

    /// The mounted superblock.
    pub fn sb(&self) -> Result<Superblock, FsError> {
        self.st
            .borrow()
            .mounted
            .as_ref()
            .map(|m| m.sb)
            .ok_or(FsError::NotMounted)
    }
}
