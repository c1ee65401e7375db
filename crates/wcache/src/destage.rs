//! Destaging: when the buffer passes its threshold or goes idle, runs of dirty units are written
//! to the device behind it, oldest first, and their units freed when the writes complete.

use super::*;

impl<D: BlockDevice> WriteCache<D> {
    pub(super) fn want_destage(&self) -> bool {
        self.holdup
            || self.draining
            || self.idle_drain
            || self.space_blocked
            || !self.flush_waiting.is_empty()
            || !self.fua_waiting.is_empty()
            || self
                .trims
                .iter()
                .any(|&t| !self.host[t as usize].as_ref().expect("a trim").sent)
    }

    pub(super) fn pump_destage<S: Schedule<WcEvent<D::Event>>>(&mut self, q: &mut S) {
        let occupied = self.occupied_units();
        if occupied >= self.cfg.high_units() {
            self.draining = true;
        } else if occupied <= self.cfg.low_units() {
            self.draining = false;
        }
        while !self.free_jobs.is_empty() && self.want_destage() {
            let Some(start) = self.next_destage_start() else {
                return;
            };
            self.start_job(start, q);
        }
    }

    /// The elevator: the first unit not being destaged at or after the cursor, wrapping —
    /// preferring one outside the `destage_bytes_max` windows that jobs in flight touch, so
    /// that concurrent jobs land on different parts of the device (two jobs into one FTL page
    /// group would wait for each other's read-modify-write).
    pub(super) fn next_destage_start(&self) -> Option<u64> {
        if self.destaging_units == self.occupied_units() {
            // Every buffered unit is in a job already (the usual state under a sequential
            // stream: without this, every event searched the whole buffer).
            return None;
        }
        let window_units = self.cfg.destage_bytes_max / self.cfg.unit_bytes;
        // A job's units are contiguous (`start_job`): its windows are those of its first
        // through its last unit.
        let busy: BTreeSet<u64> = self
            .jobs
            .iter()
            .flatten()
            .flat_map(|j| {
                let first = j.units.first().map_or(0, |&(u, _)| u / window_units);
                let last = j.units.last().map_or(0, |&(u, _)| u / window_units);
                first..=last
            })
            .collect();
        // Units of a job in flight lie in busy windows, so the first unit outside them is
        // free to destage; whole busy windows are skipped (a sequential stream fills the
        // buffer with units of busy windows, and testing them one by one made each call
        // cost the buffer's size times the jobs in flight).
        let apart = |from: u64, to: u64| {
            let mut at = from;
            while at < to {
                let (&u, unit) = self.units.range(at..to).next()?;
                let w = u / window_units;
                if busy.contains(&w) {
                    at = (w + 1) * window_units;
                    continue;
                }
                debug_assert!(
                    unit.destaging.is_none(),
                    "a destaging unit is in a busy window"
                );
                return Some(u);
            }
            None
        };
        let free = |(&u, unit): (&u64, &Unit)| unit.destaging.is_none().then_some(u);
        apart(self.cursor, u64::MAX)
            .or_else(|| apart(0, self.cursor))
            .or_else(|| self.units.range(self.cursor..).find_map(free))
            .or_else(|| self.units.range(..self.cursor).find_map(free))
    }

    /// Starts a job at unit `start` with the contiguous units after it, up to the job limit.
    pub(super) fn start_job<S: Schedule<WcEvent<D::Event>>>(&mut self, start: u64, q: &mut S) {
        let units_max = self.cfg.destage_bytes_max / self.cfg.unit_bytes;
        let job = self.free_jobs.pop().expect("a free job slot");
        let mut units = Vec::new();
        let mut next = start;
        while (units.len() as u64) < units_max {
            match self.units.get_mut(&next) {
                Some(u) if u.destaging.is_none() => {
                    u.destaging = Some(Destaging {
                        snapshot: u.version,
                        since_after: None,
                    });
                    units.push((next, u.version));
                    next += 1;
                }
                _ => break,
            }
        }
        assert!(!units.is_empty(), "a job starts at a unit free to destage");
        self.destaging_units += units.len() as u64;
        self.cursor = next;
        let writes = self.destage_writes(job, &units);
        let bytes: u64 = writes.iter().map(|(w, _)| w.len_bytes).sum();
        self.stats.destage_jobs += 1;
        self.stats.destage_writes += writes.len() as u64;
        self.stats.destaged_bytes += bytes;
        let at = self.dram.access(q.now(), bytes);
        self.jobs[job as usize] = Some(Job {
            units,
            writes,
            writes_left: 0,
            error: None,
        });
        q.schedule_at(at, WcEvent::DestageOut(job));
    }

