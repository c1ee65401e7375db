//! Why data placement matters: one mixed hot/cold write workload (`workload`) run three ways
//! on the same flash —
//!
//! - `conventional`: the page-mapped drive, plain writes (`block`);
//! - `fdp`: the same drive with `[fdp]` on, each stream on its own placement handle (`block`);
//! - `zns`: the drive as a zoned namespace, placed by a host log-structured layer that cleans
//!   zones itself (`zoned`);
//!
//! each reporting user and media bytes, write amplification (host and device parts), copies,
//! erases, throughput and write latency in simulated time, after every written block has been
//! read back and checked against the reference map. Deterministic from the seed; every run is
//! driven by the one event loop under its watchdog.
//!
//! Bad parameters are a [`PlacementError::Param`] naming the field.

mod block;
pub mod workload;
mod zoned;

pub use workload::{Mismatch, Stream, UNIT_BYTES};
pub use zoned::{CLEAN_READS_MAX, CLEAN_TRIGGER_ZONES, RESERVE_ZONES};

use nearflash_flash::{FlashConfig, Geometry, NoStore};
use nearflash_ftl::zns::ZnsConfig;
use nearflash_ftl::{FtlConfig, IoError, MappingMode};
use nearflash_sim::{Sim, SimDuration};
use serde::{Deserialize, Serialize};
use thiserror::Error;
use workload::{Load, Shape};

/// No user write completing for this long is a stall: `nearflash_blockdev::load`'s default
/// (far above any GC- or cleaning-bound latency of the presets).
const STALL_LIMIT: SimDuration = SimDuration(60_000_000_000);

/// Most raw flash a run holds in memory (every mode runs functionally, to check the data).
pub const RAW_BYTES_MAX: u64 = 1 << 30;

/// How the streams are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Conventional,
    Fdp,
    Zns,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Conventional, Mode::Fdp, Mode::Zns];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Conventional => "conventional",
            Mode::Fdp => "fdp",
            Mode::Zns => "zns",
        }
    }

    /// `conventional`, `fdp`, `zns`, or `all` (the three in that order).
    pub fn parse_list(name: &str) -> Result<Vec<Mode>, PlacementError> {
        match name.to_ascii_lowercase().as_str() {
            "all" => Ok(Mode::ALL.to_vec()),
            "conventional" => Ok(vec![Mode::Conventional]),
            "fdp" => Ok(vec![Mode::Fdp]),
            "zns" => Ok(vec![Mode::Zns]),
            _ => Err(PlacementError::UnknownMode(name.to_string())),
        }
    }
}

/// The workload's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Share of the span the hot stream overwrites, percent. Default 12.5: the first eighth,
    /// docs/fdp.md's measured hot/cold workload.
    pub hot_fraction_percent: f64,
    /// Share of write requests the hot stream issues, percent. Default 75: three hot writes
    /// per cold one, as docs/fdp.md's.
    pub hot_write_percent: u64,
    /// Hot request size. Default 4 KiB (docs/fdp.md: random 4 KiB overwrites).
    pub hot_request_kib: u64,
    /// Cold request size. Default 16 KiB: docs/fdp.md measured that a cold stream writing
    /// 4 KiB at a time pads half of every program on a handle of its own.
    pub cold_request_kib: u64,
    /// User bytes written = passes × the span. Default 6: on test-min GC (and cleaning)
    /// runs from the second pass on, so five passes of steady state.
    pub passes: u64,
    /// Writes in flight. Default 8, docs/fdp.md's.
    pub queue_depth: u32,
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hot_fraction_percent: 12.5,
            hot_write_percent: 75,
            hot_request_kib: 4,
            cold_request_kib: 16,
            passes: 6,
            queue_depth: 8,
            seed: 1,
        }
    }
}

/// The drive every mode runs on: the preset's flash and firmware and its `[zns]` table.
#[derive(Clone, Debug)]
pub struct Drive {
    pub flash: FlashConfig,
    pub ftl: FtlConfig,
    pub zns: ZnsConfig,
}

