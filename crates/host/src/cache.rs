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
    /// When it was last used (reserved or touched): its place in the LRU order.
    stamp: u64,
    state: PageState,
    /// Writers holding the page until their copy lands in it (the page lock's role).
    pins: u32,
}

impl Page {
    /// Up to date, clean, not under write-back and unpinned: the only pages eviction takes.
    fn evictable(&self) -> bool {
        let s = self.state;
        s.uptodate && !s.dirty && !s.writeback && self.pins == 0
    }
}

/// The bookkeeping is kept so that every call costs O(log n) or less in the cached pages: a
/// hash map finds a page, an ordered map holds the evictable pages by last use (the least
/// recently used evictable page is its first entry, the page a scan of the whole LRU list
/// for the oldest clean page would find), and ordered sets hold the dirty pages and those
/// under write-back (which the flusher walks in file order and fsync queries by range).
pub struct PageCache {
    capacity_pages: u64,
    pages: BTreeMap<PageKey, Page>,
    /// Last-use stamp → page, for the evictable pages only.
    evictable: BTreeMap<u64, PageKey>,
    dirty: BTreeSet<PageKey>,
    /// Pages under write-back (with `dirty`, what fsync waits for).
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
            evictable: BTreeMap::new(),
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

    /// Changes page `key` (which must be cached) by `f`, keeping the evictable index true;
    /// returns the page's state after.
    fn update(&mut self, key: PageKey, what: &str, f: impl FnOnce(&mut Page)) -> PageState {
        let page = self.pages.get_mut(&key).unwrap_or_else(|| panic!("{what}"));
        Self::apply(&mut self.evictable, key, page, f)
    }

    fn apply(
        evictable: &mut BTreeMap<u64, PageKey>,
        key: PageKey,
        page: &mut Page,
        f: impl FnOnce(&mut Page),
    ) -> PageState {
        let (before, stamp) = (page.evictable(), page.stamp);
        f(page);
        let (after, new_stamp) = (page.evictable(), page.stamp);
        if before && (!after || stamp != new_stamp) {
            evictable.remove(&stamp);
        }
        if after && (!before || stamp != new_stamp) {
            evictable.insert(new_stamp, key);
        }
        page.state
    }

    /// The page's state, marking it recently used.
    pub fn touch(&mut self, key: PageKey) -> Option<PageState> {
        let page = self.pages.get_mut(&key)?;
        self.clock += 1;
        let clock = self.clock;
        Some(Self::apply(&mut self.evictable, key, page, |p| {
            p.stamp = clock
        }))
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
        assert!(
            self.pages.len() as u64 <= self.capacity_pages,
            "the cache holds its limit"
        );
        true
    }

    fn evict_one(&mut self) -> bool {
        let Some((_, key)) = self.evictable.pop_first() else {
            return false;
        };
        let page = self
            .pages
            .remove(&key)
            .expect("an evictable page is cached");
        debug_assert!(page.evictable());
        self.evictions += 1;
        true
    }

    /// Keeps the page from eviction until [`PageCache::unpin`].
    pub fn pin(&mut self, key: PageKey) {
        self.update(key, "a pinned page is cached", |p| p.pins += 1);
    }

    /// Releases a pin (a page dropped meanwhile, after a failed read, needs none).
    pub fn unpin(&mut self, key: PageKey) {
        if let Some(page) = self.pages.get_mut(&key) {
            Self::apply(&mut self.evictable, key, page, |p| {
                assert!(p.pins > 0, "unpin what was pinned");
                p.pins -= 1;
            });
        }
    }

    pub fn set_uptodate(&mut self, key: PageKey) {
        self.update(key, "a page read in was reserved", |p| {
            assert!(!p.state.uptodate, "a page is read in once");
            p.state.uptodate = true;
        });
    }

    pub fn set_dirty(&mut self, key: PageKey) {
        self.update(key, "a page written is cached", |p| {
            assert!(p.state.uptodate, "a page is dirtied once up to date");
            p.state.dirty = true;
        });
        self.dirty.insert(key);
    }

    /// Write-back takes the page's dirty data: it is clean unless written again meanwhile.
    pub fn start_writeback(&mut self, key: PageKey) {
        self.update(key, "a dirty page is cached", |p| {
            assert!(p.state.dirty && !p.state.writeback);
            p.state.dirty = false;
            p.state.writeback = true;
        });
        self.dirty.remove(&key);
        self.writeback.insert(key);
    }

    pub fn end_writeback(&mut self, key: PageKey) {
        self.update(key, "a page under write-back is cached", |p| {
            assert!(p.state.writeback);
            p.state.writeback = false;
        });
        self.writeback.remove(&key);
    }