    /// One device write per run of valid sectors of one placement directive across the job's
    /// (contiguous) units: sectors of different handles are never merged into one write.
    pub(super) fn destage_writes(
        &self,
        job: u32,
        units: &[(u64, u64)],
    ) -> Vec<(BlockRequest, Option<PlacementDirective>)> {
        let spu = self.sectors_per_unit;
        let mut writes: Vec<(BlockRequest, Option<PlacementDirective>)> = Vec::new();
        let mut run_end = None;
        for &(unit, _) in units {
            let u = &self.units[&unit];
            for k in 0..spu {
                if u.valid & 1 << k == 0 {
                    run_end = None;
                    continue;
                }
                let s = unit * spu + k;
                let placement = u.placement.get(k as usize).copied().flatten();
                let same_run =
                    run_end == Some(s) && writes.last().is_some_and(|&(_, p)| p == placement);
                if !same_run {
                    let req = BlockRequest {
                        id: DevTag::Destage {
                            job,
                            part: writes.len() as u32,
                        }
                        .encode(),
                        op: BlockOp::Write,
                        offset_bytes: s * SECTOR_BYTES,
                        len_bytes: 0,
                        data: Vec::new(),
                    };
                    writes.push((req, placement));
                }
                let (w, _) = writes.last_mut().expect("a run is open");
                w.len_bytes += SECTOR_BYTES;
                if self.functional {
                    let k = k as usize;
                    w.data
                        .extend_from_slice(&u.data[k * SECTOR..(k + 1) * SECTOR]);
                }
                run_end = Some(s + 1);
            }
        }
        assert!(!writes.is_empty(), "a buffered unit holds a sector");
        writes
    }

    pub(super) fn destage_out<S: Schedule<WcEvent<D::Event>>>(&mut self, job: u32, q: &mut S) {
        let j = self.jobs[job as usize].as_mut().expect("a job in flight");
        let writes = std::mem::take(&mut j.writes);
        j.writes_left = writes.len() as u32;
        for (w, placement) in writes {
            let dq = &mut q.map(WcEvent::Device);
            match placement {
                Some(p) => self.dev.submit_placed(None, w, false, p, dq),
                None => self.dev.submit(w, dq),
            }
        }
    }

    pub(super) fn destage_write_done(&mut self, job: u32, result: Result<(), IoError>) {
        let j = self.jobs[job as usize].as_mut().expect("a job in flight");
        assert!(j.writes_left > 0, "a job's writes complete once each");
        j.writes_left -= 1;
        if let Err(e) = result {
            self.stats.destage_errors += 1;
            j.error.get_or_insert(e);
        }
        if j.writes_left > 0 {
            return;
        }
        let j = self.jobs[job as usize].take().expect("checked");
        self.free_jobs.push(job);
        if let Some(e) = j.error {
            self.destage_error.get_or_insert(e);
        }
        for (unit, snapshot) in j.units {
            let u = self
                .units
                .get_mut(&unit)
                .expect("a destaging unit stays buffered");
            let d = u.destaging.take().expect("the unit is in this job");
            self.destaging_units -= 1;
            assert_eq!(d.snapshot, snapshot);
            let removed = self.dirty.remove(&(u.dirty_since, unit));
            assert!(removed, "a buffered unit is in the dirty index");
            if u.version == snapshot {
                self.units.remove(&unit);
            } else {
                u.dirty_since = d.since_after.expect("a newer write keeps the unit");
                self.dirty.insert((u.dirty_since, unit));
            }
        }
    }
}
