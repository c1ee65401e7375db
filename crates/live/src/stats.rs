//! What the device saw: operations and bytes by kind with their simulated latencies (from
//! the request's arrival at the device thread to its completion on the device's clock),
//! IOPS, buffer-cache, FTL and flash counters, WAF, energy, simulated vs wall time, and the
//! virtual files' figures (`vfile::figures`).
//! `Recorder` accumulates per request (bounded: one histogram per operation kind);
//! `LiveStats` is the serialized snapshot — `.nearflash/stats.json`, the file written when the
//! server stops, and what `nearflash stats` prints.

use crate::pace::Pace;
use crate::vfile::figures::VfileFigures;
use nearflash_sim::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Latency {
    fn of(h: &LatencyHistogram) -> Latency {
        if h.count() == 0 {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Latency {
            mean: h.mean_ns() / 1e3,
            p50: us(h.quantile_ns(0.5)),
            p90: us(h.quantile_ns(0.9)),
            p99: us(h.quantile_ns(0.99)),
            p999: us(h.quantile_ns(0.999)),
            max: us(h.max_ns()),
        }
    }
}

/// One kind of operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    pub count: u64,
    pub errors: u64,
    /// Bytes read or written (reads and writes only).
    pub bytes: u64,
    pub latency_us: Latency,
}

/// The device file system's buffer cache (the kernel's page cache in front of the mount is
/// not visible to the device: what it serves never arrives).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheFigures {
    pub hits: u64,
    pub misses: u64,
    pub hit_ratio: f64,
    pub writebacks: u64,
    pub evictions: u64,
}

/// The device file system's own work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FsFigures {
    pub commits: u64,
    pub block_reads: u64,
    pub block_writes: u64,
}

/// The FTL and the flash under it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceFigures {
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    /// Flash bytes programmed (pages × page size) per host byte written; 0 before any write.
    pub waf: f64,
    pub gc_runs: u64,
    pub gc_pages_copied: u64,
    pub checkpoints_written: u64,
    pub flash_page_reads: u64,
    pub flash_page_programs: u64,
    pub flash_block_erases: u64,
    pub flash_die_ops: u64,
}

/// The device's energy over the served interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnergyFigures {
    pub joules: f64,
    pub active_power_w: f64,
    pub idle_power_w: f64,
    /// Where the powers come from and how energy is computed.
    pub model: String,
}

/// The whole snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveStats {
    pub image: String,
    pub preset: String,
    /// `fs` (the device's file system) or `raw` (its logical space as one file).
    pub expose: String,
    pub pace: Pace,
    /// The device's clock since the server started.
    pub sim_time_s: f64,
    pub wall_time_s: f64,
    /// Simulated time with an operation in service.
    pub busy_sim_s: f64,
    pub ops_total: u64,
    pub errors_total: u64,
    /// Operations per simulated second of service (`ops_total / busy_sim_s`) and per wall
    /// second since the start.
    pub iops_busy: f64,
    pub iops_wall: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Every operation's latency on the device's clock.
    pub latency_us: Latency,
    pub ops: BTreeMap<String, OpStats>,
    pub buffer_cache: Option<CacheFigures>,
    pub fs: Option<FsFigures>,
    pub device: DeviceFigures,
    pub energy: EnergyFigures,
    /// INSIDER's virtual files (file-system mode only).
    #[serde(default)]
    pub vfiles: Option<VfileFigures>,
    /// The first device-side failure (an image write that failed, a stuck operation).
    pub device_error: Option<String>,
}

struct Kind {
    count: u64,
    errors: u64,
    bytes: u64,
    latency: LatencyHistogram,
}

/// Per-request accumulation.
#[derive(Default)]
pub struct Recorder {
    kinds: BTreeMap<&'static str, Kind>,
    all: LatencyHistogram,
    busy_ns: u64,
    errors: u64,
    read_bytes: u64,
    write_bytes: u64,
}

