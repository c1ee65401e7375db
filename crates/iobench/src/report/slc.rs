//! The SLC write cache (`[ftl.slc_cache]`) over the measured phase.

use super::Measured;
use serde::Serialize;

/// What the SLC write cache did in the measured phase, and its state at the phase's end.
#[derive(Clone, Debug, Serialize)]
pub struct SlcReport {
    /// Host data programmed into SLC-mode superblocks, and straight into native (TLC) ones
    /// because the cache was full (page-group bytes: a partial write counts its group).
    pub slc_write_bytes: u64,
    pub tlc_direct_write_bytes: u64,
    /// Folds (GC runs with an SLC victim) and the flash pages they copied into TLC.
    pub fold_runs: u64,
    pub fold_pages: u64,
    /// At the end of the phase: host data held in SLC, SLC-mode superblocks in use, and the
    /// cache's size then (static + dynamic).
    pub occupancy_bytes: u64,
    pub occupancy_superblocks: u32,
    pub capacity_bytes: u64,
    /// Most SLC-mode superblocks in use at once, whole run.
    pub superblocks_peak: u32,
}

impl SlcReport {
    pub(super) fn of(m: &Measured) -> Option<Self> {
        let (s, e) = (m.start.ftl.slc.as_ref()?, m.end.ftl.slc.as_ref()?);
        let occ = m.device.slc_occupancy()?;
        Some(SlcReport {
            slc_write_bytes: e.slc_write_bytes - s.slc_write_bytes,
            tlc_direct_write_bytes: e.tlc_direct_write_bytes - s.tlc_direct_write_bytes,
            fold_runs: e.fold_runs - s.fold_runs,
            fold_pages: e.fold_pages - s.fold_pages,
            occupancy_bytes: occ.valid_bytes,
            occupancy_superblocks: occ.superblocks,
            capacity_bytes: occ.capacity_bytes,
            superblocks_peak: e.superblocks_peak,
        })
    }

    pub(super) fn rows(&self) -> Vec<(String, String)> {
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        vec![
            (
                "SLC cache: written to SLC / straight to TLC".into(),
                format!(
                    "{} / {} MB",
                    mb(self.slc_write_bytes),
                    mb(self.tlc_direct_write_bytes)
                ),
            ),
            (
                "SLC cache: folds / pages folded".into(),
                format!("{} / {}", self.fold_runs, self.fold_pages),
            ),
            (
                "SLC cache: held at end / cache size (superblocks, peak)".into(),
                format!(
                    "{} / {} MB ({}, {})",
                    mb(self.occupancy_bytes),
                    mb(self.capacity_bytes),
                    self.occupancy_superblocks,
                    self.superblocks_peak
                ),
            ),
        ]
    }
}
