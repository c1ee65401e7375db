//! A drive served by another loop: the NVM namespace of a computational drive whose storage
//! is a device some other model owns (live mode's image, whose FTL its file system writes
//! through). The [`Port`] is the block device behind the NVMe front end; it keeps nothing
//! but the requests: each one it takes waits in its outbox until the driver hands it to the
//! [`PortServer`], and its completion lands back at the instant the server finished it, as
//! the port's event on the drive's queue. [`crate::session::Session::call_served`] steps the
//! two loops together on one clock.

use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockOp, BlockRequest};
use nearflash_sim::{Schedule, SimRng, SimTime, Stall, TraceEvent};
use std::collections::BTreeMap;

/// A request the server finished, landing in the port (the request's id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Landed(pub u64);

impl TraceEvent for Landed {
    fn hash_word(&self) -> u64 {
        0x5054 << 48 ^ self.0
    }
}

/// The device that serves a port's requests, on a clock that [`Session::call_served`]
/// keeps in step with the drive's.
///
/// [`Session::call_served`]: crate::session::Session::call_served
pub trait PortServer {
    /// The server's clock.
    fn now(&self) -> SimTime;
    /// Takes `req` at `at` (the server first runs its own work up to `at`; a server whose
    /// clock is already past `at` takes it at once).
    fn submit(&mut self, at: SimTime, req: BlockRequest);
    /// Requests taken and not yet handed back.
    fn outstanding(&self) -> u64;
    /// Runs the server until a request completes, but not past an event after `limit` (no
    /// limit: until one completes, under the server's watchdog); moves the finished requests
    /// into `out`, each with its completion instant.
    fn run_until_done(
        &mut self,
        limit: Option<SimTime>,
        out: &mut Vec<BlockCompletion>,
    ) -> Result<(), Stall>;
}

/// The NVM namespace of a drive served by a [`PortServer`]: reads only (Memory Copy's).
#[derive(Debug)]
pub struct Port {
    capacity_bytes: u64,
    outbox: Vec<BlockRequest>,
    /// Completions handed back, waiting for their instant.
    landing: BTreeMap<u64, BlockCompletion>,
    done: Vec<BlockCompletion>,
    outstanding: u64,
}

impl Port {
    /// A namespace of `capacity_bytes` (the served device's logical capacity).
    pub fn new(capacity_bytes: u64) -> Port {
        Port {
            capacity_bytes,
            outbox: Vec::new(),
            landing: BTreeMap::new(),
            done: Vec::new(),
            outstanding: 0,
        }
    }

    /// The requests taken since the last call, in submission order.
    pub fn take_outbox(&mut self) -> Vec<BlockRequest> {
        std::mem::take(&mut self.outbox)
    }

    /// The server finished `c`: it completes in the port at `c.completed` (or now, if the
    /// drive's clock is already past it).
    pub fn land<S: Schedule<Landed>>(&mut self, c: BlockCompletion, q: &mut S) {
        let at = c.completed.max(q.now());
        let id = c.id;
        let before = self.landing.insert(id, c);
        assert!(before.is_none(), "request {id} lands once");
        q.schedule_at(at, Landed(id));
    }
}

impl BlockDevice for Port {
    type Event = Landed;

    fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    fn is_functional(&self) -> bool {
        true
    }

    fn submit<S: Schedule<Landed>>(&mut self, req: BlockRequest, _q: &mut S) {
        assert_eq!(req.op, BlockOp::Read, "a port carries Memory Copy's reads");
        self.outstanding += 1;
        self.outbox.push(req);
    }

    fn handle<S: Schedule<Landed>>(&mut self, ev: Landed, _q: &mut S, _rng: &mut SimRng) {
        let c = self
            .landing
            .remove(&ev.0)
            .expect("a landing request was handed back");
        self.done.push(c);
    }

    fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        assert!(
            self.done.len() as u64 <= self.outstanding,
            "completions of requests taken"
        );
        self.outstanding -= self.done.len() as u64;
        out.append(&mut self.done);
    }

    fn outstanding(&self) -> u64 {
        self.outstanding
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::EventQueue;

    #[test]
    fn a_request_completes_at_the_instant_its_server_finished_it_never_before_now() {
        let mut port = Port::new(1 << 20);
        let mut q: EventQueue<Landed> = EventQueue::new();
        let req = |id| BlockRequest {
            id,
            op: BlockOp::Read,
            offset_bytes: 0,
            len_bytes: 4096,
            data: Vec::new(),
        };
        port.submit(req(1), &mut q);
        port.submit(req(2), &mut q);
        assert_eq!(port.outstanding(), 2);
        assert_eq!(port.take_outbox().len(), 2);
        assert!(
            port.take_outbox().is_empty(),
            "each request is handed out once"
        );
        q.advance_clock(SimTime(100));
        let done = |id, at| BlockCompletion {
            id,
            op: BlockOp::Read,
            offset_bytes: 0,
            len_bytes: 4096,
            submitted: SimTime(0),
            completed: SimTime(at),
            result: Ok(()),
            data: vec![7; 4096],
        };
        port.land(done(1, 500), &mut q);
        // Finished by the server before the drive's now: it lands now.
        port.land(done(2, 50), &mut q);
        let (t, ev) = q.pop().unwrap();
        assert_eq!((t, ev), (SimTime(100), Landed(2)));
        port.handle(ev, &mut q, &mut SimRng::seed_from_u64(0));
        let mut out = Vec::new();
        port.take_completions(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(port.outstanding(), 1);
        assert_eq!(q.pop().unwrap(), (SimTime(500), Landed(1)));
    }
}
