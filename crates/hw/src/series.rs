//! Time series of a run (Fig. 15): busy time per component in bins of simulated time, from
//! which worker utilization and power over time follow.
//!
//! A `TimeBins` starts with 1 µs bins and doubles the bin width (merging neighbours) whenever
//! the run outgrows `SERIES_BINS_MAX` bins, so a recorder costs a few operations per busy
//! interval and at most `SERIES_BINS_MAX` words, whatever the run's length. Bin widths are
//! always 1 µs × 2^k, so recorders of one run can be brought to a common width exactly.

use nearflash_sim::SimTime;
use serde::Serialize;

/// Bins a recorder keeps at most (and points a series has at most).
pub const SERIES_BINS_MAX: usize = 256;
const BASE_BIN_NS: u64 = 1_000;

/// Busy nanoseconds per bin of simulated time since `origin`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeBins {
    origin_ns: u64,
    bin_ns: u64,
    busy_ns: Vec<u64>,
}

impl Default for TimeBins {
    fn default() -> Self {
        TimeBins {
            origin_ns: 0,
            bin_ns: BASE_BIN_NS,
            busy_ns: Vec::new(),
        }
    }
}

impl TimeBins {
    /// Forgets everything and measures from `origin` (the start of the timed run).
    pub fn reset(&mut self, origin: SimTime) {
        *self = TimeBins {
            origin_ns: origin.as_ns(),
            ..TimeBins::default()
        };
    }

    pub fn bin_ns(&self) -> u64 {
        self.bin_ns
    }

    /// Busy over `[start, end)`.
    pub fn add(&mut self, start: SimTime, end: SimTime) {
        let (s, e) = (start.as_ns(), end.as_ns());
        self.add_spread(start, end, e.saturating_sub(s));
    }

    /// `busy_ns` of busy time spread evenly over `[start, end)` (a sampled counter's
    /// increase between two samples). The part before the origin is dropped.
    pub fn add_spread(&mut self, start: SimTime, end: SimTime, busy_ns: u64) {
        let span = end.as_ns().saturating_sub(start.as_ns());
        if span == 0 || busy_ns == 0 {
            return;
        }
        let s = start.as_ns().max(self.origin_ns) - self.origin_ns;
        let e = end.as_ns().saturating_sub(self.origin_ns);
        if e <= s {
            return;
        }
        self.grow(e);
        let first = (s / self.bin_ns) as usize;
        let last = ((e - 1) / self.bin_ns) as usize;
        if self.busy_ns.len() <= last {
            self.busy_ns.resize(last + 1, 0);
        }
        for b in first..=last {
            let lo = (b as u64 * self.bin_ns).max(s);
            let hi = ((b as u64 + 1) * self.bin_ns).min(e);
            let part = u128::from(busy_ns) * u128::from(hi - lo) / u128::from(span);
            self.busy_ns[b] += part as u64;
        }
    }

    /// Doubles the bin width until `end_ns` (relative) fits in `SERIES_BINS_MAX` bins.
    fn grow(&mut self, end_ns: u64) {
        while end_ns > self.bin_ns * SERIES_BINS_MAX as u64 {
            self.busy_ns = self.busy_ns.chunks(2).map(|c| c.iter().sum()).collect();
            self.bin_ns *= 2;
        }
    }

    /// The busy time in bins of `bin_ns` (a multiple of this recorder's width) covering
    /// `[0, span_ns)`.
    pub fn rebinned(&self, bin_ns: u64, span_ns: u64) -> Vec<u64> {
        assert!(bin_ns.is_multiple_of(self.bin_ns), "widths are 1 µs × 2^k");
        let k = (bin_ns / self.bin_ns) as usize;
        let n = span_ns.div_ceil(bin_ns).max(1) as usize;
        let mut out: Vec<u64> = self.busy_ns.chunks(k).map(|c| c.iter().sum()).collect();
        out.resize(n, 0);
        out
    }

    /// The common width for recorders of a run of `span_ns`: the widest of theirs, and
    /// wide enough that the run fits in `SERIES_BINS_MAX` bins.
    pub fn common_bin_ns<'a>(all: impl Iterator<Item = &'a TimeBins>, span_ns: u64) -> u64 {
        let mut w = all.map(|b| b.bin_ns).max().unwrap_or(BASE_BIN_NS);
        while span_ns > w * SERIES_BINS_MAX as u64 {
            w *= 2;
        }
        w
    }
}

/// A busy-time counter with its time series (a component that is not a FIFO server: the
/// host DRAM, the SSD, Storengine).
#[derive(Clone, Debug, Default)]
pub struct Busy {
    ns: u64,
    bins: TimeBins,
}

impl Busy {
    pub fn start_series(&mut self, origin: SimTime) {
        self.bins.reset(origin);
    }

    /// Busy over `[start, end)`.
    pub fn add(&mut self, start: SimTime, end: SimTime) {
        self.ns += end.as_ns().saturating_sub(start.as_ns());
        self.bins.add(start, end);
    }

    pub fn ns(&self) -> u64 {
        self.ns
    }

    pub fn bins(&self) -> &TimeBins {
        &self.bins
    }
}

/// Worker utilization and power per bin: `workers` are the worker LWPs' recorders, `power`
/// the meter's `(bin width, watts per bin)`.
pub fn series_points(
    workers: &[&TimeBins],
    power: (u64, Vec<f64>),
    span_ns: u64,
) -> Vec<SeriesPoint> {
    let (bin_ns, watts) = power;
    let busy: Vec<Vec<u64>> = workers
        .iter()
        .map(|b| b.rebinned(bin_ns, span_ns))
        .collect();
    let n = workers.len().max(1) as f64;
    watts
        .iter()
        .enumerate()
        .map(|(i, &w)| SeriesPoint {
            t_ms: (i as u64 * bin_ns) as f64 / 1e6,
            worker_utilization: busy.iter().map(|b| b[i] as f64).sum::<f64>() / (n * bin_ns as f64),
            power_w: w,
        })
        .collect()
}

/// One point of a run's time series: the bin starting at `t_ms`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPoint {
    pub t_ms: f64,
    /// Fraction of the workers' time spent computing in the bin.
    pub worker_utilization: f64,
    /// Power drawn by every component of the run in the bin (active while busy, idle
    /// otherwise), watts.
    pub power_w: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: u64) -> SimTime {
        SimTime::ZERO + nearflash_sim::SimDuration::from_ns(ns)
    }

    #[test]
    fn busy_time_is_conserved_across_bins_and_doubling() {
        let mut b = TimeBins::default();
        b.add(t(500), t(2_500));
        assert_eq!(b.busy_ns[..3], [500, 1000, 500]);
        b.add(t(0), t(1_000_000)); // forces doubling to fit 1 ms in 256 bins
        assert!(b.bin_ns >= 1_000_000 / SERIES_BINS_MAX as u64);
        let total: u64 = b.busy_ns.iter().sum();
        assert_eq!(total, 2_000 + 1_000_000);
        let r = b.rebinned(b.bin_ns * 4, 1_000_000);
        assert_eq!(r.iter().sum::<u64>(), total);
    }

    #[test]
    fn spread_counts_only_after_the_origin() {
        let mut b = TimeBins::default();
        b.reset(t(10_000));
        b.add(t(0), t(5_000));
        assert!(b.busy_ns.is_empty());
        b.add_spread(t(9_000), t(11_000), 2_000);
        assert_eq!(b.busy_ns.iter().sum::<u64>(), 1_000);
    }
}
