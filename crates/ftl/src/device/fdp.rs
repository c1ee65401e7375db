//! Flexible Data Placement on the device (`crate::fdp`): writes carrying a placement
//! directive go to their handle's host lane; the handle of every logical unit is kept, so
//! that GC copies name it and the statistics can split media writes by handle; the logs
//! (configurations, handle usage, statistics, events) and the I/O Management commands
//! (Reclaim Unit Handle Status and Update) are answered from the device's state.
//!
//! The counters and the event logs are saved in every mapping checkpoint with the handle of
//! every unit, so after a power cut they come back as of the last checkpoint (what a drive's
//! persistent logs do: they are written at intervals, not at every write); recovery then
//! logs a Controller Level Reset Modified RUHs event for each handle whose reclaim unit the
//! cut left part-written (`recovery.rs`).

use super::alloc::Stream;
use super::jobs::FillUnit;
use super::{Device, Event};
use crate::config::PAGE_MAP_UNIT_BYTES;
use crate::fdp::config::HandleType;
use crate::fdp::log::{encode_events_log, encode_ruh_status, encode_usage_log};
use crate::fdp::{
    FdpConfiguration, FdpError, FdpEvent, FdpEventType, FdpLog, FdpStatisticsLog, HandleUsage,
    PlacementId, RuhStatus, EVENTS_MAX,
};
use crate::layout::{Layout, Lun, Pgn, SbId};
use nearflash_blockdev::{BlockOp, BlockRequest, SECTOR_BYTES};
use nearflash_sim::{Schedule, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// FDP's counters (`FtlStats::fdp`; absent while FDP is off). The first three are the FDP
/// Statistics log's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FdpStats {
    /// Bytes the host wrote (HBMW).
    pub host_bytes_written: u64,
    /// Bytes programmed to the flash (MBMW): host and GC programs with their filler, and
    /// mapping checkpoints.
    pub media_bytes_written: u64,
    /// Bytes of blocks erased (MBE).
    pub media_bytes_erased: u64,
    /// Per handle (placement handle `i` = handle `i`).
    pub handles: Vec<HandleStats>,
    /// Filler of GC programs into superblocks shared by initially isolated handles: no
    /// handle's.
    pub shared_filler_bytes: u64,
    pub ruh_updates: u64,
    /// Writes whose Placement Identifier named no handle (placed by handle 0).
    pub invalid_placement_ids: u64,
    /// Events overwritten in a full event log.
    pub events_dropped: u64,
}

/// One handle's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HandleStats {
    pub host_bytes_written: u64,
    /// Bytes programmed with the handle's data: its units written by the host or copied by
    /// GC, and the filler of its own superblocks' programs.
    pub media_bytes_written: u64,
    /// Bytes of its units GC moved.
    pub gc_bytes_copied: u64,
}

impl HandleStats {
    /// The handle's write amplification: media bytes per host byte.
    pub fn waf(&self) -> Option<f64> {
        (self.host_bytes_written > 0)
            .then(|| self.media_bytes_written as f64 / self.host_bytes_written as f64)
    }
}

/// What FDP adds to the device's RAM.
#[derive(Clone)]
pub(crate) struct FdpState {
    handles: u32,
    groups: u32,
    rgif: u32,
    handle_type: HandleType,
    /// The handle of each logical unit's newest mapped version (0 if never written).
    unit_ruh: Vec<u8>,
    host_events: VecDeque<FdpEvent>,
    ctrl_events: VecDeque<FdpEvent>,
    /// Per placement handle, the event types the FDP Events feature (0x1E) enables, one bit per
    /// type ([`event_bit`]). Held in RAM only, as a feature that is not saveable: a power cycle
    /// brings back the default.
    events_enabled: Vec<u8>,
}

/// Every event type the FDP Events feature can name (STANDARDS §3.3): RU not fully written
/// 0x00, RU active time limit exceeded 0x01 (never raised here: the model has no time limit),
/// controller reset modified RUHs 0x02, invalid placement identifier 0x03, media reallocated
/// 0x80, implicitly modified RUH 0x81.
pub const EVENT_TYPES: [u8; 6] = [0x00, 0x01, 0x02, 0x03, 0x80, 0x81];

/// The default enabled set: every type. Assumption — the specification's default was not
/// recovered (STANDARDS §3.3 lists the feature only); every type on keeps the events log what it
/// was before the feature existed.
const EVENTS_ENABLED_DEFAULT: u8 = (1 << EVENT_TYPES.len()) - 1;

