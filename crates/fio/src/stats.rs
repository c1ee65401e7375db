//! What a job measured, in fio's terms: per direction the bytes and requests, completion
//! latency (min, max, mean, standard deviation, percentiles from the simulator's log-linear
//! histogram), bandwidth and IOPS sampled over windows of simulated time (`bwavgtime`,
//! `iopsavgtime`); per job the queue-depth distribution at submission, the latency
//! distribution in fio's buckets, the flushes (`sync`) and the verify pass.

use nearflash_sim::{LatencyHistogram, SimTime};

/// Latencies of one kind: fio's `clat_ns`, `lat_ns` or the flushes' `sync` latency.
#[derive(Clone, Debug, Default)]
pub struct LatStat {
    pub hist: LatencyHistogram,
    sum_sq_ns2: u128,
}

impl LatStat {
    pub fn record(&mut self, ns: u64) {
        self.hist.record(ns);
        self.sum_sq_ns2 += u128::from(ns) * u128::from(ns);
    }

    pub fn count(&self) -> u64 {
        self.hist.count()
    }

    /// Sample standard deviation, as fio's `calc_lat` (n − 1 in the denominator).
    pub fn stddev_ns(&self) -> f64 {
        let n = self.hist.count();
        if n < 2 {
            return 0.0;
        }
        let mean = self.hist.mean_ns();
        let var = (self.sum_sq_ns2 as f64 - n as f64 * mean * mean) / (n - 1) as f64;
        var.max(0.0).sqrt()
    }

    pub fn merge(&mut self, other: &LatStat) {
        self.hist.merge(&other.hist);
        self.sum_sq_ns2 += other.sum_sq_ns2;
    }
}

/// Running min / max / mean / standard deviation of samples (fio's `bw_*` and `iops_*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Samples {
    pub n: u64,
    pub min: f64,
    pub max: f64,
    sum: f64,
    sum_sq: f64,
}

impl Samples {
    pub fn add(&mut self, v: f64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        }
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v;
        self.sum_sq += v * v;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let m = self.mean();
        ((self.sum_sq - self.n as f64 * m * m) / (self.n - 1) as f64)
            .max(0.0)
            .sqrt()
    }

    pub fn merge(&mut self, o: &Samples) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }
}

/// Sums a quantity over consecutive windows of simulated time and samples each full window
/// as a rate per second. A window with nothing in it samples zero; the last, partial
/// window is not sampled (fio samples only elapsed windows).
#[derive(Clone, Debug)]
pub struct Windowed {
    width_ns: u64,
    start: SimTime,
    index: u64,
    sum: f64,
    pub samples: Samples,
}

impl Windowed {
    pub fn new(width_ns: u64, start: SimTime) -> Self {
        assert!(width_ns > 0);
        Windowed {
            width_ns,
            start,
            index: 0,
            sum: 0.0,
            samples: Samples::default(),
        }
    }

    fn close_until(&mut self, index: u64) {
        let per_s = 1e9 / self.width_ns as f64;
        while self.index < index {
            self.samples.add(self.sum * per_s);
            self.sum = 0.0;
            self.index += 1;
        }
    }

    pub fn add(&mut self, at: SimTime, v: f64) {
        let index = at.since(self.start).as_ns() / self.width_ns;
        self.close_until(index);
        self.sum += v;
    }

    /// Closes the windows that ended by `end`.
    pub fn finish(&mut self, end: SimTime) {
        let index = end.since(self.start).as_ns() / self.width_ns;
        self.close_until(index);
    }
}

/// One data direction of a job.
#[derive(Clone, Debug)]
pub struct DirStats {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub clat: LatStat,
    /// KiB/s per window (fio's `bw` samples are in KiB/s).
    pub bw: Windowed,
    pub iops: Windowed,
}

impl DirStats {
    pub fn new(start: SimTime, bw_window_ns: u64, iops_window_ns: u64) -> Self {
        DirStats {
            io_bytes: 0,
            total_ios: 0,
            clat: LatStat::default(),
            bw: Windowed::new(bw_window_ns, start),
            iops: Windowed::new(iops_window_ns, start),
        }
    }

    pub fn merge(&mut self, o: &DirStats) {
        self.io_bytes += o.io_bytes;
        self.total_ios += o.total_ios;
        self.clat.merge(&o.clat);
        self.bw.samples.merge(&o.bw.samples);
        self.iops.samples.merge(&o.iops.samples);
    }
}

/// fio's latency buckets: labels are exclusive upper bounds, in ns below 1 µs, in µs below
/// 1 ms, and in ms above (`stat.c`, `io_u_mark_lat_*`).
pub const LAT_LABELS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
/// The ms row has two more: 2000 and ">=2000".
pub const LAT_MS_BUCKETS: usize = 12;

/// Counts per bucket: ns row, µs row, ms row.
#[derive(Clone, Debug, Default)]
pub struct LatBuckets {
    pub ns: [u64; 10],
    pub us: [u64; 10],
    pub ms: [u64; LAT_MS_BUCKETS],
}

