//! The paired runs of each experiment side by side: per pair (a file operation and size, a
//! db_bench benchmark, a YCSB workload, a genome data set) the direct and the redirected
//! figure and how much the direct path saves — what the claims and the figures read.

use super::{Measured, GENOME_DATASETS, OPS, YCSB_WORKLOADS};
use nearflash_hayagui::Access;

/// Reduction of `direct` against `redirected`, percent of the redirected value.
fn reduction(direct: f64, redirected: f64) -> f64 {
    (1.0 - direct / redirected) * 100.0
}

/// (label, reduction %) of every pair, with its min and max rows.
pub(super) struct Spread {
    pub(super) rows: Vec<(String, f64, f64, f64)>,
}

impl Spread {
    /// The row with the smallest difference.
    pub(super) fn min(&self) -> &(String, f64, f64, f64) {
        self.rows
            .iter()
            .min_by(|a, b| a.3.total_cmp(&b.3))
            .expect("rows")
    }
    /// The row with the largest difference.
    pub(super) fn max(&self) -> &(String, f64, f64, f64) {
        self.rows
            .iter()
            .max_by(|a, b| a.3.total_cmp(&b.3))
            .expect("rows")
    }
}

/// Mean latency per call (µs) of each file operation and size on both paths.
pub(super) fn fileops_spread(m: &Measured) -> Spread {
    let mut rows = Vec::new();
    for op in OPS {
        for &size in &m.sizes.fileops_kib {
            let get = |a: Access| {
                m.fileops
                    .iter()
                    .find(|r| r.access == a && r.op == op && r.size_bytes == size << 10)
                    .map(|r| r.latency.mean_ns)
            };
            if let (Some(d), Some(r)) = (get(Access::Direct), get(Access::Redirected)) {
                let (d, r) = (d / 1e3, r / 1e3);
                rows.push((format!("{} {} KiB", op.name(), size), d, r, reduction(d, r)));
            }
        }
    }
    Spread { rows }
}

/// µs/op of each db_bench benchmark on both paths.
pub(super) fn db_spread(m: &Measured) -> Spread {
    let mut rows = Vec::new();
    let (Some(d), Some(r)) = (
        m.db.iter().find(|r| r.access == Access::Direct),
        m.db.iter().find(|r| r.access == Access::Redirected),
    ) else {
        return Spread { rows };
    };
    for (a, b) in d.report.results.iter().zip(&r.report.results) {
        rows.push((
            a.name.clone(),
            a.micros_per_op,
            b.micros_per_op,
            reduction(a.micros_per_op, b.micros_per_op),
        ));
    }
    Spread { rows }
}

/// Throughput (ops/s) of each YCSB workload on both paths; the difference is the direct
/// path's gain.
pub(super) fn ycsb_spread(m: &Measured) -> Spread {
    let mut rows = Vec::new();
    for w in YCSB_WORKLOADS {
        let get = |a: Access| {
            m.ycsb
                .iter()
                .find(|r| r.access == a && r.workload == w)
                .map(|r| r.run.throughput_ops_per_s)
        };
        if let (Some(d), Some(r)) = (get(Access::Direct), get(Access::Redirected)) {
            rows.push((w.to_uppercase(), d, r, (d / r - 1.0) * 100.0));
        }
    }
    Spread { rows }
}

/// The genome run of `dataset` on path `a`, if it ran.
pub(super) fn genome_total<'a>(
    m: &'a Measured,
    dataset: &str,
    a: Access,
) -> Option<&'a nearflash_hayagui::genome::GenomeRun> {
    m.genome
        .iter()
        .find(|(d, r)| d == dataset && r.access == a)
        .map(|(_, r)| r)
}

/// Total time (s) of each genome data set on both paths.
pub(super) fn genome_spread(m: &Measured) -> Spread {
    let mut rows = Vec::new();
    for (ds, _) in GENOME_DATASETS {
        if let (Some(d), Some(r)) = (
            genome_total(m, ds, Access::Direct),
            genome_total(m, ds, Access::Redirected),
        ) {
            let (d, r) = (d.total_ns as f64 / 1e9, r.total_ns as f64 / 1e9);
            rows.push((ds.to_string(), d, r, reduction(d, r)));
        }
    }
    Spread { rows }
}
