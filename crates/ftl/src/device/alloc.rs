//! Page-group allocation (Flashvisor: "allocates a new page group number by simply increasing
//! the page group number used in a previous write"). There is one write point per way for
//! host writes and one per way for GC copies (hot/cold separation); successive allocations
//! rotate over the points, so consecutive group writes land on different dies. A point that
//! fills up takes the least-worn free superblock of its way. Host writes may open a
//! superblock only while more than `gc_foreground_free_superblocks` are free; the rest are
//! GC's reserve, so collection can always make progress. A host write point takes at most
//! `HOST_PROGRAMS_PER_POINT` programs at a time; further host writes wait for one to finish.

use super::Device;
use crate::layout::{Pgn, SbId};
use crate::superblock::SbState;
use nearflash_sim::SimTime;

/// Host programs a write point may have in flight: one programming on the way's dies and one
/// queued behind it keeps those dies busy. Beyond that, host writes wait in the FTL (for any
/// point to drain) instead of in the dies' FIFO queues: when free superblocks are scarce only
/// one or two host points are open, and a whole queue depth of host programs stacked on their
/// way would hold every GC copy sent there (and so the GC that frees space) for tens of ms.
const HOST_PROGRAMS_PER_POINT: u32 = 2;

#[derive(Clone, Copy, Debug)]
pub struct WritePoint {
    pub sb: SbId,
    pub next_page: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Host writes into native (TLC) superblocks.
    Host,
    Gc,
    /// Host writes into superblocks in SLC mode (the SLC write cache, `slc.rs`).
    Slc,
}

impl Device {
    /// Takes the next page group for `stream` — with one-shot programs into a native
    /// superblock, the first of a word line's `flash.one_shot_pages` consecutive groups, all
    /// taken — or `None` if it must wait for GC. The superblock is pinned until the program
    /// completes (`program_done`).
    pub(super) fn alloc_group(&mut self, stream: Stream, now: SimTime) -> Option<Pgn> {
        let n = self.layout.write_points() as usize;
        for attempt in 0..n {
            let i = (self.rr(stream) + attempt) % n;
            let point = self.points(stream)[i];
            let wp = match point {
                Some(wp) if wp.next_page < self.sb_capacity(wp.sb) => wp,
                _ => {
                    if let Some(wp) = point {
                        self.close_point(stream, i, wp.sb);
                    }
                    match self.open_point(stream, i) {
                        Some(wp) => wp,
                        None => continue,
                    }
                }
            };
            if stream != Stream::Gc
                && self.sbs.get(wp.sb).programs_inflight >= HOST_PROGRAMS_PER_POINT
            {
                continue;
            }
            let pgn = self.layout.pgn(wp.sb, wp.next_page);
            let rows = self.word_line_rows(wp.sb);
            debug_assert!(
                wp.next_page.is_multiple_of(rows),
                "write points advance by word lines"
            );
            self.points_mut(stream)[i] = Some(WritePoint {
                sb: wp.sb,
                next_page: wp.next_page + rows,
            });
            *self.rr_mut(stream) = (i + 1) % n;
            let info = self.sbs.get_mut(wp.sb);
            info.programs_inflight += 1;
            info.last_write = now;
            return Some(pgn);
        }
        None
    }

    /// Page rows one program into `sb` covers: a word line (`flash.one_shot_pages`) in a
    /// native superblock, one row in SLC mode (one page per word line). Page-group mapping
    /// refuses one-shot programs, so it is always 1 there.
    pub(super) fn word_line_rows(&self, sb: SbId) -> u32 {
        if self.sbs.get(sb).slc {
            1
        } else {
            self.bb.config().one_shot_pages
        }
    }

    /// A program into `pgn` finished (or failed): unpin its superblock.
    pub(super) fn program_done(&mut self, pgn: Pgn) {
        let sb = self.layout.sb_of(pgn);
        let info = self.sbs.get_mut(sb);
        assert!(info.programs_inflight > 0);
        info.programs_inflight -= 1;
    }

