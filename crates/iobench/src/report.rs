//! The result of an I/O benchmark (`nearflash io`): every figure of the measured phase, derived from the events
//! the run processed (counts and busy times), beside the analytic limits of the backbone and
//! the host link for comparison. Serialised to JSON and rendered as a terminal table.

use crate::driver::{PhaseResult, Snapshot};
use crate::interface::{FrontSnapshot, Interface};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_ftl::Device;
use nearflash_hw::link::DirectionStats;
use nearflash_nvme::NvmeConfig;
use nearflash_preset::Preset;
use nearflash_sim::LatencyHistogram;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct LatencyUs {
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
    pub min: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EraseCounts {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Utilization {
    pub channel: Vec<f64>,
    pub die: Vec<f64>,
    pub channel_mean: f64,
    pub die_mean: f64,
}

/// Closed-form ceilings of the backbone and the host link, for comparison only: every
/// measured figure comes from the simulated events.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyticLimits {
    /// All channel buses busy moving multi-plane page data (MB/s of page data).
    pub bus_read_bandwidth_mb_s: f64,
    /// All dies busy reading full multi-plane pages: tR + the register drain over the bus.
    pub die_read_bandwidth_mb_s: f64,
    /// min(bus, die): the backbone's sequential read ceiling.
    pub backbone_read_bandwidth_mb_s: f64,
    /// The PCIe link's payload ceiling in each direction after TLP overhead (`up`: device to
    /// host, read data; `down`: host to device, write data), MB/s; null when bare.
    pub link_up_payload_mb_s: Option<f64>,
    pub link_down_payload_mb_s: Option<f64>,
    /// The NVMe controller's command ceiling, one command per `controller_ns`; null when bare.
    pub controller_iops: Option<f64>,
    /// min(backbone, link up): the read ceiling of the whole path.
    pub read_bandwidth_mb_s: f64,
    /// Single-page reads: every die busy for tR + one page's transfer (IOPS), the backbone's.
    pub page_read_iops: f64,
    /// Multi-plane programs: every die busy for transfer + tPROG (MB/s of page data).
    pub program_bandwidth_mb_s: f64,
    /// min(program, link down): the write ceiling of the whole path.
    pub write_bandwidth_mb_s: f64,
}

impl AnalyticLimits {
    /// The limits of `dev` behind the front end `nvme` (none when bare).
    pub fn of(dev: &Device, nvme: Option<&NvmeConfig>) -> Self {
        let bb = dev.backbone();
        let geo = bb.geometry();
        let planes = geo.planes_per_die;
        let page = f64::from(geo.page_size_bytes);
        let dies = f64::from(geo.die_count());
        let channels = f64::from(geo.channels);
        let xfer_all_us = bb.transfer_time(planes).as_us_f64();
        let xfer_one_us = bb.transfer_time(1).as_us_f64();
        let t_r = bb.read_latency(0).as_us_f64();
        let t_prog = bb.program_latency(0).as_us_f64();
        let per_op_bytes = page * f64::from(planes);
        let bus = channels * per_op_bytes / xfer_all_us;
        let die = dies * per_op_bytes / (t_r + xfer_all_us);
        let backbone = bus.min(die);
        let program = (dies * per_op_bytes / (xfer_all_us + t_prog)).min(bus);
        // Both directions of a PCIe link run at the same rate.
        let link = nvme.map(|n| n.link.payload_mb_s());
        let limits = AnalyticLimits {
            bus_read_bandwidth_mb_s: bus,
            die_read_bandwidth_mb_s: die,
            backbone_read_bandwidth_mb_s: backbone,
            link_up_payload_mb_s: link,
            link_down_payload_mb_s: link,
            controller_iops: nvme.map(|n| 1e9 / n.controller_ns.max(1) as f64),
            read_bandwidth_mb_s: link.map_or(backbone, |l| backbone.min(l)),
            page_read_iops: (dies / ((t_r + xfer_one_us) * 1e-6))
                .min(channels / (xfer_one_us * 1e-6)),
            program_bandwidth_mb_s: program,
            write_bandwidth_mb_s: link.map_or(program, |l| program.min(l)),
        };
        assert!(limits.read_bandwidth_mb_s <= limits.backbone_read_bandwidth_mb_s);
        assert!(limits.write_bandwidth_mb_s <= limits.program_bandwidth_mb_s);
        limits
    }
}

/// One direction of the link over the measured phase.
#[derive(Clone, Debug, Serialize)]
pub struct LinkDirection {
    /// Share of the phase the direction was busy putting bytes on the wire.
    pub utilization: f64,
    /// Bytes on the wire: payload plus a header per TLP.
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    pub transfers: u64,
}

impl LinkDirection {
    fn of(start: &DirectionStats, end: &DirectionStats, dur_ns: u64) -> LinkDirection {
        assert!(end.busy_ns >= start.busy_ns && end.wire_bytes >= start.wire_bytes);
        LinkDirection {
            utilization: (end.busy_ns - start.busy_ns) as f64 / dur_ns.max(1) as f64,
            wire_bytes: end.wire_bytes - start.wire_bytes,
            payload_bytes: end.payload_bytes - start.payload_bytes,
            transfers: end.transfers - start.transfers,
        }
    }
}

/// The NVMe front end and its PCIe link over the measured phase (`--interface nvme`).
#[derive(Clone, Debug, Serialize)]
pub struct LinkReport {
    pub generation: u8,
    pub lanes: u32,
    pub max_payload_bytes: u32,
    /// Device to host: read data, completion entries, interrupts, command fetch requests.
    pub up: LinkDirection,
    /// Host to device: write data, commands, doorbells.
    pub down: LinkDirection,
    /// Share of the phase the controller's firmware was busy processing commands.
    pub controller_utilization: f64,
    pub commands: u64,
}

impl LinkReport {
    /// The host link over the measured phase, when the run has a front end.
    fn of_phase(m: &Measured, dur_ns: u64) -> Option<LinkReport> {
        match (m.nvme, &m.start.front, &m.end.front) {
            (Some(n), Some(fs), Some(fe)) => Some(LinkReport::of(n, fs, fe, dur_ns)),
            (None, None, None) => None,
            _ => unreachable!("a front end has a config and counters, or neither"),
        }
    }

    fn of(nvme: &NvmeConfig, s: &FrontSnapshot, e: &FrontSnapshot, dur_ns: u64) -> LinkReport {
        assert!(e.controller_busy_ns >= s.controller_busy_ns && e.commands >= s.commands);
        LinkReport {
            generation: nvme.link.generation,
            lanes: nvme.link.lanes,
            max_payload_bytes: nvme.link.max_payload_bytes,
            up: LinkDirection::of(&s.up, &e.up, dur_ns),
            down: LinkDirection::of(&s.down, &e.down, dur_ns),
            controller_utilization: (e.controller_busy_ns - s.controller_busy_ns) as f64
                / dur_ns.max(1) as f64,
            commands: e.commands - s.commands,
        }
    }

    fn rows(&self) -> Vec<(String, String)> {
        let gb = |b: u64| format!("{:.3}", b as f64 / 1e9);
        vec![
            (
                "link up / down utilization".into(),
                format!(
                    "{:.1}% / {:.1}% (PCIe {}.0 x{})",
                    100.0 * self.up.utilization,
                    100.0 * self.down.utilization,
                    self.generation,
                    self.lanes
                ),
            ),
            (
                "link wire bytes up / down".into(),
                format!(
                    "{} / {} GB",
                    gb(self.up.wire_bytes),
                    gb(self.down.wire_bytes)
                ),
            ),
            (
                "NVMe controller utilization (commands)".into(),
                format!(
                    "{:.1}% ({})",
                    100.0 * self.controller_utilization,
                    self.commands
                ),
            ),
        ]
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Precondition {
    pub requests: u64,
    pub bytes: u64,
    pub sim_s: f64,
    /// Idle time after the pass (one checkpoint interval or GC idle threshold, whichever is
    /// longer, then until the device is quiescent) so its background work is not measured.
    pub settle_sim_s: f64,
    pub wall_s: f64,
}

/// How fast the simulator ran, over one stretch of the command. Flash operations are counted
/// two ways: `plane_ops` are pages read or programmed and blocks erased, per plane (a
/// two-plane program is two); `die_ops` are operations a die executed (a two-plane program is
/// one).
#[derive(Clone, Debug, Serialize)]
pub struct Speed {
    pub wall_s: f64,
    pub sim_events: u64,
    pub events_per_wall_s: f64,
    pub plane_ops: u64,
    pub plane_ops_per_wall_s: f64,
    pub die_ops: u64,
    pub die_ops_per_wall_s: f64,
}

impl Speed {
    fn of(wall_s: f64, sim_events: u64, plane_ops: u64, die_ops: u64) -> Speed {
        let wall = wall_s.max(1e-9);
        Speed {
            wall_s,
            sim_events,
            events_per_wall_s: sim_events as f64 / wall,
            plane_ops,
            plane_ops_per_wall_s: plane_ops as f64 / wall,
            die_ops,
            die_ops_per_wall_s: die_ops as f64 / wall,
        }
    }
}

/// The simulator's speed over the measured phase and over the whole command (formatting,
/// preconditioning and settling included).
#[derive(Clone, Debug, Serialize)]
pub struct SpeedReport {
    pub measured: Speed,
    pub whole_command: Speed,
}

/// Every figure of a run. All but `wall_s`, `events_per_wall_s`, `speed` and `peak_rss_mb`
/// (which depend on the machine) are identical for the same seed and config.
#[derive(Clone, Debug, Serialize)]
pub struct IoReport {
    pub version: &'static str,
    pub preset: String,
    pub seed: u64,
    pub fidelity: &'static str,
    /// The path from the host to the FTL: `nvme` (front end and PCIe link) or `bare`.
    pub interface: &'static str,
    pub workload: serde_json::Value,
    pub precondition: Option<Precondition>,
    /// Requests completed, successful or not.
    pub requests: u64,
    /// Requests that failed, by error kind. Failed requests are excluded from `iops`, the
    /// bandwidths and `latency_us`.
    pub requests_failed: u64,
    pub requests_failed_by_kind: std::collections::BTreeMap<String, u64>,
    pub first_failure: Option<String>,
    pub reads_verified: u64,
    pub sim_time_s: f64,
    pub iops: f64,
    pub read_bandwidth_mb_s: f64,
    pub write_bandwidth_mb_s: f64,
    /// Trims that succeeded (in `iops` and `latency_us` with the reads and writes) and the
    /// bytes they deallocated.
    pub trims: u64,
    pub trim_bytes: u64,
    /// Flushes that succeeded (counted in `requests`, `iops` and `latency_us`).
    pub flushes: u64,
    pub latency_us: LatencyUs,
    /// Flash pages programmed (host, read-modify-write, GC, checkpoints) per page of host
    /// data written; null when the phase wrote nothing.
    pub waf: Option<f64>,
    pub gc_runs: u64,
    pub gc_pages_copied: u64,
    pub wear_leveling_runs: u64,
    pub checkpoints_written: u64,
    /// Longest time one mapping checkpoint of the phase took (first program to last).
    pub checkpoint_ms_max: f64,
    pub erase_count: EraseCounts,
    pub utilization: Utilization,
    /// Page reads + page programs + block erases of the phase, per plane, GC and checkpoints
    /// included.
    pub flash_ops: u64,
    /// Operations the dies executed in the phase (a multi-plane operation is one).
    pub flash_die_ops: u64,
    pub flash_page_reads: u64,
    pub flash_page_programs: u64,
    pub flash_block_erases: u64,
    /// Media errors, ECC and read-retry over the whole run (preconditioning included); null
    /// when `[flash.media]` is off.
    pub media: Option<MediaReport>,
    /// The SLC write cache (`[ftl.slc_cache]`); left out of the JSON when it is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcReport>,
    /// The cached mapping table (`ftl.mapping_cache_bytes`, DFTL) over the phase; left out
    /// of the JSON while the whole table is in DRAM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_cache: Option<MappingCacheReport>,
    /// Flexible Data Placement (`[fdp]`) over the phase: bytes and WAF per handle; left out
    /// of the JSON while it is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp: Option<FdpReport>,
    /// The NVMe front end and its link over the phase; null when bare.
    pub link: Option<LinkReport>,
    pub mapping_table_bytes: u64,
    pub scratchpad_bytes: u64,
    pub logical_capacity_bytes: u64,
    pub analytic_limits: AnalyticLimits,
    pub sim_events: u64,
    pub trace_hash: String,
    pub wall_s: f64,
    pub events_per_wall_s: f64,
    pub speed: SpeedReport,
    pub peak_rss_mb: f64,
}

/// What the ECC and read-retry did (`flash.media`), whole run.
#[derive(Clone, Debug, Serialize)]
pub struct MediaReport {
    pub codewords_corrected: u64,
    pub bits_corrected: u64,
    /// Element `s`: reads that went on to retry step `s + 1`.
    pub read_retries_by_step: Vec<u64>,
    /// Flash page reads left uncorrectable after the last retry step.
    pub uncorrectable_page_reads: u64,
    /// Host reads (per page group touched) and partial writes failed by them.
    pub uncorrectable_requests: u64,
    pub blocks_retired: u64,
}

impl MediaReport {
    fn of(dev: &Device) -> Option<Self> {
        let m = dev.backbone().media_stats()?;
        Some(MediaReport {
            codewords_corrected: m.codewords_corrected,
            bits_corrected: m.bits_corrected,
            read_retries_by_step: m.read_retries_by_step.clone(),
            uncorrectable_page_reads: m.uncorrectable_page_reads,
            uncorrectable_requests: dev.stats().uncorrectable_reads,
            blocks_retired: dev.stats().media_blocks_retired,
        })
    }
}

/// What the cached mapping table did in the measured phase.
#[derive(Clone, Debug, Serialize)]
pub struct MappingCacheReport {
    /// Translation units the cache holds, and the table's translation units on flash.
    pub capacity_units: u64,
    pub translation_units: u64,
    /// Host lookups over the phase: hit rate, hits, misses.
    pub hit_rate: f64,
    pub hits: u64,
    pub misses: u64,
    /// Loads to take a mapping change (GC copies, updates to an evicted translation unit).
    pub update_loads: u64,
    /// Translation units read from flash, and written back (dirty evictions); their pages
    /// are in `flash_page_reads` / `flash_page_programs` and the WAF.
    pub translation_reads: u64,
    pub translation_writes: u64,
}

impl MappingCacheReport {
    fn of(m: &Measured) -> Option<Self> {
        let (s, e) = (
            m.start.ftl.mapping_cache.as_ref()?,
            m.end.ftl.mapping_cache.as_ref()?,
        );
        let (hits, misses) = (e.hits - s.hits, e.misses - s.misses);
        Some(MappingCacheReport {
            capacity_units: e.capacity_units,
            translation_units: m.device.layout().translation_units(),
            hit_rate: if hits + misses == 0 {
                1.0
            } else {
                hits as f64 / (hits + misses) as f64
            },
            hits,
            misses,
            update_loads: e.update_loads - s.update_loads,
            translation_reads: e.translation_reads - s.translation_reads,
            translation_writes: e.translation_writes - s.translation_writes,
        })
    }

    fn rows(&self) -> Vec<(String, String)> {
        vec![
            (
                "mapping cache: translation units cached / on flash".into(),
                format!("{} / {}", self.capacity_units, self.translation_units),
            ),
            (
                "mapping cache: hit rate (hits / misses)".into(),
                format!(
                    "{:.1}% ({} / {})",
                    self.hit_rate * 100.0,
                    self.hits,
                    self.misses
                ),
            ),
            (
                "mapping cache: translation reads / writes (update loads)".into(),
                format!(
                    "{} / {} ({})",
                    self.translation_reads, self.translation_writes, self.update_loads
                ),
            ),
        ]
    }
}

/// What Flexible Data Placement's statistics counted in the measured phase (the FDP
/// Statistics log's counters, and each handle's).
#[derive(Clone, Debug, Serialize)]
pub struct FdpReport {
    pub host_bytes_written: u64,
    /// Host and GC programs with their filler, and mapping checkpoints.
    pub media_bytes_written: u64,
    pub media_bytes_erased: u64,
    /// Media bytes per host byte (null if the host wrote nothing).
    pub waf: Option<f64>,
    /// How the host placed its writes (null: no directives, every write on handle 0).
    pub placement: Option<String>,
    /// Per handle; the handles the host used are those with host bytes.
    pub handles: Vec<FdpHandleReport>,
    /// FDP events logged over the whole run (host events, controller events).
    pub host_events: usize,
    pub controller_events: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct FdpHandleReport {
    pub host_bytes_written: u64,
    /// Its units programmed by the host or GC, and the filler of its own superblocks.
    pub media_bytes_written: u64,
    pub gc_bytes_copied: u64,
    pub waf: Option<f64>,
}

impl FdpReport {
    fn of(m: &Measured) -> Option<Self> {
        let (s, e) = (m.start.ftl.fdp.as_ref()?, m.end.ftl.fdp.as_ref()?);
        let waf = |host: u64, media: u64| (host > 0).then(|| media as f64 / host as f64);
        let handles = s
            .handles
            .iter()
            .zip(&e.handles)
            .map(|(a, b)| {
                let host = b.host_bytes_written - a.host_bytes_written;
                let media = b.media_bytes_written - a.media_bytes_written;
                FdpHandleReport {
                    host_bytes_written: host,
                    media_bytes_written: media,
                    gc_bytes_copied: b.gc_bytes_copied - a.gc_bytes_copied,
                    waf: waf(host, media),
                }
            })
            .collect();
        let host = e.host_bytes_written - s.host_bytes_written;
        let media = e.media_bytes_written - s.media_bytes_written;
        Some(FdpReport {
            host_bytes_written: host,
            media_bytes_written: media,
            media_bytes_erased: e.media_bytes_erased - s.media_bytes_erased,
            waf: waf(host, media),
            placement: m.placement.clone(),
            handles,
            host_events: m.device.fdp_events(false).map_or(0, |v| v.len()),
            controller_events: m.device.fdp_events(true).map_or(0, |v| v.len()),
        })
    }

    fn rows(&self) -> Vec<(String, String)> {
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        let waf = |w: Option<f64>| w.map_or("-".into(), |w| format!("{w:.2}"));
        let mut rows = vec![(
            "FDP: host / media MB written (WAF)".into(),
            format!(
                "{} / {} ({})",
                mb(self.host_bytes_written),
                mb(self.media_bytes_written),
                waf(self.waf)
            ),
        )];
        rows.push((
            "FDP placement by the host".into(),
            self.placement
                .clone()
                .unwrap_or_else(|| "none (every write on handle 0)".into()),
        ));
        for (i, h) in self.handles.iter().enumerate() {
            if h.media_bytes_written == 0 {
                continue;
            }
            rows.push((
                format!("FDP handle {i}: host / media / GC-copied MB (WAF)"),
                format!(
                    "{} / {} / {} ({})",
                    mb(h.host_bytes_written),
                    mb(h.media_bytes_written),
                    mb(h.gc_bytes_copied),
                    waf(h.waf)
                ),
            ));
        }
        rows.push((
            "FDP events logged: host / controller".into(),
            format!("{} / {}", self.host_events, self.controller_events),
        ));
        rows
    }
}

/// What the SLC write cache did in the measured phase, and its state at the phase's end.
#[derive(Clone, Debug, Serialize)]
pub struct SlcReport {
    /// Host data programmed into SLC-mode superblocks, and straight into native (TLC) ones
    /// because the cache was full (page-group bytes: a partial write counts its group).
    pub slc_write_bytes: u64,
    pub tlc_direct_write_bytes: u64,
    /// Folds (GC runs with an SLC victim) and the flash pages they copied into TLC.
    pub fold_runs: u64,
    pub fold_pages: u64,
    /// At the end of the phase: host data held in SLC, SLC-mode superblocks in use, and the
    /// cache's size then (static + dynamic).
    pub occupancy_bytes: u64,
    pub occupancy_superblocks: u32,
    pub capacity_bytes: u64,
    /// Most SLC-mode superblocks in use at once, whole run.
    pub superblocks_peak: u32,
}

impl SlcReport {
    fn of(m: &Measured) -> Option<Self> {
        let (s, e) = (m.start.ftl.slc.as_ref()?, m.end.ftl.slc.as_ref()?);
        let occ = m.device.slc_occupancy()?;
        Some(SlcReport {
            slc_write_bytes: e.slc_write_bytes - s.slc_write_bytes,
            tlc_direct_write_bytes: e.tlc_direct_write_bytes - s.tlc_direct_write_bytes,
            fold_runs: e.fold_runs - s.fold_runs,
            fold_pages: e.fold_pages - s.fold_pages,
            occupancy_bytes: occ.valid_bytes,
            occupancy_superblocks: occ.superblocks,
            capacity_bytes: occ.capacity_bytes,
            superblocks_peak: e.superblocks_peak,
        })
    }

    fn rows(&self) -> Vec<(String, String)> {
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        vec![
            (
                "SLC cache: written to SLC / straight to TLC".into(),
                format!(
                    "{} / {} MB",
                    mb(self.slc_write_bytes),
                    mb(self.tlc_direct_write_bytes)
                ),
            ),
            (
                "SLC cache: folds / pages folded".into(),
                format!("{} / {}", self.fold_runs, self.fold_pages),
            ),
            (
                "SLC cache: held at end / cache size (superblocks, peak)".into(),
                format!(
                    "{} / {} MB ({}, {})",
                    mb(self.occupancy_bytes),
                    mb(self.capacity_bytes),
                    self.occupancy_superblocks,
                    self.superblocks_peak
                ),
            ),
        ]
    }
}

pub struct Measured<'a> {
    pub preset: &'a Preset,
    pub seed: u64,
    pub fidelity: &'static str,
    pub interface: Interface,
    /// The front end's config, when there is one.
    pub nvme: Option<&'a NvmeConfig>,
    pub workload: serde_json::Value,
    pub precondition: Option<Precondition>,
    pub phase: &'a PhaseResult,
    pub start: &'a Snapshot,
    pub end: &'a Snapshot,
    pub device: &'a Device,
    pub trace_hash: String,
    pub wall_s: f64,
    /// Wall time of the measured phase alone.
    pub measured_wall_s: f64,
    pub total_events: u64,
    pub peak_rss_mb: f64,
    /// How the host spread its writes over placement handles (`PlacementSpread::describe`,
    /// fio's `fdp_pli`); `None`: no write carried a directive.
    pub placement: Option<String>,
}

fn diff(a: &[u64], b: &[u64], dur_ns: u64) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| (y - x) as f64 / dur_ns.max(1) as f64)
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl EraseCounts {
    /// The device's erase counts over its blocks: least, mean and most.
    fn of(device: &Device) -> EraseCounts {
        let (min, mean, max) = device.erase_count_summary();
        EraseCounts { min, mean, max }
    }
}

impl LatencyUs {
    /// The phase's latency quantiles, mean and extremes in microseconds.
    fn of(lat: &LatencyHistogram) -> LatencyUs {
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencyUs {
            p50: us(lat.quantile_ns(0.5)),
            p99: us(lat.quantile_ns(0.99)),
            p999: us(lat.quantile_ns(0.999)),
            max: us(lat.max_ns()),
            mean: lat.mean_ns() / 1000.0,
            min: us(if lat.count() == 0 { 0 } else { lat.min_ns() }),
        }
    }
}

impl Utilization {
    /// Each channel's and die's busy share of the phase (between two snapshots), and means.
    fn of(s: &Snapshot, e: &Snapshot, dur_ns: u64) -> Utilization {
        let channel = diff(&s.channel_busy_ns, &e.channel_busy_ns, dur_ns);
        let die = diff(&s.die_busy_ns, &e.die_busy_ns, dur_ns);
        Utilization {
            channel_mean: mean(&channel),
            die_mean: mean(&die),
            channel,
            die,
        }
    }
}

impl SpeedReport {
    /// The simulator's speed over the measured phase (`flash_ops` in it) and the whole command.
    fn of(m: &Measured, flash_ops: u64) -> SpeedReport {
        let (s, e) = (m.start, m.end);
        SpeedReport {
            measured: Speed::of(
                m.measured_wall_s,
                e.events - s.events,
                flash_ops,
                e.die_ops - s.die_ops,
            ),
            whole_command: Speed::of(
                m.wall_s,
                m.total_events,
                e.page_reads + e.page_programs + e.block_erases,
                e.die_ops,
            ),
        }
    }
}

impl IoReport {
    pub fn build(m: Measured) -> IoReport {
        let p = m.phase;
        let dur_ns = p.end.since(p.start).as_ns();
        let secs = dur_ns as f64 * 1e-9;
        let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let (s, e) = (m.start, m.end);
        let page_reads = e.page_reads - s.page_reads;
        let page_programs = e.page_programs - s.page_programs;
        let block_erases = e.block_erases - s.block_erases;
        let flash_ops = page_reads + page_programs + block_erases;
        let page_bytes = u64::from(m.device.backbone().geometry().page_size_bytes);
        let host_pages = p.write_bytes as f64 / page_bytes as f64;
        let speed = SpeedReport::of(&m, flash_ops);
        let slc_cache = SlcReport::of(&m);
        let mapping_cache = MappingCacheReport::of(&m);
        let fdp = FdpReport::of(&m);
        let link = LinkReport::of_phase(&m, dur_ns);
        IoReport {
            version: env!("CARGO_PKG_VERSION"),
            preset: m.preset.name.clone(),
            seed: m.seed,
            fidelity: m.fidelity,
            interface: m.interface.name(),
            workload: m.workload,
            precondition: m.precondition,
            requests: p.requests,
            requests_failed: p.failed,
            requests_failed_by_kind: p.failed_by_kind.clone(),
            first_failure: p.first_failure.clone(),
            reads_verified: p.reads_verified,
            sim_time_s: secs,
            iops: per_s((p.requests - p.failed) as f64),
            read_bandwidth_mb_s: per_s(p.read_bytes as f64) / 1e6,
            write_bandwidth_mb_s: per_s(p.write_bytes as f64) / 1e6,
            trims: p.trims,
            trim_bytes: p.trim_bytes,
            flushes: p.flushes,
            latency_us: LatencyUs::of(&p.latency),
            waf: (host_pages > 0.0).then(|| page_programs as f64 / host_pages),
            gc_runs: e.ftl.gc_runs - s.ftl.gc_runs,
            gc_pages_copied: e.ftl.gc_pages_copied - s.ftl.gc_pages_copied,
            wear_leveling_runs: e.ftl.wear_leveling_runs - s.ftl.wear_leveling_runs,
            checkpoints_written: e.ftl.checkpoints_written - s.ftl.checkpoints_written,
            // The maximum is over the whole run: checkpoints of the phase can only raise it,
            // and a phase without one reports the run's (preconditioning's) worst.
            checkpoint_ms_max: e.ftl.checkpoint_ns_max as f64 / 1e6,
            erase_count: EraseCounts::of(m.device),
            utilization: Utilization::of(s, e, dur_ns),
            flash_ops,
            flash_die_ops: e.die_ops - s.die_ops,
            flash_page_reads: page_reads,
            flash_page_programs: page_programs,
            flash_block_erases: block_erases,
            media: MediaReport::of(m.device),
            slc_cache,
            mapping_cache,
            fdp,
            link,
            mapping_table_bytes: m.device.mapping().table_bytes(),
            scratchpad_bytes: m.preset.ftl.scratchpad_bytes,
            logical_capacity_bytes: m.device.logical_bytes(),
            analytic_limits: AnalyticLimits::of(m.device, m.nvme),
            sim_events: m.total_events,
            trace_hash: m.trace_hash,
            wall_s: m.wall_s,
            events_per_wall_s: m.total_events as f64 / m.wall_s.max(1e-9),
            speed,
            peak_rss_mb: m.peak_rss_mb,
        }
    }

    /// The terminal rendering.
    pub fn table(&self) -> String {
        let mut t = Table::new();
        t.load_preset(UTF8_BORDERS_ONLY);
        t.set_header(vec!["figure", "value"]);
        let mut rows = self.workload_rows();
        rows.extend(self.flash_rows());
        rows.extend(self.section_rows());
        rows.extend(self.speed_rows());
        if let Some(row) = trace_row(&self.workload) {
            rows.insert(0, row);
        }
        for (k, v) in rows {
            t.add_row(vec![k, v]);
        }
        t.to_string()
    }

    /// The table's first rows: what ran, and what the host saw (requests, bandwidth, latency).
    fn workload_rows(&self) -> Vec<(String, String)> {
        let f1 = |x: f64| format!("{x:.1}");
        let lim = &self.analytic_limits;
        vec![
            (
                "preset / seed / fidelity / interface".into(),
                format!(
                    "{} / {} / {} / {}",
                    self.preset, self.seed, self.fidelity, self.interface
                ),
            ),
            (
                "requests (failed)".into(),
                format!("{} ({})", self.requests, self.requests_failed),
            ),
            (
                "failed by kind (not in IOPS, MB/s, latency)".into(),
                if self.requests_failed_by_kind.is_empty() {
                    "-".into()
                } else {
                    self.requests_failed_by_kind
                        .iter()
                        .map(|(k, n)| format!("{k}: {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            ),
            ("simulated time".into(), format!("{:.3} s", self.sim_time_s)),
            ("IOPS".into(), format!("{:.0}", self.iops)),
            (
                "read / write bandwidth".into(),
                format!(
                    "{} / {} MB/s",
                    f1(self.read_bandwidth_mb_s),
                    f1(self.write_bandwidth_mb_s)
                ),
            ),
            (
                "read limit (analytic)".into(),
                format!(
                    "{} MB/s (bus {}, dies {}, link {}); {:.0} page-read IOPS",
                    f1(lim.read_bandwidth_mb_s),
                    f1(lim.bus_read_bandwidth_mb_s),
                    f1(lim.die_read_bandwidth_mb_s),
                    lim.link_up_payload_mb_s.map_or("-".into(), f1),
                    lim.page_read_iops
                ),
            ),
            (
                "latency p50 / p99 / p99.9 / max".into(),
                format!(
                    "{} / {} / {} / {} us",
                    f1(self.latency_us.p50),
                    f1(self.latency_us.p99),
                    f1(self.latency_us.p999),
                    f1(self.latency_us.max)
                ),
            ),
        ]
    }

    /// The flash translation layer's and the flash's rows: WAF, GC, wear, utilization, sizes.
    fn flash_rows(&self) -> Vec<(String, String)> {
        vec![
            (
                "WAF".into(),
                self.waf.map_or("-".into(), |w| format!("{w:.2}")),
            ),
            (
                "GC runs / pages copied".into(),
                format!("{} / {}", self.gc_runs, self.gc_pages_copied),
            ),
            (
                "checkpoints written (longest)".into(),
                format!(
                    "{} ({:.1} ms)",
                    self.checkpoints_written, self.checkpoint_ms_max
                ),
            ),
            (
                "erase count min / mean / max".into(),
                format!(
                    "{} / {:.2} / {}",
                    self.erase_count.min, self.erase_count.mean, self.erase_count.max
                ),
            ),
            (
                "channel / die utilization (mean)".into(),
                format!(
                    "{:.1}% / {:.1}%",
                    100.0 * self.utilization.channel_mean,
                    100.0 * self.utilization.die_mean
                ),
            ),
            (
                "flash ops per plane (reads + programs + erases); die ops".into(),
                format!(
                    "{} ({} + {} + {}); {}",
                    self.flash_ops,
                    self.flash_page_reads,
                    self.flash_page_programs,
                    self.flash_block_erases,
                    self.flash_die_ops
                ),
            ),
            (
                "mapping table / scratchpad".into(),
                format!(
                    "{:.2} MiB / {:.2} MiB",
                    self.mapping_table_bytes as f64 / 1048576.0,
                    self.scratchpad_bytes as f64 / 1048576.0
                ),
            ),
        ]
    }

    /// The optional sections, in order: media, SLC cache, mapping cache, FDP, host link.
    fn section_rows(&self) -> Vec<(String, String)> {
        let mut rows = Vec::new();
        if let Some(m) = &self.media {
            rows.extend(m.rows());
        }
        if let Some(c) = &self.slc_cache {
            rows.extend(c.rows());
        }
        if let Some(c) = &self.mapping_cache {
            rows.extend(c.rows());
        }
        if let Some(f) = &self.fdp {
            rows.extend(f.rows());
        }
        if let Some(l) = &self.link {
            rows.extend(l.rows());
        }
        rows
    }

    /// The table's last rows: how fast the simulator ran, its memory, and the trace hash.
    fn speed_rows(&self) -> Vec<(String, String)> {
        vec![
            (
                "wall time (precondition)".into(),
                format!(
                    "{:.2} s ({})",
                    self.wall_s,
                    self.precondition
                        .as_ref()
                        .map_or("none".into(), |p| format!("{:.2} s", p.wall_s))
                ),
            ),
            (
                "per wall s, measured: events / plane ops / die ops".into(),
                format!(
                    "{:.2} M / {:.2} M / {:.2} M",
                    self.speed.measured.events_per_wall_s / 1e6,
                    self.speed.measured.plane_ops_per_wall_s / 1e6,
                    self.speed.measured.die_ops_per_wall_s / 1e6
                ),
            ),
            (
                "per wall s, whole command: events / plane ops / die ops".into(),
                format!(
                    "{:.2} M / {:.2} M / {:.2} M",
                    self.speed.whole_command.events_per_wall_s / 1e6,
                    self.speed.whole_command.plane_ops_per_wall_s / 1e6,
                    self.speed.whole_command.die_ops_per_wall_s / 1e6
                ),
            ),
            ("peak RSS".into(), format!("{:.0} MB", self.peak_rss_mb)),
            ("trace hash".into(), self.trace_hash.clone()),
        ]
    }
}

/// A trace replay's input in one row: format, requests, and what reading skipped.
fn trace_row(workload: &serde_json::Value) -> Option<(String, String)> {
    let format = workload.get("format")?.as_str()?;
    let read = workload.get("read")?;
    let n = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    let mut text = format!("{format}, {} requests replayed", n(workload, "requests"));
    for (what, count) in [
        ("trims (deallocate)", n(workload, "trims")),
        ("syncs (flush)", n(workload, "flushes")),
        ("bad lines skipped", n(read, "bad_lines")),
        ("other devices' requests", n(read, "filtered_out")),
        ("reordered", n(read, "reordered")),
        ("offsets folded", n(workload, "folded_offsets")),
    ] {
        if count > 0 {
            text += &format!("; {count} {what}");
        }
    }
    if let Some(ignored) = read.get("ignored").and_then(|i| i.as_object()) {
        for (kind, count) in ignored {
            text += &format!("; {count} {kind} ignored");
        }
    }
    Some(("trace".into(), text))
}

impl MediaReport {
    /// Table rows, whole run.
    fn rows(&self) -> Vec<(String, String)> {
        let steps: Vec<String> = self
            .read_retries_by_step
            .iter()
            .map(u64::to_string)
            .collect();
        vec![
            (
                "media: codewords / bits corrected".into(),
                format!("{} / {}", self.codewords_corrected, self.bits_corrected),
            ),
            (
                "media: read retries by step".into(),
                format!("[{}]", steps.join(", ")),
            ),
            (
                "media: uncorrectable page reads (requests)".into(),
                format!(
                    "{} ({})",
                    self.uncorrectable_page_reads, self.uncorrectable_requests
                ),
            ),
            (
                "media: blocks retired for wear".into(),
                self.blocks_retired.to_string(),
            ),
        ]
    }
}
