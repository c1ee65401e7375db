//! The synchronous driver: a [`Model`] on its [`Sim`], for a caller that submits work to the
//! model and then waits for it (an experiment's phases, a program's blocking file calls, a
//! checker's reads). The caller owns the driver; the model never sees the loop — it is handed
//! events and `now` and answers with events, like any component.
//!
//! Waiting is [`Sim::run_until`] under a fresh [`Watchdog`] armed at the wait's start, watching
//! what the model reports through [`Model::progress`]; a wait that stops making progress is the
//! one [`Stall`]. The limit is [`STALL_LIMIT`] unless the caller sets another
//! ([`Driver::with_stall_limit`]). A caller whose waits are many and short (a program's timer
//! ticks while its I/O is stuck) keeps one watchdog across them instead
//! ([`Driver::watching_across_waits`]): no single wait lasts the limit, their sum does.
//!
//! A phase of a run that handles the same events its own way (an untimed preconditioning that
//! drives only the device, before the machine around it starts) is a model of its own, made
//! from the driver's model and waited on with [`Driver::run_phase_until`] on the same loop.

use crate::queue::EventQueue;
use crate::rng::SimRng;
use crate::run::{Model, Sim, Stall, Watchdog, STALL_LIMIT};
use crate::time::{SimDuration, SimTime};

/// A model and the simulation loop that runs it.
pub struct Driver<M: Model> {
    sim: Sim<M::Event>,
    model: M,
    stall_limit: SimDuration,
    /// The one watchdog every wait continues (`watching_across_waits`); `None`: each wait
    /// arms a fresh one.
    across_waits: Option<Watchdog>,
}

impl<M: Model> Driver<M> {
    /// `model` on `sim` (events it scheduled while being built are already on `sim`'s queue),
    /// waits watched with [`STALL_LIMIT`].
    pub fn new(sim: Sim<M::Event>, model: M) -> Self {
        Driver {
            sim,
            model,
            stall_limit: STALL_LIMIT,
            across_waits: None,
        }
    }

    /// Builds the model on `sim`'s queue (a device formats itself by scheduling events), then
    /// drives it.
    pub fn build<E>(
        mut sim: Sim<M::Event>,
        make: impl FnOnce(&mut EventQueue<M::Event>) -> Result<M, E>,
    ) -> Result<Self, E> {
        let model = make(sim.queue())?;
        Ok(Self::new(sim, model))
    }

    /// Waits watched with `limit` instead of [`STALL_LIMIT`] (a machine whose healthy waits
    /// are bounded tighter, so a deadlock is reported sooner).
    pub fn with_stall_limit(mut self, limit: SimDuration) -> Self {
        assert!(limit > SimDuration::ZERO, "a stall limit is positive");
        self.stall_limit = limit;
        self.across_waits = self
            .across_waits
            .take()
            .map(|_| Watchdog::starting_at(limit, self.sim.now()));
        self
    }

    /// Keeps one watchdog across every wait from now on, instead of arming a fresh one per
    /// wait: requests outstanding with none completing for the stall limit is a [`Stall`]
    /// even when it is spread over many short waits that each end well (a timer the caller
    /// waits on keeps firing while the I/O it also waits for never completes). The time
    /// between waits counts too; work completing, or nothing outstanding, at a wait's start
    /// re-arms it.
    pub fn watching_across_waits(mut self) -> Self {
        self.across_waits = Some(Watchdog::starting_at(self.stall_limit, self.sim.now()));
        self
    }

    /// Checks the model's invariants after every event from now on
    /// ([`Sim::check_invariants_after_every_event`]).
    pub fn check_invariants_after_every_event(&mut self, on: bool) {
        self.sim.check_invariants_after_every_event(on);
    }

    pub fn model(&self) -> &M {
        &self.model
    }

    /// The model, for a change between waits that schedules nothing (a phase's settings).
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    /// The model with the queue and the RNG, for submitting work between waits: anything it
    /// schedules is a pending event like any other.
    pub fn parts(&mut self) -> (&mut M, &mut EventQueue<M::Event>, &mut SimRng) {
        let (q, rng) = self.sim.parts();
        (&mut self.model, q, rng)
    }

    /// The loop itself, for what it counts (events, the trace hash).
    pub fn sim(&self) -> &Sim<M::Event> {
        &self.sim
    }

    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// Starts the trace hash afresh ([`Sim::restart_trace`]): what ran so far was untimed
    /// preparation.
    pub fn restart_trace(&mut self) {
        self.sim.restart_trace();
    }

