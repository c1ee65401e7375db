//! The cached mapping table (`ftl.mapping_cache_bytes`, DFTL) over the measured phase.

use super::Measured;
use serde::Serialize;

/// What the cached mapping table did in the measured phase.
#[derive(Clone, Debug, Serialize)]
pub struct MappingCacheReport {
    /// Translation units the cache holds, and the table's translation units on flash.
    pub capacity_units: u64,
    pub translation_units: u64,
    /// Host lookups over the phase: hit rate, hits, misses.
    pub hit_rate: f64,
    pub hits: u64,
    pub misses: u64,
    /// Loads to take a mapping change (GC copies, updates to an evicted translation unit).
    pub update_loads: u64,
    /// Translation units read from flash, and written back (dirty evictions); their pages
    /// are in `flash_page_reads` / `flash_page_programs` and the WAF.
    pub translation_reads: u64,
    pub translation_writes: u64,
}

impl MappingCacheReport {
    pub(super) fn of(m: &Measured) -> Option<Self> {
        let (s, e) = (
            m.start.ftl.mapping_cache.as_ref()?,
            m.end.ftl.mapping_cache.as_ref()?,
        );
        let (hits, misses) = (e.hits - s.hits, e.misses - s.misses);
        Some(MappingCacheReport {
            capacity_units: e.capacity_units,
            translation_units: m.device.layout().translation_units(),
            hit_rate: if hits + misses == 0 {
                1.0
            } else {
                hits as f64 / (hits + misses) as f64
            },
            hits,
            misses,
            update_loads: e.update_loads - s.update_loads,
            translation_reads: e.translation_reads - s.translation_reads,
            translation_writes: e.translation_writes - s.translation_writes,
        })
    }

    pub(super) fn rows(&self) -> Vec<(String, String)> {
        vec![
            (
                "mapping cache: translation units cached / on flash".into(),
                format!("{} / {}", self.capacity_units, self.translation_units),
            ),
            (
                "mapping cache: hit rate (hits / misses)".into(),
                format!(
                    "{:.1}% ({} / {})",
                    self.hit_rate * 100.0,
                    self.hits,
                    self.misses
                ),
            ),
            (
                "mapping cache: translation reads / writes (update loads)".into(),
                format!(
                    "{} / {} ({})",
                    self.translation_reads, self.translation_writes, self.update_loads
                ),
            ),
        ]
    }
}
