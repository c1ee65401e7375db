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

/// What the FTL maps (`ftl.mapping`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MappingMode {
    /// FlashAbacus's Flashvisor: one entry per page group (one page on every channel ×
    /// plane); a write smaller than a group is a read-modify-write of the whole group.
    #[default]
    PageGroup,
    /// Page-level mapping of 4 KiB logical units (the sector group MQSim, FEMU and real
    /// drives map): units from any addresses are packed into flash pages, one multi-plane
    /// program per die, and GC copies valid units.
    Page,
}

impl MappingMode {
    pub fn is_page_group(&self) -> bool {
        *self == MappingMode::PageGroup
    }
}

/// Logical unit of page-level mapping: 4 KiB, the unit MQSim (`Sector_No_Per_Page` groups of
/// 512 B sectors into 4 KiB "sub-pages") and FEMU map, and the indirection unit of NVMe SSDs'
/// L2P tables (1 entry per 4 KiB: "1 GB of DRAM per TB").
pub const PAGE_MAP_UNIT_BYTES: u64 = 4096;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// `page-group` (default, FlashAbacus) or `page` (4 KiB units). Left out of the
    /// serialized config while `page-group`, so presets without it print as before.
    #[serde(default, skip_serializing_if = "MappingMode::is_page_group")]
    pub mapping: MappingMode,
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
    /// Page-level mapping: DRAM for a cached mapping table (DFTL, Gupta et al., ASPLOS'09).
    /// Smaller than the table (4 B per 4 KiB unit), the table lives on flash in 4 KiB
    /// translation units and an LRU cache of this many bytes of them serves lookups: a miss
    /// reads a translation unit from flash, a dirty eviction programs one. Absent (the
    /// default) or at least the table's size: the whole table is in DRAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping_cache_bytes: Option<u64>,
    /// Hybrid SLC write cache (`[ftl.slc_cache]`, off by default; left out of the
    /// serialized config while off, so presets without it print as before).
    #[serde(default, skip_serializing_if = "SlcCacheConfig::is_default")]
    pub slc_cache: SlcCacheConfig,
    /// Flexible Data Placement (`crate::fdp`), off by default. It is the preset's top-level
    /// `[fdp]` table, not a field of `[ftl]` (as `[zns]` is top-level): the preset loader
    /// fills it in, and an `[ftl]` table never carries it.
    #[serde(skip)]
    pub fdp: crate::fdp::FdpConfig,
}

/// The hybrid SLC write cache (`[ftl.slc_cache]`): host writes land in superblocks
/// programmed in SLC mode (one bit per cell, so a block holds `1 / bits_per_cell` of its
/// pages) while the cache has room; idle time folds them into native (TLC) superblocks.
/// The cache is a *static* part, always there (taken from over-provisioning), plus a
/// *dynamic* part of at most `dynamic_capacity_max_bytes` that exists only while the free
/// user capacity can hold it: the dynamic part may have at most as many superblocks as the
/// free user capacity fills in native mode, ⌊(logical groups − groups holding data) /
/// groups per superblock⌋. Once the cache is full, host writes go straight to native
/// superblocks. See docs/design.md, "The hybrid SLC write cache".
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheConfig {
    #[serde(default)]
    pub enabled: bool,
    /// Bits per cell of the die's native mode (3 = TLC, the 970 EVO's V-NAND).
    #[serde(default = "default_bits_per_cell")]
    pub bits_per_cell: u32,
    /// Host data the static SLC region holds (the 970 EVO 1 TB: 6 GB, Samsung's
    /// datasheet via HAYAGUI.md §1.7). Rounded up to whole SLC-mode superblocks.
    #[serde(default)]
    pub static_capacity_bytes: u64,
    /// Most host data the dynamic region holds on an empty drive (970 EVO 1 TB: 36 GB).
    #[serde(default)]
    pub dynamic_capacity_max_bytes: u64,
    /// Array time of a read in SLC mode. Default 25 us: SLC read, OSTEP ch. 44 Fig. 44.2.
    #[serde(default = "default_slc_read_latency_us")]
    pub slc_read_latency_us: f64,
    /// Array time of a program in SLC mode. Default 250 us: SLC program 200-300 us, OSTEP
    /// ch. 44 Fig. 44.2 (midpoint).
    #[serde(default = "default_slc_program_latency_us")]
    pub slc_program_latency_us: f64,
}

fn default_bits_per_cell() -> u32 {
    3
}

