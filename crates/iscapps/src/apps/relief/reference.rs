//! Relief's independent reference: all samples decoded from the whole buffer, the nearest
//! hit and miss by `min_by_key` over (distance, index), the weights, then the selection.

use super::{FEATURES, SAMPLE_BYTES};

pub struct ReliefResult {
    pub weights: Vec<i32>,
    pub selected: Vec<u8>,
}

pub fn relief(input: &[u8], hit_count: usize, query: &[i32], threshold: i32) -> ReliefResult {
    let samples: Vec<Vec<i64>> = input
        .chunks_exact(SAMPLE_BYTES)
        .map(|s| {
            s.chunks_exact(4)
                .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect()
        })
        .collect();
    let distance = |s: &Vec<i64>| -> i128 {
        s.iter()
            .zip(query)
            .map(|(&x, &q)| i128::from(x - i64::from(q)).pow(2))
            .sum()
    };
    let nearest = |range: std::ops::Range<usize>| -> &Vec<i64> {
        let i = range
            .min_by_key(|&i| (distance(&samples[i]), i))
            .expect("a hit and a miss exist");
        &samples[i]
    };
    let hit = nearest(0..hit_count);
    let miss = nearest(hit_count..samples.len());
    let weights: Vec<i32> = (0..FEATURES)
        .map(|f| {
            let q = i64::from(query[f]);
            i32::from(miss[f] == q) - i32::from(hit[f] == q)
        })
        .collect();
    let selected = samples
        .iter()
        .flat_map(|s| {
            s.iter()
                .zip(&weights)
                .filter(|(_, &w)| w >= threshold)
                .flat_map(|(&x, _)| (x as i32).to_le_bytes())
                .collect::<Vec<u8>>()
        })
        .collect();
    ReliefResult { weights, selected }
}
