//! Latency histogram with log-linear buckets: 64 linear sub-buckets per power of two, so any
//! recorded value is reported within 1/64 (≈1.6 %) of its true value, in fixed memory. Exact
//! min, max, count and sum are kept beside the buckets.

const SUB_BUCKET_BITS: u32 = 6;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
const BUCKETS: usize = (64 - SUB_BUCKET_BITS as usize + 1) * SUB_BUCKETS;

#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: vec![0; BUCKETS],
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB_BUCKETS as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BUCKET_BITS;
    let sub = (v >> shift) as usize & (SUB_BUCKETS - 1);
    ((shift as usize + 1) << SUB_BUCKET_BITS) + sub
}

/// The largest value that falls in bucket `b` (reporting the upper edge never understates).
fn bucket_high(b: usize) -> u64 {
    if b < SUB_BUCKETS {
        return b as u64;
    }
    let shift = (b >> SUB_BUCKET_BITS) as u32 - 1;
    let sub = (b & (SUB_BUCKETS - 1)) as u64;
    let low = (SUB_BUCKETS as u64 + sub) << shift;
    low + ((1u64 << shift) - 1)
}

impl LatencyHistogram {
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket_of(ns)] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn min_ns(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min_ns
        }
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The value at quantile `q` in [0, 1]: the upper edge of the bucket holding the
    /// ceil(q·count)-th smallest sample, clamped to the exact max.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        assert!((0.0..=1.0).contains(&q));
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(b).min(self.max_ns).max(self.min_ns);
            }
        }
        self.max_ns
    }

    /// The non-empty buckets in increasing order: (the bucket's upper edge in ns, clamped to
    /// the exact max; its count). The counts add up to `count()`.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(b, &c)| (bucket_high(b).min(self.max_ns), c))
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = LatencyHistogram::default();
        for v in 1..=10 {
            h.record(v);
        }
        assert_eq!(h.quantile_ns(0.5), 5);
        assert_eq!(h.quantile_ns(1.0), 10);
        assert_eq!(h.min_ns(), 1);
    }

    #[test]
    fn buckets_hold_every_sample_in_increasing_order() {
        let mut h = LatencyHistogram::default();
        for v in [5, 5, 1_000, 1_001, 70_000] {
            h.record(v);
        }
        let b: Vec<(u64, u64)> = h.buckets().collect();
        assert_eq!(b.iter().map(|(_, c)| c).sum::<u64>(), 5);
        assert_eq!(b[0], (5, 2));
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(b.last().unwrap().0, 70_000);
    }

    proptest! {
        #[test]
        fn quantiles_are_within_two_percent_of_sorted_reference(
            mut vals in proptest::collection::vec(1u64..10_000_000_000, 1..500),
            q in 0.0f64..=1.0,
        ) {
            let mut h = LatencyHistogram::default();
            for &v in &vals { h.record(v); }
            vals.sort_unstable();
            let rank = ((q * vals.len() as f64).ceil() as usize).clamp(1, vals.len());
            let exact = vals[rank - 1];
            let got = h.quantile_ns(q);
            prop_assert!(got >= exact, "got {} < exact {}", got, exact);
            prop_assert!(got as f64 <= exact as f64 * 1.02 + 1.0, "got {} exact {}", got, exact);
        }
    }
}
