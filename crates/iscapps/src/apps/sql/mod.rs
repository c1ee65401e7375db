//! SQL (WORKLOADS.md §4): `SELECT round, AVG(score) FROM T WHERE 50 ≤ year ≤ 60 GROUP BY
//! round` over 32-byte ASCII records. The drive runs the WHERE clause; the host groups
//! the surviving records by round and averages their scores.
//!
//! Verification: round names and counts exactly; averages within a relative 1e-9 (both
//! sides divide an exact integer sum by an exact count, so they agree to the last bit in
//! practice; the tolerance only admits a different but correct summation order).

mod program;
mod record;
mod reference;

pub use program::SqlFilterProgram;

use std::collections::BTreeMap;

use nearflash_stream::StreamProgram;

use crate::app::{expect_outputs, only_pass_zero, whole_records};
use crate::draw::{Draw, ABCD};
use crate::output::same;
use crate::wire::tuples;
use crate::{
    AppError, AppOutput, Dataset, GroupAvg, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage,
    VerifyError,
};
use record::{two_digits, RECORD_BYTES, ROUND_BYTES, SCORE_AT};

/// Paper: 2,013,265,920 records, 1,024 distinct rounds, years 50–60.
pub const PAPER_RECORDS: u64 = 2_013_265_920;
pub const PAPER_ROUNDS: u32 = 1_024;
pub const YEAR_LOWER: u8 = 50;
pub const YEAR_UPPER: u8 = 60;
/// Relative tolerance on averages.
pub const AVG_RELATIVE_TOLERANCE: f64 = 1e-9;

#[derive(Debug)]
pub struct SqlApp {
    rounds: u32,
}

impl Default for SqlApp {
    fn default() -> SqlApp {
        SqlApp {
            rounds: PAPER_ROUNDS,
        }
    }
}

impl SqlApp {
    /// `rounds` (≥ 1) distinct round names, so that small inputs still form real groups.
    pub fn with_rounds(rounds: u32) -> Result<SqlApp, AppError> {
        if rounds == 0 {
            return Err(AppError::Config {
                app: "sql",
                reason: "at least one round name".into(),
            });
        }
        Ok(SqlApp { rounds })
    }
}

/// Writes `v` (< 100) as two ASCII digits.
fn put_two_digits(out: &mut [u8], v: u32) {
    debug_assert!(v < 100);
    out[0] = b'0' + (v / 10) as u8;
    out[1] = b'0' + (v % 10) as u8;
}

