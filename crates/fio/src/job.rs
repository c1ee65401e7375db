//! One running fio job (one clone of a section): a paced request source for the driver. It
//! owns its RNG stream, its region of the device, its queue depth, and its clock rules — the
//! start delay, ramp time, runtime, think time and rate limits, all in simulated time — and
//! records what it measures. Its life: wait for `startdelay`; issue the main I/O (until the
//! amount is done or the runtime is up), draining and flushing every `fsync` writes and
//! draining and thinking every `thinktime_blocks` requests; flush at the end (`end_fsync`);
//! then, with `verify`, read back every block it wrote and compare digests. A job with
//! `read_iolog` takes its requests from the log instead of drawing them: timed, each request
//! goes no sooner than its logged gap after the previous one was issued (fio's
//! `iolog_delay`: the wait is measured from the last issue, so a full queue delays the rest
//! of the log rather than bunching it), and never past `iodepth` in flight; with
//! `replay_no_stall`, as fast as `iodepth` allows, in the log's order.

use crate::dist::{BlockDraw, RandomMap};
use crate::options::{BlockSizes, JobSpec, Rw, VerifyKind};
use crate::replay::ReplayLog;
use crate::stats::{depth_bucket, JobStats};
use crate::zbd::{Placed, WritePlace, ZbdState, ZoneSpan};
use md5::Digest;
use nearflash_blockdev::PlacementDirective;
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest};
use nearflash_iobench::driver::{PacedSource, Step};
use nearflash_iobench::workload::Draw;
use nearflash_sim::{SimDuration, SimRng, SimTime};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Most blocks a verifying job tracks (offset, length and digest each).
pub const VERIFY_BLOCKS_MAX: u64 = 1 << 22;
/// Most requests one job's `write_iolog` records.
pub const IOLOG_REQUESTS_MAX: usize = 1 << 22;
/// fio's golden-ratio constant, to derive the jobs' RNG streams from one seed.
const STREAM_STEP: u64 = 0x9E37_79B9_7F4A_7C15;
/// Sets `fdp_pli_select=random`'s stream apart from the offsets' (fio keeps a separate
/// `fdp_state` too); any constant other than 0 would do.
const PLI_STREAM: u64 = 0xF0F0_0000_0000_0FD9;

/// The RNG stream of job number `job` (in file order, clones counted): from `randseed` when
/// the job sets one (the same offsets whatever `--seed`, as fio's randseed), else from the
/// run's seed. Job 0's stream is the run seed's own, so a one-job file draws the offsets
/// `nearflash io` draws for the same seed.
pub fn stream(run_seed: u64, randseed: Option<u64>, job: u64) -> SimRng {
    SimRng::seed_from_u64(randseed.unwrap_or(run_seed) ^ job.wrapping_mul(STREAM_STEP))
}

/// The drive as the jobs see it together: fio's `disk_util` for the simulated device.
#[derive(Clone, Debug, Default)]
pub struct Disk {
    pub ios: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks_ns: [u64; 2],
    pub outstanding: u64,
    busy_since: SimTime,
    pub busy_ns: u64,
}

impl Disk {
    fn submit(&mut self, now: SimTime) {
        if self.outstanding == 0 {
            self.busy_since = now;
        }
        self.outstanding += 1;
    }

    fn complete(&mut self, c: &BlockCompletion) {
        assert!(self.outstanding > 0, "a completion of a submitted request");
        self.outstanding -= 1;
        if self.outstanding == 0 {
            self.busy_ns += c.completed.since(self.busy_since).as_ns();
        }
        let d = match c.op {
            BlockOp::Read => 0,
            BlockOp::Write => 1,
            BlockOp::Trim | BlockOp::Flush => return,
        };
        self.ios[d] += 1;
        self.sectors[d] += c.len_bytes / nearflash_ftl::SECTOR_BYTES;
        self.ticks_ns[d] += c.completed.since(c.submitted).as_ns();
    }
}

