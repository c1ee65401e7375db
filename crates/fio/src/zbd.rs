//! fio's `zonemode=zbd` (fio's `zbd.c`, `zbd_adjust_block`): the host's view of the zoned
//! drive's zones that every job of a run shares, and the translation of each drawn request
//! onto it. Pure bookkeeping: no clock, no device (`zoned.rs` runs the jobs on the drive).
//!
//! - **Writes** go to a zone's write pointer. The zone is the one the drawn offset falls in
//!   when it is a write target already or a target can be added (at most `max_open_zones`
//!   targets, shared by all jobs: fio's `write_zones`); otherwise one of the targets, picked
//!   at the index proportional to the drawn offset within the job's region
//!   (`pick_random_zone_idx`). A target that a write fills leaves the targets when that write
//!   completes (fio's `zbd_end_zone_io`, called from `zbd_put_io`): until then it counts
//!   towards `max_open_zones` and takes no write, and a write that finds every target of its
//!   span full waits (fio's `io_u_quiesce` and retry in `zbd_convert_to_write_zone`). A write to a
//!   full zone resets it first (fio resets a zone it needs again: a sequential job that wraps,
//!   a random one that draws a full zone); so does the write that `zone_reset_frequency` picks
//!   once the bytes below write pointers pass `zone_reset_threshold` of the region. An empty
//!   zone is never reset (fio's `__zbd_reset_zone` skips it). The length is cut to the zone's
//!   room.
//! - **Reads** stay below write pointers: a read drawn in a zone with less than one block
//!   written (or, sequential, past its write pointer) moves to the next zone holding data
//!   (random: the nearest one on either side, `zbd_find_zone`); a random read keeps its place
//!   modulo the zone's written range; the length is cut at the write pointer. With no data
//!   anywhere in the region the job's I/O ends (fio's `io_u_eof`).
//!
//! The write pointers here move as requests are issued (fio's `zbd_queue_io`), so a read may
//! cover data whose write is still in flight; the drive serves it from its row buffers.

use nearflash_ftl::BlockOp;
use nearflash_iobench::workload::Draw;

/// A job's zones: [first, end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneSpan {
    pub first: u32,
    pub end: u32,
}

impl ZoneSpan {
    fn contains(self, z: u32) -> bool {
        (self.first..self.end).contains(&z)
    }

    fn len(self) -> u32 {
        self.end - self.first
    }
}

/// What a write needs (besides its place): whether its zone is reset first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub draw: Draw,
    pub reset: bool,
}

/// Where a drawn write goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePlace {
    At(Placed),
    /// Every target of the span is full with its last write in flight: the write waits for
    /// a completion (fio's `io_u_quiesce`) and is placed again.
    Wait,
    /// No target zone lies in the span: the job's I/O ends (fio's `io_u_eof`).
    Eof,
}

/// The zones as all jobs of the run see them (fio's `zoned_block_device_info`).
#[derive(Clone, Debug)]
pub struct ZbdState {
    zone_bytes: u64,
    /// Each zone's write pointer, bytes from its start, moved as writes are issued.
    wp_bytes: Vec<u64>,
    /// Write target zones, in the order they were added (fio's `write_zones`).
    write_zones: Vec<u32>,
    write_zones_max: usize,
    /// Zones whose reset was decided and not yet handed to the drive.
    reset_asked: Vec<bool>,
    /// Bytes below all write pointers (fio's `wp_valid_data_bytes`).
    valid_bytes: u64,
    /// `zone_reset_threshold` and the writes between early resets (1 / frequency); `None`
    /// without `zone_reset_frequency`.
    early_reset: Option<(f64, u64)>,
    /// Writes left before the next early reset (fio's `write_cnt`).
    writes_to_reset: u64,
}

impl ZbdState {
    /// `zones` empty zones of `zone_bytes`, at most `write_zones_max` written at once.
    pub fn new(
        zones: u32,
        zone_bytes: u64,
        write_zones_max: u32,
        reset_threshold: f64,
        reset_frequency: f64,
    ) -> ZbdState {
        assert!(zones > 0 && zone_bytes > 0 && write_zones_max > 0);
        assert!((0.0..=1.0).contains(&reset_threshold) && (0.0..=1.0).contains(&reset_frequency));
        // fio's `_zbd_reset_write_cnt`: 1 / frequency writes, at most UINT_MAX.
        let early_reset = (reset_frequency > 0.0).then(|| {
            let every = (1.0 / reset_frequency).min(f64::from(u32::MAX)) as u64;
            (reset_threshold, every.max(1))
        });
        ZbdState {
            zone_bytes,
            wp_bytes: vec![0; zones as usize],
            write_zones: Vec::new(),
            write_zones_max: write_zones_max as usize,
            reset_asked: vec![false; zones as usize],
            valid_bytes: 0,
            writes_to_reset: early_reset.map_or(0, |(_, every)| every),
            early_reset,
        }
    }