impl IscApp for SqlApp {
    fn name(&self) -> &'static str {
        "sql"
    }

    fn record_bytes(&self) -> u64 {
        RECORD_BYTES as u64
    }

    fn paper_input_bytes(&self) -> u64 {
        PAPER_RECORDS * RECORD_BYTES as u64
    }

    /// INSIDER's generator: round names of 12 chars of {A–D}, a uniform round per record,
    /// a random player, score 0–99, month 1–12, day 1–30, year 0–99 (all uniform).
    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let n = whole_records(self.name(), input_bytes, self.record_bytes())?;
        let mut draw = Draw::new(seed);
        let mut names = vec![0u8; self.rounds as usize * ROUND_BYTES];
        draw.fill_from(&mut names, ABCD);
        let mut input = vec![0u8; n as usize * RECORD_BYTES];
        for r in input.chunks_exact_mut(RECORD_BYTES) {
            let round = draw.below(self.rounds) as usize * ROUND_BYTES;
            r[..ROUND_BYTES].copy_from_slice(&names[round..round + ROUND_BYTES]);
            draw.fill_from(&mut r[ROUND_BYTES..SCORE_AT], ABCD);
            put_two_digits(&mut r[24..26], draw.below(100));
            put_two_digits(&mut r[26..28], 1 + draw.below(12));
            put_two_digits(&mut r[28..30], 1 + draw.below(30));
            put_two_digits(&mut r[30..32], draw.below(100));
        }
        Ok(Dataset {
            input,
            params: vec![vec![YEAR_LOWER, YEAR_UPPER]],
            record_count: n,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[
            Stage {
                name: "WHERE 50 <= year <= 60",
                side: Side::Drive { pass: 0 },
            },
            Stage {
                name: "GROUP BY round, AVG(score)",
                side: Side::Host,
            },
        ]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(SqlFilterProgram::default()))
    }

    /// GROUP BY round in an ordered map of (score sum, count), then AVG = sum ÷ count.
    fn host_remainder(&self, _: &Dataset, outputs: &[Vec<u8>]) -> Result<AppOutput, AppError> {
        let out = &expect_outputs(self, outputs)?[0];
        let mut groups: BTreeMap<&[u8], (u64, u64)> = BTreeMap::new();
        for record in tuples(self.name(), out, RECORD_BYTES)? {
            let score = two_digits(record, SCORE_AT).ok_or_else(|| AppError::DriveOutput {
                app: "sql",
                reason: "a score is not two ASCII digits".into(),
            })?;
            let g = groups.entry(&record[..ROUND_BYTES]).or_default();
            g.0 += u64::from(score);
            g.1 += 1;
        }
        Ok(AppOutput::Groups(
            groups
                .into_iter()
                .map(|(round, (sum, count))| GroupAvg {
                    round: round.to_vec(),
                    count,
                    avg_score: sum as f64 / count as f64,
                })
                .collect(),
        ))
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        let &[lower, upper] = dataset.params[0].as_slice() else {
            return Err(AppError::Config {
                app: "sql",
                reason: "the dataset's params are not [lower, upper]".into(),
            });
        };
        Ok(AppOutput::Groups(reference::group_averages(
            &dataset.input,
            lower,
            upper,
        )))
    }

    fn verify(&self, got: &AppOutput, want: &AppOutput) -> Result<(), VerifyError> {
        let (AppOutput::Groups(g), AppOutput::Groups(w)) = (got, want) else {
            return crate::output::verify_exact(self.name(), got, want);
        };
        let keys = |v: &[GroupAvg]| -> Vec<(Vec<u8>, u64)> {
            v.iter().map(|x| (x.round.clone(), x.count)).collect()
        };
        same(self.name(), "groups (round, count)", &keys(g), &keys(w))?;
        for (index, (a, b)) in g.iter().zip(w).enumerate() {
            if (a.avg_score - b.avg_score).abs() > AVG_RELATIVE_TOLERANCE * b.avg_score.max(1.0) {
                return Err(VerifyError::Mismatch {
                    app: self.name(),
                    what: "average score",
                    index,
                    detail: format!("got {}, want {}", a.avg_score, b.avg_score),
                });
            }
        }
        Ok(())
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        let years_kept = f64::from(YEAR_UPPER - YEAR_LOWER + 1);
        Ok(OutputRatio {
            ratio: years_kept / 100.0,
            basis: RatioBasis::Analytic,
            derivation: "whole 32-byte records survive when the uniform year 0-99 is in 50-60: \
                         11/100",
        })
    }

    /// Measured (`crate::measure`): grouping and averaging per surviving byte, the
    /// host-only formulation (filter, then the remainder on the survivors) per input byte.
    fn host_cost(&self) -> HostCost {
        crate::measure::host("sql")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(avg_score: f64, count: u64) -> AppOutput {
        AppOutput::Groups(vec![GroupAvg {
            round: b"ABCDABCDABCD".to_vec(),
            count,
            avg_score,
        }])
    }

    #[test]
    fn averages_within_tolerance_pass_and_counts_must_be_exact() {
        let app = SqlApp::default();
        assert!(app
            .verify(&groups(49.5, 10), &groups(49.5 + 1e-12, 10))
            .is_ok());
        assert!(app.verify(&groups(49.5, 10), &groups(49.6, 10)).is_err());
        assert!(app.verify(&groups(49.5, 10), &groups(49.5, 11)).is_err());
    }
}
