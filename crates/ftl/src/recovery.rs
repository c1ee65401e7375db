//! Power-cut recovery (mount after an unclean shutdown). The firmware's RAM is gone; what is
//! left is the flash: page data, spare-area records, and the NAND's bad-block marks.
//!
//! 1. Read both checkpoint slots and keep the newest one whose every page decodes.
//! 2. Read the first page of every member block of every data superblock: all erased ⇒ the
//!    superblock is free. Otherwise, if every one of those pages carries the epoch the
//!    checkpoint recorded, it is *unchanged* (an erase, even one torn or finished on only
//!    some dies, would have changed a first page) and the checkpoint's entries pointing into
//!    it are trusted. If it was open (or had programs in flight) at the checkpoint, or its
//!    epoch differs (rewritten since), or it holds garbage, it is *scanned*: every page group
//!    is read and kept if all its pages decode with one logical group, one sequence number
//!    and one epoch. Checkpoint entries pointing into a changed superblock are dropped (that
//!    data was moved or trimmed; a moved copy is found by the scan). A superblock that was
//!    GC's victim at the checkpoint is scanned too, so that its groups compete with their
//!    copies (step 3).
//! 3. Each logical group maps to its candidate with the highest write sequence number. GC
//!    copies keep the sequence number of the data they copy, so a stale copy never outranks
//!    a newer host write; on a tie the copy in the older superblock (the GC source) wins, so
//!    an interrupted GC run leaves its destination with nothing valid. A group the
//!    checkpoint records as unmapped after version `s` (trimmed) takes no scanned version
//!    numbered `s` or lower.
//!
//! A superblock whose first page carries the SLC flag is in SLC mode (the SLC write cache):
//! it is scanned and trusted like any other (its unused page rows are erased, so they yield
//! no candidates) and stays in SLC mode, to be folded, until its erase.
//!
//! Partially written superblocks are closed (never programmed again before an erase), and a
//! checkpoint is requested at once so the recovered state is durable.

use crate::checkpoint::Snapshot;
use crate::config::FtlConfig;
use crate::device::{Device, Event};
use crate::layout::{Layout, Lgn, Pgn, RemapTable, SbId};
use crate::mapping::UNMAPPED;
use crate::oob::{Decoded, OobRecord, PageKind};
use crate::superblock::SbState;
use nearflash_flash::{Backbone, DieId, Geometry, PageId};
use nearflash_sim::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RecoveryError {
    #[error("recovery needs a backing store that keeps data (functional fidelity)")]
    NoData,
    /// A programmed page holds data that no record speaks for, below pages of its block that
    /// were programmed after it: not a torn write (a cut tears only a block's last program)
    /// but damage, and what it held is unknown — mounting would silently lose it.
    #[error(
        "the flash is damaged: page {page_in_block} of block {block} holds unreadable data below \
         pages programmed after it ({count} such page(s)); what it held cannot be named, so \
         recovery stops rather than lose it silently"
    )]
    Damaged {
        block: u64,
        page_in_block: u32,
        count: u64,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Sequence number of the checkpoint recovery started from (None: full scan).
    pub checkpoint_seq: Option<u64>,
    pub page_reads: u64,
    pub superblocks_scanned: u32,
    pub superblocks_trusted: u32,
    pub groups_from_checkpoint: u64,
    pub groups_from_scan: u64,
    pub checkpoint_entries_dropped: u64,
    /// Scanned versions older than a trim the checkpoint recorded (not brought back).
    pub trimmed_versions_dropped: u64,
    /// Scanned records the checkpoint already knew to be dead: in a superblock closed when
    /// it was written (a GC victim scanned for its ties), with a version the checkpoint
    /// did not map — e.g. the planes of a multi-plane program that failed on another plane.
    pub dead_records_ignored: u64,
    pub torn_groups: u64,
    /// Pages (units, under page-level mapping) whose data failed its CRC below their block's
    /// write frontier while their record's header passed its own check: damage, not a torn
    /// program. Their versions are kept, so that reading them is an integrity error rather
    /// than an older version or zeros.
    pub damaged_pages: u64,
}

struct Reader<'a> {
    bb: &'a mut Backbone,
    data: Vec<u8>,
    oob: Vec<u8>,
    reads: u64,
}

