//! The firmware's in-flight work: host requests and the jobs (one per touched page group,
//! GC copy, erase or checkpoint program batch) whose flash operations carry the job id as
//! their tag. Slabs reuse slots so the hot path does not allocate.

use super::pageset::PageSet;
use crate::layout::{Lgn, Lun, Pgn, Pun, SbId};
use nearflash_blockdev::{BlockOp, IoError};
use nearflash_sim::SimTime;
use std::marker::PhantomData;

/// A slot in the slab of `T`s: the type says which slab, so a job's kind is never re-proved
/// at run time.
pub struct Id<T> {
    index: u32,
    kind: PhantomData<fn() -> T>,
}

impl<T> Id<T> {
    fn new(index: u32) -> Id<T> {
        Id {
            index,
            kind: PhantomData,
        }
    }
}

impl<T> Clone for Id<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Id<T> {}

impl<T> PartialEq for Id<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl<T> Eq for Id<T> {}

impl<T> std::fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// Live `T`s by `Id<T>`; freed slots are reused so the hot path does not allocate.
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
    pub fn insert(&mut self, t: T) -> Id<T> {
        self.live += 1;
        let index = match self.free.pop() {
            Some(i) => {
                debug_assert!(self.items[i as usize].is_none());
                self.items[i as usize] = Some(t);
                i
            }
            None => {
                self.items.push(Some(t));
                u32::try_from(self.items.len() - 1).expect("slab ids fit a u32")
            }
        };
        debug_assert!(self.live <= self.items.len());
        Id::new(index)
    }

    pub fn get(&self, id: Id<T>) -> &T {
        self.items[id.index as usize]
            .as_ref()
            .expect("live slab entry")
    }

    pub fn get_mut(&mut self, id: Id<T>) -> &mut T {
        self.items[id.index as usize]
            .as_mut()
            .expect("live slab entry")
    }

    pub fn remove(&mut self, id: Id<T>) -> T {
        let t = self.items[id.index as usize]
            .take()
            .expect("live slab entry");
        self.free.push(id.index);
        self.live -= 1;
        t
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The live entries with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (Id<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (Id::new(i as u32), t)))
    }
}

/// A host request's slot.
pub type ReqId = Id<ReqState>;

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
    pub req: ReqId,
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
    pub req: Option<ReqId>,
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

macro_rules! job_kinds {
    ($($kind:ident($job:ident, $slab:ident, $id:ident)),* $(,)?) => {
        $(pub type $id = Id<$job>;)*

        /// The firmware's jobs in flight, one slab per kind.
        #[derive(Clone, Default)]
        pub struct Jobs {
            $(pub $slab: Slab<$job>,)*
        }

        impl Jobs {
            /// No job of any kind is in flight.
            pub fn is_empty(&self) -> bool {
                true $(&& self.$slab.is_empty())*
            }
        }
    };
}

job_kinds! {
    Read(ReadJob, reads, ReadId),
    Write(WriteJob, writes, WriteId),
    Trim(TrimJob, trims, TrimId),
    Copy(CopyJob, copies, CopyId),
    Erase(EraseJob, erases, EraseId),
    CkptProgram(CkptProgramJob, ckpt_programs, CkptProgramId),
    UnitRead(UnitReadJob, unit_reads, UnitReadId),
    UnitWrite(UnitWriteJob, unit_writes, UnitWriteId),
    Fill(FillJob, fills, FillId),
    UnitCopy(UnitCopyJob, unit_copies, UnitCopyId),
    TranslationRead(TranslationReadJob, translation_reads, TranslationReadId),
}

/// A job that issues flash operations; its id travels as the operations' tag (kind in the
/// high word, slot in the low word). Trims never touch flash, so they have no variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlashJob {
    Read(ReadId),
    Write(WriteId),
    Copy(CopyId),
    Erase(EraseId),
    CkptProgram(CkptProgramId),
    UnitRead(UnitReadId),
    UnitWrite(UnitWriteId),
    Fill(FillId),
    UnitCopy(UnitCopyId),
    TranslationRead(TranslationReadId),
}

impl FlashJob {
    /// The flash operations' tag for this job.
    pub fn tag(self) -> u64 {
        let (kind, index) = match self {
            FlashJob::Read(i) => (1u64, i.index),
            FlashJob::Write(i) => (2, i.index),
            FlashJob::Copy(i) => (3, i.index),
            FlashJob::Erase(i) => (4, i.index),
            FlashJob::CkptProgram(i) => (5, i.index),
            FlashJob::UnitRead(i) => (6, i.index),
            FlashJob::UnitWrite(i) => (7, i.index),
            FlashJob::Fill(i) => (8, i.index),
            FlashJob::UnitCopy(i) => (9, i.index),
            FlashJob::TranslationRead(i) => (10, i.index),
        };
        kind << 32 | u64::from(index)
    }

