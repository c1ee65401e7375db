//! Page-group allocation (Flashvisor: "allocates a new page group number by simply increasing
//! the page group number used in a previous write"). There is one write point per way for
//! host writes and one per way for GC copies (hot/cold separation); successive allocations
//! rotate over the points, so consecutive group writes land on different dies. A point that
//! fills up takes the least-worn free superblock of its way. Host writes may open a
//! superblock only while more than `gc_foreground_free_superblocks` are free; the rest are
//! GC's reserve, so collection can always make progress. A host write point takes at most
//! `HOST_PROGRAMS_PER_POINT` programs at a time; further host writes wait for one to finish.
//!
//! The points come in *lanes*: one host lane and one GC lane, or with Flexible Data
//! Placement (`crate::fdp`) a host lane per placement handle and reclaim group, and a GC lane
//! per reclaim group (initially isolated handles) or per handle and group (persistently
//! isolated ones). A lane has a point per way of its reclaim group, and a superblock a lane
//! opens holds only that lane's writes: that is what keeps the handles' data apart.

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
    /// Host writes into native (TLC) superblocks, through host lane `.0`.
    Host(u16),
    /// GC copies, through GC lane `.0`.
    Gc(u16),
    /// Host writes into superblocks in SLC mode (the SLC write cache, `slc.rs`).
    Slc,
}

/// A lane of write points: one per way of its reclaim group, rotated over.
#[derive(Clone, Debug)]
pub(crate) struct Lane {
    pub points: Vec<Option<WritePoint>>,
    pub rr: usize,
    /// The way of point 0 (the first way of the lane's reclaim group).
    pub first_way: u32,
}

impl Lane {
    pub fn new(points: u32, first_way: u32) -> Lane {
        Lane {
            points: vec![None; points as usize],
            rr: 0,
            first_way,
        }
    }
}

impl Device {
    /// Takes the next page group for `stream` — with one-shot programs into a native
    /// superblock, the first of a word line's `flash.one_shot_pages` consecutive groups, all
    /// taken — or `None` if it must wait for GC. The superblock is pinned until the program
    /// completes (`program_done`).
    pub(super) fn alloc_group(&mut self, stream: Stream, now: SimTime) -> Option<Pgn> {
        let n = self.points(stream).len();
        for attempt in 0..n {
            let i = (self.lane(stream).rr + attempt) % n;
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
            if !matches!(stream, Stream::Gc(_))
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
            self.lane_mut(stream).rr = (i + 1) % n;
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

    /// Whether some write point of host lane `lane` (native or SLC) has a free page group
    /// left.
    pub(super) fn host_points_have_room(&self, lane: u16) -> bool {
        self.points_have_room(Stream::Host(lane)) || self.points_have_room(Stream::Slc)
    }

    /// Page groups left in the open write points of GC lane `lane`.
    pub(super) fn gc_points_room(&self, lane: u16) -> u32 {
        self.points(Stream::Gc(lane))
            .iter()
            .flatten()
            .map(|wp| self.sb_capacity(wp.sb) - wp.next_page)
            .sum()
    }

    /// Whether `stream` may open a superblock: counted in its reclaim group (every way
    /// without FDP), whose free superblocks only it can take.
    pub(super) fn can_open(&self, stream: Stream) -> bool {
        let free = self.free_in_group(self.stream_group(stream));
        match stream {
            Stream::Host(_) => free > self.cfg.gc_foreground_free_superblocks,
            Stream::Slc => {
                free > self.cfg.gc_foreground_free_superblocks
                    && self.sbs.slc_count() < self.slc_budget_superblocks()
            }
            // The last free superblock is the crash reserve (see `gc_room`).
            Stream::Gc(_) => free > 1 || (free > 0 && self.gc_rescuing()),
        }
    }

    /// Reclaim groups (`fdp.reclaim_groups`; 1 without FDP): group `g` is ways
    /// `g × write_points ..` of the next `write_points`.
    pub(super) fn groups(&self) -> u32 {
        self.cfg.fdp.groups()
    }

    /// The ways of reclaim group `g`.
    pub(super) fn group_ways(&self, g: u32) -> std::ops::Range<u32> {
        let n = self.layout.write_points();
        assert!(g < self.groups());
        g * n..(g + 1) * n
    }

    /// The reclaim group of superblock `sb`.
    pub(super) fn sb_group(&self, sb: SbId) -> u32 {
        self.layout.way_of(sb) / self.layout.write_points()
    }

    /// The reclaim group whose ways `stream`'s points write on.
    pub(super) fn stream_group(&self, stream: Stream) -> u32 {
        self.lane(stream).first_way / self.layout.write_points()
    }

    /// Free superblocks of reclaim group `g`.
    pub(super) fn free_in_group(&self, g: u32) -> u32 {
        self.sbs.free_in(self.group_ways(g))
    }

    fn open_point(&mut self, stream: Stream, i: usize) -> Option<WritePoint> {
        if !self.can_open(stream) {
            return None;
        }
        let lane = self.lane(stream);
        let way = lane.first_way + i as u32;
        let ways = self.group_ways(self.stream_group(stream));
        let sb = self.sbs.take(way, ways)?;
        debug_assert_eq!(self.sb_group(sb), self.stream_group(stream));
        let epoch = self.next_epoch;
        self.next_epoch += 1;
        if stream == Stream::Slc {
            self.sbs.set_slc(sb, true);
            self.note_slc_opened();
        }
        let ruh = self.lane_ruh(stream);
        let info = self.sbs.get_mut(sb);
        debug_assert_eq!(info.state, SbState::Free);
        info.state = SbState::Open;
        info.epoch = epoch;
        info.ruh = ruh;
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
        for stream in self.streams() {
            for i in 0..self.points(stream).len() {
                if self.points(stream)[i].is_some_and(|wp| wp.sb == sb) {
                    self.note_ru_closed_early(stream, sb);
                    self.close_point(stream, i, sb);
                }
            }
        }
    }

    /// Every stream with write points: the host lanes, the GC lanes, SLC.
    pub(super) fn streams(&self) -> Vec<Stream> {
        let host = (0..self.host_lanes.len() as u16).map(Stream::Host);
        let gc = (0..self.gc_lanes.len() as u16).map(Stream::Gc);
        host.chain(gc).chain([Stream::Slc]).collect()
    }

    pub(super) fn points(&self, stream: Stream) -> &Vec<Option<WritePoint>> {
        &self.lane(stream).points
    }

    fn points_mut(&mut self, stream: Stream) -> &mut Vec<Option<WritePoint>> {
        &mut self.lane_mut(stream).points
    }

    pub(super) fn lane(&self, stream: Stream) -> &Lane {
        match stream {
            Stream::Host(l) => &self.host_lanes[l as usize],
            Stream::Gc(l) => &self.gc_lanes[l as usize],
            Stream::Slc => &self.slc_lane,
        }
    }

    fn lane_mut(&mut self, stream: Stream) -> &mut Lane {
        match stream {
            Stream::Host(l) => &mut self.host_lanes[l as usize],
            Stream::Gc(l) => &mut self.gc_lanes[l as usize],
            Stream::Slc => &mut self.slc_lane,
        }
    }
}
