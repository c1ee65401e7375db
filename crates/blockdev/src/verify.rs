//! Verification of functional runs: every 512-byte sector a workload writes is
//! self-describing (its logical sector number and a version stamp, then a pattern derived
//! from both), and `Reference` is the independent model of which versions a read may
//! legally return — during a run, and after a power cut.
//!
//! Stamps come from one counter over all writes and trims, so "newer" is well defined. A
//! sector's *acked* state is the stamp of the last write or trim acknowledged for it.
//! * During a run a read may return the acked version at its submission or anything newer
//!   that was issued before it completed; zeros only if the sector was never written, was
//!   trimmed, or a trim was issued meanwhile.
//! * After a power cut an acknowledged write must read back (or something newer that was in
//!   flight); a trimmed or never-written sector may read as zeros or as any version of
//!   itself (trims are not durable). Another sector's data is always an error.

use crate::request::SECTOR_BYTES;

const SECTOR: usize = SECTOR_BYTES as usize;
const MAGIC: u32 = 0x4E46_5345; // "NFSE"

/// Fills one sector with the payload of version `stamp` of logical sector `lsn`.
pub fn fill_sector(lsn: u64, stamp: u32, out: &mut [u8]) {
    assert_eq!(out.len(), SECTOR);
    out[0..8].copy_from_slice(&lsn.to_le_bytes());
    out[8..12].copy_from_slice(&stamp.to_le_bytes());
    out[12..16].copy_from_slice(&MAGIC.to_le_bytes());
    let mut x = lsn.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(stamp);
    for chunk in out[16..].chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

/// What a sector read back as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectorContent {
    Zeros,
    Version { lsn: u64, stamp: u32 },
    Garbage,
}