/// Bytes of one descriptor in Get Features FDP Events' answer: the type, then its attributes
/// (bit 0 = enabled).
pub const EVENT_DESCRIPTOR_BYTES: usize = 2;

/// Event type `code`'s bit in a handle's enabled set (its index in [`EVENT_TYPES`], as QEMU's
/// `nvme_fdp_evf_shifts` packs them); `None` for a type FDP does not define.
fn event_bit(code: u8) -> Option<u8> {
    EVENT_TYPES.iter().position(|&t| t == code).map(|i| 1 << i)
}

impl FdpState {
    pub fn new(cfg: &crate::fdp::FdpConfig, layout: &Layout) -> FdpState {
        assert!(cfg.enabled && cfg.handles <= crate::fdp::HANDLES_MAX);
        FdpState {
            handles: cfg.handles,
            groups: cfg.reclaim_groups,
            rgif: cfg.rgif_bits(),
            handle_type: cfg.handle_type,
            unit_ruh: vec![0; layout.logical_entries() as usize],
            host_events: VecDeque::with_capacity(EVENTS_MAX),
            ctrl_events: VecDeque::with_capacity(EVENTS_MAX),
            events_enabled: vec![EVENTS_ENABLED_DEFAULT; cfg.handles as usize],
        }
    }

    /// The host lane of (handle, group).
    fn lane(&self, id: PlacementId) -> u16 {
        id.handle * self.groups as u16 + id.group
    }

    fn lane_id(&self, lane: u16) -> PlacementId {
        PlacementId {
            handle: lane / self.groups as u16,
            group: lane % self.groups as u16,
        }
    }
}

impl Device {
    /// Submits a write carrying a Data Placement directive (DTYPE 2) whose DSPEC is the
    /// Placement Identifier `pid`: its units go to the reclaim units of the handle and group
    /// it names. An identifier naming no placement handle is not an error: the write goes
    /// to placement handle 0 (reclaim group 0) and an Invalid Placement Identifier event is
    /// logged, as FEMU's and QEMU's FDP do. Any other command, or a drive without FDP,
    /// ignores the directive.
    pub fn submit_placed(&mut self, req: BlockRequest, pid: u16, q: &mut impl Schedule<Event>) {
        let lane = match (&self.fdp, req.op) {
            (Some(f), BlockOp::Write) => {
                match PlacementId::parse(pid, f.rgif, f.handles, f.groups) {
                    Some(id) => f.lane(id),
                    None => {
                        self.fdp_stats().invalid_placement_ids += 1;
                        self.log_event(FdpEvent {
                            kind: FdpEventType::InvalidPlacementId,
                            at: q.now(),
                            pid: Some(pid),
                            location: None,
                        });
                        0
                    }
                }
            }
            _ => 0,
        };
        self.submit_on(req, lane, q);
    }

