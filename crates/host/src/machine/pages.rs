//! The page path of an operation: its chunks' pages found, reserved and read in through the
//! cache, read-ahead along sequential streams, and the copy to or from the user's buffer.

use super::*;

impl<D: BlockDevice> Host<D> {
    /// Starts (or resumes) the op's next chunk: finds, reserves and reads in its pages.
    pub(super) fn next_chunk<S: Schedule<HostEvent<D::Event>>>(&mut self, id: u64, q: &mut S) {
        let op = self.ops.get_mut(&id).expect("live");
        let end = op.offset + op.len;
        if op.pos == end {
            self.finish(id, q.now());
            return;
        }
        let chunk = self.cfg.io_request_bytes;
        op.chunk_end = end.min((op.pos / chunk + 1) * chunk);
        op.stage = Stage::Pages;
        let (kind, file, pos, chunk_end) = (op.kind, op.file.0, op.pos, op.chunk_end);
        let (offset, len) = (op.offset, op.len);
        self.cache.unpin_run(file, std::mem::take(&mut op.pinned));
        let first = pos / PAGE_BYTES;
        let mut pinned = first..first;
        let mut counted_to = op.counted_to;
        let mut fetch = Vec::new();
        let mut waiting = 0u32;
        let mut short_of_memory = false;
        let last = chunk_end.div_ceil(PAGE_BYTES);
        let mut index = first;
        while index < last {
            let key = PageKey { file, index };
            let count = index >= counted_to;
            if kind == OpKind::Read {
                // A read's run of cached pages: touched together, each a hit; the op waits
                // for those still being read in.
                let touched = self.cache.touch_run(file, index, last);
                if touched.end > index {
                    self.stats.hits += touched.end - index.max(counted_to).min(touched.end);
                    let mut pending = touched.pending;
                    while pending != 0 {
                        let page = index + u64::from(pending.trailing_zeros());
                        pending &= pending - 1;
                        self.wait_for(PageKey { file, index: page }, id);
                        waiting += 1;
                    }
                    counted_to = counted_to.max(touched.end);
                    index = touched.end;
                    continue;
                }
            }
            if kind == OpKind::Read {
                // A read's run of uncached pages: reserved together (as `read_ahead`), each
                // a miss to read in.
                let end = self.cache.uncached_until(file, index, last);
                let got = self.cache.reserve_run(file, index, end - index);
                // The op waits for each of them: its fetch names it (no per-page waiter).
                for index in index..index + got {
                    self.stats.misses += u64::from(index >= counted_to);
                    fetch.push(PageKey { file, index });
                    waiting += 1;
                }
                counted_to = counted_to.max(index + got);
                if got < end - index {
                    short_of_memory = true;
                    break;
                }
                index = end;
                continue;
            }
            let at = index;
            index += 1;
            let index = at;
            match self.cache.touch(key) {
                Some(s) if s.uptodate => self.stats.hits += u64::from(count),
                Some(_) => {
                    self.stats.hits += u64::from(count);
                    self.wait_for(key, id);
                    waiting += 1;
                }
                None => {
                    if !self.cache.reserve(key) {
                        short_of_memory = true;
                        break;
                    }
                    let (page_start, page_end) = (index * PAGE_BYTES, (index + 1) * PAGE_BYTES);
                    let whole =
                        kind == OpKind::Write && page_start >= offset && page_end <= offset + len;
                    if whole {
                        // A write covering the whole page needs no read.
                        self.cache.set_uptodate(key);
                    } else {
                        self.stats.misses += u64::from(count);
                        fetch.push(key);
                        waiting += 1;
                    }
                }
            }
            if kind == OpKind::Write {
                self.cache.pin(key);
                pinned.end = index + 1;
            }
            counted_to = counted_to.max(index + 1);
        }
        let op = self.ops.get_mut(&id).expect("live");
        op.pinned = pinned;
        op.counted_to = counted_to;
        op.waiting += waiting;
        self.fetch(&fetch, Some(id), q);
        if kind == OpKind::Read {
            self.read_ahead(id, q);
        }
        if short_of_memory {
            // Every page is pinned: write back to free some and retry when one frees.
            self.writeback(None, 0, q);
            self.blocked.push(id);
        } else if waiting == 0 {
            self.copy(id, q);
        }
    }

