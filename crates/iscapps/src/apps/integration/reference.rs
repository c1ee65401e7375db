//! Integration's independent reference: the pair count as Σ_j count_q(x_j) (a histogram of
//! the query instead of the 32 × 32 loop), over whole-buffer records.

use super::program::{OVERLAP_MIN_EXCLUSIVE, QUERY_BYTES, RECORD_BYTES, RECORD_PREFIX_BYTES};

pub fn similar_records(input: &[u8], query: &[u8]) -> Vec<u8> {
    let mut count = [0u32; 256];
    for &q in query {
        count[usize::from(q)] += 1;
    }
    input
        .chunks_exact(RECORD_BYTES)
        .filter(|r| r[..RECORD_PREFIX_BYTES].contains(&query[0]))
        .filter(|r| {
            let overlap: u32 = r[..QUERY_BYTES]
                .iter()
                .map(|&x| count[usize::from(x)])
                .sum();
            overlap > OVERLAP_MIN_EXCLUSIVE
        })
        .flatten()
        .copied()
        .collect()
}
