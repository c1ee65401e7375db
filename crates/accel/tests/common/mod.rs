//! The built-in presets' tables, parsed as the CLI parses them, for the integration tests.

use nearflash_accel::AccelConfig;
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
