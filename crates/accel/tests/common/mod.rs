//! The built-in presets' tables, parsed as the CLI parses them, for the integration tests.

use nearflash_accel::{AccelConfig, HostConfig};
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;

fn parse(text: &str) -> (FlashConfig, FtlConfig, AccelConfig) {
    let mut doc: toml::Table = text.parse().unwrap();
    let flash: FlashConfig = doc.remove("flash").unwrap().try_into().unwrap();
    let ftl: FtlConfig = doc.remove("ftl").unwrap().try_into().unwrap();
    let accel: AccelConfig = doc.remove("accel").unwrap().try_into().unwrap();
    (flash, ftl, accel)
}

#[allow(dead_code)] // each test binary uses one of the two
pub fn test_min() -> (FlashConfig, FtlConfig, AccelConfig) {
    parse(include_str!("../../../../configs/test-min.toml"))
}

#[allow(dead_code)] // each test binary uses one of the two
pub fn flashabacus() -> (FlashConfig, FtlConfig, AccelConfig) {
    parse(include_str!("../../../../configs/flashabacus.toml"))
}

/// The flashabacus preset's SIMD tables: accelerator, host, and the SSD's flash and FTL.
#[allow(dead_code)] // used by the SIMD tests only
pub fn simd() -> (AccelConfig, HostConfig, FlashConfig, FtlConfig) {
    let mut doc: toml::Table = include_str!("../../../../configs/flashabacus.toml")
        .parse()
        .unwrap();
    let accel: AccelConfig = doc.remove("accel").unwrap().try_into().unwrap();
    let host: HostConfig = doc.remove("host").unwrap().try_into().unwrap();
    let flash: FlashConfig = doc.remove("ssd_flash").unwrap().try_into().unwrap();
    let ftl: FtlConfig = doc.remove("ssd_ftl").unwrap().try_into().unwrap();
    (accel, host, flash, ftl)
}