#[derive(Debug, Error)]
pub enum PlacementError {
    #[error("unknown placement mode {0:?}: expected conventional, fdp, zns or all")]
    UnknownMode(String),
    #[error("placement parameter {field}: {reason}")]
    Param { field: &'static str, reason: String },
    #[error(transparent)]
    Config(#[from] nearflash_flash::ConfigError),
    #[error("the device failed a request: {0}")]
    Device(IoError),
    #[error(
        "unit {} read back wrong: expected version {}, got unit {} version {}",
        .0.unit, .0.expected_version, .0.got_unit, .0.got_version
    )]
    Verification(Mismatch),
    #[error(transparent)]
    Stall(#[from] nearflash_sim::Stall),
    #[error(
        "the host layer ran out of zones: {live_units} live units in {zones} zones of \
         {zone_units}, none free — appends smaller than a page row are padded to one, so the \
         zones hold less than their capacity (raise queue_depth or the request sizes)"
    )]
    HostOutOfSpace {
        zones: u32,
        live_units: u64,
        zone_units: u32,
    },
}

fn param(field: &'static str, reason: impl Into<String>) -> PlacementError {
    PlacementError::Param {
        field,
        reason: reason.into(),
    }
}

impl Drive {
    /// The drive of `mode`: page mapping for the block modes (FDP needs it, and the
    /// conventional drive uses it to be comparable); FDP with one handle per stream.
    fn for_mode(&self, mode: Mode) -> (FtlConfig, ZnsConfig) {
        let mut ftl = self.ftl.clone();
        let mut zns = self.zns.clone();
        ftl.mapping = MappingMode::Page;
        ftl.fdp.enabled = mode == Mode::Fdp;
        ftl.fdp.handles = STREAMS_U32;
        zns.enabled = mode == Mode::Zns;
        if mode == Mode::Zns {
            ftl.fdp.enabled = false;
        }
        (ftl, zns)
    }

    /// Logical bytes of the FDP drive, which holds the most write points back: every mode
    /// writes this span, so all three hold the same data on the same flash.
    fn span_bytes(&self) -> Result<u64, PlacementError> {
        let (ftl, _) = self.for_mode(Mode::Fdp);
        let mut sim: Sim<nearflash_ftl::Event> = Sim::new(0);
        let dev = nearflash_ftl::Device::format(&self.flash, &ftl, Box::new(NoStore), sim.queue())?;
        Ok(dev.logical_bytes())
    }
}

const STREAMS_U32: u32 = workload::STREAMS.len() as u32;

/// Zones the ZNS host keeps open per stream at most: its user zone and its copy zone, each
/// with the one whose last appends are still in flight.
const HOST_OPEN_ZONES_PER_STREAM: usize = 4;

/// A request size `kib` of `field` in units: a power of two from 4 KiB to the zone append
/// size limit (`zasl` bytes) that divides the zone (`zone_bytes`).
fn request_units(
    field: &'static str,
    kib: u64,
    zasl: u64,
    zone_bytes: u64,
) -> Result<u64, PlacementError> {
    let bytes = kib.saturating_mul(1024);
    if kib == 0 || !kib.is_power_of_two() || bytes < UNIT_BYTES || bytes > zasl {
        return Err(param(
            field,
            format!(
                "{kib} KiB: a request is a power of two from 4 KiB to the zone append \
                 size limit ({} KiB)",
                zasl / 1024
            ),
        ));
    }
    if !zone_bytes.is_multiple_of(bytes) {
        return Err(param(
            field,
            format!(
                "{kib} KiB does not divide the zone ({} KiB)",
                zone_bytes / 1024
            ),
        ));
    }
    Ok(bytes / UNIT_BYTES)
}

impl Params {
    /// Checks every field and sizes the workload on `drive`.
    pub fn shape(&self, drive: &Drive) -> Result<Shape, PlacementError> {
        self.check_mix(drive)?;
        let (ftl, zns) = drive.for_mode(Mode::Zns);
        let zoned =
            nearflash_ftl::zns::ZonedDevice::format(&drive.flash, &ftl, &zns, Box::new(NoStore))?;
        let zone_bytes = zoned.zone_bytes();
        let zasl = drive.zns.zone_append_size_limit_bytes;
        let hot_request_units =
            request_units("hot_request_kib", self.hot_request_kib, zasl, zone_bytes)?;
        let cold_request_units =
            request_units("cold_request_kib", self.cold_request_kib, zasl, zone_bytes)?;
        if !(1..=1000).contains(&self.passes) {
            return Err(param(
                "passes",
                format!("{} is not within 1-1000", self.passes),
            ));
        }
        if !(1..=256).contains(&self.queue_depth) {
            return Err(param(
                "queue_depth",
                format!("{} is not within 1-256", self.queue_depth),
            ));
        }
        let span_units = self.span_units(drive, &zoned)?;
        let (hot_units, cold_units) =
            self.regions_units(span_units, hot_request_units, cold_request_units)?;
        let span_units = hot_units + cold_units;
        Ok(Shape {
            span_units,
            hot_units,
            hot_request_units,
            cold_request_units,
            hot_write_percent: self.hot_write_percent,
            total_units: span_units * self.passes,
        })
    }

