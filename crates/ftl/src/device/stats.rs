//! Counters the firmware keeps about what it did, reported by every run.

use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlStats {
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    pub host_flushes: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    /// Page groups programmed for host writes (read-modify-write included).
    pub host_group_programs: u64,
    /// Pages read to merge partial-group writes.
    pub rmw_page_reads: u64,
    pub gc_runs: u64,
    pub gc_foreground_runs: u64,
    pub gc_background_runs: u64,
    pub wear_leveling_runs: u64,
    pub gc_groups_copied: u64,
    pub gc_pages_copied: u64,
    /// GC copies dropped because the host overwrote the group meanwhile.
    pub gc_copies_discarded: u64,
    /// GC runs that had to open the last free superblock (the crash reserve).
    pub gc_rescue_runs: u64,
    /// GC runs given up because their copies found no room (the device is out of space).
    pub gc_runs_abandoned: u64,
    pub checkpoints_written: u64,
    pub checkpoints_failed: u64,
    /// Checkpoints not written: the only usable slot is full and holds the newest one.
    pub checkpoints_skipped: u64,
    pub checkpoint_pages: u64,
    /// Simulated time from a checkpoint's start to its end (erase included), summed and
    /// the longest one.
    pub checkpoint_ns_total: u64,
    pub checkpoint_ns_max: u64,
    pub program_failures: u64,
    pub erase_failures: u64,
    pub blocks_remapped: u64,
    pub superblocks_retired: u64,
    pub integrity_errors: u64,
    /// Host read segments that failed because a flash page was uncorrectable.
    pub uncorrectable_reads: u64,
    /// Blocks retired because too many of their reads needed read-retry or failed.
    pub media_blocks_retired: u64,
    pub requests_failed: u64,
    /// The SLC write cache's counters; `None` (and left out of the serialized stats) when
    /// `[ftl.slc_cache]` is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc: Option<SlcStats>,
    /// Page-level mapping's counters; `None` (and left out) under page-group mapping.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_map: Option<super::PageMapStats>,
    /// The cached mapping table's counters; `None` (and left out) while the whole table is
    /// in DRAM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_cache: Option<super::MappingCacheStats>,
    /// Flexible Data Placement's counters; `None` (and left out) while `[fdp]` is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp: Option<super::FdpStats>,
}

/// What the SLC write cache did (`[ftl.slc_cache]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SlcStats {
    /// Host page-group programs into superblocks in SLC mode.
    pub slc_group_programs: u64,
    /// Bytes of those groups (logical group size each).
    pub slc_write_bytes: u64,
    /// Host page-group programs straight into native (TLC) superblocks: the cache was full.
    pub tlc_direct_group_programs: u64,
    pub tlc_direct_write_bytes: u64,
    /// GC runs whose victim was an SLC superblock (idle-time folds and foreground GC of one).
    pub fold_runs: u64,
    /// Page groups and flash pages copied out of SLC superblocks into native ones.
    pub fold_groups: u64,
    pub fold_pages: u64,
    /// SLC-mode superblocks opened, and the most in use at once.
    pub superblocks_opened: u64,
    pub superblocks_peak: u32,
}
