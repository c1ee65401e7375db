//! Load generators over any [`BlockDevice`], written once: closed loop (a queue depth of
//! requests kept in flight), open loop (requests submitted at their arrival times) and paced
//! (several submitters, each deciding when to submit: a queue depth, think times, rate
//! limits, start delays — fio's jobs). All run under the one simulation loop ([`nearflash_sim::Sim`]) with a progress watchdog, so a
//! device that stops completing requests is a [`LoadError::Stall`], never a spin.

use crate::request::{BlockCompletion, BlockRequest, PlacementDirective};
use crate::BlockDevice;
use nearflash_sim::{
    EventQueue, Model, Progress, Schedule, Sim, SimDuration, SimRng, SimTime, Stall, TraceEvent,
    Watchdog,
};
use thiserror::Error;

/// The events of a [`Rig`]: the device's own, and open-loop arrivals (by arrival index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RigEvent<E> {
    Device(E),
    Arrival(u64),
}

impl<E: TraceEvent> TraceEvent for RigEvent<E> {
    fn hash_word(&self) -> u64 {
        match self {
            RigEvent::Device(e) => e.hash_word(),
            RigEvent::Arrival(i) => 5 << 56 ^ i,
        }
    }
}

/// The smallest machine: one block device driven by a load generator.
pub struct Rig<D> {
    pub dev: D,
    /// Completions the device made during events, not yet taken: a wait ends on them.
    ready: Vec<BlockCompletion>,
    arrivals: Vec<u64>,
    submitted: u64,
    completed: u64,
}

impl<D: BlockDevice> Rig<D> {
    pub fn new(dev: D) -> Self {
        Rig {
            dev,
            ready: Vec::new(),
            arrivals: Vec::new(),
            submitted: 0,
            completed: 0,
        }
    }

    /// Submits `sub` at the current time (with its Data Placement directive, if any).
    pub fn submit(&mut self, sub: impl Into<Submission>, q: &mut EventQueue<RigEvent<D::Event>>) {
        self.submitted += 1;
        let Submission { req, placement } = sub.into();
        let q = &mut q.map(RigEvent::Device);
        match placement {
            Some(p) => self.dev.submit_placed(None, req, false, p, q),
            None => self.dev.submit(req, q),
        }
    }

    /// Submits `req` at the current time from submitter `stream` (its own queue on a device
    /// that has several), with Force Unit Access when `fua` and the Data Placement directive
    /// `placement` if any.
    pub fn submit_from(
        &mut self,
        stream: u32,
        req: BlockRequest,
        fua: bool,
        placement: Option<PlacementDirective>,
        q: &mut EventQueue<RigEvent<D::Event>>,
    ) {
        self.submitted += 1;
        let q = &mut q.map(RigEvent::Device);
        match placement {
            Some(p) => self.dev.submit_placed(Some(stream), req, fua, p, q),
            None => self.dev.submit_from(stream, req, fua, q),
        }
    }

    /// Moves finished requests into `out`.
    pub fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        let before = out.len();
        out.append(&mut self.ready);
        self.dev.take_completions(out);
        self.completed += (out.len() - before) as u64;
    }

    /// Whether an event completed a request not yet taken: where a load generator acts.
    pub fn completions_waiting(&self) -> bool {
        !self.ready.is_empty()
    }

    /// What the watchdog watches.
    pub fn progress(&self) -> Progress {
        Progress {
            completed: self.completed,
            outstanding: self.submitted - self.completed,
        }
    }
}

impl<D: BlockDevice> Model for Rig<D> {
    type Event = RigEvent<D::Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        match ev {
            RigEvent::Device(e) => {
                self.dev.handle(e, &mut q.map(RigEvent::Device), rng);
                self.dev.take_completions(&mut self.ready);
            }
            RigEvent::Arrival(i) => self.arrivals.push(i),
        }
    }

    fn check_invariants(&self) {
        assert!(
            self.completed <= self.submitted,
            "more completions than requests"
        );
        self.dev.check_invariants();
    }

    fn progress(&self) -> Progress {
        Rig::progress(self)
    }
}

/// A request as a load generator submits it: with a Data Placement directive when the
/// workload tags its writes with placement handles (Flexible Data Placement).
#[derive(Clone, Debug)]
pub struct Submission {
    pub req: BlockRequest,
    pub placement: Option<PlacementDirective>,
}