pub fn decode_sector(buf: &[u8]) -> SectorContent {
    if buf.iter().all(|&b| b == 0) {
        return SectorContent::Zeros;
    }
    let lsn = u64::from_le_bytes(buf[0..8].try_into().expect("8 bytes"));
    let stamp = u32::from_le_bytes(buf[8..12].try_into().expect("4 bytes"));
    let mut expect = [0u8; SECTOR];
    fill_sector(lsn, stamp, &mut expect);
    if buf == expect {
        SectorContent::Version { lsn, stamp }
    } else {
        SectorContent::Garbage
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct SectorState {
    acked: u32,
    acked_is_write: bool,
    issued_write_max: u32,
    issued_trim_max: u32,
    /// A post-cut read of the sector failed (a media error), so what the cut left in it is
    /// still unknown: until a read returns it or a newer write or trim is acknowledged, a
    /// read may return anything the post-cut check allows. Holds the first stamp issued
    /// after the cut (0: the sector's state is known).
    unread_since_stamp: u32,
}

/// The state of a sector when a read of it was issued (for checking the read later).
#[derive(Clone, Copy, Debug)]
pub struct AckedAt {
    state: SectorState,
}

/// The acked stamp a read issued outside a cut's unknowns is held to.
struct AckedStamp {
    stamp: u32,
    is_write: bool,
}

pub struct Reference {
    sectors: Vec<SectorState>,
    group_sectors: u64,
    next_stamp: u32,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Violation {
    pub lsn: u64,
    pub expected: String,
    pub got: SectorContent,
}

impl Reference {
    pub fn new(sectors: u64, group_sectors: u64) -> Self {
        Reference {
            sectors: vec![SectorState::default(); sectors as usize],
            group_sectors,
            next_stamp: 1,
        }
    }

    /// The part of [lsn, lsn + count) inside the device: a request reaching past the end is
    /// rejected by the device, so the sectors beyond it have no state to track.
    fn clip(&self, lsn: u64, count: u64) -> std::ops::Range<u64> {
        let end = self.sectors.len() as u64;
        lsn.min(end)..lsn.saturating_add(count).min(end)
    }

    fn stamp(&mut self) -> u32 {
        let s = self.next_stamp;
        self.next_stamp = self.next_stamp.checked_add(1).expect("stamp overflow");
        s
    }

    /// A write of `count` sectors from `lsn` is issued; returns its payload and stamp.
    pub fn issue_write(&mut self, lsn: u64, count: u64) -> (Vec<u8>, u32) {
        let stamp = self.stamp();
        let mut data = vec![0u8; count as usize * SECTOR];
        for i in 0..count {
            fill_sector(
                lsn + i,
                stamp,
                &mut data[i as usize * SECTOR..(i as usize + 1) * SECTOR],
            );
        }
        for i in self.clip(lsn, count) {
            let s = &mut self.sectors[i as usize];
            s.issued_write_max = s.issued_write_max.max(stamp);
        }
        (data, stamp)
    }

    pub fn ack_write(&mut self, lsn: u64, count: u64, stamp: u32) {
        for i in self.clip(lsn, count) {
            let s = &mut self.sectors[i as usize];
            if stamp > s.acked {
                s.acked = stamp;
                s.acked_is_write = true;
                s.unread_since_stamp = 0;
            }
        }
    }

    /// The sectors a trim really affects: only whole page groups (trims are advisory).
    fn trimmed_range(&self, lsn: u64, count: u64) -> std::ops::Range<u64> {
        let g = self.group_sectors;
        let r = self.clip(lsn, count);
        let first = r.start.div_ceil(g) * g;
        let end = r.end / g * g;
        first..end.max(first)
    }

    pub fn issue_trim(&mut self, lsn: u64, count: u64) -> u32 {
        let stamp = self.stamp();
        for i in self.trimmed_range(lsn, count) {
            let s = &mut self.sectors[i as usize];
            s.issued_trim_max = s.issued_trim_max.max(stamp);
        }
        stamp
    }

    pub fn ack_trim(&mut self, lsn: u64, count: u64, stamp: u32) {
        for i in self.trimmed_range(lsn, count) {
            let s = &mut self.sectors[i as usize];
            if stamp > s.acked {
                s.acked = stamp;
                s.acked_is_write = false;
                s.unread_since_stamp = 0;
            }
        }
    }

    /// Snapshot of the acked state of sectors [lsn, lsn + count), taken when a read is issued.
    pub fn acked_at(&self, lsn: u64, count: u64) -> Vec<AckedAt> {
        self.clip(lsn, count)
            .map(|i| AckedAt {
                state: self.sectors[i as usize],
            })
            .collect()
    }

    /// Checks a completed read of [lsn, ..) issued when the sectors' state was `before`.
    ///
    /// A read issued while a sector was unread since a cut is judged by the post-cut rule
    /// against the state it was issued in (with the writes and trims issued since), even if
    /// another read settled the sector before this one completed. (Story: a soak case on worn
    /// media had two reads of a sector whose post-cut read failed; the first returned the
    /// version a non-durable trim had hidden and settled it, and the second, returning the
    /// same version, was judged against the trim and called wrong.)
    pub fn check_read(&self, lsn: u64, before: &[AckedAt], data: &[u8]) -> Result<(), Violation> {
        for (i, at) in before.iter().enumerate() {
            let s = lsn + i as u64;
            let st = self.sectors[s as usize];
            let sector = &data[i * SECTOR..(i + 1) * SECTOR];
            let at = at.state;
            debug_assert!(
                st.unread_since_stamp == 0 || at.unread_since_stamp > 0,
                "a sector becomes unread only before the first command after a cut"
            );
            if at.unread_since_stamp > 0 {
                let cut_state = SectorState {
                    issued_write_max: st.issued_write_max,
                    issued_trim_max: st.issued_trim_max,
                    ..at
                };
                Self::check_cut_rule(s, cut_state, sector)?;
                continue;
            }
            let at = AckedStamp {
                stamp: at.acked,
                is_write: at.acked_is_write,
            };
            let got = decode_sector(sector);
            let ok = match got {
                SectorContent::Zeros => !at.is_write || st.issued_trim_max > at.stamp,
                SectorContent::Version { lsn, stamp } => {
                    lsn == s && stamp >= at.stamp && stamp <= st.issued_write_max
                }
                SectorContent::Garbage => false,
            };
            if !ok {
                return Err(Violation {
                    lsn: s,
                    expected: format!(
                        "version >= {} (acked {}), issued up to {}",
                        at.stamp,
                        if at.is_write { "write" } else { "trim/none" },
                        st.issued_write_max
                    ),
                    got,
                });
            }
        }
        Ok(())
    }

    /// Checks what sector `s` reads after a power cut.
    ///
    /// A trim in flight at the cut may have taken effect, and a trimmed sector may read after
    /// a cut as any data it held before (the durability promise), so with a trim issued after
    /// the last acknowledged write an older version is legal too. (Story: the configuration
    /// fuzzer's one-sector page groups, where every trim covers whole groups, reported such
    /// reads as lost writes: the device had applied the trim, GC had erased the newest copy,
    /// and recovery found an older one — as the promise allows.)
    pub fn check_after_crash(&self, s: u64, data: &[u8]) -> Result<(), Violation> {
        Self::check_cut_rule(s, self.sectors[s as usize], data)
    }

    /// The post-cut rule of `check_after_crash` for sector `s` in state `st`.
    fn check_cut_rule(s: u64, st: SectorState, data: &[u8]) -> Result<(), Violation> {
        let got = decode_sector(data);
        let trim_in_flight = st.issued_trim_max > st.acked;
        let ok = match got {
            SectorContent::Zeros => !st.acked_is_write || trim_in_flight,
            SectorContent::Version { lsn, stamp } => {
                lsn == s
                    && stamp <= st.issued_write_max
                    && (!st.acked_is_write || stamp >= st.acked || trim_in_flight)
            }
            SectorContent::Garbage => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Violation {
                lsn: s,
                expected: format!(
                    "acked {} {} (issued writes up to {})",
                    if st.acked_is_write {
                        "write"
                    } else {
                        "trim/none"
                    },
                    st.acked,
                    st.issued_write_max
                ),
                got,
            })
        }
    }

    /// After a power cut has been checked, what sector `s` reads back (`data`) becomes its
    /// known state: an in-flight write that survived counts as acknowledged, one that did not
    /// can never appear later, and a trimmed sector holds what it was found to hold.
    pub fn settle_after_crash(&mut self, s: u64, data: &[u8]) {
        let st = &mut self.sectors[s as usize];
        *st = match decode_sector(data) {
            SectorContent::Version { lsn, stamp } if lsn == s => SectorState {
                acked: stamp,
                acked_is_write: true,
                issued_write_max: stamp,
                issued_trim_max: 0,
                unread_since_stamp: 0,
            },
            // Zeros; or a violation already counted, after which anything but a new write
            // of this sector is reported again.
            _ => SectorState::default(),
        };
    }

    /// A post-cut read of sector `s` failed with a media error (call it before any command
    /// is issued after the cut): its content stays unknown (see
    /// `SectorState::unread_since_stamp`) until `settle_unread` sees it.
    pub fn unreadable_after_crash(&mut self, s: u64) {
        let since = self.next_stamp;
        self.sectors[s as usize].unread_since_stamp = since;
    }

    /// A read returned `data` for sector `s` (already checked): if the sector was unread
    /// since a cut, that is now its known state, as `settle_after_crash` would have made it —
    /// except that writes and trims issued since the cut may still be in flight.
    pub fn settle_unread(&mut self, s: u64, data: &[u8]) {
        let st = self.sectors[s as usize];
        let since = st.unread_since_stamp;
        if since == 0 {
            return;
        }
        self.settle_after_crash(s, data);
        let after_cut = |stamp: u32| if stamp >= since { stamp } else { 0 };
        let now = &mut self.sectors[s as usize];
        now.issued_write_max = now.issued_write_max.max(after_cut(st.issued_write_max));
        now.issued_trim_max = now.issued_trim_max.max(after_cut(st.issued_trim_max));
    }

    pub fn sectors(&self) -> u64 {
        self.sectors.len() as u64
    }

    /// Stamp of the last acknowledged write or trim of sector `s` (0 if none).
    pub fn acked_stamp(&self, s: u64) -> u32 {
        self.sectors[s as usize].acked
    }

    /// Whether sector `s` holds acknowledged data (a flushed write that must survive).
    pub fn is_acked_write(&self, s: u64) -> bool {
        self.sectors[s as usize].acked_is_write
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_describe_themselves() {
        let mut buf = vec![0u8; SECTOR];
        fill_sector(42, 7, &mut buf);
        assert_eq!(
            decode_sector(&buf),
            SectorContent::Version { lsn: 42, stamp: 7 }
        );
        buf[300] ^= 1;
        assert_eq!(decode_sector(&buf), SectorContent::Garbage);
        assert_eq!(decode_sector(&[0u8; SECTOR]), SectorContent::Zeros);
    }

    #[test]
    fn stale_or_foreign_data_is_a_violation() {
        let mut r = Reference::new(16, 4);
        let (d1, s1) = r.issue_write(0, 4);
        r.ack_write(0, 4, s1);
        let (d2, s2) = r.issue_write(0, 4);
        r.ack_write(0, 4, s2);
        let before = r.acked_at(0, 4);
        assert!(r.check_read(0, &before, &d2).is_ok());
        assert!(r.check_read(0, &before, &d1).is_err(), "stale version");
        let mut other = vec![0u8; 4 * SECTOR];
        for i in 0..4 {
            fill_sector(
                8 + i,
                s2,
                &mut other[i as usize * SECTOR..(i as usize + 1) * SECTOR],
            );
        }
        assert!(
            r.check_read(0, &before, &other).is_err(),
            "another sector's data"
        );
        assert!(r.check_after_crash(0, &d1[..SECTOR]).is_err());
        assert!(
            r.check_after_crash(0, &[0u8; SECTOR]).is_err(),
            "acked write lost"
        );
    }

    #[test]
    fn settled_state_after_a_crash_is_what_was_read_back() {
        let mut r = Reference::new(4, 4);
        let (d1, s1) = r.issue_write(0, 1);
        r.ack_write(0, 1, s1);
        let (d2, _) = r.issue_write(0, 1); // in flight at the cut, lost
        assert!(r.check_after_crash(0, &d1).is_ok());
        r.settle_after_crash(0, &d1);
        let before = r.acked_at(0, 1);
        assert!(r.check_read(0, &before, &d1).is_ok());
        assert!(
            r.check_read(0, &before, &d2).is_err(),
            "a lost write must not reappear"
        );
    }

    #[test]
    fn requests_reaching_past_the_end_track_only_sectors_inside() {
        let mut r = Reference::new(8, 4);
        let (d, s) = r.issue_write(6, 4);
        assert_eq!(d.len(), 4 * SECTOR);
        r.ack_write(6, 4, s);
        let t = r.issue_trim(4, 8);
        r.ack_trim(4, 8, t);
        assert_eq!(r.acked_at(7, 3).len(), 1);
        assert!(r.acked_at(9, 2).is_empty());
    }

    #[test]
    fn trims_affect_whole_groups_only_and_are_not_durable() {
        let mut r = Reference::new(16, 4);
        let (d, s) = r.issue_write(0, 8);
        r.ack_write(0, 8, s);
        let t = r.issue_trim(2, 6); // covers group 1 (sectors 4..8) only
        r.ack_trim(2, 6, t);
        assert!(r.is_acked_write(2));
        assert!(!r.is_acked_write(4));
        let before = r.acked_at(4, 1);
        assert!(r.check_read(4, &before, &[0u8; SECTOR]).is_ok());
        assert!(r
            .check_read(4, &before, &d[4 * SECTOR..5 * SECTOR])
            .is_err());
        assert!(r.check_after_crash(4, &d[4 * SECTOR..5 * SECTOR]).is_ok());
    }

    #[test]
    fn after_a_cut_an_older_version_is_legal_only_with_a_trim_in_flight() {
        let mut r = Reference::new(4, 1);
        let (old, s1) = r.issue_write(0, 1);
        r.ack_write(0, 1, s1);
        let (_, s2) = r.issue_write(0, 1);
        r.ack_write(0, 1, s2);
        // The acknowledged write is newer: reading the older one is a lost write.
        assert!(r.check_after_crash(0, &old).is_err());
        // A trim in flight at the cut may have applied; the sector may then read as data
        // it held before.
        r.issue_trim(0, 1);
        assert!(r.check_after_crash(0, &old).is_ok());
        assert!(r.check_after_crash(0, &[0u8; SECTOR]).is_ok());
    }

    /// A trimmed sector may come back after a cut; if the post-cut read of it fails (a media
    /// error), the first read that gets through may still return the old version — once, as
    /// the sector's known state — and a newer write ends the grace.
    #[test]
    fn a_sector_unreadable_after_a_cut_accepts_what_the_cut_allowed_until_read() {
        let mut r = Reference::new(4, 1);
        let (old, s1) = r.issue_write(0, 1);
        r.ack_write(0, 1, s1);
        let t = r.issue_trim(0, 1);
        r.ack_trim(0, 1, t);
        assert!(r.check_after_crash(0, &old).is_ok());
        // Unread after the cut: a later read returning the old version is legal.
        r.unreadable_after_crash(0);
        let before = r.acked_at(0, 1);
        assert!(r.check_read(0, &before, &old).is_ok());
        r.settle_unread(0, &old);
        // Now the old version is the sector's known state: zeros would be wrong.
        let before = r.acked_at(0, 1);
        assert!(r.check_read(0, &before, &[0u8; SECTOR]).is_err());
        assert!(r.check_read(0, &before, &old).is_ok());
        // Without the media error, the old version after an acknowledged trim is wrong.
        let mut r2 = Reference::new(4, 1);
        let (old2, s) = r2.issue_write(0, 1);
        r2.ack_write(0, 1, s);
        let t = r2.issue_trim(0, 1);
        r2.ack_trim(0, 1, t);
        let before = r2.acked_at(0, 1);
        assert!(r2.check_read(0, &before, &old2).is_err());
        // A newer acknowledged write ends the grace.
        r2.unreadable_after_crash(0);
        let (_, s) = r2.issue_write(0, 1);
        r2.ack_write(0, 1, s);
        let before = r2.acked_at(0, 1);
        assert!(r2.check_read(0, &before, &old2).is_err());
    }

    /// Two reads issued while a sector is unread since a cut: the first to complete settles
    /// it, and the second, returning the same version the cut allowed, is still legal; a
    /// read that is issued after the settle is held to the settled state.
    #[test]
    fn reads_issued_while_a_sector_was_unread_are_judged_by_the_cut_rule() {
        let mut r = Reference::new(4, 1);
        let (old, s1) = r.issue_write(0, 1);
        r.ack_write(0, 1, s1);
        let t = r.issue_trim(0, 1);
        r.ack_trim(0, 1, t);
        r.unreadable_after_crash(0);
        let first = r.acked_at(0, 1);
        let second = r.acked_at(0, 1);
        // A write issued after both reads and acknowledged before either completes: the
        // reads raced it, so the old version is still legal for them.
        let (new, s2) = r.issue_write(0, 1);
        assert!(r.check_read(0, &first, &old).is_ok());
        r.settle_unread(0, &old);
        assert!(r.check_read(0, &second, &old).is_ok());
        assert!(r.check_read(0, &second, &new).is_ok());
        r.ack_write(0, 1, s2);
        assert!(r.check_read(0, &second, &old).is_ok());
        // A read issued now must see the acknowledged write.
        let third = r.acked_at(0, 1);
        assert!(r.check_read(0, &third, &old).is_err());
        assert!(r.check_read(0, &third, &new).is_ok());
        // Data of another sector is wrong under the cut rule too.
        let mut foreign = vec![0u8; SECTOR];
        fill_sector(1, s1, &mut foreign);
        assert!(r.check_read(0, &second, &foreign).is_err());
    }
}
