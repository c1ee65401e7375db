//! The one simulation loop. A [`Model`] is a machine — a composition of sans-IO components —
//! with one event enum; [`Sim`] owns its clock (the event queue), the run's one seeded RNG and
//! the trace hash, and hands it events in (time, scheduling order). Every driver in nearflash
//! — `io`, the crash tests, the accelerator, INSIDER, Active Flash — runs its machine here, so
//! every run hashes its trace the same way: the event's time in ns, then its
//! [`TraceEvent::hash_word`].
//!
//! A caller that submits work and waits for it holds its model in a [`crate::Driver`], whose
//! only way to wait is [`Sim::run_until`].
//!
//! A wall-clock driver uses the same two calls a simulation does: [`Sim::next_deadline`] (when
//! the model next needs attention) and [`Sim::advance_to`] (process everything due up to `t`,
//! then set the clock to `t`), so live mode drives the very same components.

use crate::hash::TraceHasher;
use crate::queue::EventQueue;
use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};
use std::fmt;

/// An event that can be folded into the trace hash.
pub trait TraceEvent {
    /// A word that identifies the event (its kind and its addressee); equal events give equal
    /// words, and distinct kinds should give distinct words.
    fn hash_word(&self) -> u64;
}

/// A machine driven by [`Sim`].
pub trait Model {
    type Event: TraceEvent;

    /// Handles one event at `q.now()`; answers by scheduling events on `q`.
    fn handle(&mut self, event: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng);

    /// Asserts the machine's invariants (panics naming the one broken). [`Sim`] calls it after
    /// every event when a driver asks ([`Sim::check_invariants_after_every_event`]: the
    /// soak's small drives); a model
    /// with state worth checking passes the call down to its components.
    fn check_invariants(&self) {}

    /// What the machine reports to the watchdog while a driver waits on it
    /// ([`crate::Driver::run_until`]): requests completed so far and requests outstanding. A
    /// machine that reports nothing (the default) is only watched for its queue emptying.
    fn progress(&self) -> Progress {
        Progress::default()
    }
}

/// The watchdog's limit unless a driver says otherwise: no request completing for this long
/// while some are outstanding is a stall. Far above any latency a healthy device shows (the
/// worst GC-bound write latencies measured on the presets are under a second); defined here
/// once, for every driver.
pub const STALL_LIMIT: SimDuration = SimDuration(60_000_000_000);

/// The clock, the RNG and the trace hash of one run. A clone continues exactly as the
/// original would (a snapshot of a run, e.g. after preconditioning shared by several runs).
#[derive(Clone)]
pub struct Sim<E> {
    queue: EventQueue<E>,
    rng: SimRng,
    hash: TraceHasher,
    /// Call [`Model::check_invariants`] after every event.
    check_invariants: bool,
}

impl<E: TraceEvent> Sim<E> {
    pub fn new(seed: u64) -> Self {
        Self::with_rng(SimRng::seed_from_u64(seed))
    }

    pub fn with_rng(rng: SimRng) -> Self {
        Sim {
            queue: EventQueue::new(),
            rng,
            hash: TraceHasher::default(),
            check_invariants: false,
        }
    }

    /// Checks the model's invariants after every event (off by default: a drive's checks walk
    /// its tables, so a large drive checked per event would not finish): a broken one panics
    /// at the event that broke it, not at the end of a run.
    pub fn check_invariants_after_every_event(&mut self, on: bool) {
        self.check_invariants = on;
    }

    pub fn now(&self) -> SimTime {
        self.queue.now()
    }

    /// When the model next needs attention: the time of its earliest pending event.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// The queue, for submitting work to the model from outside an event (a driver's
    /// arrivals). Anything scheduled here is a pending event like any other.
    pub fn queue(&mut self) -> &mut EventQueue<E> {
        &mut self.queue
    }

