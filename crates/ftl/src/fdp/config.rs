//! `[fdp]`: Flexible Data Placement on the conventional drive (`--set fdp.enabled=true`;
//! NVMe TP4146, STANDARDS §3.3). The reclaim unit is not a parameter: it is the superblock
//! (one block per channel × plane on one way, the unit GC erases — `crates/ftl/src/layout.rs`),
//! so RU size = pages per block × page group bytes, as FDP drives size an RU from their erase
//! unit striped across dies. What is configured is how many handles the drive offers, of
//! which isolation type, and how many reclaim groups its ways form.

use crate::config::{FtlConfig, MappingMode};
use nearflash_flash::{ConfigError, FlashConfig};
use serde::{Deserialize, Serialize};

/// Most reclaim unit handles a configuration may offer: 128, QEMU's FDP emulation's
/// `NVME_FDP_MAXPIDS` (hw/nvme, STANDARDS §3.3's sources), which also bounds the
/// placement handles of a namespace. The handle is kept in one byte of every spare-area
/// record (`oob.rs`).
pub const HANDLES_MAX: u32 = 128;

/// How GC treats a handle's data (the RUH Type of the FDP Configurations log).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum HandleType {
    /// Initially Isolated (RUHT 1): the host's writes through the handle land in reclaim
    /// units of their own, but GC may relocate them together with the data of other
    /// initially isolated handles. The default: QEMU's emulated FDP creates every handle
    /// of this type (`hw/nvme/subsys.c`, code index).
    #[default]
    InitiallyIsolated,
    /// Persistently Isolated (RUHT 2): GC relocates the handle's data only into reclaim
    /// units holding data of the same handle.
    PersistentlyIsolated,
}

impl HandleType {
    /// The RUHT code of the FDP Configurations log.
    pub fn code(self) -> u8 {
        match self {
            HandleType::InitiallyIsolated => 1,
            HandleType::PersistentlyIsolated => 2,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FdpConfig {
    /// Offer Flexible Data Placement (the FDP feature enabled, configuration 0).
    pub enabled: bool,
    /// Reclaim unit handles (NRUH), which are also the namespace's placement handles
    /// (placement handle `i` maps to handle `i`). Default 8, FEMU's FDP default
    /// (`NVME_DEFAULT_RUH_NUM`, code index).
    pub handles: u32,
    /// Isolation of every handle. Default initially isolated (see `HandleType`).
    pub handle_type: HandleType,
    /// Reclaim groups (NRG): the ways are split into this many groups of consecutive ways
    /// (each group every channel's dies of its ways: a disjoint set of dies), and data placed
    /// in a group is written, and collected, only on its dies; each group keeps its own free
    /// superblocks, GC thresholds and reserve, as FEMU's FDP keeps a free RU list and GC
    /// thresholds per reclaim group (`NvmeReclaimGroup`, `fdp.h`). Default 1 (FEMU's `NVME_DEFAULT_RG_NUM`): every handle writes on every die.
    /// With more than one, a Placement Identifier's top RGIF = ⌈log2 NRG⌉ bits name the
    /// group (PID = RGID:PHNDL).
    pub reclaim_groups: u32,
}

impl Default for FdpConfig {
    fn default() -> Self {
        FdpConfig {
            enabled: false,
            handles: 8,
            handle_type: HandleType::default(),
            reclaim_groups: 1,
        }
    }
}

impl FdpConfig {
    pub fn is_default(&self) -> bool {
        *self == FdpConfig::default()
    }

    /// Bits of a Placement Identifier that name the reclaim group (the FDPA's RGIF):
    /// ⌈log2 NRG⌉, 0 with one group.
    pub fn rgif_bits(&self) -> u32 {
        self.reclaim_groups.next_power_of_two().trailing_zeros()
    }

    /// The Placement Identifiers in the order the Reclaim Unit Handle Status lists them
    /// (`Device::ruh_status`, host lane order): for each handle, each group — PID =
    /// RGID:PHNDL, the group in the top RGIF bits. fio's `fdp_pli` indexes this list.
    pub fn status_pids(&self) -> Vec<u16> {
        let rgif = self.rgif_bits();
        (0..self.handles)
            .flat_map(|h| {
                (0..self.reclaim_groups).map(move |g| {
                    crate::fdp::PlacementId {
                        handle: h as u16,
                        group: g as u16,
                    }
                    .encode(rgif)
                })
            })
            .collect()
    }

    /// Write-point lanes of host data: one per (handle, reclaim group) when enabled.
    pub fn host_lanes(&self) -> u32 {
        if self.enabled {
            self.handles * self.reclaim_groups
        } else {
            1
        }
    }

    /// Write-point lanes of GC: per (handle, group) for persistently isolated handles, per
    /// group for initially isolated ones (their data may be mixed).
    pub fn gc_lanes(&self) -> u32 {
        match (self.enabled, self.handle_type) {
            (false, _) => 1,
            (true, HandleType::PersistentlyIsolated) => self.handles * self.reclaim_groups,
            (true, HandleType::InitiallyIsolated) => self.reclaim_groups,
        }
    }

    /// Reclaim groups in effect (1 when FDP is off).
    pub fn groups(&self) -> u32 {
        if self.enabled {
            self.reclaim_groups
        } else {
            1
        }
    }

    /// Checked even while off, so a typo'd value is caught before it is switched on.
    pub fn validate(&self, flash: &FlashConfig, ftl: &FtlConfig) -> Result<(), ConfigError> {
        let bad = |field: &str, reason: String| {
            Err(ConfigError::Invalid {
                field: format!("fdp.{field}"),
                reason,
            })
        };
        if !(1..=HANDLES_MAX).contains(&self.handles) {
            return bad(
                "handles",
                format!("must be 1 to {HANDLES_MAX}, got {}", self.handles),
            );
        }
        let ways = flash.packages_per_channel * flash.dies_per_package;
        if self.reclaim_groups == 0 || !ways.is_multiple_of(self.reclaim_groups) {
            return bad(
                "reclaim_groups",
                format!(
                    "must divide the ways per channel ({ways}: a reclaim group is a set of \
                     whole ways), got {}",
                    self.reclaim_groups
                ),
            );
        }
        if !self.enabled {
            return Ok(());
        }
        if ftl.mapping != MappingMode::Page {
            return bad(
                "enabled",
                "placement keeps 4 KiB units of different handles apart, which needs \
                 ftl.mapping = \"page\""
                    .into(),
            );
        }
        if ftl.slc_cache.enabled {
            return bad(
                "enabled",
                "the SLC write cache mixes every handle's writes in its superblocks; set \
                 ftl.slc_cache.enabled = false"
                    .into(),
            );
        }
        Ok(())
    }
}