impl LatBuckets {
    pub fn record(&mut self, ns: u64) {
        let idx = |v: u64| LAT_LABELS.iter().position(|&l| v < l);
        if ns < 1_000 {
            self.ns[idx(ns).expect("below 1000")] += 1;
        } else if ns < 1_000_000 {
            self.us[idx(ns / 1_000).expect("below 1000")] += 1;
        } else {
            let ms = ns / 1_000_000;
            let i = idx(ms).unwrap_or(if ms < 2_000 { 10 } else { 11 });
            self.ms[i] += 1;
        }
    }

    pub fn merge(&mut self, o: &LatBuckets) {
        self.ns.iter_mut().zip(o.ns).for_each(|(a, b)| *a += b);
        self.us.iter_mut().zip(o.us).for_each(|(a, b)| *a += b);
        self.ms.iter_mut().zip(o.ms).for_each(|(a, b)| *a += b);
    }
}

/// fio's depth buckets (`iodepth_level`): 1, 2, 4, 8, 16, 32, >=64; a depth falls in the
/// first bucket at or above it.
pub fn depth_bucket(depth: u32) -> usize {
    match depth {
        0 | 1 => 0,
        2 => 1,
        3..=4 => 2,
        5..=8 => 3,
        9..=16 => 4,
        17..=32 => 5,
        _ => 6,
    }
}

/// Everything one job (or one group, with group reporting) measured.
#[derive(Clone, Debug)]
pub struct JobStats {
    pub dirs: [DirStats; 3],
    /// Flushes (fsync / fdatasync / end_fsync).
    pub sync: LatStat,
    pub lat_buckets: LatBuckets,
    pub depth_at_submit: [u64; 7],
    pub submitted: u64,
    /// From the start of the figures (after ramp_time) to the last completion.
    pub runtime_ns: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub verified_blocks: u64,
    pub verify_errors: u64,
    /// Verify reads whose data could not be checked (timing fidelity carries none).
    pub verify_unchecked: u64,
    /// Zones reset before one of the job's writes (`zonemode=zbd`; fio's `zone_resets`).
    pub zone_resets: u64,
}

impl JobStats {
    pub fn new(start: SimTime, bw_window_ns: u64, iops_window_ns: u64) -> Self {
        let d = || DirStats::new(start, bw_window_ns, iops_window_ns);
        JobStats {
            dirs: [d(), d(), d()],
            sync: LatStat::default(),
            lat_buckets: LatBuckets::default(),
            depth_at_submit: [0; 7],
            submitted: 0,
            runtime_ns: 0,
            errors: 0,
            first_error: None,
            verified_blocks: 0,
            verify_errors: 0,
            verify_unchecked: 0,
            zone_resets: 0,
        }
    }

    /// Adds another job's figures (group reporting): counts add up, the runtime is the
    /// longest.
    pub fn merge(&mut self, o: &JobStats) {
        for (a, b) in self.dirs.iter_mut().zip(&o.dirs) {
            a.merge(b);
        }
        self.sync.merge(&o.sync);
        self.lat_buckets.merge(&o.lat_buckets);
        for (a, b) in self.depth_at_submit.iter_mut().zip(o.depth_at_submit) {
            *a += b;
        }
        self.submitted += o.submitted;
        self.runtime_ns = self.runtime_ns.max(o.runtime_ns);
        self.errors += o.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
        }
        self.verified_blocks += o.verified_blocks;
        self.verify_errors += o.verify_errors;
        self.verify_unchecked += o.verify_unchecked;
        self.zone_resets += o.zone_resets;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_deviation_is_the_sample_one() {
        let mut l = LatStat::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            l.record(v);
        }
        assert!((l.stddev_ns() - 2.138).abs() < 1e-3, "{}", l.stddev_ns());
    }

    #[test]
    fn windows_sample_full_windows_as_rates_including_empty_ones() {
        let mut w = Windowed::new(1_000, SimTime(0));
        w.add(SimTime(100), 5.0);
        w.add(SimTime(900), 5.0);
        w.add(SimTime(2_500), 1.0);
        w.finish(SimTime(3_200));
        // Windows [0,1000): 10 per µs; [1000,2000): 0; [2000,3000): 1; [3000,...) partial.
        assert_eq!(w.samples.n, 3);
        assert_eq!(w.samples.max, 10.0 * 1e6);
        assert_eq!(w.samples.min, 0.0);
    }

    #[test]
    fn latency_buckets_follow_fios_bounds() {
        let mut b = LatBuckets::default();
        for ns in [
            1,
            3,
            999,
            1_000,
            19_999,
            999_999,
            1_000_000,
            1_999_999_999,
            5_000_000_000,
        ] {
            b.record(ns);
        }
        assert_eq!(b.ns[0], 1);
        assert_eq!(b.ns[1], 1);
        assert_eq!(b.ns[9], 1);
        assert_eq!(b.us[0], 1, "1 µs is below 2 µs");
        assert_eq!(b.us[3], 1, "19.999 µs is below 20 µs");
        assert_eq!(b.us[9], 1);
        assert_eq!(b.ms[0], 1);
        assert_eq!(b.ms[10], 1, "1999 ms is below 2000 ms");
        assert_eq!(b.ms[11], 1, ">= 2000 ms");
        assert_eq!(depth_bucket(3), 2);
        assert_eq!(depth_bucket(64), 6);
    }
}
