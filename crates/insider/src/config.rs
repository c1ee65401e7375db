//! `[insider]`: the INSIDER drive around the flash (seed 001 §3.6, §4.1, §5.1): where the data
//! lives (the project's flash device, or the prototype's DRAM-emulated storage configured by
//! bandwidth and latency), the PCIe link, the ISC unit's credits, the compute engines (FPGA-like
//! slots or drive cores) and the host the runtime runs on. Every field carries its unit; the
//! values and their sources are in `configs/insider.toml`.

use crate::error::InsiderError;
use nearflash_hw::compute::{CoreSpec, SlotSpec};
use nearflash_hw::link::LinkConfig;
use nearflash_nvme::NvmeConfig;
use serde::{Deserialize, Serialize};

/// Where the drive's logical bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backing {
    /// The project's flash device (`[flash]`, `[ftl]`): every request occupies dies and buses.
    Flash,
    /// §4.1: DRAM chips behind delay and throttle units, configured by bandwidth and latency.
    DramEmulated,
}

/// What runs the drive programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineKind {
    /// FPGA-like slots: each program its own hardware, running side by side (§3.2.2).
    Slots,
    /// Drive-embedded cores, time-shared by every program (§5.5's ARM baseline).
    Cores,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InsiderConfig {
    pub backing: Backing,
    /// Throttle of the emulated storage: its whole bandwidth, shared by its chips.
    pub emulated_bandwidth_mb_s: f64,
    /// Delay unit of the emulated storage: added to every request, pipelined.
    pub emulated_latency_us: f64,
    /// DRAM chips emulating the storage; a request is striped over all of them.
    pub emulated_chips: u32,
    /// Capacity of the emulated storage.
    pub emulated_capacity_bytes: u64,
    /// PCIe Gen3 lanes between host and drive. The link is the one PCIe model
    /// (`nearflash_hw::Link`, [`InsiderConfig::link`]): its payload bandwidth follows from
    /// the generation's rate, the line code and each TLP's header, never from a typed figure.
    pub pcie_lanes: u32,
    /// One-way latency of the link, added to every DMA (pipelined, not occupying the link).
    pub pcie_latency_us: f64,
    /// Application slots besides slot 0 (pass-through for ordinary firmware reads).
    pub app_slots: u32,
    /// Clock of the slots' logic.
    pub slot_clock_mhz: f64,
    pub engine: EngineKind,
    /// Drive cores when `engine = "cores"`.
    pub core_count: u32,
    pub core_clock_mhz: f64,
    pub core_cpi: f64,
    /// C: size of every request the ISC unit issues, and of one credit.
    pub credit_request_bytes: u64,
    /// R: credits each program starts with.
    pub credits_initial: u32,
    /// Host-side buffers of one open virtual file (DMA target; the runtime pops vread from it).
    pub host_buffer_bytes: u64,
    /// Host cores the applications' host code runs on (OpenMP).
    pub host_cores: u32,
    pub host_clock_mhz: f64,
    pub host_cpi: f64,
    /// Block size of the device file system (extent granularity); `nearflash-fs` has 4 KiB
    /// blocks, the only value accepted.
    pub fs_block_bytes: u64,
    /// §5.5 cost efficiency: wholesale price of the FPGA (XC7A200T) and of the ARM core.
    pub fpga_price_usd: f64,
    pub arm_price_usd: f64,
}

