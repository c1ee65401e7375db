//! Storengine's mapping checkpoints (journaling). A checkpoint snapshots the mapping, each
//! superblock's epoch and state and the remap table at one instant and programs the encoded
//! snapshot row by row into one of the two checkpoint slots. A slot's rows rotate over its
//! superblocks, one or more per way (`Layout::ckpt_row`), and up to one row per way is in
//! flight: the checkpoint is striped over every die instead of queueing on one way's dies,
//! and a row is issued only once the row `ways` before it is done, so each block is still
//! programmed in page order and a power cut leaves the rows before the oldest unfinished
//! one complete. Checkpoints are appended after the
//! previous one; a slot is erased and started over only when neither slot has room, and
//! never while it holds the newest complete checkpoint — so that checkpoint survives
//! whatever happens to the one being written, and a slot is erased once per slot-full of
//! checkpoints rather than at every checkpoint (the slots would otherwise wear out long
//! before the data superblocks). Superblocks held back after a block remap are released
//! only when a checkpoint that recorded the remap is complete. A checkpoint that hits a
//! program or erase failure is abandoned and its slot is not used again; with one slot
//! left, checkpoints stop once it is full rather than erase the only valid checkpoint
//! (recovery from an old checkpoint is slower, never wrong: everything that changed since
//! is scanned).

use super::jobs::{CkptProgramId, CkptProgramJob, ErasePurpose, FlashJob};
use super::{Device, Event};
use crate::checkpoint::{encoded_bytes_max, Snapshot};
use crate::layout::SbId;
use crate::oob::{OobRecord, PageKind};
use crate::superblock::SbState;
use nearflash_flash::{FlashCompletion, FlashOp, OpKind, OpStatus};
use nearflash_sim::{Schedule, SimTime};
use std::collections::BTreeSet;

#[derive(Clone, Default)]
pub struct CkptState {
    /// Something changed since the last snapshot.
    pub dirty: bool,
    pub active: Option<ActiveCkpt>,
    /// Sequence number of the last checkpoint started.
    pub seq: u64,
    /// First row not yet written in each slot (the slot's capacity if unknown).
    pub next_row: [u32; 2],
    /// The slot holding the newest complete checkpoint.
    pub newest: Option<u32>,
    /// A slot whose blocks went bad is not used again.
    pub broken: [bool; 2],
    /// Another checkpoint was asked for while one was being written.
    pub requested: bool,
    /// Flexible Data Placement's counters as the newest complete checkpoint holds them
    /// (what a power cut brings back; `None` before the first one, or without FDP).
    pub fdp_saved: Option<super::FdpStats>,
    /// ...and as the checkpoints started since hold them: a cut may find one whole on
    /// flash before its completion is seen, or whole although it was given up (a program
    /// failed on a page of its last row that it does not need). At most three: a failed
    /// checkpoint breaks its slot, and with both slots broken none starts.
    pub fdp_started: Vec<super::FdpStats>,
}

#[derive(Clone)]
pub struct ActiveCkpt {
    slot: u32,
    ckpt_seq: u64,
    bytes: Vec<u8>,
    /// Slot row of the checkpoint's first page group.
    first_row: u32,
    rows_total: u32,
    /// Rows issued so far.
    next_row: u32,
    /// Every row below this one is programmed.
    done_below: u32,
    /// Rows at or above `done_below` already programmed (finished out of order).
    done_above: BTreeSet<u32>,
    /// When the checkpoint started (for its duration statistics).
    started: SimTime,
    erases_pending: u32,
    held: Vec<SbId>,
    failed: bool,
    /// FDP's counters in the snapshot being written.
    fdp: Option<super::FdpStats>,
}

impl Device {
    /// Asks for a checkpoint as soon as possible (after a remap).
    pub(super) fn request_checkpoint(&mut self, q: &mut impl Schedule<Event>) {
        self.ckpt.dirty = true;
        self.start_checkpoint(q);
    }

