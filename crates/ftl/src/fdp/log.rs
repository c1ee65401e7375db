//! What the host learns from Flexible Data Placement (STANDARDS §3.3): the FDP log pages
//! (Get Log Page 0x20 configurations, 0x21 reclaim unit handle usage, 0x22 statistics,
//! 0x23 events), I/O Management Receive's Reclaim Unit Handle Status, and the Placement
//! Identifier a write's directive carries. Each is a typed value with an `encode` giving
//! its bytes as the specification lays them out (little-endian; sizes as QEMU's FDP
//! emulation declares its structures, `hw/nvme/nvme.h`: 16-byte configurations header,
//! 64-byte configuration descriptor plus 4 bytes per handle, 8-byte usage header and
//! descriptors, 64-byte statistics with 128-bit counters, 64-byte events header and events,
//! 16-byte status header and 32-byte status descriptors).

use nearflash_sim::SimTime;
use thiserror::Error;

/// Log page identifiers (Get Log Page LID).
pub const LOG_CONFIGURATIONS: u8 = 0x20;
pub const LOG_RUH_USAGE: u8 = 0x21;
pub const LOG_STATISTICS: u8 = 0x22;
pub const LOG_EVENTS: u8 = 0x23;

/// Most events each of the two event logs (host, controller) keeps; older ones are
/// overwritten. 63: QEMU's and FEMU's `NVME_FDP_MAX_EVENTS` (code index).
pub const EVENTS_MAX: usize = 63;

/// Why an FDP command was refused.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum FdpError {
    /// The drive was configured without FDP (`fdp.enabled = false`): Invalid Field in
    /// Command, as a controller answers a directive or log it does not offer.
    #[error("flexible data placement is not enabled on this drive (set fdp.enabled = true)")]
    Disabled,
    /// A Reclaim Unit Handle Update named a Placement Identifier the namespace does not
    /// have: Invalid Field in Command, and no handle is updated.
    #[error("placement identifier {pid:#06x} names no placement handle of the namespace")]
    InvalidPlacementId { pid: u16 },
}

/// A Placement Identifier (a write's DSPEC with DTYPE = 2) split into its fields: with
/// RGIF = r bits, the top r bits of the 16 name the reclaim group and the rest the
/// placement handle; with RGIF = 0 it is the placement handle alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacementId {
    pub handle: u16,
    pub group: u16,
}

impl PlacementId {
    /// Splits `pid` by `rgif` bits; `None` if it names a handle or group beyond `handles`
    /// or `groups`.
    pub fn parse(pid: u16, rgif: u32, handles: u32, groups: u32) -> Option<PlacementId> {
        let (handle, group) = if rgif == 0 {
            (pid, 0)
        } else {
            let shift = 16 - rgif;
            (pid & ((1u16 << shift) - 1), pid >> shift)
        };
        (u32::from(handle) < handles && u32::from(group) < groups)
            .then_some(PlacementId { handle, group })
    }

    /// The identifier's 16 bits.
    pub fn encode(self, rgif: u32) -> u16 {
        if rgif == 0 {
            self.handle
        } else {
            self.group << (16 - rgif) | self.handle
        }
    }
}

/// One FDP configuration (log 0x20's descriptor): the only one this drive offers,
/// configuration 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FdpConfiguration {
    /// Reclaim Group Identifier Format: bits of a Placement Identifier naming the group.
    pub rgif: u32,
    /// Volatile write cache bit of the FDPA: the FTL has none.
    pub volatile_write_cache: bool,
    pub reclaim_groups: u32,
    /// Each handle's type code (RUHT: 1 initially, 2 persistently isolated).
    pub handle_types: Vec<u8>,
    /// Most placement identifiers a namespace may use (MAXPIDS, reported 0-based).
    pub placement_ids_max: u16,
    /// Namespaces the configuration supports (NNSS): the drive has one.
    pub namespaces: u32,
    /// Reclaim Unit Nominal Size in bytes (RUNS).
    pub reclaim_unit_bytes: u64,
    /// Estimated Reclaim Unit Time Limit in seconds (ERUTL); 0: none.
    pub ru_time_limit_s: u32,
}

impl FdpConfiguration {
    /// Log 0x20 holding this configuration alone (NUMFDPC = 0, i.e. one).
    pub fn encode_log(&self) -> Vec<u8> {
        let descriptor = 64 + 4 * self.handle_types.len();
        let size = 16 + descriptor;
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(&0u16.to_le_bytes()); // NUMFDPC, 0-based
        out.push(0); // version
        out.push(0);
        out.extend_from_slice(&(size as u32).to_le_bytes());
        out.resize(16, 0);
        out.extend_from_slice(&(descriptor as u16).to_le_bytes());
        let fdpa = (self.rgif as u8 & 0x0F) | u8::from(self.volatile_write_cache) << 4 | 1 << 7;
        out.push(fdpa);
        out.push(0); // vendor specific size
        out.extend_from_slice(&self.reclaim_groups.to_le_bytes());
        out.extend_from_slice(&(self.handle_types.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.placement_ids_max.saturating_sub(1).to_le_bytes());
        out.extend_from_slice(&self.namespaces.to_le_bytes());
        out.extend_from_slice(&self.reclaim_unit_bytes.to_le_bytes());
        out.extend_from_slice(&self.ru_time_limit_s.to_le_bytes());
        out.resize(16 + 64, 0);
        for &t in &self.handle_types {
            out.extend_from_slice(&[t, 0, 0, 0]);
        }
        debug_assert_eq!(out.len(), size);
        out
    }
}

/// A handle's entry in the usage log (RUHA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleUsage {
    /// No namespace's placement handle refers to it.
    Unused,
    /// A namespace's placement handle refers to it (the host places through it).
    Host,
    /// The controller uses it for writes the host did not place.
    Controller,
}

