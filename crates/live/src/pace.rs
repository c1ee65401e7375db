//! The wall-clock side of live mode: how the device's simulated clock relates to real time.
//!
//! - `Pace::None` (default): the device's clock moves only by its own events. A request is
//!   submitted at the device's current simulated time and answered as soon as the host has
//!   computed it; the simulated time it took is accounted, not waited for. Idle wall time is
//!   not simulated time.
//! - `Pace::Wall`: the device's clock follows the wall clock from the moment the server
//!   started. A request is submitted at the simulated instant the FUSE thread received it
//!   from the kernel (or later, when
//!   the device is still busy with the previous one) and its answer is held until the wall
//!   clock reaches its simulated completion time, so programs feel the device's latency and
//!   bandwidth. When the host computes slower than the device would run, answers are late
//!   and the clock jumps forward to the next arrival.
//!
//! Holding uses `thread::sleep` up to `SPIN_BEFORE` of the deadline and spins the rest: a
//! sleep alone overshoots by the kernel's timer slack (tens of µs), which is the order of one
//! flash read.

use nearflash_sim::SimTime;
use std::time::{Duration, Instant};

/// How answers relate to the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pace {
    None,
    Wall,
}

impl std::str::FromStr for Pace {
    type Err = String;
    fn from_str(s: &str) -> Result<Pace, String> {
        match s {
            "none" => Ok(Pace::None),
            "wall" => Ok(Pace::Wall),
            _ => Err(format!("unknown pace {s:?} (none or wall)")),
        }
    }
}

/// Spin instead of sleeping for the last stretch before a deadline.
const SPIN_BEFORE: Duration = Duration::from_micros(200);

/// Maps simulated instants to wall instants from the server's start.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub pace: Pace,
    wall_start: Instant,
    sim_start: SimTime,
}

impl Clock {
    /// A clock whose simulated `sim_start` is now.
    pub fn new(pace: Pace, sim_start: SimTime) -> Clock {
        Clock {
            pace,
            wall_start: Instant::now(),
            sim_start,
        }
    }

    /// The simulated instant at which a request received at wall instant `received` is
    /// submitted, given the device's clock `sim_now`: the device's clock (`None`), or the
    /// wall instant's if the device is idle by then (`Wall`).
    pub fn arrival(&self, sim_now: SimTime, received: Instant) -> SimTime {
        match self.pace {
            Pace::None => sim_now,
            Pace::Wall => sim_now.max(self.sim_at(received)),
        }
    }

    /// The simulated instant of wall instant `at`.
    pub fn sim_at(&self, at: Instant) -> SimTime {
        let d = at.saturating_duration_since(self.wall_start);
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX / 4);
        SimTime(self.sim_start.as_ns() + ns)
    }

    /// Wall time since the server started.
    pub fn wall_elapsed(&self) -> Duration {
        self.wall_start.elapsed()
    }

    /// Blocks until the wall clock reaches simulated instant `t` (`Wall`); returns at once
    /// for `None`.
    pub fn hold_until(&self, t: SimTime) {
        if self.pace == Pace::None || t <= self.sim_start {
            return;
        }
        let deadline = self.wall_start + Duration::from_nanos(t.as_ns() - self.sim_start.as_ns());
        let now = Instant::now();
        if deadline > now + SPIN_BEFORE {
            std::thread::sleep(deadline - now - SPIN_BEFORE);
        }
        while Instant::now() < deadline {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_pace_holds_until_the_simulated_completion_and_none_does_not() {
        let c = Clock::new(Pace::Wall, SimTime(1_000));
        let t0 = Instant::now();
        c.hold_until(SimTime(1_000 + 3_000_000));
        let held = t0.elapsed();
        assert!(held >= Duration::from_millis(2), "held {held:?}");
        assert!(c.arrival(SimTime(0), Instant::now()) >= SimTime(1_000 + 3_000_000));
        let n = Clock::new(Pace::None, SimTime(5));
        let t0 = Instant::now();
        n.hold_until(SimTime(10_000_000_000));
        assert!(t0.elapsed() < Duration::from_secs(1));
        assert_eq!(n.arrival(SimTime(7), Instant::now()), SimTime(7));
    }

    #[test]
    fn pace_names_parse_and_others_are_refused() {
        assert_eq!("wall".parse::<Pace>(), Ok(Pace::Wall));
        assert!("fast".parse::<Pace>().unwrap_err().contains("none or wall"));
    }
}
