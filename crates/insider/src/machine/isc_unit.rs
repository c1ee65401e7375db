//! The ISC unit (§4.3): issuing drive reads round-robin over programs with credit, the
//! program slots, the output DMA into the host-side buffer, and virtual writes.

use super::*;

impl State {
    /// Forwards what the unit issues (round-robin over programs with credit, until none can
    /// issue) through the multiplexer to the storage.
    pub(super) fn issue(&mut self, q: &mut Q) {
        for i in self.unit.issue() {
            self.wake.touched.insert(i.fd);
            let (off, len, skip) = sector_span(i.range.device_offset_bytes, i.range.len_bytes);
            let id = self.submit_backing(q, BlockOp::Read, off, len, Vec::new());
            self.mux.push(SifEntry {
                req_id: id,
                slot: i.slot,
                origin: Origin::Isc(i.fd),
                skip_bytes: skip,
                take_bytes: i.range.len_bytes,
                done: None,
            });
        }
    }

    // ---- slots -----------------------------------------------------------------------------

    /// Starts `fd`'s slot if the unit can; its end is an event, and a read's returned credits
    /// issue at once.
    pub(super) fn try_slot(&mut self, q: &mut Q, fd: u32) {
        self.wake.touched.insert(fd);
        let Some(at) = self.unit.try_slot(fd, q.now()) else {
            return;
        };
        self.schedule(q, at, Ev::SlotDone(fd));
        let s = self.unit.stream(fd).expect("its slot started");
        assert!(s.slot_busy, "stream {fd}'s slot runs until its event");
        if s.dir == Direction::Read {
            self.issue(q);
        }
    }

    pub(super) fn slot_done(&mut self, q: &mut Q, fd: u32) {
        self.wake.touched.insert(fd);
        let Some(done) = self.unit.slot_done(fd, q.now()) else {
            return;
        };
        match done.dir {
            Direction::Read => self.try_dma(q, fd),
            Direction::Write => self.flush_writes(q, fd, done.ended),
        }
        self.try_slot(q, fd);
    }

    // ---- output DMA and the host-side buffer -----------------------------------------------

    pub(super) fn try_dma(&mut self, q: &mut Q, fd: u32) {
        let now = q.now();
        let Some(s) = touch(&mut self.wake, &mut self.unit, fd) else {
            return;
        };
        let room = if s.pipelined {
            s.host_capacity_bytes
                .saturating_sub(s.host_buf_bytes + s.dma_inflight_bytes)
        } else {
            s.want_bytes
                .saturating_sub(s.host_buf_bytes + s.dma_inflight_bytes)
        };
        let n = room.min(s.out_fifo_bytes);
        if n == 0 {
            return;
        }
        let mut moved = (0u64, Vec::new());
        while moved.0 < n {
            let (b, d) = s.out_fifo.front_mut().expect("bytes counted");
            let take = (*b).min(n - moved.0);
            if !d.is_empty() {
                moved.1.extend(d.drain(..take as usize));
            }
            *b -= take;
            moved.0 += take;
            if *b == 0 {
                s.out_fifo.pop_front();
            }
        }
        s.out_fifo_bytes -= n;
        s.dma_inflight_bytes += n;
        debug_assert_eq!(
            s.out_fifo.iter().map(|(b, _)| b).sum::<u64>(),
            s.out_fifo_bytes,
            "stream {fd}'s output FIFO count drifted"
        );
        assert!(
            !s.pipelined || s.host_buf_bytes + s.dma_inflight_bytes <= s.host_capacity_bytes,
            "stream {fd}'s DMA overran the host-side buffer"
        );
        s.dma_inflight.push_back(moved);
        let at = self.dma(now, Wire::Up, n);
        self.schedule(q, at, Ev::DmaDone(fd));
        self.try_slot(q, fd);
    }

    pub(super) fn dma_done(&mut self, q: &mut Q, fd: u32) {
        let Some(s) = touch(&mut self.wake, &mut self.unit, fd) else {
            return;
        };
        let (n, data) = s.dma_inflight.pop_front().expect("a DMA in flight");
        assert!(
            data.is_empty() || data.len() as u64 == n,
            "stream {fd}'s DMA carried {} bytes of data for {n} counted",
            data.len()
        );
        s.dma_inflight_bytes -= n;
        s.host_buf_bytes += n;
        s.host_buf.extend(data);
        self.try_dma(q, fd);
    }

    // ---- virtual writes --------------------------------------------------------------------

    /// Writes whole `C` units of the program's output (all of it, padded to a sector, when
    /// `last`) into the real files' preallocated extents.
    pub(super) fn flush_writes(&mut self, q: &mut Q, fd: u32, last: bool) {
        let c = self.cfg.credit_request_bytes;
        let functional = self.backing.is_functional();
        let mut todo = Vec::new();
        {
            let s = touch(&mut self.wake, &mut self.unit, fd).expect("open");
            while s.wbuf_bytes >= c || (last && s.wbuf_bytes > 0) {
                let n = s.wbuf_bytes.min(c);
                let Some(r) = s.next_range(n) else {
                    s.fault
                        .get_or_insert("output exceeds the preallocated real file".into());
                    return;
                };
                let data: Vec<u8> = if functional {
                    s.wbuf.drain(..r.len_bytes as usize).collect()
                } else {
                    Vec::new()
                };
                assert!(r.len_bytes <= n, "a write range longer than asked");
                s.wbuf_bytes -= r.len_bytes;
                s.written_bytes += r.len_bytes;
                s.writes_inflight += 1;
                todo.push((r, data));
            }
        }
        for (r, mut data) in todo {
            let (off, len, skip) = sector_span(r.device_offset_bytes, r.len_bytes);
            assert_eq!(skip, 0, "output extents start on sector boundaries");
            if functional {
                data.resize(len as usize, 0);
            }
            let id = self.submit_backing(q, BlockOp::Write, off, len, data);
            self.writes.insert(id, WritePurpose::Stream(fd));
        }
    }
}
