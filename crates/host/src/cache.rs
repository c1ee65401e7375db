//! The page cache's bookkeeping: 4 KiB pages of files, at most `capacity_pages` of them,
//! evicted least recently used first. A page being read in (not yet up to date), dirty, or
//! under write-back is never evicted, so a page slot is reserved *before* its I/O starts
//! and the cache never holds more than its limit — not even for an instant.
//! Timing fidelity: pages carry state, not data.

use std::collections::{BTreeMap, BTreeSet};

/// The page size of the cache (x86-64 base pages; Linux's page cache unit).
pub const PAGE_BYTES: u64 = 4096;

/// A page of a file: the file and the page's index (file offset ÷ [`PAGE_BYTES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey {
    pub file: u32,
    pub index: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageState {
    /// Its data is in memory (false while a read is bringing it in).
    pub uptodate: bool,
    pub dirty: bool,
    pub writeback: bool,
}

#[derive(Clone, Copy, Debug)]
struct Page {
    stamp: u64,
    state: PageState,
    /// Writers holding the page until their copy lands in it (the page lock's role).
    pins: u32,
}

pub struct PageCache {
    capacity_pages: u64,
    pages: BTreeMap<PageKey, Page>,
    /// Access stamp → page, oldest first.
    lru: BTreeMap<u64, PageKey>,
    dirty: BTreeSet<PageKey>,
    /// Pages under write-back (with `dirty`, what fsync waits for: both kept as sets so a
    /// range query visits only unwritten pages, not every cached one).
    writeback: BTreeSet<PageKey>,
    clock: u64,
    evictions: u64,
}

impl PageCache {
    pub fn new(capacity_pages: u64) -> Self {
        assert!(capacity_pages > 0, "the capacity is validated positive");
        PageCache {
            capacity_pages,
            pages: BTreeMap::new(),
            lru: BTreeMap::new(),
            dirty: BTreeSet::new(),
            writeback: BTreeSet::new(),
            clock: 0,
            evictions: 0,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.pages.len() as u64 * PAGE_BYTES
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_pages * PAGE_BYTES
    }

    pub fn dirty_bytes(&self) -> u64 {
        self.dirty.len() as u64 * PAGE_BYTES
    }

    /// Dirty bytes plus bytes under write-back: what the dirty limit bounds (Linux's
    /// `balance_dirty_pages` counts both).
    pub fn unwritten_bytes(&self) -> u64 {
        (self.dirty.len() + self.writeback.len()) as u64 * PAGE_BYTES
    }

    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// The page's state, marking it recently used.
    pub fn touch(&mut self, key: PageKey) -> Option<PageState> {
        let page = self.pages.get_mut(&key)?;
        self.lru.remove(&page.stamp);
        self.clock += 1;
        page.stamp = self.clock;
        self.lru.insert(self.clock, key);
        Some(page.state)
    }

    pub fn state(&self, key: PageKey) -> Option<PageState> {
        self.pages.get(&key).map(|p| p.state)
    }

    /// Makes room for `key` (evicting the least recently used clean page if full) and
    /// inserts it not yet up to date. False when every page is pinned (being read, dirty or
    /// under write-back): the caller waits for one to become clean.
    pub fn reserve(&mut self, key: PageKey) -> bool {
        assert!(!self.pages.contains_key(&key), "reserve a page once");
        if self.pages.len() as u64 >= self.capacity_pages && !self.evict_one() {
            return false;
        }
        self.clock += 1;
        self.pages.insert(
            key,
            Page {
                stamp: self.clock,
                state: PageState {
                    uptodate: false,
                    dirty: false,
                    writeback: false,
                },
                pins: 0,
            },
        );
        self.lru.insert(self.clock, key);
        assert!(
            self.pages.len() as u64 <= self.capacity_pages,
            "the cache holds its limit"
        );
        true
    }

    fn evict_one(&mut self) -> bool {
        let victim = self.lru.iter().find_map(|(&stamp, key)| {
            let p = &self.pages[key];
            let s = p.state;
            (s.uptodate && !s.dirty && !s.writeback && p.pins == 0).then_some((stamp, *key))
        });
        let Some((stamp, key)) = victim else {
            return false;
        };
        self.lru.remove(&stamp);
        self.pages.remove(&key);
        self.evictions += 1;
        true
    }

    /// Keeps the page from eviction until [`PageCache::unpin`].
    pub fn pin(&mut self, key: PageKey) {
        self.pages
            .get_mut(&key)
            .expect("a pinned page is cached")
            .pins += 1;
    }

    /// Releases a pin (a page dropped meanwhile, after a failed read, needs none).
    pub fn unpin(&mut self, key: PageKey) {
        if let Some(page) = self.pages.get_mut(&key) {
            assert!(page.pins > 0, "unpin what was pinned");
            page.pins -= 1;
        }
    }

    pub fn set_uptodate(&mut self, key: PageKey) {
        let page = self
            .pages
            .get_mut(&key)
            .expect("a page read in was reserved");
        assert!(!page.state.uptodate, "a page is read in once");
        page.state.uptodate = true;
    }

    pub fn set_dirty(&mut self, key: PageKey) {
        let page = self.pages.get_mut(&key).expect("a page written is cached");
        assert!(page.state.uptodate, "a page is dirtied once up to date");
        page.state.dirty = true;
        self.dirty.insert(key);
    }

    /// Write-back takes the page's dirty data: it is clean unless written again meanwhile.
    pub fn start_writeback(&mut self, key: PageKey) {
        let page = self.pages.get_mut(&key).expect("a dirty page is cached");
        assert!(page.state.dirty && !page.state.writeback);
        page.state.dirty = false;
        page.state.writeback = true;
        self.dirty.remove(&key);
        self.writeback.insert(key);
    }

    pub fn end_writeback(&mut self, key: PageKey) {
        let page = self
            .pages
            .get_mut(&key)
            .expect("a page under write-back is cached");
        assert!(page.state.writeback);
        page.state.writeback = false;
        self.writeback.remove(&key);
    }

    /// Drops a page (a failed read, or an O_DIRECT write making it stale). Must be clean.
    pub fn remove(&mut self, key: PageKey) {
        if let Some(page) = self.pages.remove(&key) {
            assert!(
                !page.state.dirty && !page.state.writeback,
                "never drop unwritten data"
            );
            self.lru.remove(&page.stamp);
        }
    }

    /// Drops a page if it is up to date, clean, not under write-back and unpinned (what
    /// `posix_fadvise(POSIX_FADV_DONTNEED)` may drop); whether it was dropped.
    pub fn drop_clean(&mut self, key: PageKey) -> bool {
        if !self.can_drop(key) {
            return false;
        }
        self.remove(key);
        true
    }

    /// Whether [`PageCache::drop_clean`] would drop the page.
    pub fn can_drop(&self, key: PageKey) -> bool {
        self.pages.get(&key).is_some_and(|page| {
            let s = page.state;
            s.uptodate && !s.dirty && !s.writeback && page.pins == 0
        })
    }

    /// Dirty pages not under write-back, in file and page order, from `from` on.
    pub fn dirty_from(&self, from: PageKey) -> impl Iterator<Item = PageKey> + '_ {
        self.dirty.range(from..).copied()
    }

