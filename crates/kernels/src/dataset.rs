//! Dataset names: PolyBench/C 4.2.1's five sizes plus `paper` (FlashAbacus Table 2's input
//! size). Each kernel maps a dataset to its own dimensions.

use crate::error::KernelError;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    Mini,
    Small,
    Medium,
    Large,
    ExtraLarge,
    /// FlashAbacus Table 2 input size (seed 000); derivation per kernel in its file.
    Paper,
}

impl Dataset {
    pub const ALL: [Dataset; 6] = [
        Dataset::Mini,
        Dataset::Small,
        Dataset::Medium,
        Dataset::Large,
        Dataset::ExtraLarge,
        Dataset::Paper,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dataset::Mini => "mini",
            Dataset::Small => "small",
            Dataset::Medium => "medium",
            Dataset::Large => "large",
            Dataset::ExtraLarge => "extralarge",
            Dataset::Paper => "paper",
        }
    }

    /// Pick from a per-dataset table ordered mini, small, medium, large, extralarge, paper.
    pub fn pick<T: Copy>(self, table: [T; 6]) -> T {
        table[self as usize]
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dataset {
    type Err = KernelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        Dataset::ALL
            .into_iter()
            .find(|d| d.name() == lower)
            .ok_or_else(|| KernelError::UnknownDataset {
                name: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dataset::ALL {
            assert_eq!(d.name().parse::<Dataset>().unwrap(), d);
        }
        assert_eq!("LARGE".parse::<Dataset>().unwrap(), Dataset::Large);
    }

    #[test]
    fn unknown_dataset_is_a_typed_error() {
        let err = "huge".parse::<Dataset>().unwrap_err();
        assert_eq!(
            err,
            KernelError::UnknownDataset {
                name: "huge".into()
            }
        );
        assert!(err.to_string().contains("expected one of"));
    }
}