/// What the job does once its requests in flight have completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    Nothing,
    Think,
    Flush,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    None,
    Drain(Then),
    Timer(SimTime),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Main,
    EndFlush,
    VerifyStart,
    Verify,
    Done,
}

/// The blocks a verifying job wrote, with the digest of their data (functional fidelity).
struct Verifier {
    kind: VerifyKind,
    blocks: BTreeMap<u64, (u64, Option<[u8; 16]>)>,
    /// Next block to read back.
    cursor: Option<u64>,
}

impl Verifier {
    fn digest(&self, data: &[u8]) -> [u8; 16] {
        let mut out = [0u8; 16];
        match self.kind {
            VerifyKind::Crc32c => out[..4].copy_from_slice(&crc32c::crc32c(data).to_le_bytes()),
            VerifyKind::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        }
        out
    }

    /// Notes a write: blocks it overlaps are forgotten (their data is no longer whole).
    fn wrote(&mut self, offset: u64, len: u64, data: &[u8]) {
        let end = offset + len;
        let stale: Vec<u64> = self
            .blocks
            .range(..end)
            .rev()
            .take_while(|(&o, &(l, _))| o + l > offset)
            .map(|(&o, _)| o)
            .collect();
        for o in stale {
            self.blocks.remove(&o);
        }
        let digest = (!data.is_empty()).then(|| self.digest(data));
        self.blocks.insert(offset, (len, digest));
        assert!(self.blocks.len() as u64 <= VERIFY_BLOCKS_MAX);
    }

    fn next_block(&mut self) -> Option<(u64, u64)> {
        let next = match self.cursor {
            None => self.blocks.iter().next(),
            Some(c) => self
                .blocks
                .range((std::ops::Bound::Excluded(c), std::ops::Bound::Unbounded))
                .next(),
        };
        let (&o, &(l, _)) = next?;
        self.cursor = Some(o);
        Some((o, l))
    }

    /// Checks a read-back block: `Some(true)` matches, `Some(false)` differs, `None` when
    /// there is no data to check (timing fidelity).
    fn check(&self, offset: u64, data: &[u8]) -> Option<bool> {
        let (_, want) = self.blocks.get(&offset)?;
        let want = (*want)?;
        if data.is_empty() {
            return None;
        }
        Some(self.digest(data) == want)
    }
}

/// A job replaying an iolog: where it is in the log and when it issued last.
struct Replay {
    log: Rc<ReplayLog>,
    next: usize,
    /// The simulated time of the last issue and that request's logged arrival.
    last: Option<(SimTime, u64)>,
    /// The logged arrival of the request taken last (it may wait for a rate limit).
    taken_arrival: u64,
    no_stall: bool,
}

impl Replay {
    fn exhausted(&self) -> bool {
        self.next == self.log.requests.len()
    }

    /// The earliest time the next request may go: its logged gap after the last issue
    /// (fio's `delay_since_ttime` then `iolog_delay`); `None`: now.
    fn due(&self) -> Option<SimTime> {
        let (at, arrival) = self.last.filter(|_| !self.no_stall)?;
        let gap = self.log.arrivals_ns[self.next].saturating_sub(arrival);
        Some(at + SimDuration::from_ns(gap))
    }

    fn take(&mut self) -> Draw {
        let draw = self.log.requests[self.next];
        self.taken_arrival = self.log.arrivals_ns[self.next];
        self.next += 1;
        draw
    }

    /// The request taken last goes now.
    fn issued(&mut self, now: SimTime) {
        self.last = Some((now, self.taken_arrival));
    }
}

/// A job's region and how it walks it.
struct Walk {
    start: u64,
    len: u64,
    /// Next sequential offset per direction, relative to the region.
    seq: [u64; 3],
    align: [u64; 3],
    draw: BlockDraw,
    map: Option<(RandomMap, u64)>,
}