    pub(super) fn start_checkpoint(&mut self, q: &mut impl Schedule<Event>) {
        if self.ckpt.active.is_some() {
            self.ckpt.requested = true;
            return;
        }
        let gp = u64::from(self.layout.group_pages());
        let ps = u64::from(self.layout.geo.page_size_bytes);
        let superblocks = self.layout.superblocks();
        // The encoding has a fixed length for a given geometry.
        let len = encoded_bytes_max(
            self.layout.logical_entries(),
            superblocks,
            self.layout.group_pages(),
            crate::fdp::checkpoint_bytes(&self.cfg.fdp, self.layout.logical_entries()),
        );
        let rows_total = len.div_ceil(ps).div_ceil(gp) as u32;
        let capacity = self.layout.ckpt_slot_rows();
        assert!(rows_total <= capacity, "checkpoint slot too small");
        let Some((slot, first_row)) = self.ckpt_place(rows_total, capacity) else {
            self.stats.checkpoints_skipped += 1;
            return;
        };
        self.ckpt.seq += 1;
        self.ckpt.dirty = false;
        self.ckpt.requested = false;
        let held: Vec<SbId> = (0..superblocks)
            .map(SbId)
            .filter(|&sb| self.sbs.get(sb).state == SbState::Held)
            .collect();
        let bytes = if self.functional {
            let b = self.snapshot(self.ckpt.seq).encode();
            debug_assert_eq!(b.len() as u64, len);
            b
        } else {
            Vec::new()
        };
        self.ckpt.active = Some(ActiveCkpt {
            slot,
            ckpt_seq: self.ckpt.seq,
            bytes,
            first_row,
            rows_total,
            next_row: 0,
            done_below: 0,
            done_above: BTreeSet::new(),
            started: q.now(),
            erases_pending: 0,
            held,
            failed: false,
            fdp: self.stats.fdp.clone(),
        });
        self.ckpt.fdp_started.extend(self.stats.fdp.clone());
        debug_assert!(
            self.ckpt.fdp_started.len() <= 3,
            "a slot breaks at each failure"
        );
        // A slot is erased only when writing starts over at its first row.
        let to_erase: Vec<SbId> = if first_row == 0 {
            self.layout
                .ckpt_slot(slot)
                .filter(|&sb| self.sb_programmed(sb))
                .collect()
        } else {
            Vec::new()
        };
        self.ckpt.active.as_mut().expect("active").erases_pending = to_erase.len() as u32;
        if to_erase.is_empty() {
            self.ckpt_program_rows(q);
        }
        for sb in to_erase {
            self.start_erase(sb, ErasePurpose::Checkpoint, q);
        }
    }

    /// Where the next checkpoint of `rows` rows goes: appended in a slot with room (the one
    /// holding the newest checkpoint first), else at the start of a slot that does not hold
    /// the newest checkpoint (erased first); `None` if there is no such place.
    fn ckpt_place(&mut self, rows: u32, capacity: u32) -> Option<(u32, u32)> {
        let first = self.ckpt.newest.unwrap_or(0);
        let order = [first, 1 - first];
        let usable = |d: &Device, s: u32| !d.ckpt.broken[s as usize];
        if let Some(&s) = order
            .iter()
            .find(|&&s| usable(self, s) && self.ckpt.next_row[s as usize] + rows <= capacity)
        {
            let first_row = self.ckpt.next_row[s as usize];
            self.ckpt.next_row[s as usize] = first_row + rows;
            return Some((s, first_row));
        }
        let s = *order
            .iter()
            .find(|&&s| usable(self, s) && self.ckpt.newest != Some(s))?;
        self.ckpt.next_row[s as usize] = rows;
        Some((s, 0))
    }

    /// Flexible Data Placement's counters a power cut now may bring back: those of the
    /// newest complete checkpoint (first; `None` before there is one), or those of one
    /// started since if the cut finds it whole on flash (see `CkptState::fdp_started`).
    pub fn fdp_stats_durable(&self) -> (Option<&super::FdpStats>, &[super::FdpStats]) {
        (self.ckpt.fdp_saved.as_ref(), &self.ckpt.fdp_started)
    }

    /// Whether the checkpoint being written will release held superblocks when it is done.
    pub(super) fn ckpt_releases_held(&self) -> bool {
        self.ckpt
            .active
            .as_ref()
            .is_some_and(|a| !a.held.is_empty())
    }