    /// Checks the hot/cold mix and that `drive` suits the comparison: no SLC cache, and
    /// flash small enough to hold in memory.
    fn check_mix(&self, drive: &Drive) -> Result<(), PlacementError> {
        if !(self.hot_fraction_percent.is_finite()
            && self.hot_fraction_percent > 0.0
            && self.hot_fraction_percent < 100.0)
        {
            return Err(param(
                "hot_fraction_percent",
                format!(
                    "{} is not between 0 and 100 (exclusive)",
                    self.hot_fraction_percent
                ),
            ));
        }
        if !(1..=99).contains(&self.hot_write_percent) {
            return Err(param(
                "hot_write_percent",
                format!("{} is not within 1-99", self.hot_write_percent),
            ));
        }
        if drive.ftl.slc_cache.enabled {
            return Err(param(
                "ftl.slc_cache.enabled",
                "the SLC cache mixes every stream's writes (and FDP refuses it); turn it off",
            ));
        }
        let raw = Geometry::from_config(&drive.flash).page_count()
            * u64::from(drive.flash.page_size_bytes);
        if raw > RAW_BYTES_MAX {
            return Err(param(
                "preset",
                format!(
                    "{} MiB of flash: every mode checks its data, so the flash is held in \
                     memory; at most {} MiB (use a smaller preset, e.g. test-min)",
                    raw >> 20,
                    RAW_BYTES_MAX >> 20
                ),
            ));
        }
        Ok(())
    }

    /// The hot and the cold region of `span_units`, each whole requests, and each with more
    /// requests than the queue depth.
    fn regions_units(
        &self,
        span_units: u64,
        hot_request_units: u64,
        cold_request_units: u64,
    ) -> Result<(u64, u64), PlacementError> {
        let qd = u64::from(self.queue_depth);
        let hot_units = ((span_units as f64 * self.hot_fraction_percent / 100.0)
            / hot_request_units as f64)
            .round() as u64
            * hot_request_units;
        let cold_units =
            span_units.saturating_sub(hot_units) / cold_request_units * cold_request_units;
        if hot_units / hot_request_units <= qd || cold_units / cold_request_units <= qd {
            return Err(param(
                "hot_fraction_percent",
                format!(
                    "{}% leaves the hot or the cold region fewer requests than the queue depth \
                     ({qd}) + 1 ({hot_units} and {cold_units} units)",
                    self.hot_fraction_percent
                ),
            ));
        }
        Ok((hot_units, cold_units))
    }

    fn span_units(
        &self,
        drive: &Drive,
        dev: &nearflash_ftl::zns::ZonedDevice,
    ) -> Result<u64, PlacementError> {
        let span_units = drive.span_bytes()? / UNIT_BYTES;
        // The host layer on zones needs spare zones beyond the span: its reserve, its
        // cleaning trigger, each stream's user zone and the one it fills behind, and each
        // stream's copy zone.
        let zone_units = dev.zones().zone_sectors() * nearflash_ftl::SECTOR_BYTES / UNIT_BYTES;
        let spare_needed = (CLEAN_TRIGGER_ZONES + 3 * workload::STREAMS.len() + 1) as u64;
        let zones = u64::from(dev.zones().count());
        if span_units + spare_needed * zone_units > zones * zone_units {
            return Err(param(
                "preset",
                format!(
                    "the span ({span_units} units) leaves the host fewer than {spare_needed} spare \
                     zones of {zones}"
                ),
            ));
        }
        let open_needed = HOST_OPEN_ZONES_PER_STREAM * workload::STREAMS.len();
        if (drive.zns.max_open_zones as usize) < open_needed
            || (drive.zns.max_active_zones as usize) < open_needed
        {
            return Err(param(
                "zns.max_open_zones",
                format!(
                    "the host keeps up to {HOST_OPEN_ZONES_PER_STREAM} zones per stream open (a \
                     user zone and a copy zone, each with the one whose last appends are in \
                     flight); {} open / {} active allowed",
                    drive.zns.max_open_zones, drive.zns.max_active_zones
                ),
            ));
        }
        Ok(span_units)
    }
}

