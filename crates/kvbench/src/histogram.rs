//! A deterministic latency histogram: log-linear buckets over nanoseconds (exact below 64 ns,
//! then 64 sub-buckets per power of two, i.e. under 1.6 % relative error), fixed size whatever
//! the number of samples. Percentiles report the bucket's upper bound, capped at the maximum.

use serde::{Deserialize, Serialize};

/// Sub-buckets per power of two (and the exact range below it).
const SUB_BUCKETS: u64 = 64;
/// log2 of `SUB_BUCKETS`.
const SUB_BITS: u32 = 6;
/// Buckets needed to cover every u64.
const BUCKET_COUNT: usize = (SUB_BUCKETS + (64 - SUB_BITS as u64) * SUB_BUCKETS) as usize;

/// Latency samples in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    counts: Vec<u64>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// A histogram's summary, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Mean.
    pub mean_us: f64,
    /// Smallest sample.
    pub min_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest sample.
    pub max_us: f64,
}

fn bucket_index(v: u64) -> usize {
    if v < SUB_BUCKETS {
        return v as usize;
    }
    let exponent = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = (v >> (exponent - SUB_BITS)) & (SUB_BUCKETS - 1);
    (SUB_BUCKETS + u64::from(exponent - SUB_BITS) * SUB_BUCKETS + sub) as usize
}

fn bucket_upper_ns(index: usize) -> u64 {
    let index = index as u64;
    if index < SUB_BUCKETS {
        return index;
    }
    let shift = (index - SUB_BUCKETS) / SUB_BUCKETS;
    let sub = (index - SUB_BUCKETS) % SUB_BUCKETS;
    // (64 + sub + 1) << shift exceeds u64 only for the very last bucket.
    let upper = (u128::from(SUB_BUCKETS + sub + 1) << shift) - 1;
    upper.min(u128::from(u64::MAX)) as u64
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self {
            counts: vec![0; BUCKET_COUNT],
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// Adds a sample given in microseconds (negative or non-finite readings count as 0).
    pub fn record_us(&mut self, latency_us: f64) {
        let ns = if latency_us.is_finite() && latency_us > 0.0 {
            (latency_us * 1000.0).round().min(u64::MAX as f64) as u64
        } else {
            0
        };
        self.record_ns(ns);
    }

    /// Adds a sample in nanoseconds.
    pub fn record_ns(&mut self, latency_ns: u64) {
        let index = bucket_index(latency_ns);
        assert!(bucket_upper_ns(index) >= latency_ns);
        self.counts[index] += 1;
        self.count += 1;
        self.sum_ns += u128::from(latency_ns);
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The value at quantile `q` in [0, 1], in nanoseconds (0 when empty).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_upper_ns(index).min(self.max_ns);
            }
        }
        unreachable!("rank {rank} <= count {}", self.count)
    }

    /// The summary (all zero when empty).
    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            count: self.count,
            mean_us: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64 / 1000.0
            },
            min_us: if self.count == 0 {
                0.0
            } else {
                us(self.min_ns)
            },
            p50_us: us(self.quantile_ns(0.50)),
            p95_us: us(self.quantile_ns(0.95)),
            p99_us: us(self.quantile_ns(0.99)),
            p999_us: us(self.quantile_ns(0.999)),
            max_us: us(self.max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_monotonically() {
        let mut last = 0;
        for v in (0..200_000u64).chain([u64::MAX / 2, u64::MAX - 1, u64::MAX]) {
            let i = bucket_index(v);
            assert!(i < BUCKET_COUNT);
            assert!(i >= last || v > 200_000);
            last = i;
            assert!(bucket_upper_ns(i) >= v);
            let rel = (bucket_upper_ns(i) - v) as f64 / (v.max(1)) as f64;
            assert!(rel < 0.016, "v={v} rel={rel}");
        }
    }

    #[test]
    fn percentiles_of_one_to_a_thousand_microseconds() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000 {
            h.record_us(us as f64);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 500.0).abs() / 500.0 < 0.016, "{s:?}");
        assert!((s.p99_us - 990.0).abs() / 990.0 < 0.016, "{s:?}");
        assert_eq!(s.max_us, 1000.0);
        assert_eq!(s.min_us, 1.0);
        assert!((s.mean_us - 500.5).abs() < 1e-9);
    }
}