impl Reader<'_> {
    fn read(&mut self, page: PageId) -> Option<OobRecord> {
        self.reads += 1;
        self.bb
            .store_mut()
            .read(page, &mut self.data, &mut self.oob);
        OobRecord::decode(&self.data, &self.oob)
    }

    /// The record whose header speaks for a data page (the page's own, or under page-level
    /// mapping its first unit's), its data intact or not: the header is checked on its own.
    fn read_data(&mut self, page: PageId, layout: &Layout) -> Option<OobRecord> {
        let seen = if layout.page_mapped() {
            self.read_units_seen(page, layout.units_per_page())[0]
        } else {
            self.read_seen(page)
        };
        match seen {
            Seen::Valid(rec) | Seen::Damaged(rec) => Some(rec),
            Seen::Erased | Seen::Junk => None,
        }
    }

    /// What a scan sees in `page`.
    fn read_seen(&mut self, page: PageId) -> Seen {
        self.reads += 1;
        self.bb
            .store_mut()
            .read(page, &mut self.data, &mut self.oob);
        if self.erased() {
            return Seen::Erased;
        }
        Seen::of(OobRecord::decode_checked(&self.data, &self.oob))
    }

    /// Page-level mapping: what a scan sees in each unit of `page` (all `Erased` for an
    /// erased page).
    fn read_units_seen(&mut self, page: PageId, units: u32) -> Vec<Seen> {
        self.reads += 1;
        self.bb
            .store_mut()
            .read(page, &mut self.data, &mut self.oob);
        if self.erased() {
            return vec![Seen::Erased; units as usize];
        }
        let unit = crate::config::PAGE_MAP_UNIT_BYTES as usize;
        let rec = crate::oob::OOB_RECORD_BYTES;
        (0..units as usize)
            .map(|i| {
                Seen::of(OobRecord::decode_checked(
                    &self.data[i * unit..(i + 1) * unit],
                    &self.oob[i * rec..(i + 1) * rec],
                ))
            })
            .collect()
    }

    fn erased(&self) -> bool {
        self.data.iter().all(|&b| b == 0xFF) && self.oob.iter().all(|&b| b == 0xFF)
    }
}

/// A page (or a unit of one) as a scan read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Erased,
    Valid(OobRecord),
    /// The header checks, the data does not (see `Decoded::DataDamaged`).
    Damaged(OobRecord),
    /// Programmed, with no record to trust: torn, or damaged beyond its header.
    Junk,
}

impl Seen {
    fn of(d: Decoded) -> Seen {
        match d {
            Decoded::Valid(rec) => Seen::Valid(rec),
            Decoded::DataDamaged(rec) => Seen::Damaged(rec),
            Decoded::Unreadable => Seen::Junk,
        }
    }
}

/// The write frontier of each physical block a scan read: the highest page that decoded
/// whole. A die runs one program at a time and a block's pages are programmed in order, so
/// every page below it was programmed to completion before the cut; only pages at or above
/// it can have been torn. (A torn erase leaves no page that decodes, so it has no frontier.)
struct Frontier {
    pages_per_block: u64,
    last_valid: BTreeMap<u64, u64>,
}

impl Frontier {
    fn new(pages_per_block: u32) -> Frontier {
        Frontier {
            pages_per_block: u64::from(pages_per_block),
            last_valid: BTreeMap::new(),
        }
    }

    fn saw_valid(&mut self, page: PageId) {
        let (block, at) = (page.0 / self.pages_per_block, page.0 % self.pages_per_block);
        let e = self.last_valid.entry(block).or_insert(at);
        *e = (*e).max(at);
    }

    /// Whether `page` lies below its block's frontier (so it cannot have been torn).
    fn below(&self, page: PageId) -> bool {
        let (block, at) = (page.0 / self.pages_per_block, page.0 % self.pages_per_block);
        self.last_valid.get(&block).is_some_and(|&v| at < v)
    }
}

/// Damage a scan found that no record speaks for (see `RecoveryError::Damaged`).
#[derive(Default)]
struct Unattributed {
    first: Option<PageId>,
    count: u64,
}

impl Unattributed {
    fn note(&mut self, page: PageId) {
        self.first.get_or_insert(page);
        self.count += 1;
    }
}

#[derive(Clone, Copy)]
struct Candidate {
    seq: u64,
    /// Open epoch of the superblock holding it.
    epoch: u64,
    pgn: Pgn,
    scanned: bool,
    /// Its superblock's members all still hold their first page of this epoch (no erase has
    /// touched it). Only page-level mapping consults it (see `better`).
    whole: bool,
    /// Flexible Data Placement: the handle its record names (0 without; a checkpoint entry's
    /// comes from the checkpoint's FDP section instead).
    ruh: u8,
}

