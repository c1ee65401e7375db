//! How much of a machine a run models — one choice for every system (the FTL's `io` runs,
//! FlashAbacus, INSIDER, Active Flash). `Timing` moves no data: the same code paths run with
//! costs only, so paper-scale runs fit in memory. `Functional` stores real data in the
//! simulated flash, computes real results from it and verifies them against a reference.

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Fidelity {
    #[default]
    Timing,
    Functional,
}

impl Fidelity {
    pub const ALL: [Fidelity; 2] = [Fidelity::Timing, Fidelity::Functional];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Timing => "timing",
            Fidelity::Functional => "functional",
        }
    }

    pub fn is_functional(self) -> bool {
        self == Fidelity::Functional
    }
}

impl fmt::Display for Fidelity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fidelity name that is neither `timing` nor `functional`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFidelity {
    pub name: String,
}

impl fmt::Display for UnknownFidelity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown fidelity '{}' (timing | functional)", self.name)
    }
}

impl std::error::Error for UnknownFidelity {}

impl FromStr for Fidelity {
    type Err = UnknownFidelity;

    /// Case-insensitive.
    fn from_str(s: &str) -> Result<Self, UnknownFidelity> {
        Fidelity::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownFidelity { name: s.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_typo_is_named_in_the_error() {
        for f in Fidelity::ALL {
            assert_eq!(f.name().parse::<Fidelity>(), Ok(f));
        }
        assert_eq!("Functional".parse::<Fidelity>(), Ok(Fidelity::Functional));
        let e = "timng".parse::<Fidelity>().unwrap_err();
        assert!(e.to_string().contains("'timng'"), "{e}");
    }
}
