//! The ISC unit (§4.3): issuing drive reads round-robin over programs with credit, the
//! program slots, the output DMA into the host-side buffer, and virtual writes.

use super::*;

impl State {
    /// Issues requests round-robin over programs with credit until none can issue.
    pub(super) fn issue(&mut self, q: &mut Q) {
        let c = self.cfg.credit_request_bytes;
        loop {
            let fds: Vec<u32> = self
                .streams
                .values()
                .filter(|s| s.wants_issue())
                .map(|s| s.fd)
                .collect();
            if fds.is_empty() {
                return;
            }
            for fd in self.isc.round_robin(fds) {
                let s = touch(&mut self.wake, &mut self.streams, fd).expect("listed");
                if !s.wants_issue() {
                    continue;
                }
                let r = s.next_range(c).expect("bytes left to issue");
                s.credits -= 1;
                s.inflight_chunks += 1;
                s.issued_in_bytes += r.len_bytes;
                assert!(
                    s.issued_in_bytes <= s.total_in_bytes,
                    "stream {fd} issued past its files' end"
                );
                let slot = s.slot;
                let (off, len, skip) = sector_span(r.device_offset_bytes, r.len_bytes);
                let id = self.submit_backing(q, BlockOp::Read, off, len, Vec::new());
                self.isc.push(SifEntry {
                    req_id: id,
                    slot,
                    origin: Origin::Isc(fd),
                    skip_bytes: skip,
                    take_bytes: r.len_bytes,
                    done: None,
                });
                self.isc.served(fd);
            }
        }
    }

    /// Gives credits back for room in the input FIFO not already promised.
    pub(super) fn release_credits(&mut self, fd: u32) {
        let r = self.cfg.credits_initial;
        let s = touch(&mut self.wake, &mut self.streams, fd).expect("open");
        let promised = s.credits + s.inflight_chunks + s.fifo.len() as u32;
        if promised < r {
            s.credits += r - promised;
        }
        assert!(
            s.credits + s.inflight_chunks + s.fifo.len() as u32 <= r,
            "stream {fd} holds more credits than the input FIFO has room for"
        );
    }

    // ---- slots -----------------------------------------------------------------------------

    pub(super) fn try_slot(&mut self, q: &mut Q, fd: u32) {
        let c = self.cfg.credit_request_bytes;
        let now = q.now();
        let Some(s) = touch(&mut self.wake, &mut self.streams, fd) else {
            return;
        };
        if !s.armed || s.slot_busy || s.fault.is_some() || s.out_fifo_bytes >= c {
            return;
        }
        let Some(chunk) = s.fifo.pop_front() else {
            return;
        };
        let out = match run_program(s, &chunk, now) {
            Ok(out) => out,
            Err(reason) => {
                s.fault = Some(reason);
                s.fifo.clear();
                return;
            }
        };
        s.consumed_in_bytes += chunk.bytes;
        s.produced_out_bytes += out.0;
        assert!(
            s.dir == Direction::Write || s.consumed_in_bytes <= s.issued_in_bytes,
            "stream {fd}'s program consumed input never read"
        );
        assert!(!s.slot_busy, "stream {fd}'s slot started twice");
        s.slot_out = out;
        s.slot_chunk_last = chunk.last;
        s.slot_busy = true;
        let metered = s
            .run
            .program
            .as_mut()
            .and_then(|p| p.take_metered_instructions());
        let (slot, cost, throttle) = (s.slot, s.run.cost, s.run.throttle_mb_s);
        let at = match metered {
            Some(instructions) => self.engines.run_metered(slot, instructions, now),
            None => self.engines.run(slot, chunk.bytes, cost, throttle, now),
        };
        self.schedule(q, at, Ev::SlotDone(fd));
        if self.streams[&fd].dir == Direction::Read {
            self.release_credits(fd);
            self.issue(q);
        }
    }

    pub(super) fn slot_done(&mut self, q: &mut Q, fd: u32) {
        let now = q.now();
        let Some(s) = touch(&mut self.wake, &mut self.streams, fd) else {
            return;
        };
        assert!(s.slot_busy, "stream {fd}'s slot finished without starting");
        s.slot_busy = false;
        if let Some(probe) = &mut s.consumed_probe {
            probe.sample(now, s.consumed_in_bytes);
        }
        let out = std::mem::take(&mut s.slot_out);
        if s.slot_chunk_last {
            s.program_ended = true;
        }
        match s.dir {
            Direction::Read => {
                if out.0 > 0 {
                    s.out_fifo_bytes += out.0;
                    s.out_fifo.push_back(out);
                }
                self.try_dma(q, fd);
            }
            Direction::Write => {
                s.wbuf_bytes += out.0;
                s.wbuf.extend_from_slice(&out.1);
                let last = s.program_ended;
                self.flush_writes(q, fd, last);
            }
        }
        self.try_slot(q, fd);
    }

    // ---- output DMA and the host-side buffer -----------------------------------------------

    pub(super) fn try_dma(&mut self, q: &mut Q, fd: u32) {
        let now = q.now();
        let Some(s) = touch(&mut self.wake, &mut self.streams, fd) else {
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
        let Some(s) = touch(&mut self.wake, &mut self.streams, fd) else {
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
            let s = touch(&mut self.wake, &mut self.streams, fd).expect("open");
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

/// Runs the program over one chunk: functional fidelity feeds its flits to the real program;
/// timing fidelity produces `output_per_input` of the input. Returns the output (bytes, data).
fn run_program(s: &mut Stream, chunk: &Chunk, now: SimTime) -> Result<(u64, Vec<u8>), String> {
    let Some(p) = s.run.program.as_mut() else {
        let before = (s.consumed_in_bytes as f64 * s.run.output_per_input) as u64;
        let after = ((s.consumed_in_bytes + chunk.bytes) as f64 * s.run.output_per_input) as u64;
        return Ok((after - before, Vec::new()));
    };
    let mut bytes = std::mem::take(&mut s.partial_flit);
    bytes.extend_from_slice(&chunk.data);
    let flits: Vec<Flit> = if chunk.last {
        flits_of(&bytes)
    } else {
        s.partial_flit = bytes.split_off(bytes.len() / FLIT_BYTES * FLIT_BYTES);
        bytes
            .chunks_exact(FLIT_BYTES)
            .map(|c| Flit::new(c, false))
            .collect()
    };
    debug_assert!(s.partial_flit.len() < FLIT_BYTES);
    let w: &mut FlitWriter = &mut s.writer;
    p.set_now_ns(now.as_ns());
    for f in &flits {
        p.on_flit(f, w).map_err(|e| e.to_string())?;
    }
    if chunk.last && !w.ended() {
        return Err(format!(
            "{} did not end its output at end of input",
            p.name()
        ));
    }
    let mut out = Vec::new();
    for f in w.drain() {
        out.extend_from_slice(f.payload());
    }
    Ok((out.len() as u64, out))
}