impl InsiderConfig {
    /// Checks every field; the error names the field.
    pub fn validate(&self) -> Result<(), InsiderError> {
        let bad = |field: &'static str, reason: &str| InsiderError::Config {
            field,
            reason: reason.to_string(),
        };
        for (field, v) in [
            (
                "insider.emulated_bandwidth_mb_s",
                self.emulated_bandwidth_mb_s,
            ),
            ("insider.slot_clock_mhz", self.slot_clock_mhz),
            ("insider.core_clock_mhz", self.core_clock_mhz),
            ("insider.core_cpi", self.core_cpi),
            ("insider.host_clock_mhz", self.host_clock_mhz),
            ("insider.host_cpi", self.host_cpi),
            ("insider.fpga_price_usd", self.fpga_price_usd),
            ("insider.arm_price_usd", self.arm_price_usd),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(field, "must be a positive number"));
            }
        }
        for (field, v) in [
            ("insider.emulated_latency_us", self.emulated_latency_us),
            ("insider.pcie_latency_us", self.pcie_latency_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(field, "must be zero or positive"));
            }
        }
        for (field, v) in [
            ("insider.emulated_chips", self.emulated_chips),
            ("insider.pcie_lanes", self.pcie_lanes),
            ("insider.app_slots", self.app_slots),
            ("insider.core_count", self.core_count),
            ("insider.credits_initial", self.credits_initial),
            ("insider.host_cores", self.host_cores),
        ] {
            if v == 0 {
                return Err(bad(field, "must be greater than 0"));
            }
        }
        if !matches!(self.pcie_lanes, 1 | 2 | 4 | 8 | 16) {
            return Err(bad(
                "insider.pcie_lanes",
                "PCIe links have 1, 2, 4, 8 or 16 lanes",
            ));
        }
        if self.fs_block_bytes != nearflash_fs::BLOCK_BYTES as u64 {
            return Err(bad(
                "insider.fs_block_bytes",
                "must be the device file system's block size (nearflash-fs: 4096 bytes)",
            ));
        }
        if self.credit_request_bytes == 0
            || !self
                .credit_request_bytes
                .is_multiple_of(self.fs_block_bytes)
        {
            return Err(bad(
                "insider.credit_request_bytes",
                "must be a positive multiple of fs_block_bytes",
            ));
        }
        if self.host_buffer_bytes < self.credit_request_bytes {
            return Err(bad(
                "insider.host_buffer_bytes",
                "must hold at least one request of credit_request_bytes",
            ));
        }
        if self.emulated_capacity_bytes < self.fs_block_bytes * 16 {
            return Err(bad(
                "insider.emulated_capacity_bytes",
                "too small for a file system",
            ));
        }
        self.nvme().validate().map_err(|e| {
            bad(
                "insider.pcie_lanes",
                &format!("as the NVMe front end's link: {e}"),
            )
        })?;
        Ok(())
    }

    /// The drive's NVMe front end for ordinary host requests (`nearflash_nvme::Nvme`, the
    /// component every drive uses) on this drive's PCIe link (Gen3, its lanes and latency).
    /// The paper gives no command-path figures (§4.1: a PCIe drive whose firmware handles
    /// "host-sent drive access commands", mounted "as a normal storage device"), so the rest
    /// are the nvme crate's defaults with their sources (`NvmeConfig`): one queue pair of 1024 entries (Linux's
    /// `io_queue_depth`), 2 µs of controller per command (assumed from the SSD 750 /
    /// P3700's QD1 latency), MSI-X completion with 2 µs to the handler (Yang et al.,
    /// FAST'12), host DRAM of the E5-2620 v3 (Intel ARK).
    pub fn nvme(&self) -> NvmeConfig {
        NvmeConfig {
            link: LinkConfig {
                lanes: self.pcie_lanes,
                latency_ns: (self.pcie_latency_us * 1000.0).round() as u64,
                ..LinkConfig::default()
            },
            ..NvmeConfig::default()
        }
    }

    /// The host–drive PCIe link (Gen3, this drive's lanes and latency; the shared link's
    /// TLP size and overhead): virtual files' DMA, firmware requests' data and the NVMe
    /// front end all cross it.
    pub fn link(&self) -> LinkConfig {
        self.nvme().link
    }

    /// PCIe payload bandwidth, each direction: what a long DMA streams at after TLP headers.
    pub fn pcie_mb_s(&self) -> f64 {
        self.link().payload_mb_s()
    }

    /// An FPGA-like slot of the drive (the shared cost model of `nearflash-hw`).
    pub fn slot(&self) -> SlotSpec {
        SlotSpec::new(self.slot_clock_mhz)
    }

    /// One drive core (ARM drive or core engine).
    pub fn core(&self) -> CoreSpec {
        CoreSpec::new(self.core_clock_mhz, self.core_cpi)
    }

    /// One host core.
    pub fn host_core(&self) -> CoreSpec {
        CoreSpec::new(self.host_clock_mhz, self.host_cpi)
    }

    /// Bytes per second one slot streams for a program accepting `bytes_per_cycle`.
    pub fn slot_mb_s(&self, bytes_per_cycle: f64) -> f64 {
        self.slot().rate_mb_s(bytes_per_cycle)
    }

    /// One drive core's bytes per second for `instructions_per_byte`.
    pub fn core_mb_s(&self, instructions_per_byte: f64) -> f64 {
        self.core().rate_mb_s(instructions_per_byte)
    }

    /// The whole host's bytes per second (every core, perfect parallelism).
    pub fn host_mb_s(&self, instructions_per_byte: f64) -> f64 {
        f64::from(self.host_cores) * self.host_core().rate_mb_s(instructions_per_byte)
    }
}