/// One clone of a job, running.
pub struct JobRun {
    pub spec: Rc<JobSpec>,
    pub groupid: u32,
    rng: SimRng,
    walk: Walk,
    start_at: SimTime,
    started: Option<SimTime>,
    stats_start: SimTime,
    deadline: Option<SimTime>,
    bytes_limit: Option<u64>,
    ios_limit: Option<u64>,
    issued_bytes: u64,
    issued_ios: u64,
    issued_by_dir: [(u64, u64); 3],
    writes: u64,
    in_flight: u32,
    held: Option<(Draw, bool)>,
    wait: Wait,
    phase: Phase,
    verifier: Option<Verifier>,
    replay: Option<Replay>,
    /// `fdp=1`: the next `fdp_pli` entry for round robin (fio's `pli_loc`), and the stream
    /// random selection draws from, apart from the offsets' so that it perturbs nothing.
    pli_loc: usize,
    pli_rng: SimRng,
    /// The drive's Reclaim Unit Handle Status list (`FdpConfig::status_pids`): the Placement
    /// Identifiers `fdp_pli` indexes, and that `fdp=1` cycles over without it.
    fdp_pids: Vec<u16>,
    pub stats: JobStats,
    last_completion: Option<SimTime>,
    disk: Rc<RefCell<Disk>>,
    /// When the `write_iolog` log started (its timestamps count from here).
    log_start: SimTime,
    /// `write_iolog`: the requests issued, as fio iolog v3 lines.
    pub iolog: Option<Vec<String>>,
    pub iolog_truncated: bool,
    /// `zonemode=zbd`: the zones all jobs share and this job's zones.
    zbd: Option<(Rc<RefCell<ZbdState>>, ZoneSpan)>,
    /// A write was issued (fio's `last_start[DDIR_WRITE]`, for `zbd_adjust_ddir`).
    wrote: bool,
}

/// The device name the reports and iologs use.
pub const DISK_NAME: &str = "nearflash0n1";

