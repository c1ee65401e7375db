//! Read-ahead: Linux's on-demand read-ahead for buffered reads (mm/readahead.c,
//! `ondemand_readahead` as of Linux 5.x–6.9, `get_init_ra_size`, `get_next_ra_size`), as
//! window arithmetic over an open file's state. The I/O is the caller's (`Cx::read_ahead`):
//! it reads the window's uncached blocks as block requests that complete in the background,
//! marks the window's first asynchronous page, and a later read that reaches the marked
//! page starts the next window while the reader goes on with the pages already in.
//!
//! - A read that misses the cache at the start of a file, right after the handle's previous
//!   read, or at the page the last window expected (its marker or its end) starts a window of
//!   `get_init_ra_size(request)`: the request rounded up to a power of two, ×4 when small,
//!   ×2 when medium, the maximum otherwise; the part beyond the request is asynchronous.
//! - A read reaching the marker (or the window's end) pushes the window forward, ramped up
//!   (×4 below a sixteenth of the maximum, ×2 up to half, then the maximum) and wholly
//!   asynchronous; the marker is its first page.
//! - Any other miss is a random read: its pages are read as asked and the state is kept.
//!
//! Not modelled: context read-ahead over interleaved streams (`try_context_readahead`,
//! dropped in Linux 6.10), large folios, and the device's `io_pages` above `read_ahead_kb`
//! (the host crate's request size is `max_sectors_kb` = `read_ahead_kb` = 128 KiB, so an
//! oversize read ramps in windows of the maximum).

use crate::cache::BlockClass;
use crate::exec::Cx;
use crate::format::inode::Inode;
use crate::types::{BlockNo, Fh, BLOCK_BYTES, BLOCK_BYTES_U64};
use nearflash_blockdev::BlockCompletion;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// One open file's read-ahead state (Linux's `struct file_ra_state`), in file blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    /// First block of the last window.
    pub start: u64,
    /// Blocks in the last window.
    pub size: u64,
    /// Of them, the asynchronous tail: its first block carries the marker.
    pub async_size: u64,
    /// Where the handle's previous read ended, bytes (`prev_pos`; `None` before the first).
    pub prev_pos: Option<u64>,
}

/// Blocks to read ahead of need: `start..start + size`, the block at `marker` (if any) to be
/// marked so that reaching it starts the next window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: u64,
    pub size: u64,
    pub marker: Option<u64>,
}

