//! The synchronous driver: a [`Model`] on its [`Sim`], for a caller that submits work to the
//! model and then waits for it (an experiment's phases, a program's blocking file calls, a
//! checker's reads). The caller owns the driver; the model never sees the loop — it is handed
//! events and `now` and answers with events, like any component.
//!
//! Waiting is [`Sim::run_until`] under a fresh [`Watchdog`] armed at the wait's start, watching
//! what the model reports through [`Model::progress`]; a wait that stops making progress is the
//! one [`Stall`]. The limit is [`STALL_LIMIT`] unless the caller sets another
//! ([`Driver::with_stall_limit`]).

use crate::queue::EventQueue;
use crate::rng::SimRng;
use crate::run::{Model, Sim, Stall, Watchdog, STALL_LIMIT};
use crate::time::{SimDuration, SimTime};

/// A model and the simulation loop that runs it.
pub struct Driver<M: Model> {
    sim: Sim<M::Event>,
    model: M,
    stall_limit: SimDuration,
}

impl<M: Model> Driver<M> {
    /// `model` on `sim` (events it scheduled while being built are already on `sim`'s queue),
    /// waits watched with [`STALL_LIMIT`].
    pub fn new(sim: Sim<M::Event>, model: M) -> Self {
        Driver {
            sim,
            model,
            stall_limit: STALL_LIMIT,
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
        let mut dog = Watchdog::starting_at(self.stall_limit, self.sim.now());
        self.sim
            .run_until(&mut self.model, &mut dog, M::progress, done)
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
}
