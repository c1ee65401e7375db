//! A fixed-latency block device, for tests whose expected times are computed by hand: every
//! request occupies one of `units` identical servers (FIFO, earliest free first) for
//! `latency_ns`, so its throughput limit is exactly `units / latency`. Timing fidelity only;
//! misaligned or out-of-range requests complete with the block layer's error. It records the
//! Data Placement directive each write arrived with, so tests can see what reached the drive.

use nearflash_blockdev::{
    BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError, PlacementDirective, SECTOR_BYTES,
};
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use std::collections::BTreeMap;

/// The device's one event: the request with this id is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedDone(pub u64);

impl TraceEvent for FixedDone {
    fn hash_word(&self) -> u64 {
        0xF1 << 56 ^ self.0
    }
}

pub struct FixedDevice {
    capacity_bytes: u64,
    latency: SimDuration,
    units_free_at: Vec<SimTime>,
    live: Vec<(BlockRequest, SimTime, Result<(), IoError>)>,
    done: Vec<BlockCompletion>,
    /// The most requests inside the device at once.
    pub busy_max: usize,
    /// The directive the newest write at each offset carried (`None`: it carried none).
    pub placements: BTreeMap<u64, Option<PlacementDirective>>,
    /// Requests it admits at once (`BlockDevice::admission_limit`; no limit unless set).
    pub admission_limit: u64,
}

impl FixedDevice {
    pub fn new(capacity_bytes: u64, latency_ns: u64, units: usize) -> Self {
        assert!(units > 0 && latency_ns > 0 && capacity_bytes.is_multiple_of(SECTOR_BYTES));
        FixedDevice {
            capacity_bytes,
            latency: SimDuration::from_ns(latency_ns),
            units_free_at: vec![SimTime::ZERO; units],
            live: Vec::new(),
            done: Vec::new(),
            busy_max: 0,
            placements: BTreeMap::new(),
            admission_limit: u64::MAX,
        }
    }
}

impl BlockDevice for FixedDevice {
    type Event = FixedDone;

    fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    fn is_functional(&self) -> bool {
        false
    }

    fn submit<S: Schedule<FixedDone>>(&mut self, req: BlockRequest, q: &mut S) {
        if req.op == BlockOp::Write {
            self.placements.insert(req.offset_bytes, None);
        }
        self.accept(req, q);
    }

    fn submit_placed<S: Schedule<FixedDone>>(
        &mut self,
        _stream: Option<u32>,
        req: BlockRequest,
        _fua: bool,
        placement: PlacementDirective,
        q: &mut S,
    ) {
        assert_eq!(req.op, BlockOp::Write, "only writes carry a placement");
        self.placements.insert(req.offset_bytes, Some(placement));
        self.accept(req, q);
    }

    fn handle<S: Schedule<FixedDone>>(&mut self, ev: FixedDone, q: &mut S, _: &mut SimRng) {
        self.finish(ev, q);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.done);
    }

    fn outstanding(&self) -> u64 {
        (self.live.len() + self.done.len()) as u64
    }

    fn admission_limit(&self) -> u64 {
        self.admission_limit
    }
}

impl FixedDevice {
    fn accept<S: Schedule<FixedDone>>(&mut self, req: BlockRequest, q: &mut S) {
        let now = q.now();
        let end = req.offset_bytes.checked_add(req.len_bytes);
        let result = if req.op != BlockOp::Flush
            && (req.len_bytes == 0 || !req.offset_bytes.is_multiple_of(SECTOR_BYTES))
        {
            Err(IoError::Misaligned {
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
            })
        } else if end.is_none_or(|e| e > self.capacity_bytes) {
            Err(IoError::OutOfRange {
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                capacity_bytes: self.capacity_bytes,
            })
        } else {
            Ok(())
        };
        let unit = (0..self.units_free_at.len())
            .min_by_key(|&u| self.units_free_at[u])
            .expect("at least one unit");
        let start = self.units_free_at[unit].max(now);
        self.units_free_at[unit] = start + self.latency;
        q.schedule_at(self.units_free_at[unit], FixedDone(req.id));
        self.live.push((req, now, result));
        self.busy_max = self.busy_max.max(self.live.len());
    }

    fn finish<S: Schedule<FixedDone>>(&mut self, ev: FixedDone, q: &mut S) {
        let i = self
            .live
            .iter()
            .position(|(r, _, _)| r.id == ev.0)
            .expect("a done event names a live request");
        let (req, submitted, result) = self.live.swap_remove(i);
        self.done.push(BlockCompletion {
            id: req.id,
            op: req.op,
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            submitted,
            completed: q.now(),
            result,
            data: Vec::new(),
        });
    }
}
