//! A compression task — the controller's (on flash-resident data) or the host's (re-reading
//! it over the interface) — as a pipeline of extents. An extent is up to `extent_pages`
//! pages taken in the order they were written:
//!
//! 1. **read** its pages (at most `io_depth` page operations of the task in flight);
//! 2. **compress** them on the task's engine (DEFLATE; on the controller, FTL work preempts
//!    it) — in functional fidelity the bytes read back from flash, in timing fidelity a
//!    compressed size from the table of real compressions;
//! 3. **write** the stream, padded to whole pages, at the head of the compressed log;
//! 4. **trim** every original that has not been overwritten since it was read, and record
//!    that its latest version lives in the extent.
//!
//! A page overwritten by the foreground while its extent was in flight is simply left out at
//! step 4 (the new version is queued for compression again), so no trim ever destroys newer
//! data: a trim and a later write of the same page pass the controller's FIFO in order.

use crate::config::ActiveFlashConfig;
use crate::corpus::PAGE_BYTES;
use crate::engine::Offload;
use crate::error::ActiveFlashError;
use crate::rig::{Fidelity, Machine, Origin, Rig, Q};
use nearflash_ftl::BlockOp;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Controller,
    Host,
}

impl Side {
    pub(crate) fn index(self) -> usize {
        match self {
            Side::Controller => 0,
            Side::Host => 1,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Worker {
    pub io_depth: u32,
    pub extents_max: usize,
    /// Charge compression time on the engine (false: the paper's Fig. 2 assumption of I/O
    /// only; the instructions are still counted for energy).
    pub charge_compute: bool,
    /// Pages waiting to be compressed: (page, version), in write order.
    pub source: VecDeque<(u64, u32)>,
    /// Take a short extent when fewer than `extent_pages` pages wait.
    pub draining: bool,
    /// Start no new extent.
    pub stopped: bool,
    pub io_inflight: u32,
    pub active: VecDeque<u64>,
    pub pages_in: u64,
    /// Input and compressed bytes of the committed extents.
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub instructions: f64,
}

impl Worker {
    pub fn new(side: Side, cfg: &ActiveFlashConfig) -> Worker {
        let io_depth = match side {
            Side::Controller => cfg.controller_io_depth,
            Side::Host => cfg.host_io_depth,
        };
        Worker {
            io_depth,
            // Enough extents to keep `io_depth` reads in flight, plus one compressing.
            extents_max: io_depth.div_ceil(cfg.extent_pages) as usize + 1,
            charge_compute: true,
            source: VecDeque::new(),
            draining: false,
            stopped: true,
            io_inflight: 0,
            active: VecDeque::new(),
            pages_in: 0,
            bytes_in: 0,
            bytes_out: 0,
            instructions: 0.0,
        }
    }
}

impl Worker {
    /// Input bytes over compressed bytes of the committed extents (0 before any).
    pub fn compression_ratio(&self) -> f64 {
        if self.bytes_out == 0 {
            0.0
        } else {
            self.bytes_in as f64 / self.bytes_out as f64
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Reading,
    Compressing,
    Writing,
}

#[derive(Debug)]
pub(crate) struct ExtentJob {
    side: Side,
    pages: Vec<(u64, u32)>,
    data: Vec<Vec<u8>>,
    stage: Stage,
    next_read: usize,
    reads_done: usize,
    stream: Vec<u8>,
    compressed_len: u64,
    log_page: u64,
    log_pages: u64,
    next_write: u64,
    writes_done: u64,
}

/// A committed extent: where its stream lives and which page versions it holds.
#[derive(Clone, Debug)]
pub(crate) struct ExtentRecord {
    pub log_page: u64,
    pub log_pages: u64,
    pub compressed_len: u64,
    pub pages: Vec<(u64, u32)>,
    /// Whether each page was still current when the extent was committed (a page the
    /// foreground overwrote meanwhile is in the stream with whichever version was read).
    pub committed: Vec<bool>,
}

impl Machine {
    /// Issues whatever the workers can issue now.
    pub(crate) fn pump_workers(&mut self, q: &mut Q) {
        for side in [Side::Controller, Side::Host] {
            self.pump_worker(q, side);
        }
    }

    fn pump_worker(&mut self, q: &mut Q, side: Side) {
        let w = side.index();
        loop {
            let ids: Vec<u64> = self.workers[w].active.iter().copied().collect();
            for id in ids {
                self.issue_io(q, w, id);
            }
            if !self.start_extent(side) {
                return;
            }
        }
    }

    fn issue_io(&mut self, q: &mut Q, w: usize, id: u64) {
        while self.workers[w].io_inflight < self.workers[w].io_depth {
            let job = self.jobs.get_mut(&id).expect("an active extent");
            match job.stage {
                Stage::Reading if job.next_read < job.pages.len() => {
                    let index = job.next_read;
                    job.next_read += 1;
                    let page = job.pages[index].0;
                    self.workers[w].io_inflight += 1;
                    self.command(
                        q,
                        BlockOp::Read,
                        page,
                        Vec::new(),
                        Origin::Read { extent: id, index },
                    );
                }
                Stage::Writing if job.next_write < job.log_pages => {
                    let k = job.next_write;
                    job.next_write += 1;
                    let page = job.log_page + k;
                    let data = if job.stream.is_empty() {
                        Vec::new()
                    } else {
                        let lo = (k as usize * PAGE_BYTES).min(job.stream.len());
                        let hi = (lo + PAGE_BYTES).min(job.stream.len());
                        let mut d = job.stream[lo..hi].to_vec();
                        d.resize(PAGE_BYTES, 0);
                        d
                    };
                    self.workers[w].io_inflight += 1;
                    self.command(q, BlockOp::Write, page, data, Origin::Write { extent: id });
                }
                _ => return,
            }
        }
    }

    /// Takes the next extent's pages from the worker's source; false if none was started.
    fn start_extent(&mut self, side: Side) -> bool {
        let w = side.index();
        let worker = &self.workers[w];
        let want = self.cfg.extent_pages as usize;
        if worker.stopped
            || worker.active.len() >= worker.extents_max
            || worker.io_inflight >= worker.io_depth
            || worker.source.is_empty()
            || (worker.source.len() < want && !worker.draining)
        {
            return false;
        }
        let mut pages = Vec::with_capacity(want);
        while pages.len() < want {
            let Some((page, version)) = self.workers[w].source.pop_front() else {
                break;
            };
            let i = page as usize;
            if self.versions.get(i) == version && self.location.get(i) == 0 {
                pages.push((page, version));
            }
        }
        if pages.is_empty() {
            return !self.workers[w].source.is_empty();
        }
        let id = self.extents_started;
        self.extents_started += 1;
        self.jobs.insert(
            id,
            ExtentJob {
                side,
                data: vec![Vec::new(); pages.len()],
                pages,
                stage: Stage::Reading,
                next_read: 0,
                reads_done: 0,
                stream: Vec::new(),
                compressed_len: 0,
                log_page: 0,
                log_pages: 0,
                next_write: 0,
                writes_done: 0,
            },
        );
        self.workers[w].active.push_back(id);
        true
    }

    pub(crate) fn page_read(&mut self, q: &mut Q, extent: u64, index: usize, data: Vec<u8>) {
        let job = self.jobs.get_mut(&extent).expect("an active extent");
        let w = job.side.index();
        job.data[index] = data;
        job.reads_done += 1;
        self.workers[w].io_inflight -= 1;
        if job.reads_done < job.pages.len() {
            return;
        }
        job.stage = Stage::Compressing;
        let pages = job.pages.len() as u32;
        let input = u64::from(pages) * PAGE_BYTES as u64;
        job.compressed_len = match self.fidelity {
            Fidelity::Functional => {
                let input: Vec<u8> = std::mem::take(&mut job.data).concat();
                job.stream = self.codec.compress(&input);
                job.stream.len() as u64
            }
            Fidelity::Timing => self.table.compressed_len(extent, pages),
        };
        let instructions = input as f64 * self.cfg.compress_instructions_per_byte();
        let side = job.side;
        let worker = &mut self.workers[w];
        worker.instructions += instructions;
        if worker.charge_compute {
            let engine = match side {
                Side::Controller => &mut self.controller,
                Side::Host => &mut self.host,
            };
            engine.push_background(Offload::Extent(extent), instructions);
            self.kick(q, side);
        } else {
            self.compressed(extent);
        }
    }

    /// The extent's compression finished: write its stream at the head of the log.
    pub(crate) fn compressed(&mut self, extent: u64) {
        let log_pages = {
            let job = &self.jobs[&extent];
            job.compressed_len.div_ceil(PAGE_BYTES as u64)
        };
        assert!(log_pages > 0, "a DEFLATE stream is never empty");
        let log_page = self.log_alloc(log_pages);
        let job = self.jobs.get_mut(&extent).expect("an active extent");
        job.log_page = log_page;
        job.log_pages = log_pages;
        job.stage = Stage::Writing;
    }

    pub(crate) fn page_written(&mut self, q: &mut Q, extent: u64) {
        let job = self.jobs.get_mut(&extent).expect("an active extent");
        let w = job.side.index();
        job.writes_done += 1;
        self.workers[w].io_inflight -= 1;
        if job.writes_done < job.log_pages {
            return;
        }
        let job = self.jobs.remove(&extent).expect("an active extent");
        let worker = &mut self.workers[w];
        worker.active.retain(|&e| e != extent);
        worker.bytes_in += (job.pages.len() * PAGE_BYTES) as u64;
        worker.bytes_out += job.compressed_len;
        let tag = u32::try_from(self.extents.len() + 1).expect("fewer than 2^32 extents");
        let mut committed = vec![false; job.pages.len()];
        for (k, &(page, version)) in job.pages.iter().enumerate() {
            let i = page as usize;
            if self.versions.get(i) == version && self.location.get(i) == 0 {
                committed[k] = true;
                self.location.set(i, tag);
                self.pages_compressed_live += 1;
                self.workers[w].pages_in += 1;
                self.command(q, BlockOp::Trim, page, Vec::new(), Origin::Trim);
            }
        }
        self.extents.push(ExtentRecord {
            log_page: job.log_page,
            log_pages: job.log_pages,
            compressed_len: job.compressed_len,
            pages: job.pages,
            committed,
        });
    }
}

impl Rig {
    /// Functional fidelity: reads every live user page and every extent back through the
    /// FTL, decompresses each extent and checks every page against the generator. Returns
    /// (extents checked, pages checked).
    pub fn verify(&mut self) -> Result<(u64, u64), ActiveFlashError> {
        if self.machine().fidelity != Fidelity::Functional {
            return Err(ActiveFlashError::Verification(
                "only functional fidelity keeps data to verify".into(),
            ));
        }
        let mut pages_checked = 0;
        let raw: Vec<u64> = (self.machine().versions.nonzero_indexes().into_iter())
            .filter(|&p| self.machine().location.get(p) == 0)
            .map(|p| p as u64)
            .collect();
        for chunk in raw.chunks(256) {
            let got = self.oracle_read(chunk)?;
            for (&page, data) in chunk.iter().zip(&got) {
                let want = self
                    .machine()
                    .corpus
                    .page(page, self.machine().versions.get(page as usize));
                if *data != want {
                    return Err(ActiveFlashError::Verification(format!(
                        "uncompressed page {page} does not read back as written"
                    )));
                }
                pages_checked += 1;
            }
        }
        let records = self.machine().extents.clone();
        for (e, rec) in records.iter().enumerate() {
            let log: Vec<u64> = (rec.log_page..rec.log_page + rec.log_pages).collect();
            let stream: Vec<u8> = self.oracle_read(&log)?.concat();
            let stream = &stream[..rec.compressed_len as usize];
            let out = self
                .machine()
                .codec
                .decompress(stream, rec.pages.len() * PAGE_BYTES)?;
            for (k, &(page, version)) in rec.pages.iter().enumerate() {
                if !rec.committed[k] {
                    continue;
                }
                let original = &out[k * PAGE_BYTES..(k + 1) * PAGE_BYTES];
                if *original != self.machine().corpus.page(page, version)[..] {
                    return Err(ActiveFlashError::Verification(format!(
                        "extent {e}: page {page} v{version} decompresses to other bytes"
                    )));
                }
                if self.machine().location.get(page as usize) as usize == e + 1 {
                    pages_checked += 1;
                }
            }
        }
        Ok((records.len() as u64, pages_checked))
    }
}
