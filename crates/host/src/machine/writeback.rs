//! Write-back: dirty pages written back when a write passes the dirty limits or an fsync asks,
//! and the writes that wait for them.

use super::*;

impl<D: BlockDevice> Host<D> {
    /// fsync and O_DIRECT: write back the range's dirty pages and wait; then go on.
    pub(super) fn unwritten<S: Schedule<HostEvent<D::Event>>>(&mut self, id: u64, q: &mut S) {
        let op = &self.ops[&id];
        let (file, first) = (op.file.0, op.offset / PAGE_BYTES);
        let last = (op.offset + op.len).div_ceil(PAGE_BYTES).max(first + 1) - 1;
        self.writeback(Some((file, first, last)), 0, q);
        if self.cache.unwritten_in(file, first, last) {
            self.blocked.push(id);
            return;
        }
        let op = self.ops.get_mut(&id).expect("live");
        op.stage = Stage::Io;
        if op.kind == OpKind::Fsync {
            op.waiting = 1;
            self.request(BlockOp::Flush, 0, 0, Purpose::Op(id), q);
            return;
        }
        let (kind, offset, len) = (op.kind, op.offset, op.len);
        if kind == OpKind::Write {
            // The device's copy is about to be newer than any cached page of the range.
            for key in self.cache.cached_in(file, first, last) {
                self.cache.remove(key);
            }
        }
        let bop = if kind == OpKind::Read {
            BlockOp::Read
        } else {
            BlockOp::Write
        };
        let mut pos = offset;
        let mut n = 0;
        while pos < offset + len {
            let (dev, contiguous) = self.files[file as usize].map(pos);
            let take = contiguous
                .min(offset + len - pos)
                .min(self.cfg.io_request_bytes);
            self.request(bop, dev, take, Purpose::Op(id), q);
            pos += take;
            n += 1;
        }
        self.stats.direct_bytes += len;
        self.ops.get_mut(&id).expect("live").waiting = n;
    }

    /// The flusher: above the background limit, write back until under it.
    pub(super) fn balance_dirty<S: Schedule<HostEvent<D::Event>>>(&mut self, q: &mut S) {
        let background = self.cache_cfg.dirty_background_bytes();
        if self.cache.dirty_bytes() > background {
            self.writeback(None, background, q);
        }
    }

    /// Starts write-back of dirty pages (of `range` if given) in file and page order until
    /// no more than `until_bytes` stay dirty (a page written again during its write-back
    /// goes once that finishes).
    pub(super) fn writeback<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        range: Option<(u32, u64, u64)>,
        until_bytes: u64,
        q: &mut S,
    ) {
        let from = range.map_or(PageKey { file: 0, index: 0 }, |(file, first, _)| PageKey {
            file,
            index: first,
        });
        let mut pages = Vec::new();
        let mut dirty = self.cache.dirty_bytes();
        for key in self.cache.dirty_from(from) {
            if dirty <= until_bytes
                || range.is_some_and(|(file, _, last)| key.file != file || key.index > last)
            {
                break;
            }
            pages.push(key);
            dirty -= PAGE_BYTES;
        }
        self.cache.start_writeback_pages(pages.iter().copied());
        self.stats.writeback_pages += pages.len() as u64;
        self.request_runs(BlockOp::Write, &pages, Purpose::Writeback, q);
    }
}
