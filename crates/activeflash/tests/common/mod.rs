//! Shared configurations: the `active-flash` preset as shipped, and a tiny device with the
//! same 4 KiB mapping unit on which GC runs within a few thousand writes.

#![allow(dead_code)]

use nearflash_activeflash::ActiveFlashConfig;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;

#[derive(serde::Deserialize)]
struct PresetDoc {
    flash: FlashConfig,
    ftl: FtlConfig,
    active_flash: ActiveFlashConfig,
}

pub fn preset() -> (FlashConfig, FtlConfig, ActiveFlashConfig) {
    let text = include_str!("../../../../configs/active-flash.toml");
    let mut doc: toml::Table = text.parse().unwrap();
    doc.remove("name");
    doc.remove("description");
    let p: PresetDoc = toml::Value::Table(doc).try_into().unwrap();
    (p.flash, p.ftl, p.active_flash)
}

/// 1 channel x 4 dies x 1 plane x 40 blocks x 16 pages of 4 KiB = 10 MiB, with the preset's
/// timing, controller and host.
pub fn tiny() -> (FlashConfig, FtlConfig, ActiveFlashConfig) {
    let (mut flash, mut ftl, af) = preset();
    flash.packages_per_channel = 1;
    flash.dies_per_package = 4;
    flash.blocks_per_plane = 40;
    flash.pages_per_block = 16;
    ftl.spare_blocks_per_plane = 2;
    ftl.gc_parallel_copies = 4;
    ftl.gc_background_free_superblocks = 4;
    ftl.gc_idle_threshold_us = 500.0;
    ftl.scratchpad_bytes = 1 << 20;
    (flash, ftl, af)
}
