//! Where the drive's logical bytes live: the project's flash device (the FTL maps every
//! request onto dies and channel buses), or the prototype's DRAM-emulated storage (§4.1: DRAM
//! chips behind throttle and delay units, configured by bandwidth and latency). Both take the
//! FTL's `BlockRequest` and answer with `BlockCompletion`s; both count what they served.
//!
//! Emulated storage: a request is striped over the chips; each chip is a FIFO server at its
//! share of the bandwidth (the throttle); the delay unit adds the latency to the request's
//! completion without occupying the chip (it is a pipeline). In functional fidelity the bytes
//! live in a sparse page map; never-written bytes read as zeros.

use crate::config::InsiderConfig;
use nearflash_ftl::{BlockCompletion, BlockOp, BlockRequest, Device, Event};
use nearflash_hw::server::{transfer, FifoServer};
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime};
use std::collections::BTreeMap;

/// Page size of the emulated store's sparse map.
const EMULATED_PAGE_BYTES: u64 = 4096;

pub struct Emulated {
    chips: Vec<FifoServer>,
    chip_mb_s: f64,
    latency: SimDuration,
    capacity_bytes: u64,
    /// Functional fidelity: page index → bytes.
    pages: Option<BTreeMap<u64, Box<[u8]>>>,
    /// Requests whose completion event is scheduled.
    inflight: BTreeMap<u64, BlockCompletion>,
}

impl Emulated {
    pub fn new(cfg: &InsiderConfig, functional: bool) -> Emulated {
        Emulated {
            chips: vec![FifoServer::default(); cfg.emulated_chips as usize],
            chip_mb_s: cfg.emulated_bandwidth_mb_s / f64::from(cfg.emulated_chips),
            latency: SimDuration::from_us_f64(cfg.emulated_latency_us),
            capacity_bytes: cfg.emulated_capacity_bytes,
            pages: functional.then(BTreeMap::new),
            inflight: BTreeMap::new(),
        }
    }

    fn copy_out(&self, offset: u64, len: u64) -> Vec<u8> {
        let Some(pages) = &self.pages else {
            return Vec::new();
        };
        let mut out = vec![0u8; len as usize];
        let mut at = offset;
        while at < offset + len {
            let p = at / EMULATED_PAGE_BYTES;
            let in_page = at % EMULATED_PAGE_BYTES;
            let n = (EMULATED_PAGE_BYTES - in_page).min(offset + len - at);
            if let Some(page) = pages.get(&p) {
                let dst = (at - offset) as usize;
                out[dst..dst + n as usize]
                    .copy_from_slice(&page[in_page as usize..(in_page + n) as usize]);
            }
            at += n;
        }
        out
    }

    fn copy_in(&mut self, offset: u64, data: &[u8]) {
        let Some(pages) = &mut self.pages else {
            return;
        };
        let mut at = offset;
        let end = offset + data.len() as u64;
        while at < end {
            let p = at / EMULATED_PAGE_BYTES;
            let in_page = at % EMULATED_PAGE_BYTES;
            let n = (EMULATED_PAGE_BYTES - in_page).min(end - at);
            let page = pages
                .entry(p)
                .or_insert_with(|| vec![0u8; EMULATED_PAGE_BYTES as usize].into_boxed_slice());
            let src = (at - offset) as usize;
            page[in_page as usize..(in_page + n) as usize]
                .copy_from_slice(&data[src..src + n as usize]);
            at += n;
        }
    }

    /// Serves `req` from `now`; returns when it completes.
    fn submit(&mut self, req: BlockRequest, now: SimTime) -> SimTime {
        let chips = self.chips.len() as u64;
        let mut done = now;
        for (i, chip) in self.chips.iter_mut().enumerate() {
            let share = req.len_bytes / chips + u64::from((i as u64) < req.len_bytes % chips);
            done = done.max(chip.serve(now, transfer(share, self.chip_mb_s)));
        }
        let completed = done + self.latency;
        let data = match req.op {
            BlockOp::Read => self.copy_out(req.offset_bytes, req.len_bytes),
            _ => {
                self.copy_in(req.offset_bytes, &req.data);
                Vec::new()
            }
        };
        self.inflight.insert(
            req.id,
            BlockCompletion {
                id: req.id,
                op: req.op,
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                submitted: now,
                completed,
                result: Ok(()),
                data,
            },
        );
        completed
    }
}

/// What the backing served (ISC and firmware requests alike).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackingStats {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
}

pub enum Backing {
    Flash(Box<Device>),
    Emulated(Emulated),
}

impl Backing {
    pub fn capacity_bytes(&self) -> u64 {
        match self {
            Backing::Flash(d) => d.logical_bytes(),
            Backing::Emulated(e) => e.capacity_bytes,
        }
    }

    pub fn is_functional(&self) -> bool {
        match self {
            Backing::Flash(d) => d.is_functional(),
            Backing::Emulated(e) => e.pages.is_some(),
        }
    }

    /// Submits `req`. Emulated storage answers with the completion time (the caller schedules
    /// an event and then calls `finish`); the flash device completes through its own events.
    pub fn submit(
        &mut self,
        req: BlockRequest,
        now: SimTime,
        q: &mut impl Schedule<Event>,
        stats: &mut BackingStats,
    ) -> Option<SimTime> {
        match req.op {
            BlockOp::Read => {
                stats.reads += 1;
                stats.read_bytes += req.len_bytes;
            }
            _ => {
                stats.writes += 1;
                stats.write_bytes += req.len_bytes;
            }
        }
        match self {
            Backing::Flash(d) => {
                d.submit(req, q);
                None
            }
            Backing::Emulated(e) => Some(e.submit(req, now)),
        }
    }

    /// The completion of emulated request `id`, whose event fired.
    pub fn finish(&mut self, id: u64) -> BlockCompletion {
        match self {
            Backing::Emulated(e) => e.inflight.remove(&id).expect("a scheduled request"),
            Backing::Flash(_) => unreachable!("flash requests complete through the device"),
        }
    }

    /// A device event (flash only).
    pub fn handle(&mut self, ev: Event, q: &mut impl Schedule<Event>, rng: &mut SimRng) {
        if let Backing::Flash(d) = self {
            d.handle(ev, q, rng);
        }
    }

    /// The flash device's invariants (its FTL's tables; O(capacity)); nothing to check for
    /// the DRAM-emulated drive, whose requests are only timed.
    pub fn check_invariants(&self) {
        if let Backing::Flash(d) = self {
            d.check_invariants();
        }
    }

    pub fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        if let Backing::Flash(d) = self {
            d.take_completions(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulated_requests_share_bandwidth_and_add_latency() {
        let cfg = InsiderConfig::default();
        let mut e = Emulated::new(&cfg, true);
        let req = |id, off| BlockRequest {
            id,
            op: BlockOp::Read,
            offset_bytes: off,
            len_bytes: 16_000,
            data: Vec::new(),
        };
        // 16 kB at 16 GB/s is 1 us, plus 5 us of delay; the second waits for the first.
        assert_eq!(e.submit(req(0, 0), SimTime::ZERO).as_ns(), 6_000);
        assert_eq!(e.submit(req(1, 0), SimTime::ZERO).as_ns(), 7_000);
        e.submit(
            BlockRequest {
                id: 2,
                op: BlockOp::Write,
                offset_bytes: 4000,
                len_bytes: 200,
                data: vec![7; 200],
            },
            SimTime::ZERO,
        );
        let d = e.copy_out(3990, 220);
        assert_eq!(&d[..10], &[0; 10]);
        assert!(d[10..210].iter().all(|&b| b == 7));
    }
}