fn default_slc_read_latency_us() -> f64 {
    25.0
}

fn default_slc_program_latency_us() -> f64 {
    250.0
}

impl Default for SlcCacheConfig {
    fn default() -> Self {
        SlcCacheConfig {
            enabled: false,
            bits_per_cell: default_bits_per_cell(),
            static_capacity_bytes: 0,
            dynamic_capacity_max_bytes: 0,
            slc_read_latency_us: default_slc_read_latency_us(),
            slc_program_latency_us: default_slc_program_latency_us(),
        }
    }
}

impl SlcCacheConfig {
    pub fn is_default(&self) -> bool {
        *self == SlcCacheConfig::default()
    }
}

/// Longest firmware timer accepted (µs): one hour of simulated time.
pub const TIMER_US_MAX: f64 = 3.6e9;

/// Bytes of one mapping-table entry held in scratchpad: the physical page group, or the
/// physical unit under page-level mapping (u32).
pub const MAP_ENTRY_BYTES: u64 = 4;

/// A translation unit of the cached mapping table (`ftl.mapping_cache_bytes`): one 4 KiB
/// mapping unit of entries, 1,024 of 4 B. DFTL's translation page is a flash page of
/// entries (2 KiB pages in its paper); ours is the page-level mapping unit, so translation
/// data is packed into flash pages, programmed and collected like any other unit.
pub const TRANSLATION_UNIT_BYTES: u64 = PAGE_MAP_UNIT_BYTES;

/// Mapping entries one translation unit holds.
pub const ENTRIES_PER_TRANSLATION_UNIT: u64 = TRANSLATION_UNIT_BYTES / MAP_ENTRY_BYTES;

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
        self.validate_mapping(flash)?;
        self.fdp.validate(flash, self)?;
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
        let reserve = layout.reserved_superblocks(self) + 1;
        if data_sbs <= reserve {
            return bad(
                if self.fdp.enabled {
                    "fdp.handles"
                } else {
                    "flash.blocks_per_plane"
                },
                format!(
                    "geometry leaves {data_sbs} data superblocks; at least {} are needed for \
                     write points ({} open at once{}), GC reserve and over-provisioning",
                    reserve + 1,
                    layout.open_points(),
                    if self.fdp.enabled {
                        ": each placement handle keeps its own"
                    } else {
                        ""
                    }
                ),
            );
        }
        if layout.logical_groups() == 0 {
            return bad(
                "ftl.over_provisioning_percent",
                "leaves no logical capacity".into(),
            );
        }
        self.validate_slc_cache(flash, &layout)?;
        if layout.translation_units() > 0 {
            // The cached table and the directory of translation units' places.
            let need = self.mapping_cache_bytes.unwrap_or(0)
                + layout.translation_units() * MAP_ENTRY_BYTES;
            if need > self.scratchpad_bytes {
                return bad(
                    "ftl.scratchpad_bytes",
                    format!(
                        "the mapping cache and its translation directory need {need} bytes \
                         but the scratchpad holds {}",
                        self.scratchpad_bytes
                    ),
                );
            }
        } else {
            let table = layout.logical_entries() * MAP_ENTRY_BYTES;
            if table > self.scratchpad_bytes {
                return bad(
                    "ftl.scratchpad_bytes",
                    format!(
                        "the mapping table needs {table} bytes but the scratchpad holds {}",
                        self.scratchpad_bytes
                    ),
                );
            }
        }
        Ok(())
    }
}