impl From<BlockRequest> for Submission {
    fn from(req: BlockRequest) -> Submission {
        Submission {
            req,
            placement: None,
        }
    }
}

/// Why a load run stopped early.
#[derive(Debug, Error)]
pub enum LoadError<E> {
    #[error(transparent)]
    Stall(#[from] Stall),
    /// The caller's completion handler refused a completion (a verification failure...).
    #[error(transparent)]
    Handler(E),
}

/// The default watchdog limit: the one of every driver (`nearflash_sim::STALL_LIMIT`).
pub const DEFAULT_STALL_LIMIT: SimDuration = nearflash_sim::STALL_LIMIT;

/// Runs closed-loop: keeps up to `depth` requests from `next` in flight until `next` returns
/// `None` and everything submitted has completed. `next` is handed the run's RNG; each
/// completion goes to `on_done` (with the device, for
/// inspection) in completion order.
pub fn run_closed<D: BlockDevice, E, R: Into<Submission>>(
    sim: &mut Sim<RigEvent<D::Event>>,
    rig: &mut Rig<D>,
    depth: u32,
    watchdog: &mut Watchdog,
    mut next: impl FnMut(&mut SimRng) -> Option<R>,
    mut on_done: impl FnMut(&D, BlockCompletion) -> Result<(), E>,
) -> Result<(), LoadError<E>> {
    assert!(depth > 0, "a closed loop needs a queue depth of at least 1");
    let mut inflight = 0u32;
    let mut exhausted = false;
    let mut done = Vec::new();
    loop {
        while inflight < depth && !exhausted {
            let (q, rng) = sim.parts();
            match next(rng) {
                Some(req) => {
                    rig.submit(req, q);
                    inflight += 1;
                }
                None => exhausted = true,
            }
        }
        rig.take_completions(&mut done);
        if !done.is_empty() {
            inflight -= done.len() as u32;
            for c in done.drain(..) {
                on_done(&rig.dev, c).map_err(LoadError::Handler)?;
            }
            continue;
        }
        if inflight == 0 && exhausted {
            return Ok(());
        }
        // Until something completes (the only thing that frees a slot); with requests in
        // flight, an empty queue is a stall.
        sim.run_until(rig, watchdog, Rig::progress, Rig::completions_waiting)?;
    }
}

/// Runs open-loop: each `(arrival_ns, request)` from `requests` (arrival times relative to
/// the start, non-decreasing) is submitted at its arrival time, whatever is in flight. The
/// iterator is consumed one arrival ahead, so a trace streams through in bounded memory.
pub fn run_open<D: BlockDevice, E, R: Into<Submission>>(
    sim: &mut Sim<RigEvent<D::Event>>,
    rig: &mut Rig<D>,
    watchdog: &mut Watchdog,
    mut requests: impl Iterator<Item = (u64, R)>,
    mut on_done: impl FnMut(&D, BlockCompletion) -> Result<(), E>,
) -> Result<(), LoadError<E>> {
    let base = sim.now();
    let mut pending: Option<R> = None;
    let mut index = 0u64;
    let mut last_arrival = base;
    let mut arm = |sim: &mut Sim<RigEvent<D::Event>>, pending: &mut Option<R>| {
        if let Some((at_ns, req)) = requests.next() {
            let at = base + SimDuration::from_ns(at_ns);
            assert!(
                at >= last_arrival,
                "open-loop arrivals must not go back in time"
            );
            last_arrival = at;
            sim.queue().schedule_at(at, RigEvent::Arrival(index));
            index += 1;
            *pending = Some(req);
        }
    };
    arm(sim, &mut pending);
    let mut done = Vec::new();
    loop {
        rig.take_completions(&mut done);
        for c in done.drain(..) {
            on_done(&rig.dev, c).map_err(LoadError::Handler)?;
        }
        if !rig.arrivals.is_empty() {
            rig.arrivals.clear();
            let req = pending.take().expect("an arrival has its request");
            rig.submit(req, sim.queue());
            arm(sim, &mut pending);
            continue;
        }
        if pending.is_none() && rig.progress().outstanding == 0 {
            return Ok(());
        }
        // Until something completes or arrives (an armed arrival is always pending).
        sim.run_until(rig, watchdog, Rig::progress, |r| {
            r.completions_waiting() || !r.arrivals.is_empty()
        })?;
    }
}

/// What a paced submitter does next (see [`run_paced`]).
#[derive(Debug)]
pub enum Pace {
    /// Submit this request now, with Force Unit Access when `fua` and the Data Placement
    /// directive `placement` if any.
    Submit {
        req: BlockRequest,
        fua: bool,
        placement: Option<PlacementDirective>,
    },
    /// Nothing before this time (a think time, a rate limit, a start delay); the submitter is
    /// asked again then. Must lie in the future.
    Until(SimTime),
    /// Nothing until something completes (its queue depth is reached, or it waits for its
    /// requests to drain before a flush).
    Blocked,
    /// Finished: it submits nothing more.
    Done,
}

/// Whether a paced submitter is asked, waits for its timer, or has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Paced {
    Ready,
    Timer,
    Done,
}