/// What a mode's run counted (`ModeReport::new` derives the rest).
pub(crate) struct Counts {
    pub user_bytes: u64,
    pub host_copy_bytes: u64,
    pub device_write_bytes: u64,
    pub media_bytes: u64,
    pub copies_units: u64,
    pub erases: u64,
    pub zone_resets: u64,
    pub zones_cleaned: u64,
    pub appends_retried: u64,
    pub written_at: nearflash_sim::SimTime,
    pub units_verified: u64,
}

/// One mode's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModeReport {
    pub mode: Mode,
    /// Bytes the workload wrote.
    pub user_bytes: u64,
    /// Bytes the host layer copied while cleaning zones (ZNS; 0 otherwise).
    pub host_copy_bytes: u64,
    /// Bytes written to the device: user bytes + host copies.
    pub device_write_bytes: u64,
    /// Bytes the flash programmed (data, GC copies, filler, mapping checkpoints).
    pub media_bytes: u64,
    /// media / user = host WAF × device WAF.
    pub waf: f64,
    /// (user + host copies) / user.
    pub host_waf: f64,
    /// media / device writes.
    pub device_waf: f64,
    /// 4 KiB units copied: by the drive's GC (conventional, FDP) or by the host's cleaning (ZNS).
    pub copied_units: u64,
    pub block_erases: u64,
    pub zone_resets: u64,
    pub zones_cleaned: u64,
    /// Appends the host placed again because padding had filled their zone (ZNS).
    pub appends_retried: u64,
    pub writes: u64,
    /// Simulated time until the last user write completed.
    pub sim_time_s: f64,
    /// User MB/s (10^6 bytes) of simulated time.
    pub throughput_mb_s: f64,
    pub write_latency_us_p50: f64,
    pub write_latency_us_p99: f64,
    pub write_latency_us_p999: f64,
    pub write_latency_us_max: f64,
    /// Units read back and found as last written.
    pub units_verified: u64,
}

impl ModeReport {
    fn new(mode: Mode, load: &Load, c: Counts) -> ModeReport {
        assert!(c.user_bytes > 0 && c.device_write_bytes >= c.user_bytes);
        let secs = c.written_at.as_ns() as f64 / 1e9;
        let us = |q: f64| load.latency.quantile_ns(q) as f64 / 1e3;
        ModeReport {
            mode,
            user_bytes: c.user_bytes,
            host_copy_bytes: c.host_copy_bytes,
            device_write_bytes: c.device_write_bytes,
            media_bytes: c.media_bytes,
            waf: c.media_bytes as f64 / c.user_bytes as f64,
            host_waf: c.device_write_bytes as f64 / c.user_bytes as f64,
            device_waf: c.media_bytes as f64 / c.device_write_bytes as f64,
            copied_units: c.copies_units,
            block_erases: c.erases,
            zone_resets: c.zone_resets,
            zones_cleaned: c.zones_cleaned,
            appends_retried: c.appends_retried,
            writes: load.latency.count(),
            sim_time_s: secs,
            throughput_mb_s: if secs > 0.0 {
                c.user_bytes as f64 / 1e6 / secs
            } else {
                0.0
            },
            write_latency_us_p50: us(0.5),
            write_latency_us_p99: us(0.99),
            write_latency_us_p999: us(0.999),
            write_latency_us_max: load.latency.max_ns() as f64 / 1e3,
            units_verified: c.units_verified,
        }
    }
}

/// Runs the workload of `params` in each of `modes` on `drive`.
pub fn run(
    drive: &Drive,
    params: &Params,
    modes: &[Mode],
) -> Result<Vec<ModeReport>, PlacementError> {
    let shape = params.shape(drive)?;
    modes
        .iter()
        .map(|&mode| run_mode(drive, params, shape, mode))
        .collect()
}

fn run_mode(
    drive: &Drive,
    params: &Params,
    shape: Shape,
    mode: Mode,
) -> Result<ModeReport, PlacementError> {
    let (ftl, zns) = drive.for_mode(mode);
    let load = Load::new(shape);
    match mode {
        Mode::Conventional | Mode::Fdp => block::run(
            mode,
            &drive.flash,
            &ftl,
            load,
            params.queue_depth,
            params.seed,
        ),
        Mode::Zns => zoned::run(
            &drive.flash,
            &ftl,
            &zns,
            load,
            params.queue_depth,
            params.seed,
        ),
    }
}

#[cfg(test)]
mod tests;