    pub fn zone_bytes(&self) -> u64 {
        self.zone_bytes
    }

    pub fn zones(&self) -> u32 {
        self.wp_bytes.len() as u32
    }

    /// Zone `z`'s write pointer, bytes from its start.
    pub fn wp_bytes(&self, z: u32) -> u64 {
        self.wp_bytes[z as usize]
    }

    /// Most write target zones at once.
    pub fn write_zones_max(&self) -> usize {
        self.write_zones_max
    }

    /// The write target zones now.
    pub fn write_zones(&self) -> &[u32] {
        &self.write_zones
    }

    /// Takes the reset decided for zone `z`, if any (the drive's side issues it before the
    /// zone's next request).
    pub fn take_reset(&mut self, z: u32) -> bool {
        std::mem::take(&mut self.reset_asked[z as usize])
    }

    fn zone_of(&self, offset_bytes: u64) -> u32 {
        let z = offset_bytes / self.zone_bytes;
        assert!(z < self.wp_bytes.len() as u64, "an offset on the drive");
        z as u32
    }

    fn start(&self, z: u32) -> u64 {
        u64::from(z) * self.zone_bytes
    }

    /// fio's `zbd_write_zone_get`: zone `z` is a write target, or becomes one if there is
    /// room.
    fn write_zone_get(&mut self, z: u32) -> bool {
        if self.write_zones.contains(&z) {
            return true;
        }
        if self.write_zones.len() < self.write_zones_max {
            self.write_zones.push(z);
            return true;
        }
        false
    }

    /// Zone `z` is a write target still, filled by writes whose last is in flight.
    fn filling(&self, z: u32) -> bool {
        self.wp_bytes[z as usize] == self.zone_bytes && self.write_zones.contains(&z)
    }

    /// Translates a write drawn by a job over `span` whose write sizes are multiples of
    /// `min_bs` (which divides the zone size).
    pub fn place_write(&mut self, span: ZoneSpan, draw: Draw, min_bs: u64) -> WritePlace {
        assert_eq!(draw.op, BlockOp::Write);
        assert!(self.zone_bytes.is_multiple_of(min_bs) && draw.len_bytes.is_multiple_of(min_bs));
        let drawn = self.zone_of(draw.offset_bytes);
        let zone = if span.contains(drawn) && !self.filling(drawn) && self.write_zone_get(drawn) {
            drawn
        } else {
            // fio's `pick_random_zone_idx`: the target at the offset's share of the region,
            // or the next one with room.
            let n = self.write_zones.len();
            let span_start = self.start(span.first);
            let span_bytes = u64::from(span.len()) * self.zone_bytes;
            let rel = draw
                .offset_bytes
                .saturating_sub(span_start)
                .min(span_bytes - 1);
            let from = (u128::from(rel) * n as u128 / u128::from(span_bytes)) as usize;
            let mut targets = (0..n)
                .map(|i| self.write_zones[(from + i) % n])
                .filter(|&z| span.contains(z));
            match targets.clone().find(|&z| !self.filling(z)) {
                Some(z) => z,
                None if targets.next().is_some() => return WritePlace::Wait,
                None => return WritePlace::Eof,
            }
        };
        let mut reset = self.wp_bytes[zone as usize] + min_bs > self.zone_bytes;
        if let Some((threshold, every)) = self.early_reset {
            let region_bytes = u64::from(span.len()) * self.zone_bytes;
            if self.valid_bytes as f64 >= region_bytes as f64 * threshold {
                self.writes_to_reset -= 1;
                if self.writes_to_reset == 0 {
                    self.writes_to_reset = every;
                    reset = true;
                }
            }
        }
        let wp = &mut self.wp_bytes[zone as usize];
        // An empty zone needs no reset (fio's `__zbd_reset_zone` returns at once).
        let reset = reset && *wp > 0;
        if reset {
            self.valid_bytes -= *wp;
            *wp = 0;
            self.reset_asked[zone as usize] = true;
        }
        let len = draw.len_bytes.min(self.zone_bytes - *wp);
        assert!(
            len >= min_bs && len.is_multiple_of(min_bs),
            "room for a block"
        );
        let offset_bytes = u64::from(zone) * self.zone_bytes + *wp;
        *wp += len;
        self.valid_bytes += len;
        self.check();
        WritePlace::At(Placed {
            draw: Draw {
                op: BlockOp::Write,
                offset_bytes,
                len_bytes: len,
            },
            reset,
        })
    }

