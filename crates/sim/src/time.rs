//! Virtual time as integer nanoseconds. `SimTime` is an instant, `SimDuration` a span;
//! arithmetic saturates never silently: overflow is a programmer error and panics.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub fn as_ns(self) -> u64 {
        self.0
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Time elapsed since `earlier`; panics if `earlier` is later (a causality bug).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        assert!(
            earlier <= self,
            "time went backwards: {earlier:?} > {self:?}"
        );
        SimDuration(self.0 - earlier.0)
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub fn from_ns(ns: u64) -> Self {
        SimDuration(ns)
    }

    pub fn from_us(us: u64) -> Self {
        SimDuration(us.checked_mul(1_000).expect("duration overflow"))
    }

    /// Rounds a fractional microsecond figure (as configs hold) to whole nanoseconds.
    pub fn from_us_f64(us: f64) -> Self {
        assert!(us.is_finite() && us >= 0.0, "invalid duration {us} us");
        SimDuration((us * 1_000.0).round() as u64)
    }

    pub fn from_ms(ms: u64) -> Self {
        SimDuration(ms.checked_mul(1_000_000).expect("duration overflow"))
    }

    pub fn as_ns(self) -> u64 {
        self.0
    }

    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.checked_add(d.0).expect("simulated time overflow"))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.checked_add(d.0).expect("duration overflow"))
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.since(earlier)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} us", self.0 as f64 / 1_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_convert_units() {
        assert_eq!(SimDuration::from_us(81).as_ns(), 81_000);
        assert_eq!(SimDuration::from_us_f64(10.24).as_ns(), 10_240);
        assert_eq!(SimDuration::from_ms(3).as_ns(), 3_000_000);
        assert_eq!((SimTime(5) + SimDuration(7)).as_ns(), 12);
    }

    #[test]
    #[should_panic(expected = "time went backwards")]
    fn since_a_later_instant_is_a_causality_bug() {
        let _ = SimTime(3).since(SimTime(4));
    }
}