impl HandleUsage {
    pub fn code(self) -> u8 {
        match self {
            HandleUsage::Unused => 0,
            HandleUsage::Host => 1,
            HandleUsage::Controller => 2,
        }
    }
}

/// Log 0x21's bytes for `usage` (one entry per handle).
pub fn encode_usage_log(usage: &[HandleUsage]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 8 * usage.len());
    out.extend_from_slice(&(usage.len() as u16).to_le_bytes());
    out.resize(8, 0);
    for u in usage {
        out.push(u.code());
        out.extend_from_slice(&[0; 7]);
    }
    out
}

/// Log 0x22: the endurance group's counters since the drive was formatted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FdpStatisticsLog {
    /// Host Bytes with Metadata Written (HBMW).
    pub host_bytes_written: u128,
    /// Media Bytes with Metadata Written (MBMW): host data, GC copies, filler and the
    /// firmware's own (mapping checkpoints, translation units) programmed to the flash.
    pub media_bytes_written: u128,
    /// Media Bytes Erased (MBE).
    pub media_bytes_erased: u128,
}

impl FdpStatisticsLog {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        for v in [
            self.host_bytes_written,
            self.media_bytes_written,
            self.media_bytes_erased,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.resize(64, 0);
        out
    }

    /// Media bytes written per host byte written (the write amplification), if the host
    /// wrote anything.
    pub fn waf(&self) -> Option<f64> {
        (self.host_bytes_written > 0)
            .then(|| self.media_bytes_written as f64 / self.host_bytes_written as f64)
    }
}

/// The FDP event types (the Type of an event).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FdpEventType {
    /// 0x00: a handle moved on to a new reclaim unit before its current one was full (a
    /// Reclaim Unit Handle Update).
    RuNotFullyWritten,
    /// 0x02: a controller-level reset (the power cycle of a power cut) moved handles on to
    /// new reclaim units.
    ControllerResetModifiedRuh,
    /// 0x03: a write's Placement Identifier named no placement handle; the data went to
    /// placement handle 0.
    InvalidPlacementId,
    /// 0x80: the controller replaced media of a reclaim unit (a bad block remapped).
    MediaReallocated,
    /// 0x81: the controller moved a handle on to a new reclaim unit by itself (its unit
    /// was closed after a program failure).
    ImplicitRuChange,
}

impl FdpEventType {
    pub fn code(self) -> u8 {
        match self {
            FdpEventType::RuNotFullyWritten => 0x00,
            FdpEventType::ControllerResetModifiedRuh => 0x02,
            FdpEventType::InvalidPlacementId => 0x03,
            FdpEventType::MediaReallocated => 0x80,
            FdpEventType::ImplicitRuChange => 0x81,
        }
    }

    pub fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0x00 => FdpEventType::RuNotFullyWritten,
            0x02 => FdpEventType::ControllerResetModifiedRuh,
            0x03 => FdpEventType::InvalidPlacementId,
            0x80 => FdpEventType::MediaReallocated,
            0x81 => FdpEventType::ImplicitRuChange,
            _ => return None,
        })
    }

    /// Host events (types below 0x80) and controller events are kept in separate logs.
    pub fn is_host_event(self) -> bool {
        self.code() < 0x80
    }
}

/// One FDP event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdpEvent {
    pub kind: FdpEventType,
    pub at: SimTime,
    /// The Placement Identifier involved (the PIV flag).
    pub pid: Option<u16>,
    /// The handle and reclaim group involved (the LV flag).
    pub location: Option<(u8, u16)>,
}

/// The single namespace's id, named by events about it.
const NSID: u32 = 1;

impl FdpEvent {
    /// The event's 64 bytes in log 0x23.
    pub fn encode(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[0] = self.kind.code();
        let mut flags = 0u8;
        if self.pid.is_some() {
            flags |= 1; // PIV
        }
        flags |= 1 << 1; // NSIDV: every event here concerns namespace 1
        if self.location.is_some() {
            flags |= 1 << 2; // LV
        }
        out[1] = flags;
        out[2..4].copy_from_slice(&self.pid.unwrap_or(0).to_le_bytes());
        // Timestamp: milliseconds of simulated time (the NVMe timestamp's 48-bit count).
        let ms = self.at.as_ns() / 1_000_000;
        out[4..12].copy_from_slice(&(ms & ((1 << 48) - 1)).to_le_bytes());
        out[12..16].copy_from_slice(&NSID.to_le_bytes());
        // Type-specific bytes 16..32 stay zero: a media reallocation's Number of LBAs Moved
        // is 0 here, since GC moved the unit's data before the erase found the block bad.
        if let Some((ruh, group)) = self.location {
            out[32..34].copy_from_slice(&group.to_le_bytes());
            out[34] = ruh;
        }
        out
    }
}