/// Whether `new` should replace `old` as a logical group's location. The highest write
/// sequence number wins. Equal numbers are copies of one version (GC keeps the number):
/// the copy in the older superblock — the GC source — wins, so an interrupted GC leaves
/// its destination holding nothing valid. That is what lets a rescue GC run (which opened
/// the last free superblock, see `device::gc`) be cut safely: the destination is simply
/// erased again. The source is still intact whenever both exist, since GC erases a victim
/// only after all its copies completed.
///
/// Page-level mapping adds one case. A unit lives on one die, so a victim whose erase a cut
/// tore on some dies and not others keeps some of its units, and were the source to win, the
/// surviving half would stay valid beside the other half in the copies — after a rescue run,
/// with no free superblock left and none GC could empty. (A page group spans every die, so
/// under page-group mapping a half-erased victim holds no whole group.) GC erases a victim
/// only after every copy completed, so a source some of whose members lost their first page
/// is one whose erase had begun: its copies win.
fn better(new: Candidate, old: Option<Candidate>, page_mapped: bool) -> bool {
    match old {
        None => true,
        Some(o) if page_mapped && new.seq == o.seq && new.epoch != o.epoch => {
            let (source, copy) = if new.epoch < o.epoch {
                (new, o)
            } else {
                (o, new)
            };
            let winner = if source.whole { source } else { copy };
            winner.epoch == new.epoch
        }
        Some(o) => {
            (new.seq, std::cmp::Reverse(new.epoch), new.pgn)
                > (o.seq, std::cmp::Reverse(o.epoch), o.pgn)
        }
    }
}

/// Rebuilds the firmware state from what `bb` holds after a power cut: the newest complete
/// checkpoint, a scan of every superblock it cannot vouch for, the best version of each
/// logical group from both, then the superblocks' states, the checkpoint slots and the
/// sequence counters.
pub fn recover(
    mut bb: Backbone,
    cfg: &FtlConfig,
    q: &mut impl Schedule<Event>,
) -> Result<(Device, RecoveryReport), RecoveryError> {
    if !bb.store().holds_data() {
        return Err(RecoveryError::NoData);
    }
    let geo = Geometry::from_config(bb.config());
    let layout = Layout::new(&geo, cfg);
    let mut report = RecoveryReport::default();
    let mut r = Reader {
        data: vec![0; geo.page_size_bytes as usize],
        oob: vec![0; geo.oob_size_bytes as usize],
        bb: &mut bb,
        reads: 0,
    };
    let extension_bytes = crate::fdp::checkpoint_bytes(&cfg.fdp, layout.logical_entries());
    let snap = newest_checkpoint(&mut r, &layout, extension_bytes);
    let remap = snap
        .as_ref()
        .and_then(|(_, s)| RemapTable::from_raw(s.remap.clone(), &layout))
        .unwrap_or_else(|| RemapTable::identity(&layout));
    let mut found = Found::new(layout.data_superblocks());
    for s in 0..layout.data_superblocks() {
        found.scan(
            &mut r,
            &layout,
            &remap,
            cfg,
            snap.as_ref(),
            SbId(s),
            &mut report,
        );
    }
    let trimmed_after = found.add_checkpoint_entries(&layout, snap.as_ref(), &mut report);
    report.page_reads = r.reads;
    report.dead_records_ignored = found.dead;
    if let Some(page) = found.lost.first {
        let ppb = u64::from(geo.pages_per_block);
        return Err(RecoveryError::Damaged {
            block: page.0 / ppb,
            page_in_block: (page.0 % ppb) as u32,
            count: found.lost.count,
        });
    }

    let mut dev = Device::assemble(bb, layout, cfg.clone(), remap, true);
    if let Some((_, sn)) = &snap {
        if dev.fdp_restore(&sn.extension) {
            dev.ckpt.fdp_saved = dev.stats.fdp.clone();
        }
    }
    found.install_mappings(&mut dev, &trimmed_after, &mut report);
    found.restore_superblocks(&mut dev, cfg);
    restore_checkpoint_slots(&mut dev, snap.as_ref(), &mut report, &mut found);
    dev.write_seq = found.max_seq + 1;
    dev.next_epoch = found.max_epoch + 1;
    for ruh in found.handles_reset() {
        dev.note_controller_reset(ruh, q.now());
    }
    dev.check_invariants();
    dev.arm_and_checkpoint(q);
    Ok((dev, report))
}