    /// The queue and the RNG together, for calls into the model between events.
    pub fn parts(&mut self) -> (&mut EventQueue<E>, &mut SimRng) {
        (&mut self.queue, &mut self.rng)
    }

    /// Ends the run, keeping its RNG (a power cut drops the queue; the stream carries on).
    pub fn into_rng(self) -> SimRng {
        self.rng
    }

    pub fn rng(&mut self) -> &mut SimRng {
        &mut self.rng
    }

    /// Events still due at the current instant (see [`EventQueue::pending_now`]).
    pub fn pending_now(&self) -> usize {
        self.queue.pending_now()
    }

    /// Events processed so far (a run's `sim_events`).
    pub fn events(&self) -> u64 {
        self.queue.events_processed()
    }

    pub fn trace_hash(&self) -> &TraceHasher {
        &self.hash
    }

    /// Starts the trace hash afresh: a run whose untimed preparation (preconditioning
    /// writes) should not count hashes only what follows.
    pub fn restart_trace(&mut self) {
        self.hash = TraceHasher::default();
    }

    /// Folds a driver-level happening (an arrival, a phase boundary) into the trace hash.
    pub fn hash_word(&mut self, word: u64) {
        self.hash.word(word);
    }

    /// Processes the earliest pending event; false when none is pending. Every
    /// `interrupt::POLL_EVENTS` events it asks the thread's interrupt check, if any
    /// (`interrupt::interruptible`).
    #[inline]
    pub fn step<M: Model<Event = E>>(&mut self, model: &mut M) -> bool {
        let Some((at, ev)) = self.queue.pop() else {
            return false;
        };
        self.hash.word(at.as_ns());
        self.hash.word(ev.hash_word());
        model.handle(ev, &mut self.queue, &mut self.rng);
        if self.check_invariants {
            model.check_invariants();
        }
        if self.queue.events_processed() & (crate::interrupt::POLL_EVENTS - 1) == 0 {
            crate::interrupt::poll();
        }
        true
    }

    /// Processes every event due at or before `t`, then moves the clock to `t` (an idle
    /// interval needs no marker event). `t` must not be in the past.
    pub fn advance_to<M: Model<Event = E>>(&mut self, t: SimTime, model: &mut M) {
        while self.queue.peek_time().is_some_and(|at| at <= t) {
            self.step(model);
        }
        self.queue.advance_clock(t);
    }

    /// Processes the events due by `limit`, in order, until `done(model)` holds: true when it
    /// does, false when the next event (if any) lies past `limit` first (a power-loss hold-up
    /// that must finish within its energy budget). The clock stays at the last event.
    pub fn run_until_by<M: Model<Event = E>>(
        &mut self,
        limit: SimTime,
        model: &mut M,
        mut done: impl FnMut(&M) -> bool,
    ) -> bool {
        while !done(model) {
            if self.queue.peek_time().is_none_or(|at| at > limit) {
                return false;
            }
            self.step(model);
        }
        true
    }

    /// Processes events until `done(model)` holds, under the watchdog: the queue emptying
    /// before then, or no progress for the watchdog's limit, is a [`Stall`].
    /// `progress(model)` reports what the watchdog watches.
    pub fn run_until<M: Model<Event = E>>(
        &mut self,
        model: &mut M,
        watchdog: &mut Watchdog,
        mut progress: impl FnMut(&M) -> Progress,
        mut done: impl FnMut(&M) -> bool,
    ) -> Result<(), Stall> {
        while !done(model) {
            if !self.step_watched(model, watchdog, &mut progress)? {
                return Err(Stall::no_event_pending(
                    self.now(),
                    watchdog.last_progress_at,
                    progress(model),
                ));
            }
        }
        Ok(())
    }

