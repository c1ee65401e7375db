//! Latency summaries of the benchmarks, from the shared histogram
//! (`nearflash_sim::LatencyHistogram`: log-linear buckets over nanoseconds, exact below 64 ns,
//! then 64 sub-buckets per power of two, under 1.6 % relative error, fixed size). Percentiles
//! report the bucket's upper bound, capped at the maximum.

pub use nearflash_sim::LatencyHistogram;
use serde::{Deserialize, Serialize};

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

impl LatencySummary {
    /// The summary of `h` (all zero when empty).
    pub fn of(h: &LatencyHistogram) -> LatencySummary {
        if h.count() == 0 {
            return LatencySummary {
                count: 0,
                mean_us: 0.0,
                min_us: 0.0,
                p50_us: 0.0,
                p95_us: 0.0,
                p99_us: 0.0,
                p999_us: 0.0,
                max_us: 0.0,
            };
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        let q = |p: f64| us(h.quantile_ns(p).min(h.max_ns()));
        LatencySummary {
            count: h.count(),
            mean_us: h.mean_ns() / 1000.0,
            min_us: us(h.min_ns()),
            p50_us: q(0.50),
            p95_us: q(0.95),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: us(h.max_ns()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_a_thousand_microseconds() {
        let mut h = LatencyHistogram::default();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        let s = LatencySummary::of(&h);
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 500.0).abs() / 500.0 < 0.016, "{s:?}");
        assert!((s.p99_us - 990.0).abs() / 990.0 < 0.016, "{s:?}");
        assert_eq!(s.max_us, 1000.0);
        assert_eq!(s.min_us, 1.0);
        assert!((s.mean_us - 500.5).abs() < 1e-9);
        assert_eq!(LatencySummary::of(&LatencyHistogram::default()).count, 0);
    }
}
