//! Configurations for tests and quick runs: a tiny device (2 channels × 2 dies × 2 planes ×
//! 24 blocks × 16 pages of 4 KiB, 16 KiB page groups) on which a few thousand requests fill
//! and overwrite the whole logical space, so GC, wear-leveling, checkpoints and recovery all
//! run within milliseconds of host time.

use crate::config::{FtlConfig, GcPolicy};
use nearflash_flash::FlashConfig;

pub fn tiny_flash() -> FlashConfig {
    FlashConfig {
        channels: 2,
        packages_per_channel: 1,
        dies_per_package: 2,
        planes_per_die: 2,
        blocks_per_plane: 24,
        pages_per_block: 16,
        page_size_bytes: 4096,
        oob_size_bytes: 64,
        read_latency_us: 20.0,
        program_latency_us: 200.0,
        erase_latency_us: 1000.0,
        read_latency_by_page_type_us: None,
        program_latency_by_page_type_us: None,
        channel_rate_mb_s: 400.0,
        command_overhead_ns: 100,
        endurance_pe_cycles: 100_000,
        program_fail_probability: 0.0,
        erase_fail_probability: 0.0,
        media: Default::default(),
    }
}

pub fn tiny_ftl() -> FtlConfig {
    FtlConfig {
        over_provisioning_percent: 10.0,
        gc_policy: GcPolicy::Greedy,
        gc_foreground_free_superblocks: 2,
        gc_idle_threshold_us: 500.0,
        gc_background_free_superblocks: 6,
        gc_parallel_copies: 4,
        wear_leveling_spread_pe: 8,
        spare_blocks_per_plane: 2,
        checkpoint_interval_us: 3000.0,
        scratchpad_bytes: 1 << 20,
    }
}
