//! The write buffer's parameters (`[write_cache]` in a preset). Every field carries its unit;
//! each default cites its source or is marked as an assumption. Validation names the field;
//! with power-loss protection it also refuses a hold-up budget that cannot destage a full
//! buffer on the device below ([`DestageBound`]).

use nearflash_blockdev::SECTOR_BYTES;
use nearflash_flash::{FlashConfig, Geometry};
use nearflash_ftl::{FtlConfig, Layout};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest buffer unit: per-sector validity is a 64-bit mask (64 × 512 B = 32 KiB).
pub const UNIT_BYTES_MAX: u64 = 64 * SECTOR_BYTES;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("write_cache.{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}

fn invalid(field: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field,
        reason: reason.into(),
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WriteCacheConfig {
    /// Whether a drive built from the preset has the buffer at all (off: writes go straight
    /// to the FTL, as before).
    pub enabled: bool,
    /// Bytes of DRAM given to buffered writes. Assumption: 64 MiB. Drives do not publish the
    /// share of their DRAM (1 GB LPDDR4 on the 970 EVO 1 TB [datasheet]) that buffers writes
    /// rather than holding the map.
    pub capacity_bytes: u64,
    /// The buffer's allocation unit, each with per-sector validity: 4 KiB, the logical page
    /// MQSim and FEMU map and the LBA format drives are formatted with (NVMe 1.4 §5.15.2.1).
    pub unit_bytes: u64,
    /// Destaging starts when this share of the units is occupied. Assumption: 80%.
    pub high_watermark_percent: f64,
    /// Watermark destaging stops at this share. Assumption: 50%.
    pub low_watermark_percent: f64,
    /// After the host has been idle this long, everything dirty is destaged. Assumption:
    /// 1 ms (the order of the FTL's own idle threshold for background GC).
    pub idle_destage_us: f64,
    /// Destage jobs in flight at once. Assumption: 8.
    pub destage_inflight_max: u32,
    /// Largest destage job: contiguous dirty units in LBA order coalesce up to this many
    /// bytes. Assumption: 128 KiB (the 970 EVO's NVMe MDTS is not published; 128 KiB is the
    /// Linux default max_sectors_kb).
    pub destage_bytes_max: u64,
    /// Bandwidth of the DRAM port buffered data crosses (host data in, destage data out, read
    /// hits). Assumption: 6,400 MB/s, one x16 LPDDR4-3200 channel (JEDEC JESD209-4 speed
    /// grade); the 970 EVO's LPDDR4 [datasheet] bus width and clock are not published.
    pub dram_rate_mb_s: f64,
    /// Power-loss protection: capacitors hold the drive up after a cut so the buffer can be
    /// destaged. Consumer drives (the 970 EVO) have none [datasheet].
    pub plp: bool,
    /// Time the capacitors hold the drive up after a cut. Assumption: 20 ms. Enterprise
    /// drives describe the mechanism (allaboutcircuits.com, "Power Hold-Up and Energy Storage
    /// Management Devices", 2017) but do not publish the hold-up time; tens of milliseconds
    /// is the order of the energy a few hundred µF store at 12-35 V.
    pub plp_holdup_us: f64,
}

impl Default for WriteCacheConfig {
    fn default() -> Self {
        WriteCacheConfig {
            enabled: false,
            capacity_bytes: 64 << 20,
            unit_bytes: 4096,
            high_watermark_percent: 80.0,
            low_watermark_percent: 50.0,
            idle_destage_us: 1000.0,
            destage_inflight_max: 8,
            destage_bytes_max: 128 << 10,
            dram_rate_mb_s: 6400.0,
            plp: false,
            plp_holdup_us: 20_000.0,
        }
    }
}

impl WriteCacheConfig {
    /// Units the buffer holds.
    pub fn capacity_units(&self) -> u64 {
        self.capacity_bytes / self.unit_bytes
    }

    /// Occupied units at or above which watermark destaging runs.
    pub fn high_units(&self) -> u64 {
        watermark_units(self.capacity_units(), self.high_watermark_percent)
    }

    /// Occupied units at or below which watermark destaging stops.
    pub fn low_units(&self) -> u64 {
        watermark_units(self.capacity_units(), self.low_watermark_percent)
    }

    /// Checks the fields on their own (a preset checks the hold-up against the device with
    /// [`WriteCacheConfig::validate_for`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let u = self.unit_bytes;
        if u == 0 || !u.is_multiple_of(SECTOR_BYTES) || u > UNIT_BYTES_MAX {
            return Err(invalid(
                "unit_bytes",
                format!("must be a multiple of {SECTOR_BYTES} between {SECTOR_BYTES} and {UNIT_BYTES_MAX}, got {u}"),
            ));
        }
        if self.capacity_bytes < u || !self.capacity_bytes.is_multiple_of(u) {
            return Err(invalid(
                "capacity_bytes",
                format!(
                    "must be a positive multiple of unit_bytes ({u}), got {}",
                    self.capacity_bytes
                ),
            ));
        }
        if self.destage_bytes_max < u || !self.destage_bytes_max.is_multiple_of(u) {
            return Err(invalid(
                "destage_bytes_max",
                format!(
                    "must be a positive multiple of unit_bytes ({u}), got {}",
                    self.destage_bytes_max
                ),
            ));
        }
        let percent = |field, v: f64| {
            if v.is_finite() && (0.0..=100.0).contains(&v) {
                Ok(())
            } else {
                Err(invalid(field, format!("must lie in [0, 100], got {v}")))
            }
        };
        percent("high_watermark_percent", self.high_watermark_percent)?;
        percent("low_watermark_percent", self.low_watermark_percent)?;
        if self.low_watermark_percent >= self.high_watermark_percent {
            return Err(invalid(
                "low_watermark_percent",
                format!(
                    "must be below high_watermark_percent ({}), got {}",
                    self.high_watermark_percent, self.low_watermark_percent
                ),
            ));
        }
        if !(self.idle_destage_us.is_finite() && self.idle_destage_us > 0.0) {
            return Err(invalid(
                "idle_destage_us",
                format!("must be positive, got {}", self.idle_destage_us),
            ));
        }
        if self.destage_inflight_max == 0 {
            return Err(invalid("destage_inflight_max", "must be at least 1"));
        }
        if !(self.dram_rate_mb_s.is_finite() && self.dram_rate_mb_s > 0.0) {
            return Err(invalid(
                "dram_rate_mb_s",
                format!("must be positive, got {}", self.dram_rate_mb_s),
            ));
        }
        if self.plp && !(self.plp_holdup_us.is_finite() && self.plp_holdup_us > 0.0) {
            return Err(invalid(
                "plp_holdup_us",
                format!("must be positive with plp, got {}", self.plp_holdup_us),
            ));
        }
        Ok(())
    }

    /// [`WriteCacheConfig::validate`], then with PLP: the hold-up budget must cover the
    /// worst-case destage of a full buffer on the device `bound` describes.
    pub fn validate_for(&self, bound: &DestageBound) -> Result<(), ConfigError> {
        self.validate()?;
        if !self.plp {
            return Ok(());
        }
        let need_us = bound.full_buffer_us(self);
        if self.plp_holdup_us < need_us {
            return Err(invalid(
                "plp_holdup_us",
                format!(
                    "{} us cannot destage a full buffer: {} units need {need_us:.0} us on this \
                     device ({})",
                    self.plp_holdup_us,
                    self.capacity_units(),
                    bound.describe()
                ),
            ));
        }
        Ok(())
    }
}

fn watermark_units(units: u64, percent: f64) -> u64 {
    (units as f64 * percent / 100.0).ceil() as u64
}

/// What the worst-case destage of a full buffer costs on the device below: every unit in a
/// job of its own (no two dirty units adjacent), each job one device write of
/// `write_us_max`, `parallel_writes` of them served at once, each multiplied by the device's
/// worst-case write amplification (a cut may land while foreground GC runs), plus the GC's
/// erases.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DestageBound {
    /// Worst-case service time of one destage write on an otherwise idle device.
    pub write_us_max: f64,
    /// Writes the device serves in parallel.
    pub parallel_writes: u32,
    /// Worst-case device writes per destage write (1 without GC).
    pub write_amplification_max: f64,
    /// Worst-case erase time per FTL mapping entry written (foreground GC's erases, taken
    /// serially).
    pub erase_us_per_entry: f64,
    /// Bytes of one FTL mapping entry: a page group, or 4 KiB under page-level mapping.
    pub entry_bytes: u64,
}

