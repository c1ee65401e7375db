//! Integration's exact match probability for a query against uniform {A–Z} records.
//!
//! The pair count is S = Σ_{j<32} c(x_j), c = the query's letter counts, x_j i.i.d.
//! uniform over 26 letters. A dynamic program over j carries the distribution of the
//! partial sum and, for j < 3, whether the query's first char was seen (the prefix
//! filter). P(match) = P(prefix ∧ S > 31) exactly (up to f64 rounding).

use super::program::{OVERLAP_MIN_EXCLUSIVE, QUERY_BYTES, RECORD_PREFIX_BYTES};
use crate::draw::UPPER;

/// P(a uniform {A–Z} record is emitted) for `query`.
pub fn match_probability(query: &[u8; QUERY_BYTES]) -> f64 {
    let sum_max = QUERY_BYTES * QUERY_BYTES;
    let letter = 1.0 / UPPER.len() as f64;
    let counts: Vec<(u8, usize)> = UPPER
        .iter()
        .map(|&x| (x, query.iter().filter(|&&q| q == x).count()))
        .collect();
    // dist[hit][s]: probability of partial sum s, with the prefix char seen (hit = 1) or not.
    let mut dist = vec![vec![0.0f64; sum_max + 1]; 2];
    dist[0][0] = 1.0;
    for j in 0..QUERY_BYTES {
        let mut next = vec![vec![0.0f64; sum_max + 1]; 2];
        for (hit, row) in dist.iter().enumerate() {
            for (s, &p) in row.iter().enumerate().filter(|&(_, &p)| p > 0.0) {
                for &(x, c) in &counts {
                    let seen = hit == 1 || (j < RECORD_PREFIX_BYTES && x == query[0]);
                    next[usize::from(seen)][s + c] += p * letter;
                }
            }
        }
        dist = next;
    }
    dist[1][OVERLAP_MIN_EXCLUSIVE as usize + 1..].iter().sum()
}