    /// Lets `d` of simulated time pass (a core computing, a sleep): the events due meanwhile
    /// run, then the clock stands at `now + d`.
    pub fn advance(&mut self, d: SimDuration) {
        self.advance_to(self.sim.now() + d);
    }

    /// Runs the events due by `t`, then sets the clock to `t` (a wall-clock driver catching
    /// up with real time). `t` must not be in the past.
    pub fn advance_to(&mut self, t: SimTime) {
        self.sim.advance_to(t, &mut self.model);
        assert_eq!(self.sim.now(), t, "the clock stands at the end of the wait");
    }

    /// Runs events until `done(model)` holds (checked first, then after every event), under
    /// a watchdog armed now: the queue emptying first, or no progress for the stall limit, is
    /// a [`Stall`].
    pub fn run_until(&mut self, done: impl FnMut(&M) -> bool) -> Result<(), Stall> {
        let now = self.sim.now();
        match self.across_waits.as_mut() {
            Some(dog) => {
                // What happened since the last wait (submissions, completions outside an
                // event) is seen before the first event of this one.
                dog.observe(now, self.model.progress())?;
                self.sim.run_until(&mut self.model, dog, M::progress, done)
            }
            None => {
                let mut dog = Watchdog::starting_at(self.stall_limit, now);
                self.sim
                    .run_until(&mut self.model, &mut dog, M::progress, done)
            }
        }
    }

    /// Runs the events due by `limit` until `done(model)` holds ([`Sim::run_until_by`]): true
    /// when it does, false when the next event (if any) lies past `limit` first. No watchdog:
    /// for a caller that decides at every event itself (a crash test cutting power the moment
    /// a phase executes), or whose deadline is the bound.
    pub fn run_until_by(&mut self, limit: SimTime, done: impl FnMut(&M) -> bool) -> bool {
        self.sim.run_until_by(limit, &mut self.model, done)
    }

    /// One phase on this loop by a model of its own: `phase` makes it from the driver's model
    /// and the queue (submitting its first work), then events run, handled by the phase's
    /// model, until `done(phase)` holds — a wait like [`Driver::run_until`], under a fresh
    /// watchdog watching what the phase reports through [`Model::progress`]. Hands the phase
    /// back (what it counted, an error it kept); the driver's model is whatever the phase
    /// left it.
    pub fn run_phase_until<'m, P: Model<Event = M::Event>>(
        &'m mut self,
        phase: impl FnOnce(&'m mut M, &mut EventQueue<M::Event>) -> P,
        done: impl FnMut(&P) -> bool,
    ) -> Result<P, Stall> {
        let mut dog = Watchdog::starting_at(self.stall_limit, self.sim.now());
        let mut p = phase(&mut self.model, self.sim.queue());
        self.sim.run_until(&mut p, &mut dog, P::progress, done)?;
        Ok(p)
    }

