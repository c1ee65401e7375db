//! SQL's independent reference: parse every record into (round, score, year), keep the
//! years in range, sort by round, and average each run of equal rounds.

use super::record::{two_digits, RECORD_BYTES, ROUND_BYTES, SCORE_AT, YEAR_AT};
use crate::GroupAvg;

pub fn group_averages(input: &[u8], lower: u8, upper: u8) -> Vec<GroupAvg> {
    let mut rows: Vec<(&[u8], u64)> = input
        .chunks_exact(RECORD_BYTES)
        .filter(|r| {
            let year = two_digits(r, YEAR_AT).expect("generated years are digits");
            lower <= year && year <= upper
        })
        .map(|r| {
            let score = two_digits(r, SCORE_AT).expect("generated scores are digits");
            (&r[..ROUND_BYTES], u64::from(score))
        })
        .collect();
    rows.sort();
    let mut groups = Vec::new();
    for run in rows.chunk_by(|a, b| a.0 == b.0) {
        let total: u64 = run.iter().map(|r| r.1).sum();
        groups.push(GroupAvg {
            round: run[0].0.to_vec(),
            count: run.len() as u64,
            avg_score: total as f64 / run.len() as f64,
        });
    }
    groups
}
