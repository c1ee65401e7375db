//! KNN's independent reference: per query, every record's distance computed from the whole
//! buffer, a full sort by (distance, record index), the first K, and a vote array.

use super::program::LABEL_BYTES;

pub fn predict(input: &[u8], features: usize, queries: &[Vec<u8>], k: usize) -> Vec<u32> {
    let records: Vec<(u32, &[u8])> = input
        .chunks_exact(LABEL_BYTES + features)
        .map(|r| {
            let label = std::str::from_utf8(&r[..LABEL_BYTES])
                .ok()
                .and_then(|s| s.parse::<u32>().ok())
                .expect("generated labels are decimal");
            (label, &r[LABEL_BYTES..])
        })
        .collect();
    queries
        .iter()
        .map(|q| {
            let mut scored: Vec<(i64, usize, u32)> = records
                .iter()
                .enumerate()
                .map(|(i, (label, xs))| {
                    let d: i64 = xs
                        .iter()
                        .zip(q)
                        .map(|(&x, &qv)| (i64::from(x) - i64::from(b'0') - i64::from(qv)).pow(2))
                        .sum();
                    (d, i, *label)
                })
                .collect();
            scored.sort_unstable();
            let mut votes = vec![0u32; 1 + scored.iter().map(|s| s.2).max().unwrap_or(0) as usize];
            for s in scored.iter().take(k) {
                votes[s.2 as usize] += 1;
            }
            // The most votes; among equals, the smallest label (max_by_key keeps the last max).
            votes
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|(_, &n)| n)
                .map(|(label, _)| label as u32)
                .expect("at least one record")
        })
        .collect()
}
