//! `[zns]`: the zoned namespace mode of the drive (`--set zns.enabled=true`). The zone
//! geometry is not a parameter: a zone is one superblock (one block per channel × plane on
//! one way, the unit the drive erases at once — the layout of `crates/ftl/src/layout.rs`), so
//! zone size = zone capacity = pages per block × page group bytes, as ZNS drives size a zone
//! from their erase unit striped across dies (STANDARDS §3.2 "Variable zone capacity": ZCAP ≤
//! zone size; equal here because no block of a zone is held back).

use nearflash_flash::{ConfigError, FlashConfig};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZnsConfig {
    /// Expose the drive as a zoned namespace instead of a conventional one.
    pub enabled: bool,
    /// Maximum open resources (MOR + 1). Default 14: the WD Ultrastar DC ZN540's limit
    /// (its Identify Namespace reports MOR = MAR = 13, 0-based).
    pub max_open_zones: u32,
    /// Maximum active resources (MAR + 1); at least `max_open_zones`. Default 14, as above.
    pub max_active_zones: u32,
    /// Zone Append Size Limit (ZASL) in bytes: 2^n × 4 KiB. Default 128 KiB, FEMU's
    /// (STANDARDS §3.2).
    pub zone_append_size_limit_bytes: u64,
}

impl Default for ZnsConfig {
    fn default() -> Self {
        ZnsConfig {
            enabled: false,
            max_open_zones: 14,
            max_active_zones: 14,
            zone_append_size_limit_bytes: 128 * 1024,
        }
    }
}

impl ZnsConfig {
    pub fn validate(&self, flash: &FlashConfig) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                field: format!("zns.{field}"),
                reason,
            })
        };
        if self.max_open_zones == 0 {
            return bad("max_open_zones", "must be at least 1".into());
        }
        if self.max_active_zones < self.max_open_zones {
            return bad(
                "max_active_zones",
                format!(
                    "must be at least max_open_zones ({}), got {}",
                    self.max_open_zones, self.max_active_zones
                ),
            );
        }
        let z = self.zone_append_size_limit_bytes;
        if z < 4096 || !(z / 4096).is_power_of_two() || !z.is_multiple_of(4096) {
            return bad(
                "zone_append_size_limit_bytes",
                format!("must be 2^n × 4096 bytes, got {z}"),
            );
        }
        if self.enabled && flash.one_shot_pages > 1 {
            return bad(
                "enabled",
                format!(
                    "zoned mode programs one page row at a time; flash.one_shot_pages = {} is not supported with it",
                    flash.one_shot_pages
                ),
            );
        }
        Ok(())
    }
}
