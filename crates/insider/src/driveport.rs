//! The drive behind its NVMe front end (`nearflash_nvme::Nvme<DrivePort>`): what the
//! controller hands its block device is INSIDER's firmware path — a read goes through the
//! multiplexer (its SIF entry in slot 0, in order with the ISC unit's requests) to the
//! storage and through slot 0's pass-through; a write (its data already DMA'd in by the
//! controller) goes to the storage. The machine runs that path as its own events: it takes
//! each request the controller submitted (`take_submitted`), and posts the request's end back
//! (`post`) with the instant the controller sees it, the port's own event
//! [`DriveDone`] — after which the front end DMAs a read's data up, posts the CQE and
//! raises the interrupt.
//!
//! The port holds what is between the controller and the machine: requests submitted and not
//! yet taken, and ends posted and not yet seen. Both are bounded by the commands the
//! front end holds in flight (its queues' slots), which it asserts.

use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest, IoError};
use nearflash_sim::{Schedule, SimRng, SimTime, TraceEvent};
use std::collections::BTreeMap;

/// The port's one event: the controller sees the end of its request `0` (its tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveDone(pub u64);

impl TraceEvent for DriveDone {
    fn hash_word(&self) -> u64 {
        0xFA << 56 ^ self.0
    }
}

/// A request the controller handed the drive, as far as its completion needs it.
#[derive(Clone, Copy, Debug)]
struct Live {
    op: BlockOp,
    offset_bytes: u64,
    len_bytes: u64,
    submitted: SimTime,
}

pub struct DrivePort {
    capacity_bytes: u64,
    /// Requests the controller can hold at once (its queues' slots): the bound of every map
    /// here.
    slots_max: u64,
    /// Requests the controller submitted, until the machine takes them.
    submitted: Vec<BlockRequest>,
    /// Requests inside the drive (submitted, end not yet seen), by tag.
    live: BTreeMap<u64, Live>,
    /// Ends the machine posted, until the port's event comes.
    posted: BTreeMap<u64, BlockCompletion>,
    done: Vec<BlockCompletion>,
}

impl DrivePort {
    /// The firmware path of a drive of `capacity_bytes` behind a controller holding at most
    /// `slots_max` commands.
    pub fn new(capacity_bytes: u64, slots_max: u64) -> DrivePort {
        assert!(slots_max > 0, "a controller holds a command");
        DrivePort {
            capacity_bytes,
            slots_max,
            submitted: Vec::new(),
            live: BTreeMap::new(),
            posted: BTreeMap::new(),
            done: Vec::new(),
        }
    }

    /// The requests the controller submitted since the last take, in order.
    pub fn take_submitted(&mut self) -> Vec<BlockRequest> {
        std::mem::take(&mut self.submitted)
    }

    /// The drive finished request `id` (a read's `data` in functional fidelity); the
    /// controller sees it at `DriveDone(id)`, which the caller schedules.
    pub fn post(&mut self, id: u64, now: SimTime, result: Result<Vec<u8>, IoError>) {
        let r = self.live.remove(&id).expect("a request inside the drive");
        let (result, data) = match result {
            Ok(data) => (Ok(()), data),
            Err(e) => (Err(e), Vec::new()),
        };
        assert!(
            data.is_empty() || data.len() as u64 == r.len_bytes,
            "request {id} carries {} bytes of data for {}",
            data.len(),
            r.len_bytes
        );
        let prev = self.posted.insert(
            id,
            BlockCompletion {
                id,
                op: r.op,
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
                submitted: r.submitted,
                completed: now,
                result,
                data,
            },
        );
        assert!(prev.is_none(), "one end per request");
    }
}

impl BlockDevice for DrivePort {
    type Event = DriveDone;

    fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// The machine moves the bytes (its storage is functional or not); the port carries
    /// whatever a request brings.
    fn is_functional(&self) -> bool {
        false
    }

    fn submit<S: Schedule<DriveDone>>(&mut self, req: BlockRequest, q: &mut S) {
        let live = Live {
            op: req.op,
            offset_bytes: req.offset_bytes,
            len_bytes: req.len_bytes,
            submitted: q.now(),
        };
        let prev = self.live.insert(req.id, live);
        assert!(prev.is_none(), "the controller's tag {} is free", req.id);
        assert!(
            self.live.len() as u64 <= self.slots_max,
            "the controller holds at most {} commands",
            self.slots_max
        );
        self.submitted.push(req);
    }

    fn handle<S: Schedule<DriveDone>>(&mut self, ev: DriveDone, _: &mut S, _: &mut SimRng) {
        let c = self.posted.remove(&ev.0).expect("the machine posted it");
        self.done.push(c);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.done);
    }

    fn outstanding(&self) -> u64 {
        (self.live.len() + self.posted.len() + self.done.len()) as u64
    }

    /// The controller's slots: the front end checks they fit.
    fn admission_limit(&self) -> u64 {
        self.slots_max
    }

    fn check_invariants(&self) {
        assert!(
            self.submitted.len() <= self.live.len(),
            "submitted are live"
        );
        assert!(
            self.posted.keys().all(|id| !self.live.contains_key(id)),
            "a posted request has left the drive"
        );
        assert!(self.outstanding() <= self.slots_max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::EventQueue;

    #[test]
    fn a_request_ends_when_the_controller_sees_its_posted_end() {
        let mut q: EventQueue<DriveDone> = EventQueue::new();
        let mut rng = SimRng::seed_from_u64(1);
        let mut port = DrivePort::new(1 << 20, 2);
        let req = BlockRequest {
            id: 7,
            op: BlockOp::Read,
            offset_bytes: 4096,
            len_bytes: 4096,
            data: Vec::new(),
        };
        port.submit(req, &mut q);
        assert_eq!(port.outstanding(), 1);
        let taken = port.take_submitted();
        assert_eq!(taken.len(), 1);
        assert!(port.take_submitted().is_empty(), "taken once");
        port.post(7, SimTime(50), Ok(Vec::new()));
        let mut out = Vec::new();
        port.take_completions(&mut out);
        assert!(out.is_empty(), "not seen before its event");
        port.check_invariants();
        port.handle(DriveDone(7), &mut q, &mut rng);
        port.take_completions(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].id, out[0].offset_bytes, out[0].completed),
            (7, 4096, SimTime(50))
        );
        assert_eq!(port.outstanding(), 0);
    }

    #[test]
    #[should_panic(expected = "at most 1 commands")]
    fn more_requests_than_the_controllers_slots_is_a_bug() {
        let mut q: EventQueue<DriveDone> = EventQueue::new();
        let mut port = DrivePort::new(1 << 20, 1);
        for id in 0..2 {
            let req = BlockRequest {
                id,
                op: BlockOp::Read,
                offset_bytes: 0,
                len_bytes: 512,
                data: Vec::new(),
            };
            port.submit(req, &mut q);
        }
    }
}