impl JobRun {
    /// Clone `clone` of `spec`, job number `number` in the file, over the region
    /// [`region_start`, + `region_len`), starting no earlier than `group_start`; replaying
    /// `replay` when the job reads an iolog.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: Rc<JobSpec>,
        groupid: u32,
        number: u64,
        run_seed: u64,
        region_start: u64,
        region_len: u64,
        group_start: SimTime,
        disk: Rc<RefCell<Disk>>,
        replay: Option<Rc<ReplayLog>>,
    ) -> JobRun {
        let dirs = spec.rw.directions();
        let align: [u64; 3] =
            std::array::from_fn(|d| spec.blockalign[d].unwrap_or_else(|| spec.bs[d].min()));
        let grain = (0..3)
            .filter(|&d| dirs[d])
            .map(|d| align[d])
            .min()
            .expect("a job issues in some direction");
        let blocks = region_len / grain;
        assert!(blocks > 0, "the runner checks the region holds a request");
        let map = (spec.rw.random()
            && !spec.norandommap
            && spec.distribution == crate::options::Distribution::Uniform)
            .then(|| (RandomMap::new(blocks), grain));
        let verifier = (spec.verify.is_some() && spec.do_verify && dirs[1]).then(|| Verifier {
            kind: spec.verify.expect("checked"),
            blocks: BTreeMap::new(),
            cursor: None,
        });
        let io = spec.io_size.unwrap_or(region_len);
        let loops = u64::from(spec.loops);
        let timed = spec.time_based;
        let replaying = replay.is_some();
        JobRun {
            rng: stream(run_seed, spec.randseed, number),
            walk: Walk {
                start: region_start,
                len: region_len,
                seq: [0; 3],
                align,
                draw: BlockDraw::new(&spec.distribution, blocks),
                map,
            },
            start_at: group_start + SimDuration::from_ns(spec.startdelay_ns),
            started: None,
            stats_start: group_start,
            deadline: None,
            // number_ios sets the amount by itself unless io_size is given too (fio: "the
            // range/size can be set independently of the number of I/Os to perform").
            // A replay's amount is its log.
            bytes_limit: (!timed
                && !replaying
                && (spec.number_ios.is_none() || spec.io_size.is_some()))
            .then(|| io.saturating_mul(loops)),
            ios_limit: spec.number_ios.filter(|_| !timed),
            issued_bytes: 0,
            issued_ios: 0,
            issued_by_dir: [(0, 0); 3],
            writes: 0,
            in_flight: 0,
            held: None,
            wait: Wait::None,
            phase: Phase::Main,
            verifier,
            pli_loc: 0,
            fdp_pids: Vec::new(),
            pli_rng: stream(run_seed ^ PLI_STREAM, spec.randseed, number),
            replay: replay.map(|log| Replay {
                log,
                next: 0,
                last: None,
                taken_arrival: 0,
                no_stall: spec.replay_no_stall,
            }),
            stats: JobStats::new(group_start, spec.bwavgtime_ns, spec.iopsavgtime_ns),
            last_completion: None,
            disk,
            // fio opens the log and stamps its start as the job sets up (`init_iolog`),
            // before any start delay; it writes v3 since 3.31 (`iolog_ver3`).
            log_start: group_start,
            iolog: spec.write_iolog.as_ref().filter(|_| !replaying).map(|_| {
                vec![
                    "fio version 3 iolog".to_string(),
                    format!("0 {DISK_NAME} add"),
                    format!("0 {DISK_NAME} open"),
                ]
            }),
            iolog_truncated: false,
            zbd: None,
            wrote: false,
            groupid,
            spec,
        }
    }

    /// `zonemode=zbd`: the job's requests are placed on the zones of `state` (shared by every
    /// job of the run) within `span`, its region's zones.
    pub fn with_zbd(mut self, state: Rc<RefCell<ZbdState>>, span: ZoneSpan) -> JobRun {
        assert!(self.spec.zbd, "a zbd job");
        self.zbd = Some((state, span));
        self
    }

    /// fio's `zbd_adjust_block`: the drawn request placed on the zones (writes at a write
    /// pointer, reads below one); `Eof` ends the job's I/O (fio's `io_u_eof`), `Wait` holds
    /// it until a completion. A sequential job goes on from where the placed request ends,
    /// as fio's `last_pos`.
    fn zbd_place(&mut self, draw: Draw) -> WritePlace {
        let Some((state, span)) = &self.zbd else {
            return WritePlace::At(Placed { draw, reset: false });
        };
        let d = dir_of(draw.op).expect("a read or a write");
        let min_bs = self.spec.bs[d].min();
        let random = self.spec.rw.random();
        let placed = match draw.op {
            BlockOp::Write => {
                let p = match state.borrow_mut().place_write(*span, draw, min_bs) {
                    WritePlace::At(p) => p,
                    other => return other,
                };
                if p.reset {
                    self.stats.zone_resets += 1;
                }
                p.draw
            }
            BlockOp::Read if self.spec.read_beyond_wp => draw,
            BlockOp::Read => match state.borrow().place_read(*span, draw, min_bs, random) {
                Some(d) => d,
                None => return WritePlace::Eof,
            },
            BlockOp::Trim | BlockOp::Flush => unreachable!("zbd jobs draw reads and writes"),
        };
        if !random {
            self.walk.seq[d] = placed.offset_bytes + placed.len_bytes - self.walk.start;
        }
        WritePlace::At(Placed {
            draw: placed,
            reset: false,
        })
    }

    fn start(&mut self, now: SimTime) {
        self.started = Some(now);
        self.stats_start = now + SimDuration::from_ns(self.spec.ramp_time_ns);
        self.deadline = self
            .spec
            .runtime_ns
            .map(|r| self.stats_start + SimDuration::from_ns(r));
        self.stats = JobStats::new(
            self.stats_start,
            self.spec.bwavgtime_ns,
            self.spec.iopsavgtime_ns,
        );
    }

    fn main_done(&self, now: SimTime) -> bool {
        self.replay
            .as_ref()
            .is_some_and(|r| r.exhausted() && self.held.is_none())
            || self.deadline.is_some_and(|d| now >= d)
            || self.bytes_limit.is_some_and(|b| self.issued_bytes >= b)
            || self.ios_limit.is_some_and(|n| self.issued_ios >= n)
    }

    fn direction(&mut self) -> usize {
        match self.spec.rw {
            Rw::ReadWrite | Rw::RandReadWrite => {
                let read = self.rng.below(100) < u64::from(self.spec.rwmixread);
                // fio's `zbd_adjust_ddir`: a mixed zbd job writes before it first reads,
                // so that there is data below a write pointer to read.
                let zbd_first = self.zbd.is_some()
                    && !self.wrote
                    && !self.spec.read_beyond_wp
                    && self.spec.rwmixread < 100;
                if read && !zbd_first {
                    0
                } else {
                    1
                }
            }
            rw => rw
                .directions()
                .iter()
                .position(|&u| u)
                .expect("one direction"),
        }
    }

    fn block_size(&mut self, d: usize) -> u64 {
        match &self.spec.bs[d] {
            BlockSizes::Fixed(b) => *b,
            // fio: a size in range, rounded down to a multiple of the smallest.
            &BlockSizes::Range(lo, hi) => lo * (1 + self.rng.below(hi / lo)),
            BlockSizes::Split(split) => {
                let pick = self.rng.below(100) as u32;
                let mut acc = 0;
                for &(b, p) in split {
                    acc += p;
                    if pick < acc {
                        return b;
                    }
                }
                split.last().expect("a split holds sizes").0
            }
        }
    }

    fn offset(&mut self, d: usize, len: u64) -> u64 {
        let w = &mut self.walk;
        let align = w.align[d];
        let random = self.spec.rw.random()
            && (self.spec.percentage_random[d] == 100
                || self.rng.below(100) < u64::from(self.spec.percentage_random[d]));
        let rel = if random {
            match &mut w.map {
                Some((map, grain)) => {
                    let blocks = w.len / *grain;
                    let b = map.take(w.draw.draw(&mut self.rng, blocks));
                    (b * *grain).min((w.len - len) / align * align)
                }
                None => {
                    let slots = (w.len - len) / align + 1;
                    w.draw.draw(&mut self.rng, slots) * align
                }
            }
        } else {
            if w.seq[d] + len > w.len {
                w.seq[d] = 0;
            }
            let at = w.seq[d];
            w.seq[d] = at + len + self.spec.seq_skip_bytes;
            at
        };
        assert!(rel + len <= w.len, "a request stays in its region");
        w.start + rel
    }

    fn next_draw(&mut self) -> (Draw, bool) {
        let d = self.direction();
        let len = self.block_size(d).min(self.walk.len);
        let offset = self.offset(d, len);
        let op = [BlockOp::Read, BlockOp::Write, BlockOp::Trim][d];
        (
            Draw {
                op,
                offset_bytes: offset,
                len_bytes: len,
            },
            self.spec.sync && op == BlockOp::Write,
        )
    }

    /// The earliest time the rate limits let `draw` go.
    fn rate_gate(&self, draw: &Draw) -> Option<SimTime> {
        let d = dir_of(draw.op)?;
        let t0 = self.started.expect("started");
        let (bytes, ios) = self.issued_by_dir[d];
        let by_bytes = self.spec.rate_bytes_s[d]
            .map(|r| (u128::from(bytes) * 1_000_000_000 / u128::from(r.max(1))) as u64);
        let by_ios = self.spec.rate_iops[d]
            .map(|r| (u128::from(ios) * 1_000_000_000 / u128::from(r.max(1))) as u64);
        let after = by_bytes.max(by_ios)?;
        Some(t0 + SimDuration::from_ns(after))
    }

    /// µs since the log started, truncated as fio's `utime_since_now` truncates.
    fn log_us(&self, now: SimTime) -> u64 {
        now.since(self.log_start).as_ns() / 1000
    }

    fn submit(&mut self, now: SimTime, draw: Draw, fua: bool) -> Step {
        self.in_flight += 1;
        self.stats.submitted += 1;
        self.stats.depth_at_submit[depth_bucket(self.in_flight)] += 1;
        self.disk.borrow_mut().submit(now);
        let us = self.log_us(now);
        if let Some(log) = &mut self.iolog {
            if log.len() >= IOLOG_REQUESTS_MAX {
                self.iolog_truncated = true;
            } else {
                let op = match draw.op {
                    BlockOp::Read => "read",
                    BlockOp::Write => "write",
                    BlockOp::Trim => "trim",
                    BlockOp::Flush => "sync",
                };
                // fio's `log_io_u`: "%llu %s %s %llu %llu", a sync with its (zero) offset
                // and length too.
                log.push(format!(
                    "{us} {DISK_NAME} {op} {} {}",
                    draw.offset_bytes, draw.len_bytes
                ));
            }
        }
        let placement = self.placement(draw.op);
        Step::Submit {
            draw,
            fua,
            placement,
        }
    }

    /// The drive's Reclaim Unit Handle Status list: its Placement Identifiers in order
    /// (`FdpConfig::status_pids`; empty without FDP).
    pub fn with_fdp_pids(mut self, pids: Vec<u16>) -> JobRun {
        self.fdp_pids = pids;
        self
    }

    /// fio's `dp_fill_dspec_data`: with `fdp=1` a write takes the next listed placement
    /// identifier (round robin) or one at random; other commands carry none. The list holds
    /// the `fdp_pli` indices into the drive's Reclaim Unit Handle Status list (fio's
    /// `init_ruh_info`: `ruhs[i]` is status descriptor `i`'s PID), whose entry `i` is
    /// placement identifier `i` with one reclaim group, and (handle i / NRG, group i mod NRG)
    /// with more; without `fdp_pli`, every entry (`fdp_pids`, set by the runner).
    fn placement(&mut self, op: BlockOp) -> Option<PlacementDirective> {
        if !self.spec.fdp || op != BlockOp::Write {
            return None;
        }
        let n = if self.spec.fdp_pli.is_empty() {
            self.fdp_pids.len()
        } else {
            self.spec.fdp_pli.len()
        };
        assert!(n > 0, "the runner checks the drive has FDP handles");
        let loc = if self.spec.fdp_pli_random {
            self.pli_rng.below(n as u64) as usize
        } else {
            if self.pli_loc >= n {
                self.pli_loc = 0;
            }
            self.pli_loc += 1;
            self.pli_loc - 1
        };
        let index = match self.spec.fdp_pli.get(loc) {
            Some(&i) => usize::from(i),
            None => loc,
        };
        Some(PlacementDirective(self.fdp_pids[index]))
    }

    fn flush(&mut self, now: SimTime) -> Step {
        self.wait = Wait::Drain(Then::Nothing);
        self.submit(
            now,
            Draw {
                op: BlockOp::Flush,
                offset_bytes: 0,
                len_bytes: 0,
            },
            false,
        )
    }

    fn main_step(&mut self, now: SimTime) -> Option<Step> {
        if self.main_done(now) {
            self.phase = Phase::EndFlush;
            return None;
        }
        if self.in_flight >= self.spec.iodepth {
            return Some(Step::Blocked);
        }
        let (draw, fua) = match self.held.take() {
            Some(h) => h,
            None => match self.replay.as_ref().and_then(Replay::due) {
                // No later than the deadline, as for a rate limit below.
                Some(at) if at > now => {
                    return Some(Step::Until(self.deadline.map_or(at, |d| at.min(d))))
                }
                _ => match &mut self.replay {
                    Some(r) => {
                        let draw = r.take();
                        (draw, self.spec.sync && draw.op == BlockOp::Write)
                    }
                    None => self.next_draw(),
                },
            },
        };
        if let Some(at) = self.rate_gate(&draw).filter(|&at| at > now) {
            self.held = Some((draw, fua));
            // No later than the deadline: a job whose next request is past its runtime
            // ends at the runtime.
            return Some(Step::Until(self.deadline.map_or(at, |d| at.min(d))));
        }
        let draw = match self.zbd_place(draw) {
            WritePlace::At(p) => p.draw,
            WritePlace::Wait => {
                // fio's `io_u_quiesce` and retry: the same draw, after a completion.
                self.held = Some((draw, fua));
                return Some(Step::Blocked);
            }
            WritePlace::Eof => {
                self.phase = Phase::EndFlush;
                return None;
            }
        };
        if let Some(r) = &mut self.replay {
            r.issued(now);
        }
        self.issued_ios += 1;
        self.issued_bytes += draw.len_bytes;
        if let Some(d) = dir_of(draw.op) {
            self.issued_by_dir[d].0 += draw.len_bytes;
            self.issued_by_dir[d].1 += 1;
        }
        let is_write = draw.op == BlockOp::Write;
        if is_write {
            self.writes += 1;
            self.wrote = true;
        }
        if self.spec.thinktime_ns > 0
            && self
                .issued_ios
                .is_multiple_of(u64::from(self.spec.thinktime_blocks))
        {
            self.wait = Wait::Drain(Then::Think);
        } else if is_write
            && self.spec.fsync_every > 0
            && self.writes.is_multiple_of(u64::from(self.spec.fsync_every))
        {
            self.wait = Wait::Drain(Then::Flush);
        }
        Some(self.submit(now, draw, fua))
    }

    fn verify_step(&mut self, now: SimTime) -> Step {
        if self.in_flight >= self.spec.iodepth {
            return Step::Blocked;
        }
        let v = self.verifier.as_mut().expect("verifying");
        match v.next_block() {
            Some((offset, len)) => self.submit(
                now,
                Draw {
                    op: BlockOp::Read,
                    offset_bytes: offset,
                    len_bytes: len,
                },
                false,
            ),
            None => {
                self.phase = Phase::Done;
                Step::Done
            }
        }
    }

    /// The job's figures, closed at its last completion.
    pub fn finish(&mut self) {
        let end = self.last_completion.unwrap_or(self.stats_start);
        self.stats.runtime_ns = end.since(self.stats_start.min(end)).as_ns();
        for d in &mut self.stats.dirs {
            d.bw.finish(end.max(self.stats_start));
            d.iops.finish(end.max(self.stats_start));
        }
        let us = self.log_us(end);
        if let Some(log) = &mut self.iolog {
            if !self.iolog_truncated {
                log.push(format!("{us} {DISK_NAME} close"));
            }
        }
    }
}