impl FtlConfig {
    /// `ftl.mapping = "page"` needs pages that hold whole 4 KiB units and spare areas that
    /// hold one record per unit.
    fn validate_mapping(&self, flash: &FlashConfig) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                field: field.to_string(),
                reason,
            })
        };
        if let Some(b) = self.mapping_cache_bytes {
            if self.mapping != MappingMode::Page {
                return bad(
                    "ftl.mapping_cache_bytes",
                    "a cached mapping table needs ftl.mapping = \"page\"".into(),
                );
            }
            if b < TRANSLATION_UNIT_BYTES {
                return bad(
                    "ftl.mapping_cache_bytes",
                    format!(
                        "must hold at least one {TRANSLATION_UNIT_BYTES}-byte translation \
                         unit, got {b}"
                    ),
                );
            }
        }
        if self.mapping != MappingMode::Page {
            if flash.one_shot_pages > 1 {
                // A page group's program covers one page row; a word line would need a
                // group per program, which page-group mapping does not have.
                return bad(
                    "flash.one_shot_pages",
                    format!(
                        "one-shot programs ({} pages) need ftl.mapping = \"page\"; \
                         page-group mapping programs one page row at a time",
                        flash.one_shot_pages
                    ),
                );
            }
            return Ok(());
        }
        let data = u64::from(flash.page_size_bytes) / nearflash_blockdev::SECTOR_BYTES
            * nearflash_blockdev::SECTOR_BYTES;
        if data < PAGE_MAP_UNIT_BYTES || !data.is_multiple_of(PAGE_MAP_UNIT_BYTES) {
            return bad(
                "ftl.mapping",
                format!(
                    "page-level mapping needs pages holding whole {PAGE_MAP_UNIT_BYTES}-byte \
                     units; flash.page_size_bytes is {}",
                    flash.page_size_bytes
                ),
            );
        }
        let units = data / PAGE_MAP_UNIT_BYTES;
        let need = units * crate::oob::OOB_RECORD_BYTES as u64;
        if u64::from(flash.oob_size_bytes) < need {
            return bad(
                "flash.oob_size_bytes",
                format!(
                    "page-level mapping keeps one {}-byte record per unit in the spare area: \
                     {units} units need {need} bytes, the page has {}",
                    crate::oob::OOB_RECORD_BYTES,
                    flash.oob_size_bytes
                ),
            );
        }
        if flash.media.enabled {
            return bad(
                "ftl.mapping",
                "page-level mapping does not model media errors yet: set \
                 flash.media.enabled=false or ftl.mapping=\"page-group\""
                    .into(),
            );
        }
        Ok(())
    }

    /// `[ftl.slc_cache]`: checked even while off, so a typo'd value is caught before it is
    /// switched on.
    fn validate_slc_cache(
        &self,
        flash: &FlashConfig,
        layout: &crate::layout::Layout,
    ) -> Result<(), ConfigError> {
        let c = &self.slc_cache;
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                field: format!("ftl.slc_cache.{field}"),
                reason,
            })
        };
        if !(2..=4).contains(&c.bits_per_cell) {
            return bad(
                "bits_per_cell",
                format!("must be 2 (MLC) to 4 (QLC), got {}", c.bits_per_cell),
            );
        }
        if flash.pages_per_block < c.bits_per_cell {
            return bad(
                "bits_per_cell",
                format!(
                    "a block in SLC mode keeps 1/{} of flash.pages_per_block ({}): no page left",
                    c.bits_per_cell, flash.pages_per_block
                ),
            );
        }
        for (f, v) in [
            ("slc_read_latency_us", c.slc_read_latency_us),
            ("slc_program_latency_us", c.slc_program_latency_us),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(f, format!("must be a positive number, got {v}"));
            }
            if v > nearflash_flash::config::OP_LATENCY_US_MAX {
                return bad(
                    f,
                    format!(
                        "must be at most {} us (one second), got {v}",
                        nearflash_flash::config::OP_LATENCY_US_MAX
                    ),
                );
            }
        }
        if !c.enabled {
            return Ok(());
        }
        // The static region's superblocks hold 1/bits of what they would hold natively: the
        // rest of their capacity must come out of over-provisioning, or a full device could
        // not hold its logical capacity with the static region in use.
        let static_sbs = layout.slc_superblocks_for(c.static_capacity_bytes, c.bits_per_cell);
        let spare = layout.over_provisioned_superblocks(self);
        let cost = (u64::from(static_sbs) * u64::from(c.bits_per_cell - 1))
            .div_ceil(u64::from(c.bits_per_cell));
        if cost > u64::from(spare) {
            return bad(
                "static_capacity_bytes",
                format!(
                    "{} bytes take {static_sbs} superblocks in SLC mode, which would hold \
                     {cost} superblocks' worth more in native mode than over-provisioning \
                     has ({spare} superblocks held back by ftl.over_provisioning_percent)",
                    c.static_capacity_bytes
                ),
            );
        }
        let dynamic_sbs = layout.slc_superblocks_for(c.dynamic_capacity_max_bytes, c.bits_per_cell);
        if u64::from(static_sbs) + u64::from(dynamic_sbs) == 0 {
            return bad(
                "static_capacity_bytes",
                "the cache is enabled but static_capacity_bytes and dynamic_capacity_max_bytes \
                 are both zero"
                    .into(),
            );
        }
        Ok(())
    }
}