impl DestageBound {
    /// The FTL over `flash`. A destage write is at worst a read-modify-write: under page-group
    /// mapping of its page group (a page on every channel × plane of one way: a multi-plane
    /// read and program on one die per channel, the group's pages crossing each channel's
    /// bus twice); under page-level mapping of a partial 4 KiB unit (a read of the unit's
    /// page, and the program of the die's multi-plane slice it lands in, sealed alone —
    /// bounded by the same read + program + two multi-plane bus crossings). Writes to
    /// different ways (dies on a channel) proceed in parallel. Greedy GC picks a victim at
    /// most as full as the average, `u` = logical / physical mapping entries, so each entry
    /// written costs at most 1 / (1 − u) entry writes (the copies included) and a victim's
    /// erase per E·(1 − u) entries written (E entries per superblock).
    pub fn of_ftl(flash: &FlashConfig, ftl: &FtlConfig) -> DestageBound {
        let planes = f64::from(flash.planes_per_die);
        let page_bytes = f64::from(flash.page_size_bytes + flash.oob_size_bytes);
        let bus_us = planes * page_bytes / flash.channel_rate_mb_s;
        let write_us_max = flash.read_latency_us + flash.program_latency_us + 2.0 * bus_us + 1.0;
        let layout = Layout::new(&Geometry::from_config(flash), ftl);
        let entries_per_sb = f64::from(layout.entries_per_superblock());
        let physical = f64::from(layout.data_superblocks()) * entries_per_sb;
        let free_share = (1.0 - layout.logical_entries() as f64 / physical).max(1e-9);
        DestageBound {
            write_us_max,
            parallel_writes: flash.packages_per_channel * flash.dies_per_package,
            write_amplification_max: 1.0 / free_share,
            erase_us_per_entry: flash.erase_latency_us / (entries_per_sb * free_share),
            entry_bytes: layout.unit_bytes(),
        }
    }

