//! NVMe front-end parameters: queues, controller cost, completion signalling, host memory
//! port and the PCIe link. Every field carries its unit; each default cites its source or is
//! marked as an assumption.

use crate::error::NvmeError;
use nearflash_hw::link::LinkConfig;
use serde::{Deserialize, Serialize};

/// Submission queue entry size (NVM Express Base Specification 1.4, §4.2: 64 bytes).
pub const SQE_BYTES: u64 = 64;
/// Completion queue entry size (NVMe 1.4, §4.6: 16 bytes).
pub const CQE_BYTES: u64 = 16;
/// A doorbell register write (NVMe 1.4, §3.1.24–25: 32-bit SQ tail / CQ head doorbells).
pub const DOORBELL_BYTES: u64 = 4;
/// An MSI-X message is a 32-bit posted memory write (PCI Local Bus Specification 3.0, §6.8).
pub const MSIX_BYTES: u64 = 4;
/// A Dataset Management (trim) range descriptor (NVMe 1.4, §6.7, Figure 364: 16 bytes).
pub const DSM_RANGE_BYTES: u64 = 16;

/// How the host learns that a command completed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CompletionMode {
    /// The controller sends an MSI-X interrupt after posting the completion entry.
    Interrupt,
    /// A host core spins on the completion queue; its busy time is charged.
    Poll,
}

/// A memory a DMA can target: host DRAM or a peer device's BAR/DRAM.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemoryPortConfig {
    /// Bandwidth of the memory's port in MB/s (10^6 B/s).
    pub bandwidth_mb_s: f64,
    /// Access latency of the memory behind the port, ns.
    pub latency_ns: u64,
}

impl MemoryPortConfig {
    /// The host's DRAM: Xeon E5-2620 v3, 4 × DDR4-1866 channels, "Max Memory Bandwidth
    /// 59 GB/s" (Intel ARK); assumption: 80 ns loaded DRAM access latency.
    pub fn host_dram() -> Self {
        MemoryPortConfig {
            bandwidth_mb_s: 59_000.0,
            latency_ns: 80,
        }
    }

    pub fn validate(&self, field: &'static str) -> Result<(), NvmeError> {
        if !(self.bandwidth_mb_s.is_finite() && self.bandwidth_mb_s > 0.0) {
            return Err(NvmeError::Config {
                field,
                reason: format!(
                    "bandwidth_mb_s must be positive and finite, got {}",
                    self.bandwidth_mb_s
                ),
            });
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NvmeConfig {
    /// I/O submission/completion queue pairs. Assumption: 1 (one submitting core).
    pub queue_pairs: u16,
    /// Entries per queue, 2..=65536 (NVMe 1.4 §4.1.3; a queue of N entries holds at most
    /// N − 1 commands, full when tail + 1 = head). Default 1024, the Linux nvme driver's
    /// `io_queue_depth` default (drivers/nvme/host/pci.c).
    pub queue_entries: u32,
    /// Assumption: 2 µs of controller firmware per command (parse the SQE, set up the PRP
    /// DMA, hand the LBA range to the FTL, build the CQE). The Intel SSD 750 / DC P3700
    /// datasheets quote ≈20 µs for a QD1 4 KiB read; with ≈10–12 µs of MLC page read and
    /// ≈2–3 µs of link and interrupt time, a few µs remain for the controller.
    pub controller_ns: u64,
    pub completion: CompletionMode,
    /// Assumption: 2 µs from the MSI-X write reaching the root complex to the driver's
    /// handler running (APIC delivery, interrupt entry, handler dispatch; Yang, Minturn &
    /// Hady, "When poll is better than interrupt", FAST'12, measure the interrupt path a
    /// few µs slower than polling per request).
    pub msix_latency_ns: u64,
    /// Assumption: 100 ns for a spinning core to see a new completion entry (one cache-line
    /// miss on the CQ once the device's write invalidated it).
    pub poll_detect_ns: u64,
    /// Host DRAM, the default DMA target.
    pub host_memory: MemoryPortConfig,
    /// The device's PCIe link.
    pub link: LinkConfig,
}

impl Default for NvmeConfig {
    fn default() -> Self {
        NvmeConfig {
            queue_pairs: 1,
            queue_entries: 1024,
            controller_ns: 2_000,
            completion: CompletionMode::Interrupt,
            msix_latency_ns: 2_000,
            poll_detect_ns: 100,
            host_memory: MemoryPortConfig::host_dram(),
            link: LinkConfig::default(),
        }
    }
}

impl NvmeConfig {
    pub fn validate(&self) -> Result<(), NvmeError> {
        let err = |field: &'static str, reason: String| NvmeError::Config { field, reason };
        if self.queue_pairs == 0 {
            return Err(err("queue_pairs", "must be at least 1".into()));
        }
        if !(2..=65_536).contains(&self.queue_entries) {
            return Err(err(
                "queue_entries",
                format!("must be 2..=65536, got {}", self.queue_entries),
            ));
        }
        self.host_memory.validate("host_memory")?;
        self.link.validate()?;
        Ok(())
    }

    /// Unloaded time from the host writing the SQ tail doorbell until the controller holds
    /// the command: the 4 B doorbell down, the SQE read request up, the host DRAM access,
    /// the 64 B SQE down (steps 1–2). A figure for reports and tests (a command's unloaded
    /// cost, `qd1_read_overhead_ns`); the model itself is `Nvme`, which occupies its link and
    /// memory port step by step (its tests check the two agree at QD1).
    pub fn submit_ns(&self) -> u64 {
        let w = |b| self.link.wire_time(b).as_ns();
        let lat = self.link.latency_ns;
        let doorbell = w(DOORBELL_BYTES) + lat;
        let fetch = w(0) + lat + self.host_memory.latency_ns + w(SQE_BYTES) + lat;
        doorbell + fetch
    }

    /// Unloaded time from the controller posting a completion until the host's handler
    /// sees it (step 6): the 16 B CQE up into host DRAM, then the MSI-X and the handler
    /// latency, or a spinning core's detection.
    pub fn completion_ns(&self) -> u64 {
        let lat = self.link.latency_ns;
        let dram_ns = (CQE_BYTES as f64 * 1000.0 / self.host_memory.bandwidth_mb_s).ceil() as u64;
        let cqe_in_memory = (self.link.wire_time(CQE_BYTES).as_ns() + lat)
            .max(lat + dram_ns + self.host_memory.latency_ns);
        cqe_in_memory
            + match self.completion {
                CompletionMode::Interrupt => self.msix_latency_ns,
                CompletionMode::Poll => self.poll_detect_ns,
            }
    }

    /// Unloaded time a read of `len_bytes` spends in the front end and on the link at queue
    /// depth 1, on top of the device's own time: steps 1–3, the data's DMA up (step 5) and the
    /// completion (step 6). A QD1 4 KiB read on the defaults: 6,587 ns with interrupts,
    /// 4,687 ns polled (docs/design.md, "The NVMe path"; the tests check it against the
    /// model).
    pub fn qd1_read_overhead_ns(&self, len_bytes: u64) -> u64 {
        let data = self.link.wire_time(len_bytes).as_ns() + self.link.latency_ns;
        self.submit_ns() + self.controller_ns + data + self.completion_ns()
    }

    /// Commands one queue can hold in flight.
    pub fn depth_max(&self) -> u32 {
        self.queue_entries - 1
    }
}
