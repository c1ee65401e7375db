//! FTL configuration (a preset's `[ftl]` table): over-provisioning, garbage-collection policy
//! and thresholds, wear-leveling, bad-block spares, checkpoint interval and the scratchpad
//! budget that bounds the mapping table.

use nearflash_flash::{ConfigError, FlashConfig, Geometry};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// FlashAbacus Storengine: victims in address order, round robin.
    RoundRobin,
    /// Fewest valid page groups.
    Greedy,
    /// Highest (1 − u) / 2u × age (Kawaguchi et al., USENIX ATC'95).
    CostBenefit,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Share of the data superblocks held back from the logical capacity.
    pub over_provisioning_percent: f64,
    pub gc_policy: GcPolicy,
    /// Foreground (on-demand) GC starts when free superblocks fall to this count; host
    /// writes that need a new superblock then wait for GC.
    pub gc_foreground_free_superblocks: u32,
    /// Background GC: after the device has been idle this long...
    pub gc_idle_threshold_us: f64,
    /// ...it collects until this many superblocks are free (0 disables background GC).
    pub gc_background_free_superblocks: u32,
    /// Page groups one GC job copies concurrently.
    pub gc_parallel_copies: u32,
    /// Static wear-leveling moves the coldest superblock when the erase-count spread
    /// (max − min) exceeds this.
    pub wear_leveling_spread_pe: u32,
    /// Blocks per plane kept aside to replace blocks that turn bad.
    pub spare_blocks_per_plane: u32,
    /// Simulated time between mapping checkpoints (0 disables periodic checkpoints).
    pub checkpoint_interval_us: f64,
    /// Scratchpad bytes available for the mapping table; a table that does not fit is a
    /// configuration error.
    pub scratchpad_bytes: u64,
}

/// Longest firmware timer accepted (µs): one hour of simulated time.
pub const TIMER_US_MAX: f64 = 3.6e9;

/// Bytes of one mapping-table entry held in scratchpad: the physical page group (u32).
pub const MAP_ENTRY_BYTES: u64 = 4;

impl FtlConfig {
    pub fn validate(&self, flash: &FlashConfig) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                field: field.to_string(),
                reason,
            })
        };
        if !(0.0..90.0).contains(&self.over_provisioning_percent) {
            return bad(
                "ftl.over_provisioning_percent",
                format!(
                    "must be within 0..90, got {}",
                    self.over_provisioning_percent
                ),
            );
        }
        if u64::from(flash.page_size_bytes) < nearflash_blockdev::SECTOR_BYTES {
            return bad(
                "flash.page_size_bytes",
                format!(
                    "must be at least {} (one host sector), got {}",
                    nearflash_blockdev::SECTOR_BYTES,
                    flash.page_size_bytes
                ),
            );
        }
        if self.gc_parallel_copies == 0 {
            return bad("ftl.gc_parallel_copies", "must be greater than zero".into());
        }
        if self.gc_foreground_free_superblocks == 0 {
            return bad(
                "ftl.gc_foreground_free_superblocks",
                "must be at least 1 (GC needs a free superblock to copy into)".into(),
            );
        }
        for (f, v) in [
            ("ftl.gc_idle_threshold_us", self.gc_idle_threshold_us),
            ("ftl.checkpoint_interval_us", self.checkpoint_interval_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(f, format!("must be a non-negative number, got {v}"));
            }
            // Timers re-arm themselves: keep each far inside the u64-ns clock (584 years).
            if v > TIMER_US_MAX {
                return bad(
                    f,
                    format!("must be at most {TIMER_US_MAX} us (one hour), got {v}"),
                );
            }
        }
        if self.spare_blocks_per_plane >= flash.blocks_per_plane / 2 {
            return bad(
                "ftl.spare_blocks_per_plane",
                format!(
                    "must be less than half of flash.blocks_per_plane ({})",
                    flash.blocks_per_plane
                ),
            );
        }
        let layout = crate::layout::Layout::new(&Geometry::from_config(flash), self);
        let data_sbs = layout.data_superblocks();
        let reserve = self.gc_foreground_free_superblocks + layout.write_points() * 2 + 2;
        if data_sbs <= reserve {
            return bad(
                "flash.blocks_per_plane",
                format!(
                    "geometry leaves {data_sbs} data superblocks; at least {} are needed for \
                     write points, GC reserve and over-provisioning",
                    reserve + 1
                ),
            );
        }
        if layout.logical_groups() == 0 {
            return bad(
                "ftl.over_provisioning_percent",
                "leaves no logical capacity".into(),
            );
        }
        let table = layout.logical_groups() * MAP_ENTRY_BYTES;
        if table > self.scratchpad_bytes {
            return bad(
                "ftl.scratchpad_bytes",
                format!(
                    "the mapping table needs {table} bytes but the scratchpad holds {}",
                    self.scratchpad_bytes
                ),
            );
        }
        Ok(())
    }
}