/// `get_init_ra_size`: the first window for a request of `req` blocks.
pub fn init_size(req: u64, max: u64) -> u64 {
    let size = req.max(1).next_power_of_two();
    if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` blocks.
pub fn next_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

impl RaState {
    /// `ondemand_readahead`: a read of `req` blocks from block `index` found `index` missing
    /// (`hit_marker` false: the synchronous case) or marked (true: asynchronous). Updates the
    /// state and answers what to read. `max` is the window's maximum in blocks (at least 1).
    pub fn on_demand(&mut self, hit_marker: bool, index: u64, req: u64, max: u64) -> Window {
        assert!(
            max > 0 && req > 0,
            "a read of at least one block, a window of at least one"
        );
        let expected = self.start + self.size - self.async_size;
        let sequential_miss = self
            .prev_pos
            .is_some_and(|p| index.wrapping_sub(p / BLOCK_BYTES_U64) <= 1);
        if index != 0 && self.size > 0 && (index == expected || index == self.start + self.size) {
            // The expected page: push the window forward, ramped up, wholly asynchronous.
            self.start += self.size;
            self.size = next_size(self.size, max);
            self.async_size = self.size;
        } else if index == 0 || req > max || sequential_miss || hit_marker {
            // A new stream (or a marked page without valid state: start afresh there).
            self.start = index;
            self.size = init_size(req, max);
            self.async_size = if self.size > req {
                self.size - req
            } else {
                self.size
            };
        } else {
            // A small random read: as asked, the state untouched.
            return Window {
                start: index,
                size: req,
                marker: None,
            };
        }
        if index == self.start && self.size == self.async_size {
            // The read would hit its own window's marker at once: merge the next window in.
            let add = next_size(self.size, max);
            if self.size + add <= max {
                self.async_size = add;
                self.size += add;
            } else {
                self.size = max;
                self.async_size = max / 2;
            }
        }
        assert!(self.async_size <= self.size && self.size <= max.max(req));
        Window {
            start: self.start,
            size: self.size,
            marker: (self.async_size > 0).then(|| self.start + self.size - self.async_size),
        }
    }
}

/// The FS's side: windows read as block requests that complete in the background.
impl Cx {
    /// The largest window, blocks (0: no read-ahead).
    pub fn read_ahead_blocks_max(&self) -> u64 {
        self.cfg.read_ahead_bytes / BLOCK_BYTES_U64
    }

    /// `ondemand_readahead` and `page_cache_ra_unbounded`: handle `fh`'s read of `req`
    /// blocks from file block `index` found it missing (`hit_marker` false) or marked. Moves
    /// the handle's window and issues reads of the window's blocks that are neither cached
    /// nor being read, one request per run contiguous in the file and on the device, up to
    /// the file's end; marks the window's marker block. Makes room from clean blocks only and
    /// reads fewer blocks when short of them (read-ahead is best effort).
    pub fn read_ahead(&self, fh: Fh, inode: &Inode, index: u64, req: u64, hit_marker: bool) {
        let max = self.read_ahead_blocks_max();
        assert!(max > 0, "read-ahead is on");
        let mut st = self.st.borrow_mut();
        let Some(h) = st.handles.get_mut(&fh) else {
            return;
        };
        let w = h.ra.on_demand(hit_marker, index, req, max);
        let end = (w.start + w.size).min(inode.size_bytes.div_ceil(BLOCK_BYTES_U64));
        let mut wanted: Vec<(u64, BlockNo)> = (w.start..end)
            .filter_map(|fb| Some((fb, inode.map(u32::try_from(fb).ok()?)?)))
            .filter(|(_, b)| !st.cache.contains(*b) && !st.ra_pending.contains_key(b))
            .collect();
        let capacity = st.cache.capacity_blocks();
        let used = st.cache.len() + st.ra_pending.len();
        let short = (used + wanted.len()).saturating_sub(capacity);
        for b in st.cache.clean_victims(short) {
            st.cache.remove(b);
        }
        let room = capacity - (st.cache.len() + st.ra_pending.len()).min(capacity);
        wanted.truncate(room);
        drop(st);
        let mut runs: Vec<(u64, BlockNo, u32)> = Vec::new();
        for (fb, b) in wanted {
            match runs.last_mut() {
                Some((f, first, n)) if *f + u64::from(*n) == fb && first.0 + *n == b.0 => *n += 1,
                _ => runs.push((fb, b, 1)),
            }
        }
        for (fb, first, n) in runs {
            let id = self.issue_read_ahead(first, n);
            let mut st = self.st.borrow_mut();
            st.stats.readahead_requests += 1;
            st.stats.readahead_blocks += u64::from(n);
            for i in 0..n {
                let marked = w.marker == Some(fb + u64::from(i));
                let again = st.ra_pending.insert(BlockNo(first.0 + i), (id, marked));
                assert!(again.is_none(), "a block read ahead twice at once");
            }
        }
        let st = self.st.borrow();
        assert!(
            st.cache.len() + st.ra_pending.len() <= st.cache.capacity_blocks(),
            "read-ahead holds no more places than the cache has"
        );
    }

    /// A read-ahead request of `count` blocks from `first` completed: each block it still
    /// reads for (not freed or overwritten meanwhile) joins the cache, clean, with its
    /// marker. A failed read leaves them out: the reader reads them itself and sees the error.
    pub(crate) fn readahead_done(&self, c: BlockCompletion, (first, count): (BlockNo, u32)) {
        let mut st = self.st.borrow_mut();
        let whole = c.result.is_ok() && c.data.len() as u64 == u64::from(count) * BLOCK_BYTES_U64;
        for i in 0..count {
            let b = BlockNo(first.0 + i);
            let Some(&(id, marked)) = st.ra_pending.get(&b) else {
                continue;
            };
            if id != c.id {
                continue;
            }
            st.ra_pending.remove(&b);
            if !whole || st.cache.contains(b) {
                continue;
            }
            let at = i as usize * BLOCK_BYTES;
            st.cache.insert(
                b,
                BlockClass::Data,
                c.data[at..at + BLOCK_BYTES].to_vec(),
                false,
            );
            if marked {
                st.cache.set_readahead_mark(b);
            }
        }
    }

    /// Whether block `b` is cached or being read ahead.
    pub fn cached_or_coming(&self, b: BlockNo) -> bool {
        let st = self.st.borrow();
        st.cache.contains(b) || st.ra_pending.contains_key(&b)
    }

    /// Whether `b` carries the read-ahead marker (cached or still being read); clears it.
    pub fn take_readahead_mark(&self, b: BlockNo) -> bool {
        let mut st = self.st.borrow_mut();
        if let Some((_, marked)) = st.ra_pending.get_mut(&b) {
            return std::mem::take(marked);
        }
        st.cache.take_readahead_mark(b)
    }

    /// Waits until block `b` is no longer being read ahead.
    pub async fn read_ahead_wait(&self, b: BlockNo) {
        ReadAheadWait { cx: self, b }.await
    }
}

/// Resolves once a block is no longer being read ahead (the FS polls its operation after
/// every completion).
struct ReadAheadWait<'a> {
    cx: &'a Cx,
    b: BlockNo,
}

impl Future for ReadAheadWait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.cx.st.borrow().ra_pending.contains_key(&self.b) {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux's own table (mm/readahead.c, above `get_init_ra_size`): "for 128k (32 page) max
    /// ra: 1-2 page = 16k, 3-4 page 32k, 5-8 page = 64k, > 8 page = 128k initial".
    #[test]
    fn the_first_window_follows_linuxs_table_for_a_128k_maximum() {
        let kib = |pages: u64| init_size(pages, 32) * 4;
        assert_eq!([kib(1), kib(2)], [16, 16]);
        assert_eq!([kib(3), kib(4)], [32, 32]);
        assert_eq!([kib(5), kib(8)], [64, 64]);
        assert_eq!([kib(9), kib(32), kib(200)], [128, 128, 128]);
    }

    /// A reader of one 4 KiB page at a time (a C library's stream buffer over `read(2)`):
    /// the window grows 4, 8, 16, 32 pages and then stays at the 128 KiB maximum; each
    /// window after the first is read when the reader reaches the previous one's marker.
    #[test]
    fn a_sequential_page_reader_ramps_the_window_to_the_maximum_and_stays_ahead() {
        let mut ra = RaState::default();
        let w = ra.on_demand(false, 0, 1, 32);
        assert_eq!(
            w,
            Window {
                start: 0,
                size: 4,
                marker: Some(1)
            }
        );
        let mut windows = vec![(w.start, w.size)];
        let mut marker = w.marker.unwrap();
        let mut read_to = w.start + w.size;
        for page in 1..200u64 {
            ra.prev_pos = Some(page * 4096);
            if page == marker {
                let w = ra.on_demand(true, page, 1, 32);
                assert_eq!(w.start, read_to, "windows follow each other without a gap");
                assert!(w.start > page, "the next window is ahead of the reader");
                windows.push((w.start, w.size));
                marker = w.marker.unwrap();
                read_to = w.start + w.size;
            }
            assert!(
                page < read_to,
                "page {page} was read ahead before it was asked for"
            );
        }
        assert_eq!(
            &windows[..6],
            &[(0, 4), (4, 8), (12, 16), (28, 32), (60, 32), (92, 32)]
        );
    }

    #[test]
    fn a_random_read_reads_as_asked_and_keeps_the_state() {
        let mut ra = RaState::default();
        ra.on_demand(false, 0, 1, 32);
        ra.prev_pos = Some(4096);
        let before = ra;
        let w = ra.on_demand(false, 500, 2, 32);
        assert_eq!(
            w,
            Window {
                start: 500,
                size: 2,
                marker: None
            }
        );
        assert_eq!(ra, before);
    }

    /// An oversize read (1 MiB = 256 pages against 32) starts a maximal window with its
    /// marker half-way, so the next window is read while the reader copies the first.
    #[test]
    fn an_oversize_read_starts_a_maximal_window_marked_half_way() {
        let mut ra = RaState::default();
        let w = ra.on_demand(false, 1000, 256, 32);
        assert_eq!(
            w,
            Window {
                start: 1000,
                size: 32,
                marker: Some(1016)
            }
        );
        let w = ra.on_demand(true, 1016, 240, 32);
        assert_eq!(
            w,
            Window {
                start: 1032,
                size: 32,
                marker: Some(1032)
            }
        );
    }
}
