//! Flash configuration as it appears in a preset's `[flash]` table: geometry, NAND timing,
//! bus rate, endurance and injected faults. Every field carries its unit; `validate` rejects
//! impossible values with an error naming the field.

use crate::media::MediaConfig;
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq)]
pub enum ConfigError {
    #[error("config field '{field}': {reason}")]
    Invalid { field: String, reason: String },
}

pub(crate) fn invalid(field: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// Most planes a die may have (multi-plane operations address this many blocks at once).
pub const PLANES_PER_DIE_MAX: u32 = 4;

/// Longest NAND operation accepted (µs): one second, 100× the slowest erase of any datasheet
/// we cite (QLC tBERS ~10 ms). Simulated time is a u64 of ns (584 years); with every
/// operation bounded like this, no run of fewer than ~10^10 operations can overflow it.
pub const OP_LATENCY_US_MAX: f64 = 1e6;

/// Slowest channel bus accepted (MB/s): 1 MB/s, 50× slower than ONFI 1.0's 50 MB/s, so a
/// page transfer stays well under a second.
pub const CHANNEL_RATE_MB_S_MIN: f64 = 1.0;

/// Longest command/address overhead accepted (ns): one millisecond.
pub const COMMAND_OVERHEAD_NS_MAX: u64 = 1_000_000;

/// Most pages one one-shot program covers (`flash.one_shot_pages`): a QLC word line's four
/// pages (one per bit of a cell). An assumption of the model, not a datasheet figure.
pub const ONE_SHOT_PAGES_MAX: u32 = 4;

fn one_shot_pages_default() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlashConfig {
    pub channels: u32,
    pub packages_per_channel: u32,
    pub dies_per_package: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size_bytes: u32,
    pub oob_size_bytes: u32,
    /// Array-to-register time of one (multi-plane) page read.
    pub read_latency_us: f64,
    /// Register-to-array time of one (multi-plane) page program; with one-shot programs on
    /// (`one_shot_pages` > 1), the time of one word-line program, whatever its page count.
    pub program_latency_us: f64,
    /// Block erase time (multi-plane erase takes the same time).
    pub erase_latency_us: f64,
    /// Optional per-page-type read latencies (LSB, CSB, MSB...): page `p` of a block uses
    /// entry `p % len`. Replaces `read_latency_us` when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_latency_by_page_type_us: Option<Vec<f64>>,
    /// Optional per-page-type program latencies, as above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_latency_by_page_type_us: Option<Vec<f64>>,
    /// Data rate of one channel bus; page data and spare bytes both cross it.
    pub channel_rate_mb_s: f64,
    /// Command and address cycles that occupy the bus before each transfer.
    pub command_overhead_ns: u64,
    /// Program/erase cycles a block survives; the erase that would exceed it fails.
    pub endurance_pe_cycles: u32,
    /// Probability that a page program fails (the block turns bad).
    #[serde(default)]
    pub program_fail_probability: f64,
    /// Probability that a block erase fails (the block turns bad).
    #[serde(default)]
    pub erase_fail_probability: f64,
    /// Media errors, ECC and read-retry (`[flash.media]`, off by default; `media.rs`).
    #[serde(default)]
    pub media: MediaConfig,
    /// Pages of a word line programmed in one operation (one-shot programming of 3D TLC: the
    /// controller transfers the word line's LSB, CSB and MSB pages, the die programs them in
    /// one `program_latency_us`). 1 (the default) turns it off; a program may then cover
    /// only one page per plane. Must divide `pages_per_block`, at most `ONE_SHOT_PAGES_MAX`.
    /// Not serialized while 1, so configurations without it read and print as before.
    #[serde(default = "one_shot_pages_default", skip_serializing_if = "is_one")]
    pub one_shot_pages: u32,
}

impl FlashConfig {
    /// Story: a preset with `flash.erase_latency_us = 1e300` passed validation and panicked
    /// with "simulated time overflow" deep in the backbone. Timing fields now have ranges.
    fn validate_timing_ranges(&self) -> Result<(), ConfigError> {
        let tables = [
            &self.read_latency_by_page_type_us,
            &self.program_latency_by_page_type_us,
        ];
        let latencies = [
            ("flash.read_latency_us", self.read_latency_us),
            ("flash.program_latency_us", self.program_latency_us),
            ("flash.erase_latency_us", self.erase_latency_us),
        ]
        .into_iter()
        .chain(
            tables
                .into_iter()
                .zip([
                    "flash.read_latency_by_page_type_us",
                    "flash.program_latency_by_page_type_us",
                ])
                .flat_map(|(t, f)| t.iter().flatten().map(move |&v| (f, v))),
        );
        for (field, v) in latencies {
            if v > OP_LATENCY_US_MAX {
                return Err(invalid(
                    field,
                    format!("must be at most {OP_LATENCY_US_MAX} us (one second), got {v}"),
                ));
            }
        }
        if self.channel_rate_mb_s < CHANNEL_RATE_MB_S_MIN {
            return Err(invalid(
                "flash.channel_rate_mb_s",
                format!(
                    "must be at least {CHANNEL_RATE_MB_S_MIN} MB/s, got {}",
                    self.channel_rate_mb_s
                ),
            ));
        }
        if self.command_overhead_ns > COMMAND_OVERHEAD_NS_MAX {
            return Err(invalid(
                "flash.command_overhead_ns",
                format!(
                    "must be at most {COMMAND_OVERHEAD_NS_MAX} ns, got {}",
                    self.command_overhead_ns
                ),
            ));
        }
        Ok(())
    }

    /// `one_shot_pages`: 1 to `ONE_SHOT_PAGES_MAX`, dividing `pages_per_block` (a block is
    /// whole word lines); a one-shot program takes one tPROG, so a per-page-type program
    /// table (which times each page's own program) cannot go with it.
    fn validate_one_shot(&self) -> Result<(), ConfigError> {
        let k = self.one_shot_pages;
        if !(1..=ONE_SHOT_PAGES_MAX).contains(&k) {
            return Err(invalid(
                "flash.one_shot_pages",
                format!("must be within 1..={ONE_SHOT_PAGES_MAX}, got {k}"),
            ));
        }
        if !self.pages_per_block.is_multiple_of(k) {
            return Err(invalid(
                "flash.one_shot_pages",
                format!(
                    "must divide flash.pages_per_block ({}) into whole word lines, got {k}",
                    self.pages_per_block
                ),
            ));
        }
        if k > 1 && self.program_latency_by_page_type_us.is_some() {
            return Err(invalid(
                "flash.one_shot_pages",
                "a one-shot program takes one flash.program_latency_us for the whole word \
                 line; remove flash.program_latency_by_page_type_us or set one_shot_pages = 1",
            ));
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = [
            ("flash.channels", self.channels),
            ("flash.packages_per_channel", self.packages_per_channel),
            ("flash.dies_per_package", self.dies_per_package),
            ("flash.planes_per_die", self.planes_per_die),
            ("flash.blocks_per_plane", self.blocks_per_plane),
            ("flash.pages_per_block", self.pages_per_block),
            ("flash.page_size_bytes", self.page_size_bytes),
            ("flash.endurance_pe_cycles", self.endurance_pe_cycles),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err(invalid(field, "must be greater than zero"));
            }
        }
        if self.planes_per_die > PLANES_PER_DIE_MAX {
            return Err(invalid(
                "flash.planes_per_die",
                format!("at most {PLANES_PER_DIE_MAX} planes per die are supported"),
            ));
        }
        if self.pages_per_block > 1 << 16 {
            return Err(invalid(
                "flash.pages_per_block",
                "at most 65536 pages per block",
            ));
        }
        if self.oob_size_bytes < crate::store::OOB_BYTES_MIN {
            return Err(invalid(
                "flash.oob_size_bytes",
                format!(
                    "must hold the {}-byte spare-area record",
                    crate::store::OOB_BYTES_MIN
                ),
            ));
        }
        let dies = u64::from(self.channels)
            * u64::from(self.packages_per_channel)
            * u64::from(self.dies_per_package);
        if dies > 1 << 20 {
            return Err(invalid("flash.channels", "more than 2^20 dies in total"));
        }
        let pages = dies
            * u64::from(self.planes_per_die)
            * u64::from(self.blocks_per_plane)
            * u64::from(self.pages_per_block);
        if pages > 1 << 40 {
            return Err(invalid(
                "flash.blocks_per_plane",
                "more than 2^40 pages in total",
            ));
        }
        for (field, v) in [
            ("flash.read_latency_us", self.read_latency_us),
            ("flash.program_latency_us", self.program_latency_us),
            ("flash.erase_latency_us", self.erase_latency_us),
            ("flash.channel_rate_mb_s", self.channel_rate_mb_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(
                    field,
                    format!("must be a positive number, got {v}"),
                ));
            }
        }
        for (field, table) in [
            (
                "flash.read_latency_by_page_type_us",
                &self.read_latency_by_page_type_us,
            ),
            (
                "flash.program_latency_by_page_type_us",
                &self.program_latency_by_page_type_us,
            ),
        ] {
            if let Some(t) = table {
                if t.is_empty() || t.len() > 4 {
                    return Err(invalid(field, "must list 1 to 4 page types (SLC..QLC)"));
                }
                if t.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
                    return Err(invalid(field, "every latency must be a positive number"));
                }
            }
        }
        self.validate_timing_ranges()?;
        for (field, p) in [
            (
                "flash.program_fail_probability",
                self.program_fail_probability,
            ),
            ("flash.erase_fail_probability", self.erase_fail_probability),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(invalid(field, format!("must be within 0..=1, got {p}")));
            }
        }
        self.validate_one_shot()?;
        self.media.validate(self.page_size_bytes)?;
        if self.media.initial_pe_cycles >= self.endurance_pe_cycles {
            return Err(invalid(
                "flash.media.initial_pe_cycles",
                format!(
                    "must be below flash.endurance_pe_cycles ({}), got {}",
                    self.endurance_pe_cycles, self.media.initial_pe_cycles
                ),
            ));
        }
        Ok(())
    }
}