/// Runs `submitters` paced submitters together until every one is done and everything
/// submitted has completed; submitter `i` submits as stream `i`
/// ([`BlockDevice::submit_from`]: its own queue on an NVMe device with enough queues). `next(i, now)` asks submitter `i` what it does now; it is asked
/// again after every completion (and every event) while it is ready, and at the time it
/// named when it waits (`Pace::Until`: a timer on the queue, `RigEvent::Arrival(i)`). Each
/// completion goes to `on_done` in completion order. Submitters draw no randomness from the
/// run's RNG: each owns its own stream, so adding one does not perturb the others. A
/// submitter blocked with nothing in flight and no timer stops the run as a stall.
pub fn run_paced<D: BlockDevice, E>(
    sim: &mut Sim<RigEvent<D::Event>>,
    rig: &mut Rig<D>,
    submitters: usize,
    watchdog: &mut Watchdog,
    mut next: impl FnMut(usize, SimTime) -> Pace,
    mut on_done: impl FnMut(&D, BlockCompletion) -> Result<(), E>,
) -> Result<(), LoadError<E>> {
    assert!(
        rig.arrivals.is_empty(),
        "no timer is pending from an earlier run"
    );
    let mut state = vec![Paced::Ready; submitters];
    let mut done = Vec::new();
    loop {
        let now = sim.now();
        for (i, s) in state.iter_mut().enumerate() {
            while *s == Paced::Ready {
                match next(i, now) {
                    Pace::Submit {
                        req,
                        fua,
                        placement,
                    } => {
                        let stream = u32::try_from(i).expect("fewer than 2^32 submitters");
                        rig.submit_from(stream, req, fua, placement, sim.queue());
                    }
                    Pace::Until(at) => {
                        assert!(at > now, "a paced submitter waits for a future time");
                        sim.queue().schedule_at(at, RigEvent::Arrival(i as u64));
                        *s = Paced::Timer;
                    }
                    Pace::Blocked => break,
                    Pace::Done => *s = Paced::Done,
                }
            }
        }
        rig.take_completions(&mut done);
        if !done.is_empty() {
            for c in done.drain(..) {
                on_done(&rig.dev, c).map_err(LoadError::Handler)?;
            }
            continue;
        }
        if !rig.arrivals.is_empty() {
            for i in rig.arrivals.drain(..) {
                let s = &mut state[i as usize];
                assert_eq!(*s, Paced::Timer, "a timer fires for a waiting submitter");
                *s = Paced::Ready;
            }
            continue;
        }
        if state.iter().all(|s| *s == Paced::Done) && rig.progress().outstanding == 0 {
            return Ok(());
        }
        // Until something completes or a timer fires; a submitter that is ready (blocked)
        // is asked again after the next event, whatever it is. A submitter not done with
        // nothing in flight and no timer pending is a stall.
        let ask_after_one_event = state.contains(&Paced::Ready);
        let mut events_seen = false;
        sim.run_until(rig, watchdog, Rig::progress, |r| {
            let after_an_event = std::mem::replace(&mut events_seen, true);
            r.completions_waiting()
                || !r.arrivals.is_empty()
                || (ask_after_one_event && after_an_event)
        })?;
    }
}