/// The newer of the two checkpoint slots' complete checkpoints, with its slot.
fn newest_checkpoint(
    r: &mut Reader,
    layout: &Layout,
    extension_bytes: u64,
) -> Option<(u32, Snapshot)> {
    let mut snap: Option<(u32, Snapshot)> = None;
    for slot in 0..2 {
        if let Some(s) = read_checkpoint(r, layout, slot, extension_bytes) {
            if snap.as_ref().is_none_or(|(_, b)| s.ckpt_seq > b.ckpt_seq) {
                snap = Some((slot, s));
            }
        }
    }
    snap
}

/// What recovery learnt of one data superblock.
#[derive(Clone, Copy)]
struct SbFound {
    status: SbStatus,
    /// The epoch its first page carries (0 when empty or retired).
    epoch: u64,
    /// Its first page says it is in SLC mode (the SLC write cache).
    slc: bool,
    /// FDP: whose writes its first page says it holds.
    placement: Option<crate::oob::Placement>,
    /// FDP: the cut left it part-written (its last page row erased).
    part_written: bool,
}

/// What the checkpoint and the scan found: each logical group's best version, the
/// superblocks, and the highest sequence and epoch seen.
struct Found {
    best: BTreeMap<u32, Candidate>,
    sbs: Vec<SbFound>,
    lost: Unattributed,
    dead: u64,
    max_seq: u64,
    max_epoch: u64,
}

impl Found {
    fn new(superblocks: u32) -> Self {
        Found {
            best: BTreeMap::new(),
            sbs: vec![
                SbFound {
                    status: SbStatus::Empty,
                    epoch: 0,
                    slc: false,
                    placement: None,
                    part_written: false,
                };
                superblocks as usize
            ],
            lost: Unattributed::default(),
            dead: 0,
            max_seq: 0,
            max_epoch: 0,
        }
    }

    /// Reads superblock `sb`'s first page row, noting its SLC mode and FDP owner: `None` when
    /// it is erased, else its first page's record and whether the row is whole — every member
    /// block's first page decodes with one epoch, so no member was erased (or had an erase
    /// torn) since the superblock was opened. A GC erase in flight at the cut may have
    /// finished on some dies and not begun on others, so the first page of one member says
    /// nothing about the rest.
    fn read_first_row(
        &mut self,
        r: &mut Reader,
        layout: &Layout,
        remap: &RemapTable,
        sb: SbId,
    ) -> Option<(Option<OobRecord>, bool)> {
        let f = &mut self.sbs[sb.0 as usize];
        let mut empty = true;
        let mut first: Option<OobRecord> = None;
        let mut whole = true;
        for k in 0..layout.group_pages() {
            let rec = r.read_data(remap.page_id(layout, layout.pgn(sb, 0), k), layout);
            if !r.erased() {
                empty = false;
            }
            if k == 0 {
                first = rec;
            }
            f.slc |= rec.is_some_and(|rec| rec.slc);
            f.placement = f.placement.or(rec.and_then(|rec| rec.placement));
            whole &= rec.is_some_and(|rec| {
                matches!(rec.kind, PageKind::Data | PageKind::Lost(_) | PageKind::Pad)
                    && first.is_some_and(|f| f.epoch == rec.epoch)
            });
        }
        (!empty).then_some((first, whole))
    }

