//! Range locks over flash pages (seed 000, FlashAbacus §4.3 "Protection and access control").
//!
//! Flashvisor maps a kernel's data section, a range of flash pages, for reads or for writes.
//! A request to map a range for writes is blocked while it overlaps any held range; a request
//! to map for reads is blocked while it overlaps a held write range; readers share. The paper
//! keeps the held ranges in a red-black tree keyed by start page whose nodes carry the last
//! page and the access type; `interval` is the same idea (an AVL tree keyed by start page,
//! augmented with the largest last page below each node, so overlap search prunes subtrees).
//!
//! Fairness rule (no starvation): a new request is granted at once only if it conflicts with
//! no held lock *and* with no request already waiting; otherwise it joins a FIFO queue. On
//! every release or cancel the queue is scanned front to back and each waiting request is
//! granted if it conflicts with no held lock and with no request still waiting ahead of it.
//! So a stream of readers cannot overtake a waiting writer: once the writer waits, every
//! later overlapping reader waits behind it. A request that overlaps nothing held or waiting
//! is granted immediately even while others wait, since it can delay no one.
//!
//! Faults tolerated: misuse of the API — inverted ranges (including ones built through the
//! public fields, bypassing `PageRange::new`), a full table, unknown or already-released ids,
//! releasing a request that is still queued, cancelling one that was granted — is reported as
//! a `RangeLockError` and leaves the table unchanged. Internal inconsistency is not tolerated:
//! debug builds assert after every change that no two granted locks conflict, that each
//! queued request is blocked by something held or queued ahead of it, and that the trees
//! agree with the tables.
//!
//! Deterministic: only ordered maps, no clocks, no threads; ids are assigned in request order.

mod interval;
mod table;

pub use table::RangeLockTable;

use std::fmt;

/// How a range is mapped: readers share, a writer excludes everyone overlapping it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    /// Whether two overlapping requests with these access types must exclude each other.
    pub fn conflicts_with(self, other: Access) -> bool {
        self == Access::Write || other == Access::Write
    }
}

/// An inclusive range of flash pages: `end_page` is the last page, as in the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRange {
    pub start_page: u64,
    pub end_page: u64,
}

impl PageRange {
    pub fn new(start_page: u64, end_page: u64) -> Result<Self, RangeLockError> {
        if end_page < start_page {
            return Err(RangeLockError::InvertedRange {
                start_page,
                end_page,
            });
        }
        Ok(PageRange {
            start_page,
            end_page,
        })
    }

    /// Whether the two ranges share at least one page (ends are inclusive, so `[0, 9]` and
    /// `[10, 19]` do not overlap).
    pub fn overlaps(&self, other: &PageRange) -> bool {
        self.start_page <= other.end_page && other.start_page <= self.end_page
    }

    fn is_inverted(&self) -> bool {
        self.end_page < self.start_page
    }
}

/// Whether two requests must exclude each other: they share a page and one of them writes.
fn conflict(a: (PageRange, Access), b: (PageRange, Access)) -> bool {
    a.0.overlaps(&b.0) && a.1.conflicts_with(b.1)
}

/// Names one request. Assigned from a counter in request order and never reused, so a stale
/// id (already released or cancelled) is reported as unknown rather than hitting a newer lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockId(pub u64);

impl fmt::Display for LockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lock #{}", self.0)
    }
}

/// The outcome of a request: granted now, or waiting in the queue under the returned id
/// (it is granted later by a `release` or `cancel`, which reports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    Granted(LockId),
    Queued(LockId),
}

impl Acquire {
    /// The request's id, whether it was granted or queued.
    pub fn id(self) -> LockId {
        match self {
            Acquire::Granted(id) | Acquire::Queued(id) => id,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangeLockError {
    /// The last page lies before the first page.
    InvertedRange { start_page: u64, end_page: u64 },
    /// Held plus queued requests already reach the table's limit.
    TableFull { max_locks: usize },
    /// The id was never issued, or was already released or cancelled.
    UnknownLock(LockId),
    /// `release` of a request that is still waiting; it must be cancelled instead.
    StillQueued(LockId),
    /// `cancel` of a request that was already granted; it must be released instead.
    AlreadyGranted(LockId),
}

impl fmt::Display for RangeLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeLockError::InvertedRange {
                start_page,
                end_page,
            } => write!(
                f,
                "inverted page range: last page {end_page} is before first page {start_page}"
            ),
            RangeLockError::TableFull { max_locks } => write!(
                f,
                "range lock table is full: {max_locks} requests are already held or queued"
            ),
            RangeLockError::UnknownLock(id) => {
                write!(
                    f,
                    "unknown {id}: never issued, or already released or cancelled"
                )
            }
            RangeLockError::StillQueued(id) => {
                write!(
                    f,
                    "cannot release {id}: it is still queued (cancel it instead)"
                )
            }
            RangeLockError::AlreadyGranted(id) => {
                write!(
                    f,
                    "cannot cancel {id}: it is already granted (release it instead)"
                )
            }
        }
    }
}

impl std::error::Error for RangeLockError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_ranges_do_not_overlap_but_shared_edge_page_does() {
        let a = PageRange::new(0, 9).unwrap();
        assert!(!a.overlaps(&PageRange::new(10, 19).unwrap()));
        assert!(a.overlaps(&PageRange::new(9, 19).unwrap()));
        assert!(a.overlaps(&PageRange::new(3, 3).unwrap()));
        assert!(PageRange::new(0, u64::MAX).unwrap().overlaps(&a));
    }

    #[test]
    fn only_read_read_pairs_are_compatible() {
        assert!(!Access::Read.conflicts_with(Access::Read));
        assert!(Access::Read.conflicts_with(Access::Write));
        assert!(Access::Write.conflicts_with(Access::Read));
        assert!(Access::Write.conflicts_with(Access::Write));
    }

    #[test]
    fn error_messages_name_the_problem() {
        let msg = |e: RangeLockError| e.to_string();
        assert_eq!(
            msg(PageRange::new(5, 4).unwrap_err()),
            "inverted page range: last page 4 is before first page 5"
        );
        assert!(msg(RangeLockError::TableFull { max_locks: 3 }).contains("full: 3 requests"));
        assert!(msg(RangeLockError::UnknownLock(LockId(7))).starts_with("unknown lock #7"));
        assert!(msg(RangeLockError::StillQueued(LockId(2))).contains("still queued"));
        assert!(msg(RangeLockError::AlreadyGranted(LockId(2))).contains("already granted"));
    }
}