/// The `insider` preset's values (`configs/insider.toml` carries the reasoning); tests use it.
impl Default for InsiderConfig {
    fn default() -> Self {
        InsiderConfig {
            backing: Backing::DramEmulated,
            emulated_bandwidth_mb_s: 16000.0,
            emulated_latency_us: 5.0,
            emulated_chips: 4,
            emulated_capacity_bytes: 64 << 30,
            pcie_lanes: 8,
            pcie_latency_us: 1.0,
            app_slots: 4,
            slot_clock_mhz: 250.0,
            engine: EngineKind::Slots,
            core_count: 4,
            core_clock_mhz: 2000.0,
            core_cpi: 1.0 / 3.0,
            credit_request_bytes: 256 << 10,
            credits_initial: 8,
            host_buffer_bytes: 16 << 20,
            host_cores: 32,
            host_clock_mhz: 2300.0,
            host_cpi: 1.0,
            fs_block_bytes: 4096,
            fpga_price_usd: 37.0,
            arm_price_usd: 95.0,
        }
    }
}

/// The `insider` preset's `[host]` table (the storage stack and copy costs of §5.2's host;
/// reasoning in `configs/insider.toml`); tests and defaults use it.
pub fn insider_host() -> nearflash_host::HostConfig {
    nearflash_host::HostConfig {
        copy_ns_per_4kib: 400,
        copies_per_direction: 1,
        page_cache: nearflash_host::PageCacheConfig {
            cores: 32,
            ..nearflash_host::PageCacheConfig::default()
        },
        ..nearflash_host::HostConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_is_gen3_at_the_lanes_given_with_tlp_headers_taken_off() {
        let cfg = InsiderConfig::default();
        let link = cfg.link();
        assert_eq!((link.generation, link.lanes), (3, cfg.pcie_lanes));
        assert_eq!(link.latency_ns, 1000);
        // ×8 Gen3: 8 GT/s × 128/130 ÷ 8 bits = 984.6 MB/s a lane, of which each 256-byte
        // TLP's 24-byte header leaves 256/280.
        let raw_mb_s = 8.0 * 8000.0 * 128.0 / 130.0 / 8.0;
        let expect = raw_mb_s * 256.0 / 280.0;
        assert!(
            (cfg.pcie_mb_s() - expect).abs() < 1e-6,
            "{}",
            cfg.pcie_mb_s()
        );
        let x16 = InsiderConfig {
            pcie_lanes: 16,
            ..InsiderConfig::default()
        };
        assert!((x16.pcie_mb_s() - 2.0 * expect).abs() < 1e-6);
    }
}
