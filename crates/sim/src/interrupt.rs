//! Stopping a run from outside it, on request (Ctrl-C in the Python package). A caller that
//! wants a long run to answer an interrupt runs it inside [`interruptible`] with a check; the
//! one simulation loop ([`crate::Sim::step`]) asks that check every [`POLL_EVENTS`] events on
//! the calling thread, and when it answers true the run unwinds (its state is dropped; nothing
//! of it is returned) and `interruptible` returns [`Interrupted`]. The check decides how often
//! it really looks (the Python package: at most every 100 ms of wall time, with the GIL taken
//! for that moment; `nearflash reproduce`: a flag its SIGINT handler sets). A thread that
//! waits for others instead of simulating asks its check with [`requested`] and passes the
//! answer on (`parallel_map` in nearflash-reproduce: every worker runs inside `interruptible`
//! with a shared cancel flag). Runs outside `interruptible` (the other CLI commands, where
//! Ctrl-C ends the process) have no check: one thread-local read per `POLL_EVENTS` events.

use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Events between two asks of the check (a few milliseconds of simulation at most); a power
/// of two.
pub const POLL_EVENTS: u64 = 4096;
const _: () = assert!(POLL_EVENTS.is_power_of_two());

type Check = Box<dyn FnMut() -> bool>;

thread_local! {
    static CHECK: RefCell<Option<Check>> = const { RefCell::new(None) };
}

/// A run stopped because its check asked it to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Runs `run` on this thread with `check` asked every [`POLL_EVENTS`] simulated events; if
/// `check` answers true, the run is abandoned and the answer is `Err(Interrupted)`. A panic
/// of the run is not caught: it carries on unwinding.
pub fn interruptible<T>(
    check: impl FnMut() -> bool + 'static,
    run: impl FnOnce() -> T,
) -> Result<T, Interrupted> {
    let outer = CHECK.with(|c| c.replace(Some(Box::new(check))));
    let result = catch_unwind(AssertUnwindSafe(run));
    CHECK.with(|c| *c.borrow_mut() = outer);
    match result {
        Ok(v) => Ok(v),
        Err(payload) if payload.is::<Interrupted>() => Err(Interrupted),
        Err(payload) => resume_unwind(payload),
    }
}

/// Asks this thread's check, if any, whether to stop, without unwinding: for a thread that
/// waits for others rather than stepping a simulation (`parallel_map` relays the answer to
/// its workers). False outside [`interruptible`].
pub fn requested() -> bool {
    // The check is taken out while it runs, so that nothing it calls can re-enter it.
    let Some(mut check) = CHECK.with(|c| c.borrow_mut().take()) else {
        return false;
    };
    let stop = check();
    CHECK.with(|c| *c.borrow_mut() = Some(check));
    stop
}

/// Asks this thread's check, if any; unwinds to [`interruptible`] when it answers true.
pub(crate) fn poll() {
    if requested() {
        // Not `panic!`: no panic hook runs and nothing is printed; `interruptible` catches it.
        resume_unwind(Box::new(Interrupted));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::EventQueue;
    use crate::rng::SimRng;
    use crate::run::{Model, Sim, TraceEvent};
    use crate::time::SimDuration;

    struct Tick;
    impl TraceEvent for Tick {
        fn hash_word(&self) -> u64 {
            1
        }
    }
    /// A machine that never stops: every tick schedules the next.
    struct Forever;
    impl Model for Forever {
        type Event = Tick;
        fn handle(&mut self, _: Tick, q: &mut EventQueue<Tick>, _: &mut SimRng) {
            q.schedule_in(SimDuration::from_ns(1), Tick);
        }
    }

    #[test]
    fn an_endless_run_stops_when_its_check_says_so_and_a_finished_one_is_returned() {
        let mut asked = 0;
        let r = interruptible(
            move || {
                asked += 1;
                asked == 3
            },
            || {
                let mut sim = Sim::new(1);
                sim.queue().schedule_in(SimDuration::from_ns(1), Tick);
                while sim.step(&mut Forever) {}
            },
        );
        assert_eq!(r, Err(Interrupted));
        // The check is gone afterwards, and a run that ends on its own is returned.
        poll();
        assert!(!requested(), "no check outside interruptible");
        assert_eq!(interruptible(|| true, requested), Ok(true));
        assert_eq!(interruptible(|| true, || 7), Ok(7));
    }
}