    /// Op `id` waits for page `key`, being read in.
    pub(super) fn wait_for(&mut self, key: PageKey, id: u64) {
        match self.page_waiters.entry(key) {
            Entry::Occupied(mut w) => w.get_mut().more.push(id),
            Entry::Vacant(w) => {
                w.insert(Waiters {
                    first: id,
                    more: Vec::new(),
                });
            }
        }
    }

    /// A sequential reader's next `read_ahead_bytes`, read in ahead of need (best effort:
    /// stops when memory is short).
    pub(super) fn read_ahead<S: Schedule<HostEvent<D::Event>>>(&mut self, id: u64, q: &mut S) {
        let op = &self.ops[&id];
        let file = &self.files[op.file.0 as usize];
        if op.offset != file.seq_next {
            return;
        }
        let from = op.chunk_end.div_ceil(PAGE_BYTES);
        let to = (op.chunk_end + self.cache_cfg.read_ahead_bytes)
            .min(file.size)
            .div_ceil(PAGE_BYTES);
        let fid = op.file.0;
        let mut fetch = Vec::new();
        // Page by page: skip a cached page, reserve an uncached one, stop when memory is
        // short — the uncached pages a run at a time (`reserve_run` evicts and stamps as
        // page-by-page reserves would; reserving evicts only other pages, so a run's pages
        // stay uncached until it is reserved, and the page after it is looked at after).
        let mut index = from;
        while index < to {
            if self.cache.is_cached(PageKey { file: fid, index }) {
                index += 1;
                continue;
            }
            let end = self.cache.uncached_until(fid, index, to);
            let got = self.cache.reserve_run(fid, index, end - index);
            fetch.extend((index..index + got).map(|index| PageKey { file: fid, index }));
            if got < end - index {
                break;
            }
            index = end;
        }
        self.stats.readahead_pages += fetch.len() as u64;
        self.fetch(&fetch, None, q);
    }

    pub(super) fn copy<S: Schedule<HostEvent<D::Event>>>(&mut self, id: u64, q: &mut S) {
        let op = self.ops.get_mut(&id).expect("live");
        if op.error.is_some() {
            self.finish(id, q.now());
            return;
        }
        let (kind, file, pos, chunk_end) = (op.kind, op.file.0, op.pos, op.chunk_end);
        if kind == OpKind::Write {
            // The pinned pages are the whole chunk's, all here; the copy lands in them:
            // dirty, unpinned.
            let pinned = std::mem::take(&mut op.pinned);
            assert_eq!(
                pinned,
                pos / PAGE_BYTES..chunk_end.div_ceil(PAGE_BYTES),
                "every page of the chunk is pinned"
            );
            self.cache
                .land_write_pages(pinned.map(|index| PageKey { file, index }));
        }
        self.ops.get_mut(&id).expect("live").stage = Stage::Copy;
        let bytes = chunk_end - pos;
        self.stats.copy_bytes += bytes;
        let at = self.cpu(q.now(), self.cfg.copy_ns(bytes));
        q.schedule_at(at, HostEvent::Cpu(id));
    }

    /// Reads `pages` (sorted) in: one block request per device-contiguous run. `waiter`: the
    /// op that reserved them and waits for every one of them (counted in its `waiting`), told
    /// by the request itself; `None` for read-ahead. Others that come to wait for one of the
    /// pages meanwhile are [`Host::wait_for`]'s.
    pub(super) fn fetch<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        pages: &[PageKey],
        waiter: Option<u64>,
        q: &mut S,
    ) {
        self.request_runs(
            BlockOp::Read,
            pages,
            |pages| Purpose::Fetch { pages, waiter },
            q,
        );
    }

    /// `pages` of the pages op `id` waits for are read in (or failed, by `c`).
    pub(super) fn pages_ready<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        id: u64,
        pages: u32,
        c: &BlockCompletion,
        q: &mut S,
    ) {
        let op = self.ops.get_mut(&id).expect("a page waiter is live");
        if let Err(e) = &c.result {
            op.error.get_or_insert(HostError::Io(e.clone()));
        }
        assert!(op.waiting >= pages && pages > 0);
        op.waiting -= pages;
        if op.waiting == 0 && op.stage == Stage::Pages && !self.blocked.contains(&id) {
            self.copy(id, q);
        }
    }
}
