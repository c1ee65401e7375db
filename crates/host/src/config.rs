//! `HostConfig`: the conventional heterogeneous system around the SIMD baseline (seed 000,
//! §3.1 Fig. 1 and §5 "Accelerators"): a Xeon E5-2620 v3 host with 32 GB DDR4, its storage
//! stack (system calls, file system and block layer, user↔kernel copies) and the powers of
//! the host components and the discrete Intel 750 NVMe SSD. The SSD's flash, channels and
//! firmware are the `[ssd_flash]` / `[ssd_ftl]` preset tables (the project's own device).
//! Every field carries its unit; each value cites its source or is marked as an assumption.
//! (Moved here from `crates/accel/src/host.rs`: the host is shared by every system.)

use crate::error::HostError;
use crate::machine::PageCacheConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Assumption: 500 ns per system call (mode switch there and back plus the cache/TLB
    /// pollution it leaves; Soares & Stumm, FlexSC, OSDI'10, measure ~100 ns direct and
    /// several times that indirect cost on a Core i7).
    pub syscall_ns: u64,
    /// Assumption: 8 µs of host CPU per storage request for the file system, block layer,
    /// NVMe driver and completion interrupt (Yang, Minturn & Hady, "When poll is better than
    /// interrupt", FAST'12: the Linux interrupt-driven path costs several µs per request).
    pub io_stack_request_ns: u64,
    /// Assumption: 1 µs to copy 4 KiB between kernel and user buffers (≈4 GB/s, one core's
    /// memcpy bandwidth from DRAM to DRAM on a Haswell-EP class Xeon).
    pub copy_ns_per_4kib: u64,
    /// Copies each direction makes of every byte inside host DRAM: page cache → user buffer
    /// and user buffer → the accelerator driver's pinned DMA buffer (§2.1 Fig. 1b, ❸).
    pub copies_per_direction: u32,
    /// Assumption: 128 KiB per storage request (Linux `max_sectors_kb` / read-ahead default).
    pub io_request_bytes: u64,
    /// Assumption: 32 requests in flight (the block layer splits a large buffered read or
    /// write into requests and keeps the NVMe queue busy).
    pub io_queue_depth: u32,
    /// Intel Xeon E5-2620 v3 (seed 000 ref. Intel 2015a, ARK): TDP 85 W, taken as the
    /// package power while a core runs the storage stack or copies.
    pub cpu_active_power_w: f64,
    /// Assumption: 15 W package idle (Haswell-EP package C-states; ~18% of TDP).
    pub cpu_idle_power_w: f64,
    /// Assumption: 32 GB DDR4 as 4 × 8 GB RDIMMs at ~3 W each while streaming (Micron DDR4
    /// power calculator order of magnitude).
    pub dram_active_power_w: f64,
    /// Assumption: ~1 W per RDIMM in precharge standby / self refresh.
    pub dram_idle_power_w: f64,
    /// Intel SSD 750 product specification: active power up to 22 W (ARK "Power - Active";
    /// the paper measures SSD power itself, §5 "Profile methods").
    pub ssd_active_power_w: f64,
    /// Intel SSD 750 product specification: idle power 4 W (ARK "Power - Idle").
    pub ssd_idle_power_w: f64,
    /// The page cache and the cores that serve the stack (`[host.page_cache]`).
    pub page_cache: PageCacheConfig,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            syscall_ns: 500,
            io_stack_request_ns: 8000,
            copy_ns_per_4kib: 1000,
            copies_per_direction: 2,
            io_request_bytes: 128 << 10,
            io_queue_depth: 32,
            cpu_active_power_w: 85.0,
            cpu_idle_power_w: 15.0,
            dram_active_power_w: 12.0,
            dram_idle_power_w: 4.0,
            ssd_active_power_w: 22.0,
            ssd_idle_power_w: 4.0,
            page_cache: PageCacheConfig::default(),
        }
    }
}

impl HostConfig {
    pub fn validate(&self) -> Result<(), HostError> {
        let err = |field: &'static str, reason: &str| HostError::Config {
            field,
            reason: reason.to_string(),
        };
        if self.io_request_bytes == 0 || !self.io_request_bytes.is_multiple_of(512) {
            return Err(err(
                "io_request_bytes",
                "must be a positive multiple of the 512-byte sector",
            ));
        }
        if self.io_queue_depth == 0 {
            return Err(err("io_queue_depth", "must be greater than 0"));
        }
        if self.copy_ns_per_4kib == 0 {
            return Err(err("copy_ns_per_4kib", "must be greater than 0"));
        }
        for (active, idle, a_name, i_name) in [
            (
                self.cpu_active_power_w,
                self.cpu_idle_power_w,
                "cpu_active_power_w",
                "cpu_idle_power_w",
            ),
            (
                self.dram_active_power_w,
                self.dram_idle_power_w,
                "dram_active_power_w",
                "dram_idle_power_w",
            ),
            (
                self.ssd_active_power_w,
                self.ssd_idle_power_w,
                "ssd_active_power_w",
                "ssd_idle_power_w",
            ),
        ] {
            if !(active.is_finite() && active > 0.0) {
                return Err(err(
                    a_name,
                    &format!("must be a positive finite power in W, got {active}"),
                ));
            }
            if !(idle.is_finite() && (0.0..=active).contains(&idle)) {
                return Err(err(
                    i_name,
                    &format!(
                        "must be a finite power in W between 0 and the active {active}, got {idle}"
                    ),
                ));
            }
        }
        self.page_cache.validate(self)?;
        Ok(())
    }

    /// Host CPU time to copy `bytes` once.
    pub fn copy_ns(&self, bytes: u64) -> u64 {
        bytes.div_ceil(4096) * self.copy_ns_per_4kib
    }
}