    /// Ends the drive, handing back the loop and the model (a power cut keeps the RNG; an
    /// image closes its device).
    pub fn into_parts(self) -> (Sim<M::Event>, M) {
        (self.sim, self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Progress, StallReason, TraceEvent};

    /// A server of `service` ns per request; `broken` loses every request.
    struct Server {
        service: SimDuration,
        outstanding: u64,
        completed: u64,
        broken: bool,
    }

    struct Done;

    impl TraceEvent for Done {
        fn hash_word(&self) -> u64 {
            1
        }
    }

    impl Model for Server {
        type Event = Done;
        fn handle(&mut self, _: Done, _: &mut EventQueue<Done>, _: &mut SimRng) {
            assert!(self.outstanding > 0, "a completion has its request");
            self.outstanding -= 1;
            self.completed += 1;
        }
        fn progress(&self) -> Progress {
            Progress {
                completed: self.completed,
                outstanding: self.outstanding,
            }
        }
    }

    impl Server {
        fn submit(&mut self, q: &mut EventQueue<Done>) {
            self.outstanding += 1;
            if !self.broken {
                q.schedule_in(self.service, Done);
            }
        }
    }

    fn driver(broken: bool) -> Driver<Server> {
        Driver::new(
            Sim::new(1),
            Server {
                service: SimDuration(100),
                outstanding: 0,
                completed: 0,
                broken,
            },
        )
    }

    #[test]
    fn a_caller_submits_then_waits_and_the_clock_stands_at_the_last_completion() {
        let mut d = driver(false);
        for _ in 0..3 {
            let (m, q, _) = d.parts();
            m.submit(q);
        }
        d.run_until(|m| m.outstanding == 0).unwrap();
        assert_eq!((d.model().completed, d.now()), (3, SimTime(100)));
        assert_eq!(d.sim().events(), 3);
    }

    #[test]
    fn a_lost_request_is_the_one_stall_not_a_spin() {
        let mut d = driver(true);
        let (m, q, _) = d.parts();
        m.submit(q);
        let err = d.run_until(|m| m.outstanding == 0).unwrap_err();
        assert_eq!(
            (err.reason, err.progress.outstanding),
            (StallReason::NoEventPending, 1)
        );
    }

    #[test]
    fn advance_runs_what_falls_due_and_stops_the_clock_at_the_end() {
        let mut d = driver(false);
        let (m, q, _) = d.parts();
        m.submit(q);
        d.advance(SimDuration(50));
        assert_eq!((d.model().completed, d.now()), (0, SimTime(50)));
        d.advance(SimDuration(100));
        assert_eq!((d.model().completed, d.now()), (1, SimTime(150)));
    }

    /// A program waits for its timer, 1 ms at a time, while its one I/O never completes:
    /// every wait ends well, so a watchdog armed per wait never sees 10 ms without progress.
    struct StuckBehindTicks {
        ticks: u64,
    }

    impl Model for StuckBehindTicks {
        type Event = Done;
        fn handle(&mut self, _: Done, _: &mut EventQueue<Done>, _: &mut SimRng) {
            self.ticks += 1;
        }
        fn progress(&self) -> Progress {
            Progress {
                completed: 0,
                outstanding: 1,
            }
        }
    }

    /// Waits on one 1 ms tick after another, 100 in all: how many waits ended well.
    fn wait_on_ticks(d: &mut Driver<StuckBehindTicks>) -> Result<u64, Stall> {
        for n in 1..=100 {
            d.parts().1.schedule_in(SimDuration::from_ms(1), Done);
            d.run_until(|m| m.ticks == n)?;
        }
        Ok(d.model().ticks)
    }

    #[test]
    fn a_stall_spread_over_many_short_waits_is_caught_by_one_watchdog_across_them() {
        let stuck = || Driver::new(Sim::new(1), StuckBehindTicks { ticks: 0 });
        let limit = SimDuration::from_ms(10);
        let mut per_wait = stuck().with_stall_limit(limit);
        assert_eq!(wait_on_ticks(&mut per_wait), Ok(100), "each wait is short");
        let mut across = stuck().with_stall_limit(limit).watching_across_waits();
        let err = wait_on_ticks(&mut across).unwrap_err();
        assert_eq!(err.reason, StallReason::NoCompletion);
        assert_eq!((err.since, err.at), (SimTime::ZERO, SimTime(11_000_000)));
    }

    #[test]
    fn a_watchdog_across_waits_is_rearmed_by_a_completion_between_them() {
        let mut d = driver(false)
            .with_stall_limit(SimDuration(150))
            .watching_across_waits();
        for _ in 0..5 {
            let (m, q, _) = d.parts();
            m.submit(q);
            d.run_until(|m| m.outstanding == 0).unwrap();
            d.advance(SimDuration(100));
        }
        assert_eq!((d.model().completed, d.now()), (5, SimTime(1_000)));
    }

    /// A preconditioning phase: counts the server's completions itself, on the same loop.
    struct Counting<'a> {
        server: &'a mut Server,
        seen: u64,
    }

    impl Model for Counting<'_> {
        type Event = Done;
        fn handle(&mut self, ev: Done, q: &mut EventQueue<Done>, rng: &mut SimRng) {
            self.server.handle(ev, q, rng);
            self.seen += 1;
        }
        fn progress(&self) -> Progress {
            self.server.progress()
        }
    }

    #[test]
    fn a_phase_runs_on_the_drivers_loop_and_leaves_the_model_as_it_made_it() {
        let mut d = driver(false);
        let phase = d
            .run_phase_until(
                |server, q| {
                    server.submit(q);
                    server.submit(q);
                    Counting { server, seen: 0 }
                },
                |p| p.server.outstanding == 0,
            )
            .unwrap();
        assert_eq!(phase.seen, 2);
        assert_eq!(
            (d.model().completed, d.now(), d.sim().events()),
            (2, SimTime(100), 2)
        );
        let err = d
            .run_phase_until(
                |server, q| {
                    server.broken = true;
                    server.submit(q);
                    Counting { server, seen: 0 }
                },
                |p| p.server.outstanding == 0,
            )
            .err()
            .expect("a lost request stalls the phase");
        assert_eq!(err.reason, StallReason::NoEventPending);
    }
}