    /// Reads superblock `sb`'s first page row (what it is, whether the checkpoint can vouch
    /// for it) and scans its records when the checkpoint cannot.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &mut self,
        r: &mut Reader,
        layout: &Layout,
        remap: &RemapTable,
        cfg: &FtlConfig,
        snap: Option<&(u32, Snapshot)>,
        sb: SbId,
        report: &mut RecoveryReport,
    ) {
        let s = sb.0 as usize;
        if snap.is_some_and(|(_, sn)| sn.sb_states[s] == SbState::Retired) {
            self.sbs[s].status = SbStatus::Retired;
            return;
        }
        let Some((first, whole)) = self.read_first_row(r, layout, remap, sb) else {
            return;
        };
        let trusted = match (snap, first) {
            (Some((_, sn)), Some(rec)) => {
                whole
                    && rec.epoch == sn.sb_epochs[s]
                    && matches!(
                        sn.sb_states[s],
                        SbState::Closed | SbState::Victim | SbState::Open
                    )
            }
            _ => false,
        };
        // A GC victim at the checkpoint is scanned although its pages are unchanged: the
        // checkpoint may already point some of its groups at their copies, and only its own
        // candidates let the source win the tie (see `better`), so that an interrupted GC run
        // leaves its destination with nothing valid.
        let open_at_ckpt =
            snap.is_some_and(|(_, sn)| matches!(sn.sb_states[s], SbState::Open | SbState::Victim));
        self.sbs[s].status = if trusted {
            SbStatus::Trusted
        } else {
            SbStatus::Changed
        };
        if let Some(rec) = first {
            self.sbs[s].epoch = rec.epoch;
        }
        if trusted {
            report.superblocks_trusted += 1;
        }
        if trusted && !open_at_ckpt {
            return;
        }
        report.superblocks_scanned += 1;
        if cfg.fdp.enabled {
            let last = layout.pgn(sb, layout.groups_per_superblock() - 1);
            r.read_data(remap.page_id(layout, last, 0), layout);
            self.sbs[s].part_written = r.erased();
        }
        self.collect_records(r, layout, remap, snap, sb, whole, report);
    }

    /// Scans superblock `sb`'s records, offering each as a candidate (`whole`: its first row
    /// is whole, see `read_first_row`).
    #[allow(clippy::too_many_arguments)]
    fn collect_records(
        &mut self,
        r: &mut Reader,
        layout: &Layout,
        remap: &RemapTable,
        snap: Option<&(u32, Snapshot)>,
        sb: SbId,
        whole: bool,
        report: &mut RecoveryReport,
    ) {
        let s = sb.0 as usize;
        // Records this superblock held when the checkpoint was written — it was closed
        // then (no program in flight) and they carry its epoch — were all known to the
        // checkpoint: a version it did not map was dead (a program that failed on another
        // plane of a multi-plane program, then written elsewhere). Such a record may only
        // tie with the checkpoint's version, never beat it: found by a later scan (the
        // superblock became a GC victim, or its erase was torn), it would bring back a
        // version an earlier recovery had already decided against.
        let known_at_ckpt = snap.and_then(|(_, sn)| {
            matches!(sn.sb_states[s], SbState::Closed | SbState::Victim)
                .then_some((sn.sb_epochs[s], sn))
        });
        let scan = if layout.page_mapped() {
            scan_superblock_units
        } else {
            scan_superblock
        };
        let Found {
            best,
            lost,
            dead,
            max_seq,
            max_epoch,
            ..
        } = self;
        scan(r, layout, remap, sb, report, lost, &mut |lgn, mut c| {
            if let Some((epoch, sn)) = known_at_ckpt {
                let g = lgn as usize;
                let mapped_at_ckpt =
                    sn.l2p.get(g).is_some_and(|&p| p != UNMAPPED) && sn.seqs[g] == c.seq;
                if c.epoch == epoch && !mapped_at_ckpt {
                    *dead += 1;
                    return;
                }
            }
            c.whole = whole;
            *max_seq = (*max_seq).max(c.seq);
            *max_epoch = (*max_epoch).max(c.epoch);
            if better(c, best.get(&lgn).copied(), layout.page_mapped()) {
                best.insert(lgn, c);
            }
        });
    }

    /// The handles the power cycle moved to a new reclaim unit: those whose host reclaim unit
    /// it left part-written.
    fn handles_reset(&self) -> std::collections::BTreeSet<u8> {
        self.sbs
            .iter()
            .filter(|f| f.part_written)
            .filter_map(|f| f.placement.filter(|p| !p.by_gc).map(|p| p.ruh))
            .collect()
    }

    /// Offers the checkpoint's entries on trusted superblocks as candidates; returns the
    /// groups the checkpoint records as unmapped after a version: trimmed (or never written,
    /// sequence 0). A scanned version no newer than that was dead at the checkpoint and must
    /// not come back — a trim once seen to take effect stays in effect.
    fn add_checkpoint_entries(
        &mut self,
        layout: &Layout,
        snap: Option<&(u32, Snapshot)>,
        report: &mut RecoveryReport,
    ) -> BTreeMap<u32, u64> {
        let mut trimmed_after: BTreeMap<u32, u64> = BTreeMap::new();
        let Some((_, sn)) = snap else {
            return trimmed_after;
        };
        for (g, (&p, &seq)) in sn.l2p.iter().zip(&sn.seqs).enumerate() {
            if p == UNMAPPED {
                if seq > 0 {
                    trimmed_after.insert(g as u32, seq);
                }
                continue;
            }
            let sb = layout.sb_of_entry(p);
            if !layout.is_data_sb(sb) || self.sbs[sb.0 as usize].status != SbStatus::Trusted {
                report.checkpoint_entries_dropped += 1;
                continue;
            }
            let c = Candidate {
                seq,
                epoch: sn.sb_epochs[sb.0 as usize],
                pgn: Pgn(p),
                scanned: false,
                whole: true,
                ruh: 0,
            };
            if better(c, self.best.get(&(g as u32)).copied(), layout.page_mapped()) {
                self.best.insert(g as u32, c);
            }
        }
        trimmed_after
    }

    /// Maps every logical group to its best version, unless a trim newer than it took
    /// effect; marks the trimmed groups.
    fn install_mappings(
        &mut self,
        dev: &mut Device,
        trimmed_after: &BTreeMap<u32, u64>,
        report: &mut RecoveryReport,
    ) {
        for (&g, c) in &self.best {
            if u64::from(g) >= dev.layout.logical_entries() {
                continue;
            }
            if trimmed_after.get(&g).is_some_and(|&t| c.seq <= t) {
                debug_assert!(
                    c.scanned,
                    "a checkpoint entry is never older than its own trim"
                );
                report.trimmed_versions_dropped += 1;
                continue;
            }
            dev.map.map(Lgn(g), c.pgn, c.seq);
            if c.scanned {
                dev.fdp_set_unit_ruh(g, c.ruh);
                report.groups_from_scan += 1;
            } else {
                report.groups_from_checkpoint += 1;
            }
            self.max_seq = self.max_seq.max(c.seq);
        }
        for (&g, &t) in trimmed_after {
            if u64::from(g) < dev.layout.logical_entries() && dev.map.lookup(Lgn(g)).is_none() {
                dev.map.set_trimmed(Lgn(g), t);
            }
        }
    }

    /// Each superblock's state from what was found: retired, free (or held while its bad
    /// members are remapped), or closed with its epoch, SLC mode and FDP owner.
    fn restore_superblocks(&mut self, dev: &mut Device, cfg: &FtlConfig) {
        for (s, f) in self.sbs.iter().enumerate() {
            let sb = SbId(s as u32);
            let pe = dev.sb_pe(sb);
            dev.sbs.get_mut(sb).pe = pe;
            match f.status {
                SbStatus::Retired => dev.sbs.get_mut(sb).state = SbState::Retired,
                SbStatus::Empty => {
                    let (remapped, exhausted) = dev.remap_bad_members(sb);
                    if exhausted {
                        dev.sbs.get_mut(sb).state = SbState::Retired;
                    } else if remapped {
                        dev.sbs.get_mut(sb).state = SbState::Held;
                    } else {
                        dev.sbs.release(sb);
                    }
                }
                SbStatus::Trusted | SbStatus::Changed => {
                    close_members(dev, sb);
                    let any_bad = member_blocks(dev, sb).any(|b| dev.bb.nand().is_bad(b));
                    let info = dev.sbs.get_mut(sb);
                    info.state = SbState::Closed;
                    info.epoch = f.epoch;
                    dev.sbs.set_retiring(sb, any_bad);
                    dev.sbs.set_slc(sb, f.slc);
                    dev.sbs.get_mut(sb).ruh = fdp_owner(cfg, f.placement);
                }
            }
            self.max_epoch = self.max_epoch.max(f.epoch);
        }
    }
}

