//! The firmware's in-flight work: host requests and the jobs (one per touched page group,
//! GC copy, erase or checkpoint program batch) whose flash operations carry the job id as
//! their tag. Slabs reuse slots so the hot path does not allocate.

use super::pageset::PageSet;
use crate::layout::{Lgn, Lun, Pgn, Pun, SbId};
use nearflash_blockdev::{BlockOp, IoError};
use nearflash_sim::SimTime;

#[derive(Clone)]
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, t: T) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                debug_assert!(self.items[i as usize].is_none());
                self.items[i as usize] = Some(t);
                i
            }
            None => {
                self.items.push(Some(t));
                (self.items.len() - 1) as u32
            }
        }
    }

    pub fn get(&self, i: u32) -> &T {
        self.items[i as usize].as_ref().expect("live slab entry")
    }

    pub fn get_mut(&mut self, i: u32) -> &mut T {
        self.items[i as usize].as_mut().expect("live slab entry")
    }

    pub fn remove(&mut self, i: u32) -> T {
        let t = self.items[i as usize].take().expect("live slab entry");
        self.free.push(i);
        self.live -= 1;
        t
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The live entries with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (i as u32, t)))
    }
}

#[derive(Clone)]
pub struct ReqState {
    pub id: u64,
    pub op: BlockOp,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub submitted: SimTime,
    /// Jobs still running for this request.
    pub pending: u32,
    pub result: Result<(), IoError>,
    /// Functional fidelity: read result being assembled, or the write payload.
    pub data: Vec<u8>,
    /// The host lane a write's units go to: 0, or with Flexible Data Placement its
    /// placement handle's (`Device::submit_placed`).
    pub lane: u16,
}

/// The sectors of one page group a request touches.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub req: u32,
    pub lgn: Lgn,
    pub first_sector: u32,
    pub sectors: u32,
    /// Byte offset of this segment within the request's payload.
    pub payload_offset: u64,
}

#[derive(Clone)]
pub struct ReadJob {
    pub seg: Segment,
    pub pgn: Pgn,
    pub pending: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePhase {
    WaitLock,
    ReadOld,
    WaitAlloc,
    Program,
}

#[derive(Clone)]
pub struct WriteJob {
    pub seg: Segment,
    pub phase: WritePhase,
    pub pending: u32,
    pub failed: bool,
    /// Pages of the group (bit k) whose old content failed its read and that the write does
    /// not touch: programmed as `PageKind::Lost`.
    pub lost: PageSet,
    /// The pages of `lost` lost to an uncorrectable read (`LossCause::Media`).
    pub lost_to_media: PageSet,
    /// A page the write touches could not be read for the merge (media error): the write
    /// fails with this error and changes nothing, rather than fill the page's other sectors
    /// with zeros.
    pub merge_error: Option<IoError>,
    pub old: Option<Pgn>,
    pub dest: Option<Pgn>,
    pub seq: u64,
    /// Functional fidelity: the whole group being assembled.
    pub buf: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyPhase {
    Read,
    WaitAlloc,
    Program,
}

#[derive(Clone)]
pub struct CopyJob {
    pub src: Pgn,
    pub lgn: Lgn,
    pub seq: u64,
    pub phase: CopyPhase,
    pub pending: u32,
    pub failed: bool,
    /// Pages whose read failed: programmed as `PageKind::Lost`.
    pub lost: PageSet,
    /// The pages of `lost` lost to an uncorrectable read (`LossCause::Media`).
    pub lost_to_media: PageSet,
    pub dest: Option<Pgn>,
    pub buf: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErasePurpose {
    Gc,
    Checkpoint,
}

#[derive(Clone)]
pub struct EraseJob {
    pub sb: SbId,
    pub pending: u32,
    pub purpose: ErasePurpose,
}

#[derive(Clone)]
pub struct TrimJob {
    pub seg: Segment,
}

#[derive(Clone)]
pub struct CkptProgramJob {
    /// Row of the checkpoint (counted from its first row) this program writes.
    pub row: u32,
    pub pending: u32,
    pub failed: bool,
}

/// Page-level mapping: host reads of the units of one request that lie in one page group,
/// read together (one multi-plane read per channel for the pages holding them).
#[derive(Clone)]
pub struct UnitReadJob {
    pub reads: Vec<(Segment, Pun)>,
    pub pending: u32,
}

/// Page-level mapping: a host write or trim of one 4 KiB unit, from its arrival until its
/// data is in a fill (writes and trims to one unit are applied in arrival order under the
/// unit's lock). A write covering part of a unit first reads the unit's old data.
#[derive(Clone)]
pub struct UnitWriteJob {
    pub seg: Segment,
    pub trim: bool,
    /// The old copy being read for a partial write.
    pub old: Option<Pun>,
}

/// Which stream a fill belongs to: a host lane's or a GC lane's (`alloc.rs`; one of each
/// without Flexible Data Placement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillStream {
    Host(u16),
    Gc(u16),
}

impl FillStream {
    pub fn is_host(self) -> bool {
        matches!(self, FillStream::Host(_))
    }