    /// The state a checkpoint records.
    pub(crate) fn snapshot(&self, ckpt_seq: u64) -> Snapshot {
        let n = self.layout.superblocks();
        Snapshot {
            ckpt_seq,
            next_write_seq: self.write_seq,
            next_epoch: self.next_epoch,
            l2p: self.map.l2p_snapshot(),
            seqs: self.map.seq_snapshot(),
            sb_epochs: (0..n).map(|s| self.sbs.get(SbId(s)).epoch).collect(),
            sb_states: (0..n).map(|s| self.recorded_state(SbId(s))).collect(),
            remap: self.remap.raw().to_vec(),
            extension: self.fdp_snapshot(),
        }
    }

    /// The state a checkpoint records for `sb`. A superblock whose write point has moved on
    /// (closed) may still have programs in flight; they land after the snapshot, so it is
    /// recorded as open and recovery scans it instead of trusting the snapshot's view of it.
    fn recorded_state(&self, sb: SbId) -> SbState {
        let info = self.sbs.get(sb);
        if info.state == SbState::Closed && info.programs_inflight > 0 {
            SbState::Open
        } else {
            info.state
        }
    }

    /// Whether any member block of `sb` has a programmed page.
    fn sb_programmed(&self, sb: SbId) -> bool {
        (0..self.layout.geo.channels).any(|c| {
            (0..self.layout.geo.planes_per_die).any(|l| {
                let b = self.remap.block_id(&self.layout, sb, c, l);
                self.bb.nand().write_ptr(b) > 0
            })
        })
    }

    pub(super) fn on_ckpt_erase_done(&mut self, sb: SbId, q: &mut impl Schedule<Event>) {
        let bad = (0..self.layout.geo.channels).any(|c| {
            (0..self.layout.geo.planes_per_die).any(|l| {
                self.bb
                    .nand()
                    .is_bad(self.remap.block_id(&self.layout, sb, c, l))
            })
        });
        let active = self.ckpt.active.as_mut().expect("checkpoint in progress");
        if bad {
            active.failed = true;
            self.ckpt.broken[active.slot as usize] = true;
        }
        active.erases_pending -= 1;
        if active.erases_pending == 0 {
            if active.failed {
                self.finish_checkpoint(q);
            } else {
                self.ckpt_program_rows(q);
            }
        }
    }

    /// Issues rows while fewer than one per way are in flight (and the row `ways` before the
    /// next one, on the same superblock's previous page, is done); finishes the checkpoint
    /// once every row is programmed, or once a failed one has nothing left in flight.
    fn ckpt_program_rows(&mut self, q: &mut impl Schedule<Event>) {
        let window = self.layout.geo.ways_per_channel;
        loop {
            let a = self.ckpt.active.as_ref().expect("checkpoint in progress");
            let in_flight = a.next_row - a.done_below - a.done_above.len() as u32;
            if (a.failed || a.next_row == a.rows_total) && in_flight == 0 {
                self.finish_checkpoint(q);
                return;
            }
            if a.failed || a.next_row == a.rows_total || a.next_row >= a.done_below + window {
                return;
            }
            self.ckpt_program_row(q);
        }
    }