    /// Drops a page (a failed read, or an O_DIRECT write making it stale). Must be clean.
    pub fn remove(&mut self, key: PageKey) {
        if let Some(page) = self.pages.remove(&key) {
            assert!(
                !page.state.dirty && !page.state.writeback,
                "never drop unwritten data"
            );
            if page.evictable() {
                self.evictable.remove(&page.stamp);
            }
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

    /// Pages of `file` in `first..=last` that are cached, in page order.
    pub fn cached_in(&self, file: u32, first: u64, last: u64) -> Vec<PageKey> {
        if last - first >= self.pages.len() as u64 {
            // A range wider than the cache: visit the cached pages instead of the range.
            let mut keys: Vec<PageKey> = self
                .pages
                .keys()
                .filter(|k| k.file == file && (first..=last).contains(&k.index))
                .copied()
                .collect();
            keys.sort_unstable();
            return keys;
        }
        (first..=last)
            .map(|index| PageKey { file, index })
            .filter(|k| self.pages.contains_key(k))
            .collect()
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

    /// The reference: every page with its last-use stamp in one list; eviction scans it for
    /// the oldest page that is up to date, clean, not under write-back and unpinned.
    #[derive(Default)]
    struct Model {
        pages: Vec<(PageKey, u64, PageState, u32)>,
        clock: u64,
    }

    impl Model {
        fn find(&mut self, k: PageKey) -> Option<&mut (PageKey, u64, PageState, u32)> {
            self.pages.iter_mut().find(|p| p.0 == k)
        }
        fn reserve(&mut self, k: PageKey, capacity: usize) -> bool {
            if self.pages.len() >= capacity {
                let victim = (0..self.pages.len())
                    .filter(|&i| {
                        let (_, _, s, pins) = self.pages[i];
                        s.uptodate && !s.dirty && !s.writeback && pins == 0
                    })
                    .min_by_key(|&i| self.pages[i].1);
                match victim {
                    Some(i) => drop(self.pages.remove(i)),
                    None => return false,
                }
            }
            self.clock += 1;
            let state = PageState {
                uptodate: false,
                dirty: false,
                writeback: false,
            };
            self.pages.push((k, self.clock, state, 0));
            true
        }
    }

    proptest::proptest! {
        /// Story: the cache's indexes (a hash map, the evictable pages by last use, the
        /// dirty and write-back sets) replaced a scan of one LRU list; whatever the calls,
        /// it keeps and evicts exactly the pages the scan would.
        #[test]
        fn the_indexes_evict_what_a_scan_of_the_lru_list_would(
            ops in proptest::collection::vec((0u8..8, 0u64..12), 1..400)
        ) {
            const CAPACITY: usize = 6;
            let mut c = PageCache::new(CAPACITY as u64);
            let mut m = Model::default();
            let mut pinned: Vec<PageKey> = Vec::new();
            for (op, index) in ops {
                let k = key(index);
                let st = c.state(k);
                match (op, st) {
                    (0, None) => {
                        let ok = c.reserve(k);
                        proptest::prop_assert_eq!(ok, m.reserve(k, CAPACITY));
                    }
                    (1, Some(s)) if !s.uptodate => {
                        c.set_uptodate(k);
                        m.find(k).unwrap().2.uptodate = true;
                    }
                    (2, Some(s)) if s.uptodate => {
                        c.set_dirty(k);
                        m.find(k).unwrap().2.dirty = true;
                    }
                    (3, Some(s)) if s.dirty && !s.writeback => {
                        c.start_writeback(k);
                        let p = m.find(k).unwrap();
                        (p.2.dirty, p.2.writeback) = (false, true);
                    }
                    (4, Some(s)) if s.writeback => {
                        c.end_writeback(k);
                        m.find(k).unwrap().2.writeback = false;
                    }
                    (5, Some(_)) => {
                        c.touch(k);
                        m.clock += 1;
                        let clock = m.clock;
                        m.find(k).unwrap().1 = clock;
                    }
                    (6, Some(_)) if pinned.len() < 3 => {
                        c.pin(k);
                        m.find(k).unwrap().3 += 1;
                        pinned.push(k);
                    }
                    (7, _) if !pinned.is_empty() => {
                        let k = pinned.remove(index as usize % pinned.len());
                        c.unpin(k);
                        if let Some(p) = m.find(k) {
                            p.3 -= 1;
                        }
                    }
                    _ => {}
                }
                let mut want: Vec<(PageKey, PageState)> =
                    m.pages.iter().map(|p| (p.0, p.2)).collect();
                want.sort_by_key(|p| p.0);
                let got: Vec<(PageKey, PageState)> =
                    (0..12).filter_map(|i| c.state(key(i)).map(|s| (key(i), s))).collect();
                proptest::prop_assert_eq!(got, want);
                // A page written again under write-back counts in both (as Linux counts
                // NR_FILE_DIRTY and NR_WRITEBACK).
                let count = |f: fn(&PageState) -> bool| m.pages.iter().filter(|p| f(&p.2)).count();
                let (dirty, writeback) = (count(|s| s.dirty), count(|s| s.writeback));
                proptest::prop_assert_eq!(c.unwritten_bytes(), (dirty + writeback) as u64 * PAGE_BYTES);
                proptest::prop_assert_eq!(c.unwritten_in(0, 0, 11), dirty + writeback > 0);
                let cached: Vec<PageKey> = m.pages.iter().map(|p| p.0).collect();
                proptest::prop_assert_eq!(c.cached_in(0, 0, 11).len(), cached.len());
                proptest::prop_assert_eq!(c.cached_in(0, 2, 3).len(), cached.iter().filter(|k| (2..=3).contains(&k.index)).count());
            }
        }
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
