//! The per-page spare-area (OOB) record. Every programmed page carries it, so recovery can
//! tell which logical page a physical page holds, which write produced it, and whether it is
//! whole. Layout (little-endian, 40 bytes):
//!
//! | bytes | field | meaning |
//! |-------|-------|---------|
//! | 0..4  | magic | `NFOB` |
//! | 4..12 | lpn   | logical page (data) or page index within the checkpoint |
//! | 12..20| seq   | write sequence number of the group version (kept by GC copies) |
//! | 20..28| epoch | the superblock's open epoch when the page was programmed |
//! | 28..32| kind  | bits 0..8: 1 = data, 2 = checkpoint, 3/4 = lost data, 5 = filler, 6 = zone finish mark; bit 8 = block in SLC mode; with FDP, bits 16..24 = reclaim unit handle + 1 and bit 9 = written by GC |
//! | 32..36| crc   | CRC-32 over the page data and bytes 0..32 |
//! | 36..40| hcrc  | CRC-32 over `NFOH` and bytes 0..32 alone (0 in records written before it) |
//!
//! A torn or erased page fails the magic or the CRC; nothing else is trusted as data. The
//! header check tells one more case apart ([`OobRecord::decode_checked`]): a page whose data
//! fails its CRC while its header is intact — which logical page, which version. Below the
//! write frontier of its block (a later page of the block decodes) that is damage, not a
//! torn program, and recovery keeps the version so that reading it is an integrity error
//! rather than an older version or zeros (`recovery`).
//!
//! Under page-level mapping a page holds several 4 KiB units from unrelated addresses, and
//! its spare area holds one record per unit, back to back: record `i` covers the page's
//! unit `i` (its 4 KiB of data), with `lpn` the logical unit (or `u64::MAX` for filler).

pub const OOB_RECORD_BYTES: usize = 40;
const MAGIC: &[u8; 4] = b"NFOB";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageKind {
    Data,
    Checkpoint,
    /// A data page whose content could not be read when it was moved (GC copy or
    /// read-modify-write): the new copy keeps the page's place in its group but reads of it
    /// fail, rather than returning zeros that would pass for data — with the error of the
    /// read that lost it.
    Lost(LossCause),
    /// Page-level mapping: a slot programmed with filler (a flush or the end of a GC run
    /// sealed a partly filled program unit).
    Pad,
    /// Zoned mode: the row a Finish Zone command programs after a zone's data, so that the
    /// zone comes back Full after a power cut (`zns::recovery`).
    ZoneFinish,
}

/// Why a moved page's content was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossCause {
    /// The page read back as garbage or another page's data (failed its checksum).
    Integrity,
    /// The page held more bit errors than the ECC and its read retries correct.
    Media,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OobRecord {
    pub lpn: u64,
    pub seq: u64,
    pub epoch: u64,
    pub kind: PageKind,
    /// The page's superblock is used in SLC mode (the SLC write cache): recovery restores
    /// the mode from the first page of each superblock. Bit 8 of the kind word, so a record
    /// without it is byte for byte what it was before the cache existed.
    pub slc: bool,
    /// Flexible Data Placement (`crate::fdp`): whose data the unit is, and which stream
    /// wrote it. `None` without FDP, so such a record is byte for byte what it was before.
    pub placement: Option<Placement>,
}

/// FDP's part of a spare-area record: recovery restores from it which handle each unit
/// belongs to and which superblocks a handle's writes had open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The reclaim unit handle of the unit's data (of the stream, for filler).
    pub ruh: u8,
    /// A GC stream (the controller) programmed it, not a host write.
    pub by_gc: bool,
}

/// Bit of the kind word that marks a page of a superblock in SLC mode.
const SLC_FLAG: u32 = 1 << 8;
/// Bit of the kind word that marks a GC stream's program under FDP.
const GC_FLAG: u32 = 1 << 9;
/// Bits of the kind word holding the reclaim unit handle + 1 under FDP (0: no FDP).
const RUH_SHIFT: u32 = 16;
const RUH_MASK: u32 = 0xFF << RUH_SHIFT;