/// Log 0x23's bytes: the events, oldest first.
pub fn encode_events_log(events: &[FdpEvent]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + 64 * events.len());
    out.extend_from_slice(&(events.len() as u32).to_le_bytes());
    out.resize(64, 0);
    for e in events {
        out.extend_from_slice(&e.encode());
    }
    out
}

/// One Reclaim Unit Handle Status descriptor (I/O Management Receive, operation 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuhStatus {
    pub pid: u16,
    pub ruh: u16,
    /// Estimated Active Reclaim Unit Time Remaining, seconds (0: no limit).
    pub active_time_remaining_s: u32,
    /// Reclaim Unit Available Media Writes: logical blocks (512-byte sectors) the handle
    /// can still write into its current reclaim units before it moves on.
    pub available_media_writes: u64,
}

/// The status answer's bytes.
pub fn encode_ruh_status(descriptors: &[RuhStatus]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + 32 * descriptors.len());
    out.resize(14, 0);
    out.extend_from_slice(&(descriptors.len() as u16).to_le_bytes());
    for d in descriptors {
        out.extend_from_slice(&d.pid.to_le_bytes());
        out.extend_from_slice(&d.ruh.to_le_bytes());
        out.extend_from_slice(&d.active_time_remaining_s.to_le_bytes());
        out.extend_from_slice(&d.available_media_writes.to_le_bytes());
        out.extend_from_slice(&[0; 16]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_ids_split_by_rgif_and_out_of_range_ones_are_invalid() {
        assert_eq!(
            PlacementId::parse(3, 0, 8, 1),
            Some(PlacementId {
                handle: 3,
                group: 0
            })
        );
        assert_eq!(PlacementId::parse(8, 0, 8, 1), None);
        // RGIF 2: the top two bits name the group.
        let pid = PlacementId {
            handle: 5,
            group: 3,
        };
        assert_eq!(pid.encode(2), 0xC005);
        assert_eq!(PlacementId::parse(0xC005, 2, 8, 4), Some(pid));
        assert_eq!(PlacementId::parse(0xC005, 2, 8, 3), None);
    }

    #[test]
    fn logs_have_the_specified_sizes_and_fields() {
        let conf = FdpConfiguration {
            rgif: 0,
            volatile_write_cache: false,
            reclaim_groups: 1,
            handle_types: vec![1; 8],
            placement_ids_max: 8,
            namespaces: 1,
            reclaim_unit_bytes: 96 << 20,
            ru_time_limit_s: 0,
        };
        let b = conf.encode_log();
        assert_eq!(b.len(), 16 + 64 + 8 * 4);
        assert_eq!(
            u32::from_le_bytes(b[4..8].try_into().unwrap()),
            b.len() as u32
        );
        assert_eq!(b[18], 0x80, "FDPA: valid, RGIF 0");
        assert_eq!(u16::from_le_bytes(b[24..26].try_into().unwrap()), 8, "NRUH");
        assert_eq!(
            u16::from_le_bytes(b[26..28].try_into().unwrap()),
            7,
            "MAXPIDS 0-based"
        );
        assert_eq!(
            u64::from_le_bytes(b[32..40].try_into().unwrap()),
            96 << 20,
            "RUNS"
        );
        assert_eq!(b[80], 1, "first RUHT");
        let u = encode_usage_log(&[HandleUsage::Host, HandleUsage::Unused]);
        assert_eq!((u.len(), u[0], u[8], u[16]), (24, 2, 1, 0));
        let s = FdpStatisticsLog {
            host_bytes_written: 10,
            media_bytes_written: 25,
            media_bytes_erased: 7,
        };
        let e = s.encode();
        assert_eq!((e.len(), e[0], e[16], e[32]), (64, 10, 25, 7));
        assert_eq!(s.waf(), Some(2.5));
        let ev = FdpEvent {
            kind: FdpEventType::MediaReallocated,
            at: SimTime(3_000_000),
            pid: None,
            location: Some((4, 0)),
        };
        let log = encode_events_log(&[ev]);
        assert_eq!(log.len(), 128);
        assert_eq!(
            (log[64], log[65], log[68], log[82], log[98]),
            (0x80, 0b110, 3, 0, 4)
        );
        let st = encode_ruh_status(&[RuhStatus {
            pid: 1,
            ruh: 1,
            active_time_remaining_s: 0,
            available_media_writes: 9,
        }]);
        assert_eq!((st.len(), st[14], st[16], st[24]), (48, 1, 1, 9));
    }
}