    /// One event under the watchdog, for a driver that must act between events (feed a
    /// closed loop, pump workers) and so cannot hand [`Sim::run_until`] a pure `done`: true
    /// after an event; false when no event is pending and nothing is outstanding; a [`Stall`]
    /// when requests are outstanding and no event is pending, or nothing completed for the
    /// watchdog's limit. The one place a stall is made.
    pub fn step_watched<M: Model<Event = E>>(
        &mut self,
        model: &mut M,
        watchdog: &mut Watchdog,
        mut progress: impl FnMut(&M) -> Progress,
    ) -> Result<bool, Stall> {
        if !self.step(model) {
            let p = progress(model);
            if p.outstanding > 0 {
                return Err(Stall::no_event_pending(
                    self.now(),
                    watchdog.last_progress_at,
                    p,
                ));
            }
            return Ok(false);
        }
        watchdog.observe(self.now(), progress(model))?;
        Ok(true)
    }
}

/// What a driver's watchdog watches: requests completed so far and requests outstanding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub completed: u64,
    pub outstanding: u64,
}

/// Why the watchdog stopped a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallReason {
    /// Requests are outstanding and nothing is scheduled that could complete them.
    NoEventPending,
    /// Events kept coming, but no request completed for the watchdog's limit.
    NoCompletion,
}

/// A run that stopped making progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    pub at: SimTime,
    pub since: SimTime,
    pub progress: Progress,
    pub reason: StallReason,
}

impl Stall {
    /// Requests are outstanding (or a goal is unmet) and no event is pending.
    pub fn no_event_pending(at: SimTime, since: SimTime, progress: Progress) -> Stall {
        Stall {
            at,
            since,
            progress,
            reason: StallReason::NoEventPending,
        }
    }
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.reason {
            StallReason::NoEventPending => "no event is pending that could complete them",
            StallReason::NoCompletion => "events kept coming but none completed",
        };
        write!(
            f,
            "no progress: {} request(s) outstanding at {:.6} s simulated, none completed since {:.6} s ({} completed in all); {why}",
            self.progress.outstanding,
            self.at.as_secs_f64(),
            self.since.as_secs_f64(),
            self.progress.completed,
        )
    }
}

impl std::error::Error for Stall {}

/// A progress watchdog: "no request completed for `limit` of simulated time while requests
/// are outstanding" is a [`Stall`] — never a spin.
#[derive(Clone, Debug)]
pub struct Watchdog {
    limit: SimDuration,
    last_completed: u64,
    last_progress_at: SimTime,
}

impl Watchdog {
    pub fn new(limit: SimDuration) -> Self {
        Watchdog {
            limit,
            last_completed: 0,
            last_progress_at: SimTime::ZERO,
        }
    }

    /// A watchdog armed at `now` rather than at time zero: for a driver that starts watching
    /// partway through a run (a later phase, one host I/O call among many).
    pub fn starting_at(limit: SimDuration, now: SimTime) -> Self {
        Watchdog {
            last_progress_at: now,
            ..Watchdog::new(limit)
        }
    }

    pub fn limit(&self) -> SimDuration {
        self.limit
    }