fn dir_of(op: BlockOp) -> Option<usize> {
    match op {
        BlockOp::Read => Some(0),
        BlockOp::Write => Some(1),
        BlockOp::Trim => Some(2),
        BlockOp::Flush => None,
    }
}

impl PacedSource for JobRun {
    fn step(&mut self, now: SimTime) -> Step {
        if self.started.is_none() {
            if now < self.start_at {
                return Step::Until(self.start_at);
            }
            self.start(now);
        }
        // Each pass either returns or moves the job on (a wait ends, a phase ends), so the
        // loop ends within a few passes.
        for _ in 0..16 {
            match self.wait {
                Wait::None => {}
                Wait::Drain(_) if self.in_flight > 0 => return Step::Blocked,
                Wait::Drain(Then::Nothing) => self.wait = Wait::None,
                Wait::Drain(Then::Think) => {
                    let until = now + SimDuration::from_ns(self.spec.thinktime_ns);
                    self.wait = Wait::Timer(until);
                    return Step::Until(until);
                }
                Wait::Drain(Then::Flush) => return self.flush(now),
                Wait::Timer(until) if now < until => return Step::Until(until),
                Wait::Timer(_) => self.wait = Wait::None,
            }
            match self.phase {
                Phase::Main => {
                    if let Some(s) = self.main_step(now) {
                        return s;
                    }
                }
                Phase::EndFlush => {
                    self.phase = Phase::VerifyStart;
                    if self.spec.end_fsync {
                        self.wait = Wait::Drain(Then::Flush);
                    }
                }
                Phase::VerifyStart => {
                    if self.in_flight > 0 {
                        return Step::Blocked;
                    }
                    self.phase = if self.verifier.is_some() {
                        Phase::Verify
                    } else {
                        Phase::Done
                    };
                }
                Phase::Verify => return self.verify_step(now),
                Phase::Done => return Step::Done,
            }
        }
        unreachable!("a job step settles within a few passes")
    }