impl OobRecord {
    /// Writes the record for a page holding `data` into `oob` (at least 40 bytes; the rest of
    /// the spare area is left zero).
    pub fn encode(&self, data: &[u8], oob: &mut [u8]) {
        assert!(oob.len() >= OOB_RECORD_BYTES);
        oob.fill(0);
        oob[0..4].copy_from_slice(MAGIC);
        oob[4..12].copy_from_slice(&self.lpn.to_le_bytes());
        oob[12..20].copy_from_slice(&self.seq.to_le_bytes());
        oob[20..28].copy_from_slice(&self.epoch.to_le_bytes());
        let kind: u32 = match self.kind {
            PageKind::Data => 1,
            PageKind::Checkpoint => 2,
            PageKind::Lost(LossCause::Integrity) => 3,
            PageKind::Lost(LossCause::Media) => 4,
            PageKind::Pad => 5,
            PageKind::ZoneFinish => 6,
        } | if self.slc { SLC_FLAG } else { 0 }
            | match self.placement {
                Some(p) => (u32::from(p.ruh) + 1) << RUH_SHIFT | if p.by_gc { GC_FLAG } else { 0 },
                None => 0,
            };
        oob[28..32].copy_from_slice(&kind.to_le_bytes());
        let crc = checksum(data, &oob[0..32]);
        oob[32..36].copy_from_slice(&crc.to_le_bytes());
        let hcrc = header_checksum(&oob[0..32]);
        oob[36..40].copy_from_slice(&hcrc.to_le_bytes());
    }

    /// Decodes a page's record telling a damaged page apart: its data fails the CRC while its
    /// header passes its own check (written with it; a record of an older image has none, and
    /// is then `Unreadable`).
    pub fn decode_checked(data: &[u8], oob: &[u8]) -> Decoded {
        if let Some(rec) = OobRecord::decode(data, oob) {
            return Decoded::Valid(rec);
        }
        if oob.len() < OOB_RECORD_BYTES || &oob[0..4] != MAGIC {
            return Decoded::Unreadable;
        }
        let hcrc = u32::from_le_bytes(oob[36..40].try_into().expect("4 bytes"));
        if hcrc == 0 || hcrc != header_checksum(&oob[0..32]) {
            return Decoded::Unreadable;
        }
        match OobRecord::decode_header(oob) {
            Some(rec) => Decoded::DataDamaged(rec),
            None => Decoded::Unreadable,
        }
    }

    /// Decodes and verifies the record of a page; `None` for erased, torn or foreign pages.
    pub fn decode(data: &[u8], oob: &[u8]) -> Option<OobRecord> {
        if oob.len() < OOB_RECORD_BYTES || &oob[0..4] != MAGIC {
            return None;
        }
        let crc = u32::from_le_bytes(oob[32..36].try_into().expect("4 bytes"));
        if crc != checksum(data, &oob[0..32]) {
            return None;
        }
        OobRecord::decode_header(oob)
    }