/// How far each slot was written is unknown (a newer checkpoint may have been torn after the
/// newest complete one), so neither is appended to: the next checkpoint starts over in the
/// slot that does not hold the recovered one. A slot with a bad block is broken. The
/// recovered checkpoint's counters raise the highest sequence and epoch seen.
fn restore_checkpoint_slots(
    dev: &mut Device,
    snap: Option<&(u32, Snapshot)>,
    report: &mut RecoveryReport,
    found: &mut Found,
) {
    let capacity = dev.layout.ckpt_slot_rows();
    dev.ckpt.next_row = [capacity; 2];
    for slot in 0..2 {
        let bad = dev
            .layout
            .ckpt_slot(slot)
            .any(|sb| member_blocks(dev, sb).any(|b| dev.bb.nand().is_bad(b)));
        dev.ckpt.broken[slot as usize] = bad;
    }
    if let Some((slot, sn)) = snap {
        report.checkpoint_seq = Some(sn.ckpt_seq);
        dev.ckpt.seq = sn.ckpt_seq;
        dev.ckpt.newest = Some(*slot);
        found.max_seq = found.max_seq.max(sn.next_write_seq.saturating_sub(1));
        found.max_epoch = found.max_epoch.max(sn.next_epoch.saturating_sub(1));
    }
}