    /// The write points the fill's programs go to.
    pub fn points(self) -> super::alloc::Stream {
        match self {
            FillStream::Host(l) => super::alloc::Stream::Host(l),
            FillStream::Gc(l) => super::alloc::Stream::Gc(l),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillPhase {
    /// Taking units.
    Open,
    /// Sealed, waiting for a program slot.
    WaitAlloc,
    Program,
}

/// One unit in a fill.
#[derive(Clone, Copy, Debug)]
pub struct FillUnit {
    pub lun: Lun,
    pub seq: u64,
    /// GC: the copy's source (the mapping switches only if it still points there).
    pub src: Option<Pun>,
    /// Host: the request this unit belongs to.
    pub req: Option<u32>,
    /// GC of a unit that failed its checksum: the copy says so (reads of it fail).
    pub lost: bool,
    /// Flexible Data Placement: the reclaim unit handle whose data the unit is (0 without).
    pub ruh: u8,
}

/// Page-level mapping: one die's multi-plane program being filled with units from any
/// addresses (the firmware's write buffer for one program unit), then programmed into one
/// channel's slice of a page group.
#[derive(Clone)]
pub struct FillJob {
    pub stream: FillStream,
    pub phase: FillPhase,
    pub units: Vec<FillUnit>,
    /// Page rows the fill was sized for: 1, or a word line's (`flash.one_shot_pages`) when
    /// it is bound for a native superblock with one-shot programs on. It holds
    /// `units_per_slice × rows` units.
    pub rows: u32,
    /// Functional fidelity: the units' bytes, 4 KiB each in fill order.
    pub buf: Vec<u8>,
    /// The first group (page row) and the channel being programmed.
    pub dest: Option<(Pgn, u32)>,
}

/// Page-level mapping: GC reading the valid units of one page group of its victim.
#[derive(Clone)]
pub struct UnitCopyJob {
    pub src: Pgn,
    /// (slot, unit) pairs valid when the copy started.
    pub slots: Vec<(u32, Lun)>,
    pub pending: u32,
    /// Functional fidelity: the pages read, at page-size strides (a group buffer).
    pub buf: Vec<u8>,
    /// Page indices whose data failed its checksum.
    pub bad_pages: PageSet,
}

/// A cached mapping table's translation unit being read from flash.
#[derive(Clone)]
pub struct TranslationReadJob {
    pub unit: u32,
    pub pun: Pun,
}

#[derive(Clone)]
pub enum Job {
    Read(ReadJob),
    Write(WriteJob),
    Trim(TrimJob),
    Copy(CopyJob),
    Erase(EraseJob),
    CkptProgram(CkptProgramJob),
    UnitRead(UnitReadJob),
    UnitWrite(UnitWriteJob),
    Fill(FillJob),
    UnitCopy(UnitCopyJob),
    TranslationRead(TranslationReadJob),
}