    /// fio's `zbd_end_zone_io`: the write ending at `end_bytes` (a drive offset) completed;
    /// if it filled its zone, the zone is no longer a write target.
    pub fn end_write(&mut self, end_bytes: u64) {
        assert!(end_bytes > 0);
        let z = self.zone_of(end_bytes - 1);
        if end_bytes == self.start(z) + self.zone_bytes
            && self.wp_bytes[z as usize] == self.zone_bytes
        {
            self.write_zones.retain(|&t| t != z);
        }
        self.check();
    }

    /// Translates a read drawn by a job over `span` (block sizes multiples of `min_bs`) to
    /// lie below a write pointer; `None`: no zone of the span holds a block.
    pub fn place_read(
        &self,
        span: ZoneSpan,
        draw: Draw,
        min_bs: u64,
        random: bool,
    ) -> Option<Draw> {
        assert_eq!(draw.op, BlockOp::Read);
        let drawn = self.zone_of(draw.offset_bytes);
        let mut zone = drawn;
        let mut offset = draw.offset_bytes;
        let written = |z: u32| self.wp_bytes[z as usize];
        if written(zone) < min_bs || (!random && offset + min_bs > self.start(zone) + written(zone))
        {
            zone = self.find_zone(span, drawn, min_bs, random)?;
            if !random {
                offset = self.start(zone);
            }
        }
        let range = written(zone);
        if range <= draw.len_bytes {
            offset = self.start(zone);
        } else if random {
            let rel = (draw.offset_bytes - self.start(drawn)) % (range - draw.len_bytes);
            offset = self.start(zone) + rel / min_bs * min_bs;
        }
        let wp = self.start(zone) + range;
        let len = draw.len_bytes.min(wp - offset) / min_bs * min_bs;
        assert!(
            len >= min_bs && offset + len <= wp,
            "a read below the write pointer"
        );
        Some(Draw {
            op: BlockOp::Read,
            offset_bytes: offset,
            len_bytes: len,
        })
    }

    /// fio's `zbd_find_zone`: the next zone after `from` with `min_bs` written; random jobs
    /// also look back, nearest first.
    fn find_zone(&self, span: ZoneSpan, from: u32, min_bs: u64, random: bool) -> Option<u32> {
        let has = |z: u32| self.wp_bytes[z as usize] >= min_bs;
        let (first, end) = (i64::from(span.first), i64::from(span.end));
        let (mut up, mut down) = (i64::from(from) + 1, i64::from(from) - 1);
        while up < end || down >= first {
            if up < end {
                if has(up as u32) {
                    return Some(up as u32);
                }
            } else if !random {
                break;
            }
            if random && down >= first && has(down as u32) {
                return Some(down as u32);
            }
            up += 1;
            down -= 1;
        }
        None
    }