    fn ckpt_program_row(&mut self, q: &mut impl Schedule<Event>) {
        let active = self.ckpt.active.as_ref().expect("checkpoint in progress");
        let index_row = active.next_row;
        let row = active.first_row + active.next_row;
        let ckpt_seq = active.ckpt_seq;
        let (sb, page) = self.layout.ckpt_row(active.slot, row);
        let job = self.jobs.ckpt_programs.insert(CkptProgramJob {
            row: index_row,
            pending: 0,
            failed: false,
        });
        let ps = self.layout.geo.page_size_bytes as usize;
        let os = self.layout.geo.oob_size_bytes as usize;
        let gp = self.layout.group_pages();
        let mut n = 0;
        for c in 0..self.layout.geo.channels {
            let planes = self.layout.geo.planes_per_die;
            let mut plane_blocks = [0u32; nearflash_flash::backbone::PLANES_MAX];
            let (mut data, mut oob) = (Vec::new(), Vec::new());
            for l in 0..planes {
                plane_blocks[l as usize] = self.remap.block(sb, c, l);
                if self.functional {
                    // Pages are numbered from the checkpoint's first page, wherever it starts.
                    let index = u64::from(index_row) * u64::from(gp)
                        + u64::from(self.layout.page_index(c, l));
                    let bytes = &self.ckpt.active.as_ref().expect("active").bytes;
                    let mut page = vec![0u8; ps];
                    let from = (index as usize * ps).min(bytes.len());
                    let to = (from + ps).min(bytes.len());
                    page[..to - from].copy_from_slice(&bytes[from..to]);
                    let mut rec = vec![0u8; os];
                    OobRecord {
                        lpn: index,
                        seq: ckpt_seq,
                        epoch: 0,
                        kind: PageKind::Checkpoint,
                        slc: false,
                        placement: None,
                    }
                    .encode(&page, &mut rec);
                    data.extend_from_slice(&page);
                    oob.extend_from_slice(&rec);
                }
            }
            self.bb.submit(
                FlashOp {
                    kind: OpKind::Program,
                    die: self.layout.die_of(sb, c),
                    page,
                    pages: 1,
                    plane_mask: ((1u32 << planes) - 1) as u8,
                    plane_blocks,
                    tag: FlashJob::CkptProgram(job).tag(),
                    data,
                    oob,
                    slc: false,
                },
                &mut q.map(Event::Flash),
            );
            n += 1;
        }
        self.stats.checkpoint_pages += u64::from(gp);
        debug_assert_eq!(n, self.layout.geo.channels, "one program per channel");
        self.jobs.ckpt_programs.get_mut(job).pending = n;
        self.ckpt.active.as_mut().expect("active").next_row += 1;
    }

    pub(super) fn on_ckpt_program_done(
        &mut self,
        id: CkptProgramId,
        c: FlashCompletion,
        q: &mut impl Schedule<Event>,
    ) {
        let j = self.jobs.ckpt_programs.get_mut(id);
        j.failed |= matches!(c.status, OpStatus::Failed { .. });
        debug_assert!(j.pending > 0, "a completion of an operation in flight");
        j.pending -= 1;
        if j.pending > 0 {
            return;
        }
        let (failed, row) = (j.failed, j.row);
        self.jobs.ckpt_programs.remove(id);
        let page_bytes = u64::from(self.layout.geo.page_size_bytes);
        self.fdp_note_media(u64::from(self.layout.group_pages()) * page_bytes, 0);
        let active = self.ckpt.active.as_mut().expect("checkpoint in progress");
        if failed {
            active.failed = true;
            self.ckpt.broken[active.slot as usize] = true;
        }
        active.done_above.insert(row);
        while active.done_above.remove(&active.done_below) {
            active.done_below += 1;
        }
        self.ckpt_program_rows(q);
    }

    fn finish_checkpoint(&mut self, q: &mut impl Schedule<Event>) {
        let active = self.ckpt.active.take().expect("checkpoint in progress");
        let took = q.now().0 - active.started.0;
        self.stats.checkpoint_ns_total += took;
        self.stats.checkpoint_ns_max = self.stats.checkpoint_ns_max.max(took);
        if active.failed {
            self.stats.checkpoints_failed += 1;
            self.ckpt.dirty = true;
        } else {
            self.stats.checkpoints_written += 1;
            self.ckpt.newest = Some(active.slot);
            self.ckpt.fdp_saved = active.fdp;
            self.ckpt.fdp_started.clear();
            for sb in active.held {
                if self.sbs.get(sb).state == SbState::Held {
                    self.sbs.release(sb);
                }
            }
        }
        // Whether or not superblocks came free, GC copies that waited for this checkpoint
        // must learn its outcome: with none released, a run they stall may be abandoned.
        self.wake_gc_waiters(q);
        self.wake_alloc_waiters(q);
        self.pump_gc(q);
        if self.ckpt.requested && !self.ckpt.broken.iter().all(|&b| b) {
            self.start_checkpoint(q);
        }
        self.erase_waiting_victim(q);
    }
}