    fn submitted(&mut self, req: &BlockRequest) {
        if req.op == BlockOp::Write && self.phase == Phase::Main {
            if let Some(v) = &mut self.verifier {
                v.wrote(req.offset_bytes, req.len_bytes, &req.data);
            }
        }
    }

    fn completed(&mut self, c: &BlockCompletion) {
        assert!(self.in_flight > 0, "a completion of a request in flight");
        self.in_flight -= 1;
        self.disk.borrow_mut().complete(c);
        self.last_completion = Some(
            self.last_completion
                .map_or(c.completed, |t| t.max(c.completed)),
        );
        let lat = c.completed.since(c.submitted).as_ns();
        if let Err(e) = &c.result {
            self.stats.errors += 1;
            if self.stats.first_error.is_none() {
                self.stats.first_error =
                    Some(format!("{:?} at offset {}: {e}", c.op, c.offset_bytes));
            }
            return;
        }
        if matches!(self.phase, Phase::Verify | Phase::Done) && c.op == BlockOp::Read {
            let v = self.verifier.as_ref().expect("verifying");
            match v.check(c.offset_bytes, &c.data) {
                Some(true) => self.stats.verified_blocks += 1,
                Some(false) => self.stats.verify_errors += 1,
                None => self.stats.verify_unchecked += 1,
            }
        }
        if c.submitted < self.stats_start {
            return; // ramp time: not in the figures
        }
        match dir_of(c.op) {
            Some(d) => {
                let s = &mut self.stats.dirs[d];
                s.io_bytes += c.len_bytes;
                s.total_ios += 1;
                s.clat.record(lat);
                s.bw.add(c.completed, c.len_bytes as f64 / 1024.0);
                s.iops.add(c.completed, 1.0);
                self.stats.lat_buckets.record(lat);
            }
            None => self.stats.sync.record(lat),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier(kind: VerifyKind) -> Verifier {
        Verifier {
            kind,
            blocks: BTreeMap::new(),
            cursor: None,
        }
    }

    #[test]
    fn a_block_read_back_differently_is_a_verify_error_for_each_method() {
        for kind in [VerifyKind::Crc32c, VerifyKind::Md5] {
            let mut v = verifier(kind);
            v.wrote(4096, 4096, &[7u8; 4096]);
            assert_eq!(v.check(4096, &[7u8; 4096]), Some(true));
            let mut bad = [7u8; 4096];
            bad[100] ^= 1;
            assert_eq!(v.check(4096, &bad), Some(false), "{kind:?}");
            assert_eq!(v.check(4096, &[]), None, "timing fidelity has no data");
        }
    }

    #[test]
    fn an_overlapping_write_replaces_the_blocks_it_covers() {
        let mut v = verifier(VerifyKind::Crc32c);
        v.wrote(0, 4096, &[1; 4096]);
        v.wrote(4096, 4096, &[2; 4096]);
        v.wrote(8192, 4096, &[3; 4096]);
        v.wrote(2048, 4096, &[9; 4096]);
        let blocks: Vec<u64> = std::iter::from_fn(|| v.next_block().map(|b| b.0)).collect();
        assert_eq!(blocks, [2048, 8192]);
    }

    #[test]
    fn job_streams_differ_by_job_and_randseed_ignores_the_run_seed() {
        let a = stream(1, None, 0).next_u64();
        assert_eq!(
            a,
            SimRng::seed_from_u64(1).next_u64(),
            "job 0 uses the run seed"
        );
        assert_ne!(a, stream(1, None, 1).next_u64());
        assert_eq!(
            stream(1, Some(42), 3).next_u64(),
            stream(2, Some(42), 3).next_u64()
        );
    }
}