    /// The invariants after every change.
    fn check(&self) {
        assert!(self.write_zones.len() <= self.write_zones_max);
        debug_assert_eq!(self.valid_bytes, self.wp_bytes.iter().sum::<u64>());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZONE: u64 = 64 * 1024;
    const BS: u64 = 16 * 1024;

    fn write(offset_bytes: u64, len_bytes: u64) -> Draw {
        Draw {
            op: BlockOp::Write,
            offset_bytes,
            len_bytes,
        }
    }

    fn read(offset_bytes: u64, len_bytes: u64) -> Draw {
        Draw {
            op: BlockOp::Read,
            offset_bytes,
            len_bytes,
        }
    }

    const ALL: ZoneSpan = ZoneSpan { first: 0, end: 8 };

    impl WritePlace {
        fn unwrap(self) -> Placed {
            match self {
                WritePlace::At(p) => p,
                other => panic!("not placed: {other:?}"),
            }
        }
    }

    #[test]
    fn a_random_write_lands_at_its_zones_write_pointer() {
        let mut s = ZbdState::new(8, ZONE, 4, 0.0, 0.0);
        let p = s
            .place_write(ALL, write(3 * ZONE + 40 * 1024, BS), BS)
            .unwrap();
        assert_eq!(
            p.draw.offset_bytes,
            3 * ZONE,
            "the zone's write pointer, not the offset"
        );
        assert!(!p.reset);
        let p = s.place_write(ALL, write(3 * ZONE + 8192, BS), BS).unwrap();
        assert_eq!(p.draw.offset_bytes, 3 * ZONE + BS);
        assert_eq!(s.wp_bytes(3), 2 * BS);
        assert_eq!(s.write_zones(), [3]);
    }

    #[test]
    fn past_max_open_zones_a_write_goes_to_a_target_by_its_share_of_the_region() {
        let mut s = ZbdState::new(8, ZONE, 2, 0.0, 0.0);
        s.place_write(ALL, write(0, BS), BS).unwrap();
        s.place_write(ALL, write(5 * ZONE, BS), BS).unwrap();
        assert_eq!(s.write_zones(), [0, 5]);
        // Zone 7 cannot open: the offset lies in the second half, so target index 1 (zone 5).
        let p = s.place_write(ALL, write(7 * ZONE, BS), BS).unwrap();
        assert_eq!(p.draw.offset_bytes, 5 * ZONE + BS);
        // Zone 2 lies in the first half: target index 0 (zone 0).
        let p = s.place_write(ALL, write(2 * ZONE, BS), BS).unwrap();
        assert_eq!(p.draw.offset_bytes, BS);
    }

    #[test]
    fn a_filled_zone_leaves_the_targets_when_its_last_write_completes_and_is_reset_when_written_again(
    ) {
        let mut s = ZbdState::new(8, ZONE, 1, 0.0, 0.0);
        for i in 0..4 {
            let p = s.place_write(ALL, write(0, BS), BS).unwrap();
            assert_eq!(p.draw.offset_bytes, i * BS);
        }
        assert_eq!(
            s.write_zones(),
            [0],
            "full, its last write in flight: still a target"
        );
        assert_eq!(
            s.place_write(ALL, write(3 * ZONE, BS), BS),
            WritePlace::Wait,
            "the one target is full: the write waits for its completion"
        );
        s.end_write(3 * BS);
        assert_eq!(
            s.write_zones(),
            [0],
            "an earlier write's completion frees nothing"
        );
        s.end_write(ZONE);
        assert!(s.write_zones().is_empty(), "full: no longer a target");
        assert!(!s.take_reset(0));
        let p = s.place_write(ALL, write(ZONE / 2, BS), BS).unwrap();
        assert!(p.reset, "a write to a full zone resets it first");
        assert_eq!(p.draw.offset_bytes, 0);
        assert!(s.take_reset(0));
        assert!(!s.take_reset(0), "taken once");
        assert_eq!(s.wp_bytes(0), BS);
    }

    #[test]
    fn a_write_is_cut_to_the_zones_room() {
        let mut s = ZbdState::new(8, ZONE, 4, 0.0, 0.0);
        s.place_write(ALL, write(ZONE, 48 * 1024), BS).unwrap();
        let p = s.place_write(ALL, write(ZONE, 32 * 1024), BS).unwrap();
        assert_eq!(
            (p.draw.offset_bytes, p.draw.len_bytes),
            (ZONE + 48 * 1024, BS)
        );
    }

    #[test]
    fn a_write_outside_every_target_of_its_span_ends_the_job() {
        let mut s = ZbdState::new(8, ZONE, 1, 0.0, 0.0);
        s.place_write(ALL, write(0, BS), BS).unwrap();
        let other = ZoneSpan { first: 4, end: 8 };
        assert_eq!(
            s.place_write(other, write(5 * ZONE, BS), BS),
            WritePlace::Eof
        );
    }

    #[test]
    fn past_the_threshold_every_nth_write_resets_its_zone() {
        // Threshold 25% of 8 zones = 2 zones' bytes; frequency 0.5: every 2nd write past it.
        let mut s = ZbdState::new(8, ZONE, 8, 0.25, 0.5);
        let mut resets = Vec::new();
        for i in 0..16u64 {
            let p = s.place_write(ALL, write((i % 4) * ZONE, BS), BS).unwrap();
            resets.push(p.reset);
        }
        // 8 writes fill 2 zones' worth (at write 8 the threshold is reached); from then on
        // every 2nd write resets its (non-empty) zone.
        let first = resets.iter().position(|&r| r).unwrap();
        assert!(first >= 8, "{resets:?}");
        assert_eq!(resets.iter().filter(|&&r| r).count(), 4, "{resets:?}");
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let mut s = ZbdState::new(8, ZONE, 4, 0.0, 0.0);
        s.place_write(ALL, write(2 * ZONE, 3 * BS), BS).unwrap();
        // A random read past the write pointer keeps its place modulo the written range.
        let r = s
            .place_read(ALL, read(2 * ZONE + 56 * 1024, BS), BS, true)
            .unwrap();
        assert!(r.offset_bytes + r.len_bytes <= 2 * ZONE + 3 * BS, "{r:?}");
        assert_eq!(r.offset_bytes, 2 * ZONE + (56 * 1024) % (2 * BS) / BS * BS);
        // A read in an empty zone moves to the nearest zone with data.
        let r = s.place_read(ALL, read(6 * ZONE, BS), BS, true).unwrap();
        assert_eq!(r.offset_bytes / ZONE, 2);
        // A sequential read past the write pointer moves on to the next zone with data...
        s.place_write(ALL, write(5 * ZONE, BS), BS).unwrap();
        let r = s
            .place_read(ALL, read(2 * ZONE + 3 * BS, BS), BS, false)
            .unwrap();
        assert_eq!((r.offset_bytes, r.len_bytes), (5 * ZONE, BS));
        // ...and is cut at the write pointer.
        let r = s
            .place_read(ALL, read(2 * ZONE + 2 * BS, 2 * BS), BS, false)
            .unwrap();
        assert_eq!((r.offset_bytes, r.len_bytes), (2 * ZONE + 2 * BS, BS));
        // Past the last zone with data, a sequential read finds nothing: the job's I/O ends.
        assert_eq!(s.place_read(ALL, read(6 * ZONE, BS), BS, false), None);
    }

    #[test]
    fn with_nothing_written_a_read_ends_the_job() {
        let s = ZbdState::new(8, ZONE, 4, 0.0, 0.0);
        assert_eq!(s.place_read(ALL, read(0, BS), BS, true), None);
    }

    proptest::proptest! {
        /// Whatever the jobs draw, every write lands at its zone's write pointer within the
        /// zone, every read lies below a write pointer, and the targets stay within the limit.
        #[test]
        fn placed_requests_respect_the_write_pointers(
            ops in proptest::collection::vec((proptest::bool::ANY, 0u64..8 * ZONE / 4096, 1u64..5), 1..200),
            max_open in 1u32..5,
        ) {
            let mut s = ZbdState::new(8, ZONE, max_open, 0.0, 0.0);
            for (is_write, block, n) in ops {
                let len = n * 4096;
                let offset = (block * 4096).min(8 * ZONE - len);
                if is_write {
                    let before: Vec<u64> = (0..8).map(|z| s.wp_bytes(z)).collect();
                    let p = match s.place_write(ALL, write(offset, len), 4096) {
                        WritePlace::At(p) => p,
                        WritePlace::Wait => {
                            // Complete every filling write, as the drive would, and retry.
                            for z in 0..8u64 {
                                s.end_write((z + 1) * ZONE);
                            }
                            s.place_write(ALL, write(offset, len), 4096).unwrap()
                        }
                        WritePlace::Eof => unreachable!("every zone is in the span"),
                    };
                    let z = (p.draw.offset_bytes / ZONE) as u32;
                    let wp = if p.reset { 0 } else { before[z as usize] };
                    proptest::prop_assert_eq!(p.draw.offset_bytes, u64::from(z) * ZONE + wp);
                    proptest::prop_assert!(p.draw.offset_bytes + p.draw.len_bytes <= u64::from(z + 1) * ZONE);
                    proptest::prop_assert!(s.write_zones().len() <= max_open as usize);
                } else if let Some(r) = s.place_read(ALL, read(offset, len), 4096, true) {
                    let z = (r.offset_bytes / ZONE) as u32;
                    proptest::prop_assert!(r.offset_bytes + r.len_bytes <= u64::from(z) * ZONE + s.wp_bytes(z));
                }
            }
        }
    }
}