    /// The job a flash operation's tag names (the inverse of `tag`).
    pub fn from_tag(tag: u64) -> FlashJob {
        let index = tag as u32;
        match tag >> 32 {
            1 => FlashJob::Read(Id::new(index)),
            2 => FlashJob::Write(Id::new(index)),
            3 => FlashJob::Copy(Id::new(index)),
            4 => FlashJob::Erase(Id::new(index)),
            5 => FlashJob::CkptProgram(Id::new(index)),
            6 => FlashJob::UnitRead(Id::new(index)),
            7 => FlashJob::UnitWrite(Id::new(index)),
            8 => FlashJob::Fill(Id::new(index)),
            9 => FlashJob::UnitCopy(Id::new(index)),
            10 => FlashJob::TranslationRead(Id::new(index)),
            kind => panic!("flash tag {tag:#x} names no job kind ({kind})"),
        }
    }
}

macro_rules! into_flash_job {
    ($($kind:ident($job:ident)),* $(,)?) => {
        $(impl From<Id<$job>> for FlashJob {
            fn from(id: Id<$job>) -> FlashJob {
                FlashJob::$kind(id)
            }
        })*
    };
}

into_flash_job! {
    Read(ReadJob),
    Write(WriteJob),
    Copy(CopyJob),
    Erase(EraseJob),
    CkptProgram(CkptProgramJob),
    UnitRead(UnitReadJob),
    UnitWrite(UnitWriteJob),
    Fill(FillJob),
    UnitCopy(UnitCopyJob),
    TranslationRead(TranslationReadJob),
}

/// A job that programs a whole page group from its group buffer (page-group mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupProgram {
    Write(WriteId),
    Copy(CopyId),
}

impl From<GroupProgram> for FlashJob {
    fn from(job: GroupProgram) -> FlashJob {
        match job {
            GroupProgram::Write(id) => FlashJob::Write(id),
            GroupProgram::Copy(id) => FlashJob::Copy(id),
        }
    }
}

/// A host job queued behind a logical group's lock (`Device::acquire_lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockedJob {
    Write(WriteId),
    Trim(TrimId),
    UnitWrite(UnitWriteId),
}

/// A job waiting for space to program into: a whole-group job (a host write, or a GC copy:
/// `G`) or a sealed fill (page-level mapping).
pub enum SpaceWaiter<G> {
    Group(Id<G>),
    Fill(FillId),
}

// By hand: derives would ask the job type `G` itself to be `Copy`, `Eq` and `Debug`.
impl<G> Clone for SpaceWaiter<G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G> Copy for SpaceWaiter<G> {}

impl<G> PartialEq for SpaceWaiter<G> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SpaceWaiter::Group(a), SpaceWaiter::Group(b)) => a == b,
            (SpaceWaiter::Fill(a), SpaceWaiter::Fill(b)) => a == b,
            _ => false,
        }
    }
}

impl<G> Eq for SpaceWaiter<G> {}

impl<G> std::fmt::Debug for SpaceWaiter<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpaceWaiter::Group(id) => write!(f, "Group({id:?})"),
            SpaceWaiter::Fill(id) => write!(f, "Fill({id:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flash_tag_names_its_job_back() {
        let mut jobs = Jobs::default();
        let e = jobs.erases.insert(EraseJob {
            sb: SbId(3),
            pending: 0,
            purpose: ErasePurpose::Gc,
        });
        let t = jobs.translation_reads.insert(TranslationReadJob {
            unit: 1,
            pun: Pun(2),
        });
        for job in [FlashJob::Erase(e), FlashJob::TranslationRead(t)] {
            assert_eq!(FlashJob::from_tag(job.tag()), job);
        }
        jobs.erases.remove(e);
        assert!(!jobs.is_empty(), "a translation read is still in flight");
        jobs.translation_reads.remove(t);
        assert!(jobs.is_empty());
    }

    #[test]
    fn a_freed_slot_is_reused() {
        let mut s: Slab<u8> = Slab::default();
        let a = s.insert(1);
        let b = s.insert(2);
        assert_eq!(s.remove(a), 1);
        let c = s.insert(3);
        assert_eq!(c, a, "the freed slot is taken first");
        assert_eq!((*s.get(b), *s.get(c)), (2, 3));
        assert_eq!(s.iter().count(), 2);
    }
}