    /// Microseconds to destage a full buffer of `cfg`, unit by unit.
    pub fn full_buffer_us(&self, cfg: &WriteCacheConfig) -> f64 {
        let parallel = u64::from(self.parallel_writes.min(cfg.destage_inflight_max).max(1));
        let units = cfg.capacity_units();
        let rounds = units.div_ceil(parallel);
        let entries = units * cfg.unit_bytes.div_ceil(self.entry_bytes.max(1));
        rounds as f64 * self.write_us_max * self.write_amplification_max
            + entries as f64 * self.erase_us_per_entry
    }

    fn describe(&self) -> String {
        format!(
            "{:.0} us per destage write, {} in parallel, write amplification up to {:.1}, \
             {:.1} us of erases per {} B mapping entry",
            self.write_us_max,
            self.parallel_writes,
            self.write_amplification_max,
            self.erase_us_per_entry,
            self.entry_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_errors_name_the_field() {
        WriteCacheConfig::default().validate().unwrap();
        let bad = WriteCacheConfig {
            unit_bytes: 1000,
            ..Default::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("unit_bytes"));
        let bad = WriteCacheConfig {
            low_watermark_percent: 90.0,
            ..Default::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("low_watermark_percent"));
    }

    #[test]
    fn a_holdup_too_short_for_a_full_buffer_is_refused() {
        let bound = DestageBound {
            write_us_max: 300.0,
            parallel_writes: 2,
            write_amplification_max: 1.0,
            erase_us_per_entry: 0.0,
            entry_bytes: 4096,
        };
        let cfg = WriteCacheConfig {
            capacity_bytes: 64 * 4096,
            plp: true,
            plp_holdup_us: 9_000.0,
            ..Default::default()
        };
        // 64 units, 2 at a time, 300 us each: 9.6 ms.
        assert_eq!(bound.full_buffer_us(&cfg), 9_600.0);
        let e = cfg.validate_for(&bound).unwrap_err().to_string();
        assert!(e.contains("plp_holdup_us"), "{e}");
        let ok = WriteCacheConfig {
            plp_holdup_us: 10_000.0,
            ..cfg
        };
        ok.validate_for(&bound).unwrap();
    }
}