/// Which handle alone a recovered superblock holds data of (`SbInfo::ruh`): the handle of
/// a host lane's superblock, or of a persistently isolated handle's GC superblock.
fn fdp_owner(cfg: &FtlConfig, p: Option<crate::oob::Placement>) -> Option<u8> {
    let p = p?;
    let isolated = cfg.fdp.handle_type == crate::fdp::HandleType::PersistentlyIsolated;
    (!p.by_gc || isolated).then_some(p.ruh)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SbStatus {
    Empty,
    Trusted,
    Changed,
    Retired,
}

fn member_blocks(dev: &Device, sb: SbId) -> impl Iterator<Item = nearflash_flash::BlockId> + '_ {
    let geo = &dev.layout.geo;
    (0..geo.channels).flat_map(move |c| {
        (0..geo.planes_per_die).map(move |l| dev.remap.block_id(&dev.layout, sb, c, l))
    })
}

fn close_members(dev: &mut Device, sb: SbId) {
    let blocks: Vec<_> = member_blocks(dev, sb).collect();
    for b in blocks {
        if !dev.bb.nand().is_bad(b) {
            dev.bb.nand_mut().close(b);
        }
    }
}

/// Page-level mapping: reads every page of `sb` and reports each unit whose record decodes
/// (its 4 KiB and its record are checked together, so a torn program yields no unit). Every
/// row is read: programs of one group's slices run on different dies, so a cut can leave an
/// erased row below a programmed one. A unit below its block's frontier (`Frontier`) whose
/// data is damaged under an intact header is reported too (reading it is an integrity
/// error); one with no record to trust is noted in `lost`.
fn scan_superblock_units(
    r: &mut Reader,
    layout: &Layout,
    remap: &RemapTable,
    sb: SbId,
    report: &mut RecoveryReport,
    lost: &mut Unattributed,
    found: &mut dyn FnMut(u32, Candidate),
) {
    let upp = layout.units_per_page();
    let mut pages: Vec<(Pgn, u32, PageId, Vec<Seen>)> = Vec::new();
    let mut frontier = Frontier::new(layout.geo.pages_per_block);
    for page in 0..layout.groups_per_superblock() {
        let pgn = layout.pgn(sb, page);
        for slot_base in (0..layout.units_per_group()).step_by(upp as usize) {
            let pos = layout.slot_pos(slot_base);
            let id = remap.page_id(layout, pgn, pos.page);
            let seen = r.read_units_seen(id, upp);
            if seen.iter().any(|u| matches!(u, Seen::Valid(_))) {
                frontier.saw_valid(id);
            }
            if seen[0] != Seen::Erased {
                pages.push((pgn, slot_base, id, seen));
            }
        }
    }
    for (pgn, slot_base, id, seen) in pages {
        let below = frontier.below(id);
        for (i, u) in seen.into_iter().enumerate() {
            let rec = match u {
                Seen::Valid(rec) => rec,
                Seen::Damaged(rec) if below && rec.kind == PageKind::Data => {
                    report.damaged_pages += 1;
                    rec
                }
                Seen::Junk if below => {
                    lost.note(id);
                    continue;
                }
                _ => {
                    report.torn_groups += 1;
                    continue;
                }
            };
            match rec.kind {
                PageKind::Data | PageKind::Lost(_) if rec.lpn <= u64::from(u32::MAX) => found(
                    rec.lpn as u32,
                    Candidate {
                        seq: rec.seq,
                        epoch: rec.epoch,
                        pgn: Pgn(layout.pun(pgn, slot_base + i as u32).0),
                        scanned: true,
                        whole: true,
                        ruh: rec.placement.map_or(0, |p| p.ruh),
                    },
                ),
                PageKind::Pad => {}
                _ => report.torn_groups += 1,
            }
        }
    }
}