    /// Notes the state at `now`; an error once nothing has completed for the limit while
    /// something was outstanding.
    pub fn observe(&mut self, now: SimTime, p: Progress) -> Result<(), Stall> {
        if p.completed != self.last_completed || p.outstanding == 0 {
            self.last_completed = p.completed;
            self.last_progress_at = now;
            return Ok(());
        }
        if now.since(self.last_progress_at) > self.limit {
            return Err(Stall {
                at: now,
                since: self.last_progress_at,
                progress: p,
                reason: StallReason::NoCompletion,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::Schedule;

    /// A toy machine: a request takes `service` ns; `broken` requests never complete but a
    /// timer keeps ticking (the shape of a deadlock behind a checkpoint timer).
    struct Toy {
        service: SimDuration,
        completed: u64,
        outstanding: u64,
        broken: bool,
    }

    #[derive(Debug)]
    enum Ev {
        Done,
        Timer,
    }

    impl TraceEvent for Ev {
        fn hash_word(&self) -> u64 {
            match self {
                Ev::Done => 1,
                Ev::Timer => 2,
            }
        }
    }

    impl Model for Toy {
        type Event = Ev;
        fn handle(&mut self, ev: Ev, q: &mut EventQueue<Ev>, _: &mut SimRng) {
            match ev {
                Ev::Done => {
                    self.completed += 1;
                    self.outstanding -= 1;
                }
                Ev::Timer => q.schedule_in(SimDuration(1_000), Ev::Timer),
            }
        }
    }

    impl Toy {
        fn submit(&mut self, q: &mut EventQueue<Ev>) {
            self.outstanding += 1;
            if !self.broken {
                q.schedule_in(self.service, Ev::Done);
            }
        }
        fn progress(&self) -> Progress {
            Progress {
                completed: self.completed,
                outstanding: self.outstanding,
            }
        }
    }

    fn toy(broken: bool) -> Toy {
        Toy {
            service: SimDuration(100),
            completed: 0,
            outstanding: 0,
            broken,
        }
    }

    #[test]
    fn advance_to_processes_due_events_and_moves_the_clock_without_a_marker() {
        let mut sim = Sim::new(1);
        let mut m = toy(false);
        m.submit(sim.queue());
        sim.advance_to(SimTime(50), &mut m);
        assert_eq!((sim.now(), m.completed), (SimTime(50), 0));
        assert_eq!(sim.next_deadline(), Some(SimTime(100)));
        sim.advance_to(SimTime(500), &mut m);
        assert_eq!((sim.now(), m.completed, sim.events()), (SimTime(500), 1, 1));
        assert_eq!(sim.next_deadline(), None);
    }

    #[test]
    fn same_events_give_same_hash_and_other_times_another() {
        let run = |service| {
            let mut sim = Sim::new(1);
            let mut m = toy(false);
            m.service = SimDuration(service);
            m.submit(sim.queue());
            sim.advance_to(SimTime(1_000), &mut m);
            sim.trace_hash().finish()
        };
        assert_eq!(run(100), run(100));
        assert_ne!(run(100), run(101));
    }

    #[test]
    fn a_machine_that_never_completes_behind_a_live_timer_is_a_stall_not_a_spin() {
        let mut sim = Sim::new(1);
        let mut m = toy(true);
        sim.queue().schedule_in(SimDuration(1_000), Ev::Timer);
        m.submit(sim.queue());
        let mut dog = Watchdog::new(SimDuration::from_ms(1));
        let err = sim
            .run_until(&mut m, &mut dog, Toy::progress, |m| m.outstanding == 0)
            .unwrap_err();
        assert_eq!(err.reason, StallReason::NoCompletion);
        assert_eq!(err.progress.outstanding, 1);
        assert!(err.at.as_ns() > 1_000_000 && err.at.as_ns() <= 1_001_000);
        assert!(err.to_string().contains("1 request(s) outstanding"));
    }

    /// A host I/O call late in a run built its watchdog with `Watchdog::new`, whose clock
    /// starts at zero: the first slow step after 60 s of simulated time looked like a minute
    /// without completions. A watchdog started at `now` measures from `now`.
    #[test]
    fn a_watchdog_started_late_measures_from_its_start() {
        let late = SimTime(10_000_000);
        let p = Progress {
            completed: 0,
            outstanding: 1,
        };
        let limit = SimDuration::from_ms(1);
        assert!(Watchdog::new(limit).observe(late, p).is_err());
        let mut dog = Watchdog::starting_at(limit, late);
        assert!(dog.observe(late + SimDuration(1_000), p).is_ok());
        assert!(dog.observe(late + SimDuration(2_000_000), p).is_err());
    }

    #[test]
    fn restart_trace_forgets_what_came_before() {
        let run = |prep: bool| {
            let mut sim = Sim::new(1);
            let mut m = toy(false);
            if prep {
                m.submit(sim.queue());
                sim.advance_to(SimTime(500), &mut m);
                sim.restart_trace();
            }
            sim.hash_word(7);
            sim.trace_hash().finish()
        };
        assert_eq!(run(true), run(false));
    }

    #[test]
    fn outstanding_requests_with_an_empty_queue_are_a_stall() {
        let mut sim = Sim::new(1);
        let mut m = toy(true);
        m.submit(sim.queue());
        let mut dog = Watchdog::new(SimDuration::from_ms(1));
        let err = sim
            .run_until(&mut m, &mut dog, Toy::progress, |m| m.outstanding == 0)
            .unwrap_err();
        assert_eq!(err.reason, StallReason::NoEventPending);
    }

    /// A goal no event will bring (here: more completions than requests) ends the wait as
    /// a stall when the queue empties, even with nothing outstanding — never as success.
    #[test]
    fn a_queue_that_empties_before_the_goal_is_a_stall() {
        let mut sim = Sim::new(1);
        let mut m = toy(false);
        m.submit(sim.queue());
        let mut dog = Watchdog::new(SimDuration::from_ms(1));
        let err = sim
            .run_until(&mut m, &mut dog, Toy::progress, |m| m.completed == 2)
            .unwrap_err();
        assert_eq!(
            (err.reason, err.progress.completed),
            (StallReason::NoEventPending, 1)
        );
    }

    #[test]
    fn a_healthy_run_finishes() {
        let mut sim = Sim::new(1);
        let mut m = toy(false);
        for _ in 0..3 {
            m.submit(sim.queue());
        }
        let mut dog = Watchdog::new(SimDuration::from_ms(1));
        sim.run_until(&mut m, &mut dog, Toy::progress, |m| m.outstanding == 0)
            .unwrap();
        assert_eq!(m.completed, 3);
        // The toy's own scheduling goes through the Schedule trait too.
        assert_eq!(Schedule::now(sim.queue()), SimTime(100));
    }

    /// A counter that must stay below 3; each event adds one.
    struct Bounded(u32);

    impl Model for Bounded {
        type Event = Ev;
        fn handle(&mut self, _: Ev, q: &mut EventQueue<Ev>, _: &mut SimRng) {
            self.0 += 1;
            q.schedule_in(SimDuration(10), Ev::Timer);
        }
        fn check_invariants(&self) {
            assert!(self.0 < 3, "the counter reached {}", self.0);
        }
    }

    #[test]
    #[should_panic(expected = "the counter reached 3")]
    fn a_broken_invariant_stops_the_run_at_the_event_that_broke_it() {
        let mut sim = Sim::new(1);
        sim.check_invariants_after_every_event(true);
        let mut m = Bounded(0);
        sim.queue().schedule_in(SimDuration(1), Ev::Timer);
        for _ in 0..3 {
            sim.step(&mut m);
        }
    }

    #[test]
    fn unchecked_the_same_run_goes_on() {
        let mut sim = Sim::new(1);
        sim.check_invariants_after_every_event(false);
        let mut m = Bounded(0);
        sim.queue().schedule_in(SimDuration(1), Ev::Timer);
        for _ in 0..5 {
            sim.step(&mut m);
        }
        assert_eq!(m.0, 5);
    }

    #[test]
    fn run_until_by_stops_at_done_or_at_the_limit_whichever_comes_first() {
        let mut sim = Sim::new(1);
        sim.check_invariants_after_every_event(false);
        let mut m = Bounded(0);
        sim.queue().schedule_in(SimDuration(1), Ev::Timer);
        // Events at 1, 11, 21, ...: done (3 events) comes before the limit.
        assert!(sim.run_until_by(SimTime(1_000), &mut m, |m| m.0 == 3));
        assert_eq!((m.0, sim.now()), (3, SimTime(21)));
        // The next event is at 31: a limit of 30 stops before it, not done.
        assert!(!sim.run_until_by(SimTime(30), &mut m, |m| m.0 == 10));
        assert_eq!((m.0, sim.now()), (3, SimTime(21)));
    }
}
