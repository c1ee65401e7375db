//! The result of an I/O benchmark (`nearflash io`): every figure of the measured phase, derived from the events
//! the run processed (counts and busy times), beside the analytic limits of the backbone and
//! the host link for comparison. Serialised to JSON and rendered as a terminal table.
//!
//! Here the report and the figures every run has; a file per optional section (`link`,
//! `media`, `mapping_cache`, `fdp`, `slc`), the analytic `limits`, the simulator's `speed`,
//! and the terminal `table`.

use crate::driver::{PhaseResult, Snapshot};
use crate::interface::Interface;
use nearflash_ftl::Device;
use nearflash_nvme::NvmeConfig;
use nearflash_preset::Preset;
use nearflash_sim::LatencyHistogram;
use serde::Serialize;

mod fdp;
mod limits;
mod link;
mod mapping_cache;
mod media;
mod slc;
mod speed;
mod table;

pub use fdp::{FdpHandleReport, FdpReport};
pub use limits::AnalyticLimits;
pub use link::{LinkDirection, LinkReport};
pub use mapping_cache::MappingCacheReport;
pub use media::MediaReport;
pub use slc::SlcReport;
pub use speed::{Speed, SpeedReport};

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

/// Each counter's growth from `a` to `b` over `dur_ns`: a busy share per element.
fn diff(a: &[u64], b: &[u64], dur_ns: u64) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| (y - x) as f64 / dur_ns.max(1) as f64)
        .collect()
}

/// The mean of `v`; 0 when empty.
fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl EraseCounts {
    /// The device's erase counts over its blocks: least, mean and most.
    pub(super) fn of(device: &Device) -> EraseCounts {
        let (min, mean, max) = device.erase_count_summary();
        EraseCounts { min, mean, max }
    }
}

impl LatencyUs {
    /// The phase's latency quantiles, mean and extremes in microseconds.
    pub(super) fn of(lat: &LatencyHistogram) -> LatencyUs {
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
    pub(super) fn of(s: &Snapshot, e: &Snapshot, dur_ns: u64) -> Utilization {
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
}
