//! Host requests through the buffer: admission of writes into units, FUA, flushes and trims
//! waiting for what they must follow, and reads served from the buffer or the device.

use super::*;

impl<D: BlockDevice> WriteCache<D> {
    /// Admits waiting writes in arrival order, unit by unit, while units are free.
    pub(super) fn pump_admit<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        let now = q.now();
        self.space_blocked = false;
        while let Some(&tag) = self.admit.front() {
            if self.behind_a_trim(tag) {
                return;
            }
            if !self.admit_pieces(tag) {
                self.space_blocked = true;
                let h = self.host_req(tag);
                if h.waiting_since.is_none() {
                    h.waiting_since = Some(now);
                    self.stats.writes_waited += 1;
                }
                return;
            }
            self.admit.pop_front();
            let h = self.host_req(tag);
            let len = h.req.len_bytes;
            let waited = h.waiting_since.map_or(0, |t| now.since(t).as_ns());
            h.req.data = Vec::new();
            self.stats.write_wait_ns += waited;
            let at = self.dram.access(now, len);
            q.schedule_at(at, WcEvent::Inserted(tag));
        }
    }

    /// A write waits behind an earlier trim of a range it overlaps until the trim completes.
    pub(super) fn behind_a_trim(&self, tag: u32) -> bool {
        let w = self.host[tag as usize].as_ref().expect("a waiting write");
        self.trims.iter().any(|&t| {
            let t = self.host[t as usize].as_ref().expect("a trim in flight");
            t.seq < w.seq && overlaps(&t.req, &w.req)
        })
    }

    /// Copies as much of write `tag` into the buffer as free units allow; true when all of it
    /// is in.
    pub(super) fn admit_pieces(&mut self, tag: u32) -> bool {
        let ub = self.cfg.unit_bytes;
        let capacity = self.cfg.capacity_units();
        let mut h = self.host[tag as usize].take().expect("a waiting write");
        let end = h.req.offset_bytes + h.req.len_bytes;
        let mut done = true;
        while h.req.offset_bytes + h.admitted_bytes < end {
            let at = h.req.offset_bytes + h.admitted_bytes;
            let unit = at / ub;
            let piece_end = end.min((unit + 1) * ub);
            if !self.units.contains_key(&unit) {
                if self.occupied_units() >= capacity {
                    done = false;
                    break;
                }
                self.units.insert(
                    unit,
                    Unit {
                        data: if self.functional {
                            vec![0; ub as usize]
                        } else {
                            Vec::new()
                        },
                        valid: 0,
                        version: 0,
                        dirty_since: h.seq,
                        destaging: None,
                        placement: Vec::new(),
                    },
                );
                self.dirty.insert((h.seq, unit));
                self.stats.occupancy_peak_units =
                    self.stats.occupancy_peak_units.max(self.occupied_units());
            }
            let u = self.units.get_mut(&unit).expect("just ensured");
            assert!(h.seq > u.version, "writes enter a unit in arrival order");
            u.version = h.seq;
            if let Some(d) = &mut u.destaging {
                d.since_after.get_or_insert(h.seq);
            }
            let first = ((at - unit * ub) / SECTOR_BYTES) as usize;
            let count = ((piece_end - at) / SECTOR_BYTES) as usize;
            for i in first..first + count {
                u.valid |= 1 << i;
            }
            if h.placement.is_some() || !u.placement.is_empty() {
                u.placement.resize(self.sectors_per_unit as usize, None);
                u.placement[first..first + count].fill(h.placement);
            }
            if self.functional {
                let src = (at - h.req.offset_bytes) as usize;
                u.data[first * SECTOR..(first + count) * SECTOR]
                    .copy_from_slice(&h.req.data[src..src + count * SECTOR]);
            }
            h.admitted_bytes += piece_end - at;
        }
        self.host[tag as usize] = Some(h);
        done
    }

    /// FUA writes whose units are all durable complete.
    pub(super) fn check_fua<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        let mut i = 0;
        while i < self.fua_waiting.len() {
            let tag = self.fua_waiting[i];
            let h = self.host[tag as usize].as_ref().expect("a FUA write waits");
            if self.durable_through(h.seq, &h.req) {
                self.fua_waiting.remove(i);
                self.complete(tag, Ok(()), q);
            } else {
                i += 1;
            }
        }
    }

    /// Every write up to sequence `seq` into the units of `req`'s range is durable.
    pub(super) fn durable_through(&self, seq: u64, req: &BlockRequest) -> bool {
        let (first, last) = self.unit_span(req);
        self.units
            .range(first..=last)
            .all(|(_, u)| u.dirty_since > seq)
    }

    pub(super) fn unit_span(&self, req: &BlockRequest) -> (u64, u64) {
        let ub = self.cfg.unit_bytes;
        let first = req.offset_bytes / ub;
        let last = (req.offset_bytes + req.len_bytes.max(1) - 1) / ub;
        (first, last)
    }

    /// Flushes whose units are drained go to the device.
    pub(super) fn check_flushes<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        let oldest_dirty = self.dirty.first().map_or(u64::MAX, |&(since, _)| since);
        let mut i = 0;
        while i < self.flush_waiting.len() {
            let tag = self.flush_waiting[i];
            let h = self.host[tag as usize].as_ref().expect("a flush waits");
            if oldest_dirty > h.seq {
                self.flush_waiting.remove(i);
                let req = BlockRequest {
                    id: DevTag::Flush(tag).encode(),
                    op: BlockOp::Flush,
                    offset_bytes: 0,
                    len_bytes: 0,
                    data: Vec::new(),
                };
                self.dev.submit(req, &mut q.map(WcEvent::Device));
            } else {
                i += 1;
            }
        }
    }

    /// Trims whose range the buffer no longer holds, and before which every write is in the
    /// buffer, go to the device.
    pub(super) fn check_trims<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        let admitting = self
            .admit
            .front()
            .map(|&t| self.host[t as usize].as_ref().expect("a waiting write").seq);
        for i in 0..self.trims.len() {
            let tag = self.trims[i];
            let h = self.host[tag as usize].as_ref().expect("a trim waits");
            if h.sent || admitting.is_some_and(|s| s < h.seq) {
                continue;
            }
            let (first, last) = self.unit_span(&h.req);
            if self.units.range(first..=last).next().is_some() {
                continue;
            }
            let req = BlockRequest {
                id: DevTag::Trim(tag).encode(),
                op: BlockOp::Trim,
                offset_bytes: h.req.offset_bytes,
                len_bytes: h.req.len_bytes,
                data: Vec::new(),
            };
            self.host_req(tag).sent = true;
            self.dev.submit(req, &mut q.map(WcEvent::Device));
        }
    }

    pub(super) fn start_read<S: Schedule<WcEvent<D::Event>>>(&mut self, tag: u32, q: &mut S) {
        let now = q.now();
        let spu = self.sectors_per_unit;
        let functional = self.functional;
        let mut h = self.host[tag as usize].take().expect("a new read");
        let first = h.req.offset_bytes / SECTOR_BYTES;
        let count = h.req.len_bytes / SECTOR_BYTES;
        h.hit = vec![false; count as usize];
        if functional {
            h.data = vec![0; h.req.len_bytes as usize];
        }
        let mut hits = 0u64;
        let (first_unit, last_unit) = self.unit_span(&h.req);
        for (&unit, u) in self.units.range(first_unit..=last_unit) {
            let lo = (unit * spu).max(first);
            let hi = ((unit + 1) * spu).min(first + count);
            for s in lo..hi {
                let k = (s % spu) as usize;
                if u.valid & 1 << k == 0 {
                    continue;
                }
                let i = (s - first) as usize;
                h.hit[i] = true;
                hits += 1;
                if functional {
                    h.data[i * SECTOR..(i + 1) * SECTOR]
                        .copy_from_slice(&u.data[k * SECTOR..(k + 1) * SECTOR]);
                }
            }
        }
        self.stats.read_hit_sectors += hits;
        let miss_first = h.hit.iter().position(|&x| !x);
        let miss_last = h.hit.iter().rposition(|&x| !x);
        self.host[tag as usize] = Some(h);
        match (miss_first, miss_last) {
            (Some(a), Some(b)) => {
                if hits == 0 {
                    self.stats.read_misses += 1;
                } else {
                    self.stats.read_partial_hits += 1;
                }
                let req = BlockRequest {
                    id: DevTag::Read(tag).encode(),
                    op: BlockOp::Read,
                    offset_bytes: (first + a as u64) * SECTOR_BYTES,
                    len_bytes: (b - a + 1) as u64 * SECTOR_BYTES,
                    data: Vec::new(),
                };
                self.dev.submit(req, &mut q.map(WcEvent::Device));
            }
            _ => {
                self.stats.read_hits += 1;
                let at = self.dram.access(now, hits * SECTOR_BYTES);
                q.schedule_at(at, WcEvent::ReadHit(tag));
            }
        }
    }

    /// The device returned the missing part of read `tag`: merge it under the buffered
    /// sectors taken at arrival.
    pub(super) fn finish_read<S: Schedule<WcEvent<D::Event>>>(
        &mut self,
        tag: u32,
        c: BlockCompletion,
        q: &mut S,
    ) {
        if self.holdup {
            return;
        }
        if c.result.is_ok() && self.functional {
            let h = self.host_req(tag);
            let base = ((c.offset_bytes - h.req.offset_bytes) / SECTOR_BYTES) as usize;
            assert_eq!(
                c.data.len() as u64,
                c.len_bytes,
                "the device returns the range"
            );
            for i in 0..(c.len_bytes / SECTOR_BYTES) as usize {
                let j = base + i;
                if !h.hit[j] {
                    h.data[j * SECTOR..(j + 1) * SECTOR]
                        .copy_from_slice(&c.data[i * SECTOR..(i + 1) * SECTOR]);
                }
            }
        }
        self.complete(tag, c.result, q);
    }
}
