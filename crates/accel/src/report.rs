//! What a run measured: throughput, per-instance latency, per-LWP utilization, the busy
//! time of every component and the energy it implies (`energy`), plus what makes the run
//! reproducible (seed, trace hash, event count).

use crate::energy::EnergyReport;
use crate::series::SeriesPoint;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct InstanceReport {
    pub kernel: &'static str,
    pub app: usize,
    /// From the start of the offload (the first PCIe download) to the kernel's completion.
    pub latency_ns: u64,
    /// When its first unit was dispatched (after its range locks were granted).
    pub started_ns: u64,
    /// FlashAbacus: how long Flashvisor held the instance back because a range lock it
    /// asked for overlapped another instance's (§4.3), from the mapping request to the last
    /// lock granted; 0 when every lock was free (and always for SIMD, which has none).
    pub lock_wait_ns: u64,
    pub input_bytes: u64,
    /// Pieces the instance's data were split into to fit the accelerator's DDR3L (SIMD;
    /// FlashAbacus streams from its own flash and always reports 1).
    pub chunks: u32,
}

/// One phase of a SIMD instance's chunk on the simulated clock (relative to the run start).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PhaseInterval {
    pub instance: usize,
    pub chunk: u32,
    /// ssd_read | copy_in | pcie_in | compute | pcie_out | copy_out | ssd_write
    pub phase: &'static str,
    pub start_ns: u64,
    pub end_ns: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencySummaryMs {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunReport {
    pub scheduler: &'static str,
    pub workload: String,
    pub seed: u64,
    pub sim_time_ns: u64,
    pub input_bytes: u64,
    /// Input bytes of all instances (Table 2's "Input") over the makespan, 10^6 B/s.
    pub throughput_mb_s: f64,
    pub latency_ms: LatencySummaryMs,
    pub instances: Vec<InstanceReport>,
    /// LWP0 Flashvisor, LWP1 Storengine, LWP2.. workers: busy time / makespan.
    pub lwp_utilization: Vec<f64>,
    pub lwp_busy_ns: Vec<u64>,
    /// Per worker LWP: the time it was occupied by a unit (FlashAbacus: from dispatch until
    /// Flashvisor has its completion, waiting for flash included; under the inter-kernel
    /// schedulers a worker holds a whole kernel) or, for SIMD, by its share of a microblock
    /// (from the microblock's start until its last unit there is done). §5.4's "LWP's
    /// actual execution time"; `lwp_busy_ns` counts computing only.
    pub worker_occupied_ns: Vec<u64>,
    pub ddr_busy_ns: u64,
    pub pcie_busy_ns: u64,
    /// Busy time of the backbone's dies / channels during the timed run, summed over them.
    pub flash_die_busy_ns: u64,
    pub flash_channel_busy_ns: u64,
    pub flash_read_bytes: u64,
    pub flash_write_bytes: u64,
    /// FlashAbacus: page groups a unit found in DDR3L / had to read from flash (0 for SIMD).
    pub ddr_hit_groups: u64,
    pub ddr_miss_groups: u64,
    pub flashvisor_messages: u64,
    /// Instances whose private sections had to reuse flash of earlier instances (the device
    /// is too small for all at once); their write locks wait for the earlier ones.
    pub reused_instances: usize,
    /// Logical bytes every instance having storage of its own would need (FlashAbacus: the
    /// shared inputs and each instance's private sections; SIMD: a file slot per instance),
    /// and the logical bytes of the device that holds them.
    pub flash_needed_bytes: u64,
    pub flash_capacity_bytes: u64,
    /// SIMD's host: CPU (storage stack and copies), DDR4 (copies and DMA), the NVMe SSD
    /// (requests outstanding). Zero for FlashAbacus, whose host is not involved after offload.
    pub host_cpu_busy_ns: u64,
    pub host_dram_busy_ns: u64,
    pub ssd_busy_ns: u64,
    /// SIMD's per-chunk phases (empty for FlashAbacus).
    pub phases: Vec<PhaseInterval>,
    pub energy_j: EnergyReport,
    /// Worker utilization and power over time (Fig. 15), at most `SERIES_BINS_MAX` points.
    pub series: Vec<SeriesPoint>,
    pub events: u64,
    pub trace_hash: String,
}

impl LatencySummaryMs {
    pub fn of(latencies_ns: &[u64]) -> Self {
        let ms = |ns: u64| ns as f64 / 1e6;
        if latencies_ns.is_empty() {
            return LatencySummaryMs {
                min: 0.0,
                avg: 0.0,
                max: 0.0,
            };
        }
        let sum: u128 = latencies_ns.iter().map(|&l| u128::from(l)).sum();
        LatencySummaryMs {
            min: ms(*latencies_ns.iter().min().expect("non-empty")),
            avg: sum as f64 / latencies_ns.len() as f64 / 1e6,
            max: ms(*latencies_ns.iter().max().expect("non-empty")),
        }
    }
}
