//! Power-cut recovery of the zoned drive. There is no mapping table and no checkpoint: each
//! zone's rows say what they hold in their spare areas, so a zone is recovered by reading
//! its rows in order until the first row whose every page is erased.
//!
//! - A row whose every page decodes with one record is *valid*: a data row (its zone-relative
//!   sectors), or a Finish mark. Anything else (a program torn or dropped on some channel, a
//!   torn erase's garbage) is *torn*: skipped, but it occupies its row, and later rows may
//!   still be valid (written after an earlier recovery).
//! - Data rows chain: each starts where the previous one ended. The write pointer is the end
//!   of the chain, so it never falls below acknowledged data (a write is acknowledged only
//!   once all its rows are programmed, and each die programs a zone's rows in order).
//! - State: a zone with a bad block is Read Only if it holds data, else Offline; a Finish
//!   mark, a full chain, or no row left makes it Full; no data makes it Empty (erased first
//!   if torn rows are in its blocks); a zone whose last row reached only some of its blocks
//!   (their page frontiers differ, so no next row could be programmed in page order) is
//!   finished by the controller; otherwise Closed — open zones do not survive the
//!   controller's RAM. A zone that would exceed the active limit (possible only when an
//!   unacknowledged Reset was lost) is finished by the controller.
//!
//! Tolerates any torn state the backbone's power cut leaves. Functional fidelity only.

use super::config::ZnsConfig;
use super::device::ZonedDevice;
use super::zone::ZoneState;
use crate::config::FtlConfig;
use crate::layout::SbId;
use crate::oob::{OobRecord, PageKind};
use nearflash_flash::{Backbone, PageState};
use serde::Serialize;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ZnsRecoveryError {
    #[error("recovery needs page data: the device ran in timing fidelity")]
    NoData,
}

/// What recovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZnsRecoveryReport {
    pub pages_read: u64,
    pub data_rows: u64,
    pub torn_rows: u64,
    /// Valid data rows that did not continue their zone's chain (never expected).
    pub unchained_rows: u64,
    pub finish_marks: u64,
    pub zones_closed: u32,
    pub zones_full: u32,
    pub zones_read_only: u32,
    pub zones_offline: u32,
    pub zones_needing_erase: u32,
}

/// Mounts the zoned drive from what its flash holds after a power cut.
pub fn recover(
    mut bb: Backbone,
    ftl: &FtlConfig,
    zns: &ZnsConfig,
) -> Result<(ZonedDevice, ZnsRecoveryReport), ZnsRecoveryError> {
    if !bb.store().holds_data() {
        return Err(ZnsRecoveryError::NoData);
    }
    let mut report = ZnsRecoveryReport::default();
    let mut scans = Vec::new();
    {
        let layout =
            crate::layout::Layout::new(&nearflash_flash::Geometry::from_config(bb.config()), ftl);
        let geo = layout.geo.clone();
        let mut data = vec![0u8; geo.page_size_bytes as usize];
        let mut oob = vec![0u8; geo.oob_size_bytes as usize];
        for z in 0..layout.superblocks() {
            let sb = SbId(z);
            let mut blocks = Vec::new();
            for c in 0..geo.channels {
                for p in 0..geo.planes_per_die {
                    blocks.push(geo.block_id(layout.die_of(sb, c), p, layout.row_of(sb)));
                }
            }
            let mut scan = ZoneScan {
                bad: blocks.iter().any(|&b| bb.nand().is_bad(b)),
                ..ZoneScan::default()
            };
            for row in 0..layout.groups_per_superblock() {
                let mut erased = 0;
                let mut records = Vec::with_capacity(blocks.len());
                for &b in &blocks {
                    report.pages_read += 1;
                    let page = geo.page_id(b, row);
                    match bb.store_mut().read(page, &mut data, &mut oob) {
                        PageState::Erased => erased += 1,
                        PageState::Programmed => records.push(OobRecord::decode(&data, &oob)),
                    }
                }
                if erased == blocks.len() {
                    break;
                }
                scan.next_row = row + 1;
                // Some blocks programmed this row and some did not (a cut between the
                // channels' programs): the zone's blocks no longer share a frontier, and
                // the next row could not be programmed in page order on all of them.
                scan.ragged = erased > 0;
                let first = records.first().copied().flatten();
                let whole = records.len() == blocks.len()
                    && first.is_some()
                    && records.iter().all(|r| *r == first);
                match first.filter(|_| whole) {
                    Some(rec) if rec.kind == PageKind::Data => {
                        let (start, sectors) = (rec.lpn as u32, rec.seq as u32);
                        if start == scan.data_end {
                            report.data_rows += 1;
                            scan.rows.push((row, start, sectors));
                            scan.data_end += sectors;
                            scan.generation = rec.epoch;
                        } else {
                            report.unchained_rows += 1;
                        }
                    }
                    Some(rec) if rec.kind == PageKind::ZoneFinish => {
                        report.finish_marks += 1;
                        scan.finished = true;
                        scan.generation = rec.epoch;
                    }
                    _ => report.torn_rows += 1,
                }
            }
            scans.push(scan);
        }
    }
    let mut dev = ZonedDevice::assemble(bb, ftl, zns);
    let rows_max = dev.layout.groups_per_superblock();
    let cap = dev.table.capacity_sectors();
    for (z, scan) in scans.into_iter().enumerate() {
        let z = z as u32;
        let start = dev.table.start_sector(z);
        let wp = start + u64::from(scan.data_end);
        let (state, wp, by_controller) = if scan.bad {
            if scan.rows.is_empty() {
                report.zones_offline += 1;
                (ZoneState::Offline, start, false)
            } else {
                report.zones_read_only += 1;
                (ZoneState::ReadOnly, wp, false)
            }
        } else if scan.finished || u64::from(scan.data_end) == cap {
            report.zones_full += 1;
            (ZoneState::Full, start + dev.table.zone_sectors(), false)
        } else if scan.rows.is_empty() {
            if scan.next_row > 0 {
                report.zones_needing_erase += 1;
            }
            (ZoneState::Empty, start, false)
        } else if scan.next_row == rows_max
            || scan.ragged
            || dev.table.active_count() >= dev.table.active_max()
        {
            report.zones_full += 1;
            (ZoneState::Full, start + dev.table.zone_sectors(), true)
        } else {
            report.zones_closed += 1;
            (ZoneState::Closed, wp, false)
        };
        dev.table.restore(z, wp, state, by_controller);
        dev.restore_media(z, &scan.rows, scan.next_row, scan.generation, state);
    }
    dev.check_invariants();
    Ok((dev, report))
}

#[derive(Default)]
struct ZoneScan {
    bad: bool,
    finished: bool,
    /// The last programmed row is programmed on some blocks only.
    ragged: bool,
    next_row: u32,
    data_end: u32,
    generation: u64,
    /// (row, zone-relative start, sectors) of the chained data rows.
    rows: Vec<(u32, u32, u32)>,
}