/// Reads every page group of `sb` until an all-erased group, reporting each whole group. A
/// page below its block's frontier whose data is damaged under an intact header counts for
/// its group (reading it is an integrity error); one with no record to trust is noted in
/// `lost`.
fn scan_superblock(
    r: &mut Reader,
    layout: &Layout,
    remap: &RemapTable,
    sb: SbId,
    report: &mut RecoveryReport,
    lost: &mut Unattributed,
    found: &mut dyn FnMut(u32, Candidate),
) {
    let gp = layout.group_pages();
    let mut rows: Vec<(Pgn, Vec<(PageId, Seen)>)> = Vec::new();
    let mut frontier = Frontier::new(layout.geo.pages_per_block);
    for page in 0..layout.groups_per_superblock() {
        let pgn = layout.pgn(sb, page);
        let row: Vec<(PageId, Seen)> = (0..gp)
            .map(|k| {
                let id = remap.page_id(layout, pgn, k);
                let seen = r.read_seen(id);
                if matches!(seen, Seen::Valid(_)) {
                    frontier.saw_valid(id);
                }
                (id, seen)
            })
            .collect();
        if row.iter().all(|(_, s)| *s == Seen::Erased) {
            break;
        }
        rows.push((pgn, row));
    }
    for (pgn, row) in rows {
        let mut group: Option<(u64, u64, u64)> = None; // (lgn, seq, epoch)
        let mut whole = true;
        for (k, (id, seen)) in row.into_iter().enumerate() {
            let k = k as u32;
            let rec = match seen {
                Seen::Valid(rec) => Some(rec),
                Seen::Damaged(rec) if frontier.below(id) => {
                    report.damaged_pages += 1;
                    Some(rec)
                }
                Seen::Junk if frontier.below(id) => {
                    lost.note(id);
                    None
                }
                _ => None,
            };
            match rec {
                Some(rec)
                    if matches!(rec.kind, PageKind::Data | PageKind::Lost(_))
                        && rec.lpn % u64::from(gp) == u64::from(k) =>
                {
                    let key = (rec.lpn / u64::from(gp), rec.seq, rec.epoch);
                    match group {
                        None if k == 0 => group = Some(key),
                        Some(g) if g == key => {}
                        _ => whole = false,
                    }
                }
                _ => whole = false,
            }
        }
        match group {
            Some((lgn, seq, epoch)) if whole && lgn <= u64::from(u32::MAX) => found(
                lgn as u32,
                Candidate {
                    seq,
                    epoch,
                    pgn,
                    scanned: true,
                    whole: true,
                    ruh: 0,
                },
            ),
            _ => report.torn_groups += 1,
        }
    }
}

/// The newest checkpoint in slot `slot` whose every page decodes. Checkpoints are appended
/// row after row, each starting at the first page of a row; the scan stops at the first
/// row that was never written. Rows are programmed several at a time, so rows after that
/// one may hold pages of the checkpoint that was cut; it is incomplete anyway, and every
/// complete checkpoint lies before it (a row is issued only once every row `ways` before
/// it is done, and a checkpoint starts only after the previous one is complete).
fn read_checkpoint(
    r: &mut Reader,
    layout: &Layout,
    slot: u32,
    extension_bytes: u64,
) -> Option<Snapshot> {
    let geo = &layout.geo;
    let gp = u64::from(layout.group_pages());
    let rows = u64::from(layout.ckpt_slot_rows());
    // Page `index` of the slot, counting page groups row by row (rows rotate over the slot's
    // superblocks, see `Layout::ckpt_row`).
    let page_of = |index: u64| -> PageId {
        let (sb, page) = layout.ckpt_row(slot, (index / gp) as u32);
        let (c, l) = layout.page_position((index % gp) as u32);
        let die: DieId = layout.die_of(sb, c);
        geo.page_id(geo.block_id(die, l, layout.row_of(sb)), page)
    };
    let mut newest: Option<Snapshot> = None;
    for row in 0..rows {
        let start = row * gp;
        let first = r.read(page_of(start));
        if r.erased() {
            break;
        }
        let Some(first) = first else { continue };
        if first.kind != PageKind::Checkpoint || first.lpn != 0 {
            continue;
        }
        let Some(snap) = read_one_checkpoint(
            r,
            layout,
            (first.seq, extension_bytes),
            start,
            rows * gp,
            &page_of,
        ) else {
            continue;
        };
        if newest.as_ref().is_none_or(|n| snap.ckpt_seq > n.ckpt_seq) {
            newest = Some(snap);
        }
    }
    newest
}

/// Reads the checkpoint `ckpt_seq` (with `extension_bytes` of extensions) whose first page
/// is slot page `start` (already in `r`).
fn read_one_checkpoint(
    r: &mut Reader,
    layout: &Layout,
    (ckpt_seq, extension_bytes): (u64, u64),
    start: u64,
    slot_pages: u64,
    page_of: &impl Fn(u64) -> PageId,
) -> Option<Snapshot> {
    let total = Snapshot::announced_len(&r.data).ok()?;
    let ps = u64::from(layout.geo.page_size_bytes);
    let pages = total.div_ceil(ps);
    if start + pages > slot_pages {
        return None;
    }
    let mut bytes = Vec::with_capacity((pages * ps) as usize);
    bytes.extend_from_slice(&r.data);
    for i in 1..pages {
        let rec = r.read(page_of(start + i))?;
        if rec.kind != PageKind::Checkpoint || rec.lpn != i || rec.seq != ckpt_seq {
            return None;
        }
        bytes.extend_from_slice(&r.data);
    }
    Snapshot::decode(
        &bytes,
        layout.logical_entries(),
        layout.superblocks(),
        layout.group_pages(),
        extension_bytes,
    )
    .ok()
}