/// Lets the device run with no host traffic until `until` and then on until
/// `quiescent(dev)` holds, so that background work a phase left behind (a checkpoint, idle
/// GC) finishes before the next. The clock stays at the last event processed. Returns the
/// simulated time spent.
pub fn settle<D: BlockDevice>(
    sim: &mut Sim<RigEvent<D::Event>>,
    rig: &mut Rig<D>,
    until: SimTime,
    quiescent: impl Fn(&D) -> bool,
) -> Result<SimDuration, Stall> {
    let start = sim.now();
    // Everything due by `until` (no goal: the wait ends when the next event lies later)...
    sim.run_until_by(until, rig, |_| false);
    // ...then on until the device is quiescent; a queue that empties first is a stall.
    if !sim.run_until_by(SimTime(u64::MAX), rig, |r| quiescent(&r.dev)) {
        return Err(Stall::no_event_pending(sim.now(), start, rig.progress()));
    }
    assert!(
        sim.next_deadline().is_none_or(|t| t > until),
        "nothing due by `until` is left"
    );
    Ok(sim.now().since(start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{BlockOp, IoError};

    /// A device that serves one request at a time in `service` each (or never, when
    /// `stuck`), tracking the most requests it ever held.
    struct Serial {
        service: SimDuration,
        stuck: bool,
        queue: std::collections::VecDeque<(BlockRequest, SimTime)>,
        busy: bool,
        done: Vec<BlockCompletion>,
        held: u64,
        held_max: u64,
    }

    #[derive(Clone, Copy, Debug)]
    struct Done;

    impl TraceEvent for Done {
        fn hash_word(&self) -> u64 {
            7
        }
    }

    impl Serial {
        fn new(service_ns: u64, stuck: bool) -> Self {
            Serial {
                service: SimDuration(service_ns),
                stuck,
                queue: Default::default(),
                busy: false,
                done: Vec::new(),
                held: 0,
                held_max: 0,
            }
        }
        fn start<S: Schedule<Done>>(&mut self, q: &mut S) {
            if !self.busy && !self.queue.is_empty() && !self.stuck {
                self.busy = true;
                q.schedule_in(self.service, Done);
            }
        }
    }

    impl BlockDevice for Serial {
        type Event = Done;
        fn capacity_bytes(&self) -> u64 {
            1 << 30
        }
        fn is_functional(&self) -> bool {
            false
        }
        fn submit<S: Schedule<Done>>(&mut self, req: BlockRequest, q: &mut S) {
            self.held += 1;
            self.held_max = self.held_max.max(self.held);
            self.queue.push_back((req, q.now()));
            self.start(q);
        }
        fn handle<S: Schedule<Done>>(&mut self, _: Done, q: &mut S, _: &mut SimRng) {
            let (req, submitted) = self.queue.pop_front().expect("a request in service");
            self.busy = false;
            self.held -= 1;
            self.done.push(BlockCompletion {
                id: req.id,
                op: req.op,
                offset_bytes: req.offset_bytes,
                len_bytes: req.len_bytes,
                submitted,
                completed: q.now(),
                result: Ok::<(), IoError>(()),
                data: Vec::new(),
            });
            self.start(q);
        }
        fn take_completions(&mut self, out: &mut Vec<BlockCompletion>) {
            out.append(&mut self.done);
        }
        fn outstanding(&self) -> u64 {
            self.held + self.done.len() as u64
        }
    }

    fn read(id: u64) -> BlockRequest {
        BlockRequest {
            id,
            op: BlockOp::Read,
            offset_bytes: id * 4096,
            len_bytes: 4096,
            data: Vec::new(),
        }
    }

    #[test]
    fn closed_loop_keeps_exactly_the_queue_depth_in_flight_and_finishes_everything() {
        let mut sim = Sim::new(1);
        let mut rig = Rig::new(Serial::new(1_000, false));
        let mut next = 0;
        let mut latencies = Vec::new();
        run_closed::<_, (), BlockRequest>(
            &mut sim,
            &mut rig,
            4,
            &mut Watchdog::new(DEFAULT_STALL_LIMIT),
            |_| {
                (next < 20).then(|| {
                    next += 1;
                    read(next)
                })
            },
            |_, c| {
                latencies.push(c.completed.since(c.submitted).as_ns());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(latencies.len(), 20);
        assert_eq!(rig.dev.held_max, 4);
        // A serial device at depth 4: 20 requests take 20 service times, and once the loop
        // is full each request waits for the three ahead of it.
        assert_eq!(sim.now(), SimTime(20_000));
        assert_eq!(latencies[10], 4_000);
    }

    #[test]
    fn open_loop_submits_at_the_arrival_times_whatever_is_in_flight() {
        let mut sim = Sim::new(1);
        let mut rig = Rig::new(Serial::new(1_000, false));
        let arrivals = [0u64, 5_000, 5_100, 20_000];
        let mut done = Vec::new();
        run_open::<_, (), BlockRequest>(
            &mut sim,
            &mut rig,
            &mut Watchdog::new(DEFAULT_STALL_LIMIT),
            arrivals
                .iter()
                .enumerate()
                .map(|(i, &a)| (a, read(i as u64))),
            |_, c| {
                done.push((c.submitted.as_ns(), c.completed.as_ns()));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            done,
            [(0, 1_000), (5_000, 6_000), (5_100, 7_000), (20_000, 21_000)]
        );
    }

    /// Two paced submitters on one serial device: the first keeps two requests in flight
    /// from the start, the second starts at 10 µs and submits one request, thinks for 5 µs
    /// after it completes and submits the second. Both finish; the second's requests wait
    /// behind the first's in the device's queue.
    #[test]
    fn paced_submitters_share_the_device_with_their_own_depths_and_timers() {
        let mut sim = Sim::new(1);
        let mut rig = Rig::new(Serial::new(1_000, false));
        let mut issued = [0u64; 2];
        let mut in_flight = [0u32; 2];
        let mut think_until: Option<SimTime> = None;
        let mut done = Vec::new();
        let in_flight_cell = std::cell::RefCell::new(&mut in_flight);
        run_paced::<_, ()>(
            &mut sim,
            &mut rig,
            2,
            &mut Watchdog::new(DEFAULT_STALL_LIMIT),
            |i, now| {
                let mut fl = in_flight_cell.borrow_mut();
                match i {
                    0 if issued[0] == 20 => Pace::Done,
                    0 if fl[0] == 2 => Pace::Blocked,
                    0 => {
                        issued[0] += 1;
                        fl[0] += 1;
                        Pace::Submit {
                            req: read(issued[0]),
                            fua: false,
                            placement: None,
                        }
                    }
                    _ if now < SimTime(10_000) => Pace::Until(SimTime(10_000)),
                    _ if issued[1] == 2 => Pace::Done,
                    _ if fl[1] == 1 => Pace::Blocked,
                    _ => {
                        if issued[1] == 1 {
                            let at = *think_until.get_or_insert(now + SimDuration(5_000));
                            if now < at {
                                return Pace::Until(at);
                            }
                        }
                        issued[1] += 1;
                        fl[1] += 1;
                        Pace::Submit {
                            req: read(100 + issued[1]),
                            fua: false,
                            placement: None,
                        }
                    }
                }
            },
            |_, c| {
                let who = usize::from(c.id > 100);
                in_flight_cell.borrow_mut()[who] -= 1;
                done.push((c.id, c.submitted.as_ns(), c.completed.as_ns()));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(done.len(), 22);
        let second: Vec<_> = done.iter().filter(|d| d.0 > 100).collect();
        assert_eq!(second[0].1, 10_000, "the second starts at its delay");
        assert!(
            second[0].2 > 11_000,
            "and waits behind the first's requests"
        );
        assert_eq!(
            second[1].1,
            second[0].2 + 5_000,
            "it thinks 5 µs after its first request completes"
        );
        assert_eq!(rig.dev.held_max, 3);
    }

    #[test]
    fn a_device_that_never_completes_is_a_stall_not_a_hang() {
        let mut sim = Sim::new(1);
        let mut rig = Rig::new(Serial::new(1_000, true));
        let mut next = 0;
        let err = run_closed::<_, (), BlockRequest>(
            &mut sim,
            &mut rig,
            2,
            &mut Watchdog::new(DEFAULT_STALL_LIMIT),
            |_| {
                (next < 5).then(|| {
                    next += 1;
                    read(next)
                })
            },
            |_, _| Ok(()),
        )
        .unwrap_err();
        let LoadError::Stall(s) = err else {
            panic!("expected a stall")
        };
        assert_eq!(s.progress.outstanding, 2);
    }

    #[test]
    fn a_handler_error_stops_the_run_and_is_returned() {
        let mut sim = Sim::new(1);
        let mut rig = Rig::new(Serial::new(1_000, false));
        let mut next = 0;
        let err = run_closed(
            &mut sim,
            &mut rig,
            1,
            &mut Watchdog::new(DEFAULT_STALL_LIMIT),
            |_| {
                (next < 5).then(|| {
                    next += 1;
                    read(next)
                })
            },
            |_, c| if c.id == 3 { Err("bad read") } else { Ok(()) },
        )
        .unwrap_err();
        assert!(matches!(err, LoadError::Handler("bad read")));
    }
}