    /// The header's fields, unverified (the caller has checked a CRC over them).
    fn decode_header(oob: &[u8]) -> Option<OobRecord> {
        let u64_at = |i: usize| u64::from_le_bytes(oob[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(oob[i..i + 4].try_into().expect("4 bytes"));
        let word = u32_at(28);
        if word & !(SLC_FLAG | GC_FLAG | RUH_MASK | 0xFF) != 0 {
            return None;
        }
        let ruh = (word & RUH_MASK) >> RUH_SHIFT;
        let placement = match ruh {
            0 if word & GC_FLAG != 0 => return None,
            0 => None,
            r => Some(Placement {
                ruh: (r - 1) as u8,
                by_gc: word & GC_FLAG != 0,
            }),
        };
        let kind = match word & 0xFF {
            1 => PageKind::Data,
            2 => PageKind::Checkpoint,
            3 => PageKind::Lost(LossCause::Integrity),
            4 => PageKind::Lost(LossCause::Media),
            5 => PageKind::Pad,
            6 => PageKind::ZoneFinish,
            _ => return None,
        };
        Some(OobRecord {
            lpn: u64_at(4),
            seq: u64_at(12),
            epoch: u64_at(20),
            kind,
            slc: word & SLC_FLAG != 0,
            placement,
        })
    }
}

/// What a page's spare area says, data checked ([`OobRecord::decode_checked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// The record and the data it covers are intact.
    Valid(OobRecord),
    /// The header is intact (its own check passes) but the data fails the CRC: damaged data
    /// of a known logical page and version (or a program torn part-way).
    DataDamaged(OobRecord),
    /// Erased, torn, foreign, or a header that fails its check.
    Unreadable,
}

fn header_checksum(header: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(b"NFOH");
    h.update(header);
    h.finalize()
}

fn checksum(data: &[u8], header: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(data);
    h.update(header);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_and_detects_any_flipped_bit() {
        let data = vec![0x5Au8; 64];
        let rec = OobRecord {
            lpn: 77,
            seq: 9,
            epoch: 3,
            kind: PageKind::Data,
            slc: false,
            placement: None,
        };
        let mut oob = vec![0u8; 48];
        rec.encode(&data, &mut oob);
        assert_eq!(OobRecord::decode(&data, &oob), Some(rec));
        for byte in [0usize, 5, 13, 21, 29, 33] {
            let mut o = oob.clone();
            o[byte] ^= 1;
            assert_eq!(
                OobRecord::decode(&data, &o),
                None,
                "flip in oob byte {byte}"
            );
        }
        let mut d = data.clone();
        d[10] ^= 0x80;
        assert_eq!(OobRecord::decode(&d, &oob), None);
    }

    #[test]
    fn slc_flag_round_trips_and_leaves_native_records_unchanged() {
        let data = vec![7u8; 64];
        let native = OobRecord {
            lpn: 5,
            seq: 2,
            epoch: 1,
            kind: PageKind::Lost(LossCause::Media),
            slc: false,
            placement: None,
        };
        let slc = OobRecord {
            slc: true,
            ..native
        };
        let (mut a, mut b) = (vec![0u8; 48], vec![0u8; 48]);
        native.encode(&data, &mut a);
        slc.encode(&data, &mut b);
        assert_eq!(
            &a[28..32],
            &4u32.to_le_bytes(),
            "native kind word as before"
        );
        assert_eq!(OobRecord::decode(&data, &a), Some(native));
        assert_eq!(OobRecord::decode(&data, &b), Some(slc));
    }

    #[test]
    fn placement_round_trips_beside_the_slc_flag_and_junk_bits_are_refused() {
        let data = vec![3u8; 64];
        let plain = OobRecord {
            lpn: 12,
            seq: 40,
            epoch: 6,
            kind: PageKind::Data,
            slc: false,
            placement: None,
        };
        for (ruh, by_gc) in [(0u8, false), (0, true), (7, false), (127, true)] {
            let placed = OobRecord {
                placement: Some(Placement { ruh, by_gc }),
                ..plain
            };
            let mut oob = vec![0u8; 48];
            placed.encode(&data, &mut oob);
            assert_eq!(OobRecord::decode(&data, &oob), Some(placed));
            let mut o = vec![0u8; 48];
            plain.encode(&data, &mut o);
            assert_eq!(
                &o[28..32],
                &1u32.to_le_bytes(),
                "no FDP: the word as before"
            );
        }
        // A GC flag without a handle is no record this firmware writes.
        let mut oob = vec![0u8; 48];
        plain.encode(&data, &mut oob);
        oob[28..32].copy_from_slice(&(1u32 | GC_FLAG).to_le_bytes());
        assert_eq!(OobRecord::decode_header(&oob), None);
    }

    #[test]
    fn damaged_data_under_an_intact_header_is_told_apart_from_a_torn_page() {
        let data = vec![0x5Au8; 64];
        let rec = OobRecord {
            lpn: 77,
            seq: 9,
            epoch: 3,
            kind: PageKind::Data,
            slc: false,
            placement: None,
        };
        let mut oob = vec![0u8; 48];
        rec.encode(&data, &mut oob);
        assert_eq!(OobRecord::decode_checked(&data, &oob), Decoded::Valid(rec));
        let mut d = data.clone();
        d[40] ^= 4;
        assert_eq!(
            OobRecord::decode_checked(&d, &oob),
            Decoded::DataDamaged(rec)
        );
        // A flipped header bit (or the data CRC field itself) leaves nothing to trust.
        for byte in [5usize, 21, 37] {
            let mut o = oob.clone();
            o[byte] ^= 1;
            assert_eq!(
                OobRecord::decode_checked(&d, &o),
                Decoded::Unreadable,
                "flip in oob byte {byte}"
            );
        }
        // A record written before the header check existed (bytes 36..40 zero) is never
        // taken as damaged.
        let mut legacy = oob.clone();
        legacy[36..40].fill(0);
        assert_eq!(
            OobRecord::decode_checked(&data, &legacy),
            Decoded::Valid(rec)
        );
        assert_eq!(OobRecord::decode_checked(&d, &legacy), Decoded::Unreadable);
        // Random junk (a torn program) and erased pages are unreadable.
        assert_eq!(
            OobRecord::decode_checked(&[0xFF; 64], &[0xFF; 48]),
            Decoded::Unreadable
        );
    }

    #[test]
    fn erased_page_has_no_record() {
        assert_eq!(OobRecord::decode(&[0xFF; 64], &[0xFF; 48]), None);
    }
}