    /// Whether any page of `file` in `first..=last` is dirty or under write-back.
    pub fn unwritten_in(&self, file: u32, first: u64, last: u64) -> bool {
        let lo = PageKey { file, index: first };
        let hi = PageKey { file, index: last };
        self.dirty.range(lo..=hi).next().is_some() || self.writeback.range(lo..=hi).next().is_some()
    }

    /// Pages of `file` in `first..=last` that are cached.
    pub fn cached_in(&self, file: u32, first: u64, last: u64) -> Vec<PageKey> {
        let lo = PageKey { file, index: first };
        let hi = PageKey { file, index: last };
        self.pages.range(lo..=hi).map(|(k, _)| *k).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(index: u64) -> PageKey {
        PageKey { file: 0, index }
    }

    fn fill(c: &mut PageCache, index: u64) {
        assert!(c.reserve(key(index)));
        c.set_uptodate(key(index));
    }

    #[test]
    fn the_least_recently_used_clean_page_goes_first() {
        let mut c = PageCache::new(3);
        for i in 0..3 {
            fill(&mut c, i);
        }
        c.touch(key(0));
        fill(&mut c, 3);
        assert_eq!(c.state(key(1)), None, "page 1 was the oldest");
        assert!(c.state(key(0)).is_some());
        assert_eq!((c.bytes(), c.evictions()), (3 * PAGE_BYTES, 1));
    }

    #[test]
    fn dirty_and_in_flight_pages_are_never_evicted() {
        let mut c = PageCache::new(2);
        fill(&mut c, 0);
        c.set_dirty(key(0));
        assert!(c.reserve(key(1)), "room for one more");
        assert!(!c.reserve(key(2)), "page 0 is dirty, page 1 is being read");
        c.start_writeback(key(0));
        assert!(!c.reserve(key(2)), "under write-back still pinned");
        c.end_writeback(key(0));
        assert!(c.reserve(key(2)));
        assert_eq!(c.state(key(0)), None);
        assert_eq!(c.dirty_bytes(), 0);
    }

    #[test]
    fn a_pinned_page_is_not_evicted_until_unpinned() {
        let mut c = PageCache::new(1);
        fill(&mut c, 0);
        c.pin(key(0));
        assert!(!c.reserve(key(1)));
        c.unpin(key(0));
        assert!(c.reserve(key(1)));
    }

    #[test]
    fn only_clean_idle_pages_can_be_dropped() {
        let mut c = PageCache::new(4);
        fill(&mut c, 0);
        fill(&mut c, 1);
        c.set_dirty(key(1));
        fill(&mut c, 2);
        c.pin(key(2));
        assert!(c.reserve(key(3)), "being read in");
        assert!(c.drop_clean(key(0)));
        assert_eq!(c.state(key(0)), None);
        for i in 1..4 {
            assert!(
                !c.drop_clean(key(i)),
                "page {i} is dirty, pinned or being read"
            );
            assert!(c.state(key(i)).is_some());
        }
        assert!(!c.drop_clean(key(9)), "not cached");
        assert_eq!(c.bytes(), 3 * PAGE_BYTES);
    }

    #[test]
    fn a_page_written_during_write_back_stays_dirty() {
        let mut c = PageCache::new(2);
        fill(&mut c, 0);
        c.set_dirty(key(0));
        c.start_writeback(key(0));
        c.set_dirty(key(0));
        c.end_writeback(key(0));
        assert!(c.state(key(0)).unwrap().dirty);
        assert_eq!(c.dirty_from(key(0)).collect::<Vec<_>>(), vec![key(0)]);
    }
}