    /// Page groups superblock `sb` holds: all its page rows, or `1 / bits_per_cell` of them
    /// in SLC mode.
    pub(super) fn sb_capacity(&self, sb: SbId) -> u32 {
        if self.sbs.get(sb).slc {
            self.layout
                .slc_groups_per_superblock(self.cfg.slc_cache.bits_per_cell)
        } else {
            self.layout.groups_per_superblock()
        }
    }

    /// Whether some write point of `stream` has a free page group left.
    pub(super) fn points_have_room(&self, stream: Stream) -> bool {
        self.points(stream)
            .iter()
            .flatten()
            .any(|wp| wp.next_page < self.sb_capacity(wp.sb))
    }

    /// Whether some host write point (native or SLC) has a free page group left.
    pub(super) fn host_points_have_room(&self) -> bool {
        self.points_have_room(Stream::Host) || self.points_have_room(Stream::Slc)
    }

    /// Page groups left in GC's open write points.
    pub(super) fn gc_points_room(&self) -> u32 {
        self.gc_points
            .iter()
            .flatten()
            .map(|wp| self.sb_capacity(wp.sb) - wp.next_page)
            .sum()
    }

    pub(super) fn can_open(&self, stream: Stream) -> bool {
        match stream {
            Stream::Host => self.sbs.free_count() > self.cfg.gc_foreground_free_superblocks,
            Stream::Slc => {
                self.sbs.free_count() > self.cfg.gc_foreground_free_superblocks
                    && self.sbs.slc_count() < self.slc_budget_superblocks()
            }
            // The last free superblock is the crash reserve (see `gc_room`).
            Stream::Gc => {
                self.sbs.free_count() > 1 || (self.sbs.free_count() > 0 && self.gc_rescuing())
            }
        }
    }

    fn open_point(&mut self, stream: Stream, i: usize) -> Option<WritePoint> {
        if !self.can_open(stream) {
            return None;
        }
        let way = (i as u32) % self.layout.geo.ways_per_channel;
        let sb = self.sbs.take(way)?;
        let epoch = self.next_epoch;
        self.next_epoch += 1;
        if stream == Stream::Slc {
            self.sbs.set_slc(sb, true);
            self.note_slc_opened();
        }
        let info = self.sbs.get_mut(sb);
        debug_assert_eq!(info.state, SbState::Free);
        info.state = SbState::Open;
        info.epoch = epoch;
        self.ckpt.dirty = true;
        let wp = WritePoint { sb, next_page: 0 };
        self.points_mut(stream)[i] = Some(wp);
        Some(wp)
    }

    pub(super) fn close_point(&mut self, stream: Stream, i: usize, sb: SbId) {
        self.points_mut(stream)[i] = None;
        let info = self.sbs.get_mut(sb);
        if info.state == SbState::Open {
            info.state = SbState::Closed;
        }
    }

    /// Stops writing into `sb` (a member failed a program): its point is closed early.
    pub(super) fn close_superblock(&mut self, sb: SbId) {
        for stream in [Stream::Host, Stream::Gc, Stream::Slc] {
            for i in 0..self.points(stream).len() {
                if self.points(stream)[i].is_some_and(|wp| wp.sb == sb) {
                    self.close_point(stream, i, sb);
                }
            }
        }
    }

    pub(super) fn points(&self, stream: Stream) -> &Vec<Option<WritePoint>> {
        match stream {
            Stream::Host => &self.host_points,
            Stream::Gc => &self.gc_points,
            Stream::Slc => &self.slc_points,
        }
    }

    fn points_mut(&mut self, stream: Stream) -> &mut Vec<Option<WritePoint>> {
        match stream {
            Stream::Host => &mut self.host_points,
            Stream::Gc => &mut self.gc_points,
            Stream::Slc => &mut self.slc_points,
        }
    }

    fn rr(&self, stream: Stream) -> usize {
        match stream {
            Stream::Host => self.rr_host,
            Stream::Gc => self.rr_gc,
            Stream::Slc => self.rr_slc,
        }
    }

    fn rr_mut(&mut self, stream: Stream) -> &mut usize {
        match stream {
            Stream::Host => &mut self.rr_host,
            Stream::Gc => &mut self.rr_gc,
            Stream::Slc => &mut self.rr_slc,
        }
    }
}
