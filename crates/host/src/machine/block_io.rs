//! Block requests: runs of pages become requests of at most the stack's request size, queued to
//! the device within its queue depth, and completions handed back to the pages waiting on them.

use super::*;

impl<D: BlockDevice> Host<D> {
    /// Groups sorted pages into device-contiguous runs of one file and at most
    /// `io_request_bytes`, and requests `op` of each, in order.
    pub(super) fn request_runs<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        op: BlockOp,
        pages: &[PageKey],
        purpose: impl Fn(PageRun) -> Purpose,
        q: &mut S,
    ) {
        let mut run: Option<(u64, u64, PageRun)> = None;
        for &key in pages {
            let (dev, _) = self.files[key.file as usize].map(key.index * PAGE_BYTES);
            match &mut run {
                Some((start, len, keys))
                    if *start + *len == dev
                        && keys.file() == key.file
                        && *len + PAGE_BYTES <= self.cfg.io_request_bytes =>
                {
                    *len += PAGE_BYTES;
                    keys.push(key);
                }
                _ => {
                    let span = PageRun::Span {
                        file: key.file,
                        first: key.index,
                        count: 1,
                    };
                    if let Some((start, len, keys)) = run.replace((dev, PAGE_BYTES, span)) {
                        self.request(op, start, len, purpose(keys), q);
                    }
                }
            }
        }
        if let Some((start, len, keys)) = run {
            self.request(op, start, len, purpose(keys), q);
        }
    }

    /// The stack builds a block request (its CPU cost per request and per page), then
    /// queues it for the device.
    pub(super) fn request<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        op: BlockOp,
        offset_bytes: u64,
        len_bytes: u64,
        purpose: Purpose,
        q: &mut S,
    ) {
        let io = self.next_io;
        self.next_io += 1;
        let ns = self.cache_cfg.request_stack_ns(&self.cfg, len_bytes);
        self.ios.insert(
            io,
            Io {
                op,
                offset_bytes,
                len_bytes,
                purpose,
            },
        );
        let at = self.cpu(q.now(), ns);
        q.schedule_at(at, HostEvent::Submit(io));
    }

    /// Submits queued requests while fewer than `io_queue_depth` are in flight.
    pub(super) fn pump<S: Schedule<HostEvent<D::Event>>>(&mut self, q: &mut S) {
        while self.in_flight < self.cfg.io_queue_depth {
            let Some(io) = self.ready.pop_front() else {
                break;
            };
            let built = &self.ios[&io];
            let req = BlockRequest {
                id: io,
                op: built.op,
                offset_bytes: built.offset_bytes,
                len_bytes: built.len_bytes,
                data: Vec::new(),
            };
            self.in_flight += 1;
            self.stats.device_requests += 1;
            self.stats.device_in_flight_max = self.stats.device_in_flight_max.max(self.in_flight);
            self.dev.submit(req, &mut q.map(HostEvent::Device));
        }
        assert!(self.in_flight <= self.cfg.io_queue_depth);
    }

    pub(super) fn drain_device<S: Schedule<HostEvent<D::Event>>>(&mut self, q: &mut S) {
        loop {
            self.dev.take_completions(&mut self.dev_done);
            if self.dev_done.is_empty() {
                return;
            }
            let done = std::mem::take(&mut self.dev_done);
            for c in done {
                self.device_done(c, q);
            }
            self.pump(q);
        }
    }

    pub(super) fn device_done<S: Schedule<HostEvent<D::Event>>>(
        &mut self,
        c: BlockCompletion,
        q: &mut S,
    ) {
        let io = self
            .ios
            .remove(&c.id)
            .expect("the device completes our request");
        assert!(self.in_flight > 0);
        self.in_flight -= 1;
        let mut freed = false;
        match io.purpose {
            Purpose::Fetch { pages, waiter } => {
                // Nothing below reserves or evicts, so the pages may all be marked first.
                let keys = (0..pages.len()).map(|i| pages.key(i));
                if c.result.is_ok() {
                    self.cache.set_uptodate_pages(keys);
                } else {
                    keys.for_each(|key| self.cache.remove(key));
                }
                freed = true;
                // The ops waiting are told page by page, the fetch's own waiter first of each
                // page's: told of all its pages at the last, the only one where it can have
                // nothing left to wait for.
                let n = pages.len();
                let fetcher = waiter.map(|id| (id, u32::try_from(n).expect("a request's pages")));
                if self.page_waiters.is_empty() {
                    if let Some((id, count)) = fetcher {
                        self.pages_ready(id, count, &c, q);
                    }
                } else {
                    for i in 0..n {
                        if i + 1 == n {
                            if let Some((id, count)) = fetcher {
                                self.pages_ready(id, count, &c, q);
                            }
                        }
                        if let Some(waiters) = self.page_waiters.remove(&pages.key(i)) {
                            self.pages_ready(waiters.first, 1, &c, q);
                            for op in waiters.more {
                                self.pages_ready(op, 1, &c, q);
                            }
                        }
                    }
                }
            }
            Purpose::Writeback(pages) => {
                self.cache
                    .end_writeback_pages((0..pages.len()).map(|i| pages.key(i)));
                freed = true;
            }
            Purpose::Op(id) => {
                let op = self.ops.get_mut(&id).expect("an op's request names it");
                if let Err(e) = &c.result {
                    op.error.get_or_insert(HostError::Io(e.clone()));
                }
                op.waiting -= 1;
                if op.waiting == 0 {
                    self.finish(id, q.now());
                }
            }
        }
        if freed {
            self.retry_blocked(q);
        }
    }

    pub(super) fn retry_blocked<S: Schedule<HostEvent<D::Event>>>(&mut self, q: &mut S) {
        let blocked = std::mem::take(&mut self.blocked);
        for id in blocked {
            let op = &self.ops[&id];
            match op.stage {
                Stage::Pages if op.waiting > 0 => self.blocked.push(id),
                Stage::Pages => self.next_chunk(id, q),
                Stage::Throttled
                    if self.cache.unwritten_bytes() > self.cache_cfg.dirty_limit_bytes() =>
                {
                    self.blocked.push(id)
                }
                Stage::Throttled => self.next_chunk(id, q),
                Stage::Unwritten => self.unwritten(id, q),
                stage => unreachable!("{stage:?} does not block"),
            }
        }
    }
}