impl Recorder {
    /// One request of `kind` that moved `bytes` and took `latency_ns` on the device's clock.
    pub fn record(&mut self, kind: &'static str, ok: bool, bytes: u64, latency_ns: u64) {
        let k = self.kinds.entry(kind).or_insert_with(|| Kind {
            count: 0,
            errors: 0,
            bytes: 0,
            latency: LatencyHistogram::default(),
        });
        k.count += 1;
        k.bytes += bytes;
        k.latency.record(latency_ns);
        if !ok {
            k.errors += 1;
            self.errors += 1;
        }
        match kind {
            "read" => self.read_bytes += bytes,
            "write" => self.write_bytes += bytes,
            _ => {}
        }
        self.all.record(latency_ns);
        self.busy_ns += latency_ns;
    }

    /// Simulated time with a request in service (requests are served one at a time).
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// Fills the request-side fields of `s`.
    pub fn fill(&self, s: &mut LiveStats) {
        s.busy_sim_s = self.busy_ns as f64 / 1e9;
        s.ops_total = self.all.count();
        s.errors_total = self.errors;
        s.iops_busy = if self.busy_ns > 0 {
            s.ops_total as f64 / s.busy_sim_s
        } else {
            0.0
        };
        s.iops_wall = if s.wall_time_s > 0.0 {
            s.ops_total as f64 / s.wall_time_s
        } else {
            0.0
        };
        s.read_bytes = self.read_bytes;
        s.write_bytes = self.write_bytes;
        s.latency_us = Latency::of(&self.all);
        s.ops = self
            .kinds
            .iter()
            .map(|(name, k)| {
                (
                    name.to_string(),
                    OpStats {
                        count: k.count,
                        errors: k.errors,
                        bytes: k.bytes,
                        latency_us: Latency::of(&k.latency),
                    },
                )
            })
            .collect();
    }
}

/// Device energy: E = P_active × busy + P_idle × (simulated time − busy) — the same rule as
/// the accelerator's and the SIMD baseline's energy meters (crates/hw/src/energy.rs).
pub fn energy(active_power_w: f64, idle_power_w: f64, busy_s: f64, sim_s: f64) -> EnergyFigures {
    let busy = busy_s.min(sim_s);
    EnergyFigures {
        joules: active_power_w * busy + idle_power_w * (sim_s - busy),
        active_power_w,
        idle_power_w,
        model: "P_active x busy + P_idle x (simulated time - busy); powers from the preset's \
                [host] ssd_active_power_w / ssd_idle_power_w (default: Intel SSD 750 \
                datasheet, 22 W / 4 W)"
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_are_counted_by_kind_with_their_latencies() {
        let mut r = Recorder::default();
        r.record("read", true, 4096, 100_000);
        r.record("read", true, 4096, 300_000);
        r.record("write", false, 0, 50_000);
        let mut s = LiveStats {
            image: "x".into(),
            preset: "test-min".into(),
            expose: "fs".into(),
            pace: Pace::None,
            sim_time_s: 1.0,
            wall_time_s: 2.0,
            busy_sim_s: 0.0,
            ops_total: 0,
            errors_total: 0,
            iops_busy: 0.0,
            iops_wall: 0.0,
            read_bytes: 0,
            write_bytes: 0,
            latency_us: Latency::default(),
            ops: BTreeMap::new(),
            buffer_cache: None,
            fs: None,
            device: DeviceFigures::default(),
            energy: EnergyFigures::default(),
            vfiles: None,
            device_error: None,
        };
        r.fill(&mut s);
        assert_eq!(s.ops_total, 3);
        assert_eq!(s.errors_total, 1);
        assert_eq!(s.read_bytes, 8192);
        assert_eq!(s.ops["read"].count, 2);
        assert!((s.ops["read"].latency_us.mean - 200.0).abs() < 1.0);
        assert!((s.busy_sim_s - 0.00045).abs() < 1e-9);
        assert!((s.iops_wall - 1.5).abs() < 1e-9);
        let e = energy(22.0, 4.0, 0.5, 2.0);
        assert!((e.joules - (11.0 + 6.0)).abs() < 1e-9);
    }
}