    /// I/O Management Send, Reclaim Unit Handle Update: each identifier's handle moves on
    /// to new reclaim units in its group. A unit left part-written is closed (GC reclaims
    /// its unwritten rest with it) and logged as Reclaim Unit Not Fully Written. Refused
    /// whole, updating nothing, if any identifier names no placement handle.
    pub fn ruh_update(&mut self, pids: &[u16], now: SimTime) -> Result<(), FdpError> {
        let f = self.fdp.as_ref().ok_or(FdpError::Disabled)?;
        let ids = pids
            .iter()
            .map(|&pid| {
                PlacementId::parse(pid, f.rgif, f.handles, f.groups)
                    .map(|id| (pid, id, f.lane(id)))
                    .ok_or(FdpError::InvalidPlacementId { pid })
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (pid, id, lane) in ids {
            let stream = Stream::Host(lane);
            for i in 0..self.points(stream).len() {
                let Some(wp) = self.points(stream)[i] else {
                    continue;
                };
                if wp.next_page == 0 {
                    continue;
                }
                if wp.next_page < self.sb_capacity(wp.sb) {
                    self.log_event(FdpEvent {
                        kind: FdpEventType::RuNotFullyWritten,
                        at: now,
                        pid: Some(pid),
                        location: Some((id.handle as u8, id.group)),
                    });
                }
                self.close_point(stream, i, wp.sb);
            }
            self.fdp_stats().ruh_updates += 1;
        }
        Ok(())
    }

    /// I/O Management Receive, Reclaim Unit Handle Status: for every placement identifier
    /// of the namespace, its handle and the logical blocks its current reclaim units can
    /// still take.
    pub fn ruh_status(&self) -> Result<Vec<RuhStatus>, FdpError> {
        let f = self.fdp.as_ref().ok_or(FdpError::Disabled)?;
        let sectors_per_group = self.layout.group_bytes() / SECTOR_BYTES;
        let mut out = Vec::new();
        for lane in 0..self.host_lanes.len() as u16 {
            let id = f.lane_id(lane);
            let groups_left: u64 = self
                .points(Stream::Host(lane))
                .iter()
                .map(|p| match p {
                    Some(wp) => u64::from(self.sb_capacity(wp.sb) - wp.next_page),
                    None => u64::from(self.layout.groups_per_superblock()),
                })
                .sum();
            out.push(RuhStatus {
                pid: id.encode(f.rgif),
                ruh: id.handle,
                active_time_remaining_s: 0,
                available_media_writes: groups_left * sectors_per_group,
            });
        }
        Ok(out)
    }

    /// The FDP configuration the drive offers (log 0x20's only descriptor).
    pub fn fdp_configuration(&self) -> Result<FdpConfiguration, FdpError> {
        self.fdp.as_ref().ok_or(FdpError::Disabled)?;
        Ok(self.fdp_configuration_offered())
    }

    /// The configuration of the preset's `[fdp]` table, whether FDP is on or not: what log
    /// 0x20 lists (with FDP off, what enabling it would give).
    pub fn fdp_configuration_offered(&self) -> FdpConfiguration {
        let c = &self.cfg.fdp;
        FdpConfiguration {
            rgif: c.rgif_bits(),
            volatile_write_cache: false,
            reclaim_groups: c.reclaim_groups,
            handle_types: vec![c.handle_type.code(); c.handles as usize],
            placement_ids_max: c.handles as u16,
            namespaces: 1,
            reclaim_unit_bytes: self.reclaim_unit_bytes(),
            ru_time_limit_s: 0,
        }
    }

    /// Reclaim Unit Nominal Size: a superblock's host data.
    pub fn reclaim_unit_bytes(&self) -> u64 {
        u64::from(self.layout.groups_per_superblock()) * self.layout.group_bytes()
    }

    /// Log 0x21: every handle is a placement handle of the namespace.
    pub fn ruh_usage(&self) -> Result<Vec<HandleUsage>, FdpError> {
        let f = self.fdp.as_ref().ok_or(FdpError::Disabled)?;
        Ok(vec![HandleUsage::Host; f.handles as usize])
    }

    /// Log 0x22.
    pub fn fdp_statistics(&self) -> Result<FdpStatisticsLog, FdpError> {
        let s = self.stats.fdp.as_ref().ok_or(FdpError::Disabled)?;
        Ok(FdpStatisticsLog {
            host_bytes_written: u128::from(s.host_bytes_written),
            media_bytes_written: u128::from(s.media_bytes_written),
            media_bytes_erased: u128::from(s.media_bytes_erased),
        })
    }

    /// Log 0x23: the host events (types below 0x80) or the controller's, oldest first.
    pub fn fdp_events(&self, controller: bool) -> Result<Vec<FdpEvent>, FdpError> {
        let f = self.fdp.as_ref().ok_or(FdpError::Disabled)?;
        let ring = if controller {
            &f.ctrl_events
        } else {
            &f.host_events
        };
        Ok(ring.iter().copied().collect())
    }

    /// A log page's bytes as Get Log Page returns them.
    pub fn fdp_log(&self, which: FdpLog) -> Result<Vec<u8>, FdpError> {
        Ok(match which {
            FdpLog::Configurations => self.fdp_configuration()?.encode_log(),
            FdpLog::RuhUsage => encode_usage_log(&self.ruh_usage()?),
            FdpLog::Statistics => self.fdp_statistics()?.encode(),
            FdpLog::HostEvents => encode_events_log(&self.fdp_events(false)?),
            FdpLog::ControllerEvents => encode_events_log(&self.fdp_events(true)?),
        })
    }

    /// Answers one of FDP's management commands as the NVMe front end hands it over: Get Log
    /// Page 0x20–0x23 (the events log's log specific field bit 0: the host's events when set,
    /// the controller's when clear),
    /// I/O Management Receive and Send with management operation 1 (Reclaim Unit Handle Status
    /// and Update), Set and Get Features for FDP (0x1D) and FDP Events (0x1E). Refused with the
    /// spec's statuses, in QEMU's order (`hw/nvme/ctrl.c`): an unknown log, Invalid Log Page;
    /// another management operation, Invalid Field; then, with FDP off, FDP Disabled (0x29) for
    /// every command but the Configurations log (answered either way, as `nvme_fdp_confs`
    /// does, so a host can read what enabling would give) and the FDP feature's own; a
    /// Placement Identifier naming no handle, Invalid Field; the FDP feature's and the FDP
    /// Events feature's as their methods say.
    pub fn answer_mgmt(
        &mut self,
        cmd: &nearflash_blockdev::MgmtCommand,
        now: SimTime,
    ) -> Result<Vec<u8>, nearflash_blockdev::MgmtStatus> {
        use nearflash_blockdev::{mgmt::MO_RUH, MgmtCommand, MgmtStatus};
        let status = |e: FdpError| match e {
            FdpError::Disabled => MgmtStatus::FdpDisabled,
            e @ FdpError::InvalidPlacementId { .. } => MgmtStatus::InvalidField {
                reason: e.to_string(),
            },
        };
        let bad_mo = |mo: u8| MgmtStatus::InvalidField {
            reason: format!("management operation {mo:#04x} (FDP defines {MO_RUH:#04x} only)"),
        };
        match cmd {
            MgmtCommand::GetLogPage { lid, lsp } => {
                // LSP bit 0 set: the host's events (QEMU's `nvme_fdp_events`).
                let which = FdpLog::from_lid(*lid, *lsp & 1 == 0)
                    .ok_or(MgmtStatus::InvalidLogPage { lid: *lid })?;
                if which == FdpLog::Configurations {
                    return Ok(self.fdp_configuration_offered().encode_log());
                }
                self.fdp_log(which).map_err(status)
            }
            MgmtCommand::IoManagementReceive { mo } if *mo == MO_RUH => {
                self.ruh_status_bytes().map_err(status)
            }
            MgmtCommand::IoManagementSend { mo, pids } if *mo == MO_RUH => {
                self.ruh_update(pids, now).map_err(status)?;
                Ok(Vec::new())
            }
            MgmtCommand::IoManagementReceive { mo } | MgmtCommand::IoManagementSend { mo, .. } => {
                Err(bad_mo(*mo))
            }
            MgmtCommand::SetFdp {
                enable: _,
                config_index,
            } => {
                // The fields first: the one configuration log 0x20 offers is index 0, and a
                // drive without FDP offers none.
                if self.fdp.is_none() || *config_index != 0 {
                    return Err(MgmtStatus::InvalidField {
                        reason: format!(
                            "FDP configuration index {config_index} names no configuration of \
                             log 0x20"
                        ),
                    });
                }
                // FDP changes only with no namespace in the endurance group (QEMU's
                // `nvme_set_feature_fdp`: "abort with cmd seq err if there's one or more NS' in
                // endgrp"); namespace 1 always exists here.
                Err(MgmtStatus::CommandSequenceError {
                    reason: "FDP changes only while no namespace exists in the endurance group \
                             (namespace 1 exists)"
                        .to_string(),
                })
            }
            MgmtCommand::GetFdp => Ok(self.fdp_feature_dword().to_le_bytes().to_vec()),
            MgmtCommand::SetFdpEvents {
                handle,
                enable,
                types,
            } => {
                self.set_fdp_events(*handle, *enable, types)?;
                Ok(Vec::new())
            }
            MgmtCommand::GetFdpEvents { handle, noet } => {
                self.fdp_events_descriptors(*handle, *noet)
            }
        }
    }

    /// The completion entry's Dword 0 of command `cmd` answered with `answer`: Get Features
    /// FDP's value, Get Features FDP Events' number of descriptors returned (QEMU's
    /// `req->cqe.result = nentries`); 0 for every other command and on an error.
    pub fn mgmt_dword0(
        cmd: &nearflash_blockdev::MgmtCommand,
        answer: &Result<Vec<u8>, nearflash_blockdev::MgmtStatus>,
    ) -> u32 {
        use nearflash_blockdev::MgmtCommand;
        match (cmd, answer) {
            (MgmtCommand::GetFdp, Ok(b)) => {
                u32::from_le_bytes(b[..4].try_into().expect("4 bytes of Dword 0"))
            }
            (MgmtCommand::GetFdpEvents { noet, .. }, Ok(_)) => {
                u32::from(*noet).min(EVENT_TYPES.len() as u32)
            }
            _ => 0,
        }
    }

    /// Get Features FDP's Dword 0: bit 0 FDP Enable, bits 15:8 the configuration index (0, the
    /// only one; 0 too while disabled).
    pub fn fdp_feature_dword(&self) -> u32 {
        u32::from(self.fdp.is_some())
    }

    /// Set Features FDP Events: enables (or disables) event types `types` for placement handle
    /// `handle`; the events log then records an event of a handle only if its type is enabled.
    /// Refused whole, changing nothing: FDP Disabled without FDP, Invalid Field for a handle the
    /// namespace lacks or a type FDP does not define (assumption: QEMU ignores such a type).
    pub fn set_fdp_events(
        &mut self,
        handle: u16,
        enable: bool,
        types: &[u8],
    ) -> Result<(), nearflash_blockdev::MgmtStatus> {
        use nearflash_blockdev::MgmtStatus;
        let f = self.fdp.as_mut().ok_or(MgmtStatus::FdpDisabled)?;
        let slot = f
            .events_enabled
            .get_mut(usize::from(handle))
            .ok_or_else(|| MgmtStatus::InvalidField {
                reason: format!("placement handle {handle} is not one of the namespace's"),
            })?;
        let mut mask = 0u8;
        for &t in types {
            mask |= event_bit(t).ok_or_else(|| MgmtStatus::InvalidField {
                reason: format!("FDP event type {t:#04x} is not defined"),
            })?;
        }
        if enable {
            *slot |= mask;
        } else {
            *slot &= !mask;
        }
        Ok(())
    }

    /// Get Features FDP Events for placement handle `handle`: NOET descriptors, one for each
    /// of the first `noet` event types the drive supports (in type order), zero past them
    /// (QEMU's `nvme_get_feature_fdp_events` fills a buffer of NOET descriptors). Refused:
    /// FDP Disabled without FDP; Invalid Field for a handle the namespace lacks, then for NOET
    /// 0 (QEMU's order).
    pub fn fdp_events_descriptors(
        &self,
        handle: u16,
        noet: u8,
    ) -> Result<Vec<u8>, nearflash_blockdev::MgmtStatus> {
        use nearflash_blockdev::MgmtStatus;
        let f = self.fdp.as_ref().ok_or(MgmtStatus::FdpDisabled)?;
        let enabled =
            *f.events_enabled
                .get(usize::from(handle))
                .ok_or_else(|| MgmtStatus::InvalidField {
                    reason: format!("placement handle {handle} is not one of the namespace's"),
                })?;
        if noet == 0 {
            return Err(MgmtStatus::InvalidField {
                reason: "Get Features FDP Events with NOET 0 asks for no event type".into(),
            });
        }
        let mut out = vec![0; usize::from(noet) * EVENT_DESCRIPTOR_BYTES];
        for (t, d) in EVENT_TYPES
            .iter()
            .zip(out.chunks_exact_mut(EVENT_DESCRIPTOR_BYTES))
        {
            let bit = event_bit(*t).expect("a type of the table");
            d.copy_from_slice(&[*t, u8::from(enabled & bit != 0)]);
        }
        Ok(out)
    }

    /// The status answer's bytes (I/O Management Receive).
    pub fn ruh_status_bytes(&self) -> Result<Vec<u8>, FdpError> {
        Ok(encode_ruh_status(&self.ruh_status()?))
    }

    /// The handle whose data unit `lun` holds (0 without FDP).
    pub fn unit_handle(&self, lun: u32) -> u8 {
        self.unit_ruh(Lun(lun))
    }

    // ---- the firmware's side ----

    /// Records `e` if its handle has its type enabled (FDP Events feature): the handle it
    /// names, or placement handle 0 for an invalid Placement Identifier (whose data went
    /// there); an event naming no handle (media reallocated in a shared superblock) is always
    /// recorded.
    pub(super) fn log_event(&mut self, e: FdpEvent) {
        let Some(f) = self.fdp.as_mut() else {
            return;
        };
        let handle = match (e.location, e.kind) {
            (Some((ruh, _)), _) => Some(usize::from(ruh)),
            (None, FdpEventType::InvalidPlacementId) => Some(0),
            (None, _) => None,
        };
        if let Some(h) = handle {
            let bit = event_bit(e.kind.code()).expect("every raised type is defined");
            if f.events_enabled[h] & bit == 0 {
                return;
            }
        }
        let ring = if e.kind.is_host_event() {
            &mut f.host_events
        } else {
            &mut f.ctrl_events
        };
        if ring.len() == EVENTS_MAX {
            ring.pop_front();
            self.fdp_stats().events_dropped += 1;
        }
        let f = self.fdp.as_mut().expect("checked above");
        let ring = if e.kind.is_host_event() {
            &mut f.host_events
        } else {
            &mut f.ctrl_events
        };
        ring.push_back(e);
        debug_assert!(ring.len() <= EVENTS_MAX);
    }

    fn fdp_stats(&mut self) -> &mut FdpStats {
        self.stats
            .fdp
            .as_mut()
            .expect("FDP counters exist while FDP is on")
    }

    /// The handle of host lane `lane`'s writes (0 without FDP).
    pub(super) fn host_lane_ruh(&self, lane: u16) -> u8 {
        match &self.fdp {
            Some(f) => f.lane_id(lane).handle as u8,
            None => 0,
        }
    }

    /// The handle whose data alone a superblock opened by `stream` will hold: a host lane's,
    /// or a persistently isolated handle's GC lane's; `None` without FDP, for the shared GC
    /// lanes of initially isolated handles and for SLC.
    pub(super) fn lane_ruh(&self, stream: Stream) -> Option<u8> {
        let f = self.fdp.as_ref()?;
        match stream {
            Stream::Host(l) => Some(f.lane_id(l).handle as u8),
            Stream::Gc(l) if f.handle_type == HandleType::PersistentlyIsolated => {
                Some(f.lane_id(l).handle as u8)
            }
            Stream::Gc(_) | Stream::Slc => None,
        }
    }

    /// The GC lane a victim's copies go to: its reclaim group's, and for a persistently
    /// isolated handle's superblock that handle's (0 without FDP).
    pub(super) fn gc_lane_of(&self, sb: SbId) -> u16 {
        let Some(f) = self.fdp.as_ref() else {
            return 0;
        };
        let group = (self.layout.way_of(sb) / self.layout.write_points()) as u16;
        match f.handle_type {
            HandleType::InitiallyIsolated => group,
            HandleType::PersistentlyIsolated => {
                let handle = u16::from(self.sbs.get(sb).ruh.unwrap_or(0));
                f.lane(PlacementId { handle, group })
            }
        }
    }

    /// The handle of unit `lun`'s data (0 without FDP).
    pub(super) fn unit_ruh(&self, lun: Lun) -> u8 {
        self.fdp
            .as_ref()
            .and_then(|f| f.unit_ruh.get(lun.0 as usize).copied())
            .unwrap_or(0)
    }

    /// A host version of unit `lun` written through handle `ruh` is now mapped.
    pub(super) fn fdp_note_mapped(&mut self, lun: Lun, ruh: u8) {
        if let Some(f) = self.fdp.as_mut() {
            f.unit_ruh[lun.0 as usize] = ruh;
        }
    }

    pub(super) fn fdp_note_host_write(&mut self, lane: u16, bytes: u64) {
        if self.fdp.is_none() {
            return;
        }
        let ruh = self.host_lane_ruh(lane) as usize;
        let s = self.fdp_stats();
        s.host_bytes_written += bytes;
        s.handles[ruh].host_bytes_written += bytes;
    }

    /// GC moved a unit of handle `ruh`.
    pub(super) fn fdp_note_gc_copied(&mut self, ruh: u8) {
        if self.fdp.is_some() {
            self.fdp_stats().handles[ruh as usize].gc_bytes_copied += PAGE_MAP_UNIT_BYTES;
        }
    }

    /// A fill of `cap` unit slots was programmed into `pgn` holding `units` (the rest
    /// filler): media bytes, split by handle.
    pub(super) fn fdp_note_fill_programmed(&mut self, pgn: Pgn, units: &[FillUnit], cap: u32) {
        if self.fdp.is_none() {
            return;
        }
        let owner = self.sbs.get(self.layout.sb_of(pgn)).ruh;
        let pads = u64::from(cap) - units.len() as u64;
        let s = self.fdp_stats();
        s.media_bytes_written += u64::from(cap) * PAGE_MAP_UNIT_BYTES;
        for u in units {
            s.handles[u.ruh as usize].media_bytes_written += PAGE_MAP_UNIT_BYTES;
        }
        match owner {
            Some(h) => s.handles[h as usize].media_bytes_written += pads * PAGE_MAP_UNIT_BYTES,
            None => s.shared_filler_bytes += pads * PAGE_MAP_UNIT_BYTES,
        }
    }

    /// The firmware programmed or erased `bytes` of its own (checkpoints) or erased blocks.
    pub(super) fn fdp_note_media(&mut self, programmed: u64, erased: u64) {
        if self.fdp.is_some() {
            let s = self.fdp_stats();
            s.media_bytes_written += programmed;
            s.media_bytes_erased += erased;
        }
    }

    /// A write point of `stream` is closed before `sb` is full because a program failed:
    /// the controller moved a handle on by itself. (The event is timed at the superblock's
    /// last allocation: the failure surfaces in a completion handler that has no clock.)
    pub(super) fn note_ru_closed_early(&mut self, stream: Stream, sb: SbId) {
        if let (Stream::Host(lane), Some(f)) = (stream, self.fdp.as_ref()) {
            let id = f.lane_id(lane);
            let at = self.sbs.get(sb).last_write;
            self.log_event(FdpEvent {
                kind: FdpEventType::ImplicitRuChange,
                at,
                pid: Some(id.encode(f.rgif)),
                location: Some((id.handle as u8, id.group)),
            });
        }
    }

    /// Superblock `sb`, which held handle `ruh`'s data, had bad blocks replaced by spares.
    pub(super) fn note_media_reallocated(&mut self, sb: SbId, ruh: Option<u8>, at: SimTime) {
        if self.fdp.is_none() {
            return;
        }
        let group = (self.layout.way_of(sb) / self.layout.write_points()) as u16;
        self.log_event(FdpEvent {
            kind: FdpEventType::MediaReallocated,
            at,
            pid: None,
            location: ruh.map(|h| (h, group)),
        });
    }

    /// FDP's checkpoint section (empty while off; `crate::fdp::checkpoint_bytes` long).
    pub(crate) fn fdp_snapshot(&self) -> Vec<u8> {
        let (Some(f), Some(s)) = (self.fdp.as_ref(), self.stats.fdp.as_ref()) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(crate::fdp::checkpoint_bytes(
            &self.cfg.fdp,
            self.layout.logical_entries(),
        ) as usize);
        out.extend_from_slice(&f.unit_ruh);
        for v in [
            s.host_bytes_written,
            s.media_bytes_written,
            s.media_bytes_erased,
            s.shared_filler_bytes,
            s.ruh_updates,
            s.invalid_placement_ids,
            s.events_dropped,
            0,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for h in &s.handles {
            for v in [
                h.host_bytes_written,
                h.media_bytes_written,
                h.gc_bytes_copied,
            ] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        for ring in [&f.host_events, &f.ctrl_events] {
            out.extend_from_slice(&(ring.len() as u32).to_le_bytes());
            for i in 0..EVENTS_MAX {
                let mut e = [0u8; crate::fdp::EVENT_BYTES as usize];
                if let Some(ev) = ring.get(i) {
                    e[0] = ev.kind.code();
                    e[1] = u8::from(ev.pid.is_some()) | u8::from(ev.location.is_some()) << 1;
                    e[2..4].copy_from_slice(&ev.pid.unwrap_or(0).to_le_bytes());
                    let (ruh, group) = ev.location.unwrap_or((0, 0));
                    e[4] = ruh;
                    e[6..8].copy_from_slice(&group.to_le_bytes());
                    e[8..16].copy_from_slice(&ev.at.as_ns().to_le_bytes());
                }
                out.extend_from_slice(&e);
            }
        }
        debug_assert_eq!(
            out.len() as u64,
            crate::fdp::checkpoint_bytes(&self.cfg.fdp, self.layout.logical_entries())
        );
        out
    }

    /// Recovery: takes back what checkpoint section `b` saved. False if it does not decode
    /// (then the logs start over, and units' handles come from the scan alone).
    pub(crate) fn fdp_restore(&mut self, b: &[u8]) -> bool {
        let n = self.layout.logical_entries() as usize;
        if self.fdp.is_none()
            || b.len() as u64 != crate::fdp::checkpoint_bytes(&self.cfg.fdp, n as u64)
        {
            return false;
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let handles = self.cfg.fdp.handles as usize;
        let mut at = n;
        let c: Vec<u64> = (0..8).map(|k| u64_at(at + 8 * k)).collect();
        at += crate::fdp::COUNTERS_BYTES as usize;
        let mut per = Vec::with_capacity(handles);
        for _ in 0..handles {
            per.push(HandleStats {
                host_bytes_written: u64_at(at),
                media_bytes_written: u64_at(at + 8),
                gc_bytes_copied: u64_at(at + 16),
            });
            at += crate::fdp::HANDLE_COUNTERS_BYTES as usize;
        }
        let mut rings = [VecDeque::new(), VecDeque::new()];
        for ring in &mut rings {
            let count = u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as usize;
            at += 4;
            if count > EVENTS_MAX {
                return false;
            }
            for i in 0..EVENTS_MAX {
                let e = &b[at + i * crate::fdp::EVENT_BYTES as usize..];
                if i < count {
                    let Some(kind) = FdpEventType::from_code(e[0]) else {
                        return false;
                    };
                    ring.push_back(FdpEvent {
                        kind,
                        at: SimTime(u64::from_le_bytes(e[8..16].try_into().expect("8 bytes"))),
                        pid: (e[1] & 1 != 0)
                            .then(|| u16::from_le_bytes(e[2..4].try_into().expect("2 bytes"))),
                        location: (e[1] & 2 != 0).then(|| {
                            (
                                e[4],
                                u16::from_le_bytes(e[6..8].try_into().expect("2 bytes")),
                            )
                        }),
                    });
                }
            }
            at += EVENTS_MAX * crate::fdp::EVENT_BYTES as usize;
        }
        debug_assert_eq!(at, b.len());
        let f = self.fdp.as_mut().expect("checked above");
        f.unit_ruh.copy_from_slice(&b[..n]);
        let [host, ctrl] = rings;
        f.host_events = host;
        f.ctrl_events = ctrl;
        *self.fdp_stats() = FdpStats {
            host_bytes_written: c[0],
            media_bytes_written: c[1],
            media_bytes_erased: c[2],
            handles: per,
            shared_filler_bytes: c[3],
            ruh_updates: c[4],
            invalid_placement_ids: c[5],
            events_dropped: c[6],
        };
        true
    }

    /// Recovery: the power cycle left handle `ruh`'s reclaim unit part-written, and the
    /// handle moves on to a new one.
    pub(crate) fn note_controller_reset(&mut self, ruh: u8, at: SimTime) {
        let Some(f) = self.fdp.as_ref() else {
            return;
        };
        let id = PlacementId {
            handle: u16::from(ruh),
            group: 0,
        };
        let pid = id.encode(f.rgif);
        self.log_event(FdpEvent {
            kind: FdpEventType::ControllerResetModifiedRuh,
            at,
            pid: Some(pid),
            location: Some((ruh, 0)),
        });
    }

    /// Recovery: unit `lun`'s recovered version belongs to handle `ruh`.
    pub(crate) fn fdp_set_unit_ruh(&mut self, lun: u32, ruh: u8) {
        if let Some(f) = self.fdp.as_mut() {
            if let Some(slot) = f.unit_ruh.get_mut(lun as usize) {
                *slot = ruh;
            }
        }
    }

    /// Isolation, checked with the other invariants: a superblock a handle owns holds only
    /// that handle's units; a host superblock of a handle (persistently isolated or not)
    /// never holds another handle's host writes.
    pub(super) fn check_fdp_invariants(&self) {
        let Some(f) = self.fdp.as_ref() else {
            return;
        };
        assert_eq!(
            self.stats.fdp.as_ref().map(|s| s.handles.len()),
            Some(f.handles as usize)
        );
        for s in 0..self.layout.data_superblocks() {
            let sb = SbId(s);
            let Some(owner) = self.sbs.get(sb).ruh else {
                continue;
            };
            assert!(
                u32::from(owner) < f.handles,
                "superblock {s} owned by no handle"
            );
            let first = self.layout.pgn(sb, 0);
            let upg = self.layout.units_per_group();
            for g in 0..self.layout.groups_per_superblock() {
                for slot in 0..upg {
                    let pun = self.layout.pun(Pgn(first.0 + g), slot);
                    if let Some(lun) = self.map.unit_owner(pun) {
                        assert_eq!(
                            f.unit_ruh[lun.0 as usize], owner,
                            "superblock {s} of handle {owner} holds unit {} of another handle",
                            lun.0
                        );
                    }
                }
            }
        }
    }
}

/// Counters FDP starts with: one entry per handle.
pub(super) fn initial_stats(cfg: &crate::fdp::FdpConfig) -> FdpStats {
    FdpStats {
        handles: vec![HandleStats::default(); cfg.handles as usize],
        ..FdpStats::default()
    }
}
