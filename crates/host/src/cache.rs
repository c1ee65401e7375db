//! The page cache's bookkeeping: 4 KiB pages of files, at most `capacity_pages` of them,
//! evicted least recently used first. A page being read in (not yet up to date), dirty, or
//! under write-back is never evicted, so a page slot is reserved *before* its I/O starts
//! and the cache never holds more than its limit — not even for an instant.
//! Timing fidelity: pages carry state, not data.

mod lru;

use lru::LruIndex;
use nearflash_sim::KeyMap;
use std::collections::hash_map::Entry;
use std::collections::BTreeSet;

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

/// What [`PageCache::touch_run`] touched: pages `from..end` (`from` as given), all cached;
/// bit `i` of `pending` set when page `from + i` is not up to date (being read in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TouchedRun {
    pub end: u64,
    pub pending: u32,
}

/// Pages per [`Chunk`] of the page table.
const CHUNK_PAGES: u64 = 32;

/// Chunk `chunk` of a file: its pages `chunk × CHUNK_PAGES ..` of the next [`CHUNK_PAGES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct ChunkKey {
    file: u32,
    chunk: u64,
}

impl PageKey {
    /// The chunk holding the page and the page's place in it.
    fn chunk(self) -> (ChunkKey, usize) {
        let ck = ChunkKey {
            file: self.file,
            chunk: self.index / CHUNK_PAGES,
        };
        (ck, (self.index % CHUNK_PAGES) as usize)
    }
}

impl ChunkKey {
    /// The chunk's pages in `first..=last`, as a mask of places.
    fn mask(self, first: u64, last: u64) -> u32 {
        let base = self.chunk * CHUNK_PAGES;
        let lo = first.max(base) - base;
        let hi = last.min(base + CHUNK_PAGES - 1) - base;
        if lo > hi {
            return 0;
        }
        (((1u64 << (hi + 1)) - 1) & !((1u64 << lo) - 1)) as u32
    }

    /// The pages of the chunk at the places set in `mask`, in page order.
    fn pages(self, mask: u32) -> impl Iterator<Item = PageKey> {
        places(mask).map(move |place| self.page(place))
    }

    fn page(self, place: usize) -> PageKey {
        PageKey {
            file: self.file,
            index: self.chunk * CHUNK_PAGES + place as u64,
        }
    }
}

/// Marks chunk `ck` stale: an evictable page's stamp changed or a page became or stopped
/// being evictable; it is filed anew in the evictable index before the index is next read.
fn mark_stale(stale: &mut Vec<ChunkKey>, ck: ChunkKey, chunk: &mut Chunk) {
    if !chunk.stale {
        chunk.stale = true;
        stale.push(ck);
    }
}

/// Recomputes the chunk's evictable mask from its state masks, marking it stale if that
/// changed.
fn refresh_evictable(stale: &mut Vec<ChunkKey>, ck: ChunkKey, chunk: &mut Chunk) {
    let evictable = chunk.evictable_by_masks();
    if evictable != chunk.evictable {
        chunk.evictable = evictable;
        mark_stale(stale, ck, chunk);
    }
}

/// Files `ck` in `set` or takes it out as its chunk gained or lost the set's kind of page.
fn toggle(set: &mut BTreeSet<ChunkKey>, ck: ChunkKey, was: bool, is: bool) {
    if was && !is {
        set.remove(&ck);
    } else if is && !was {
        set.insert(ck);
    }
}

/// The places set in `mask`, lowest first.
fn places(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let place = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            place
        })
    })
}

/// [`CHUNK_PAGES`] consecutive pages of a file: which are cached, their states as bit masks
/// (bit `i` is the chunk's page `i`), their stamps and pins.
#[derive(Default)]
struct Chunk {
    cached: u32,
    uptodate: u32,
    dirty: u32,
    writeback: u32,
    /// The pages [`Page::evictable`].
    evictable: u32,
    /// The pages with a pin.
    pinned: u32,
    stamps: [u64; CHUNK_PAGES as usize],
    pins: [u32; CHUNK_PAGES as usize],
    /// The stamp the chunk is filed under in the evictable index (`None`: not filed).
    indexed: Option<u64>,
    /// An evictable page's stamp changed since the chunk was last filed: it is in
    /// `PageCache::stale` and is filed anew before the index is next read.
    stale: bool,
}

impl Chunk {
    fn get(&self, place: usize) -> Option<Page> {
        let on = |mask: u32| mask >> place & 1 != 0;
        on(self.cached).then(|| Page {
            stamp: self.stamps[place],
            state: PageState {
                uptodate: on(self.uptodate),
                dirty: on(self.dirty),
                writeback: on(self.writeback),
            },
            pins: self.pins[place],
        })
    }

    fn set(&mut self, place: usize, page: Option<Page>) {
        let bit = 1u32 << place;
        let put = |mask: &mut u32, on: bool| {
            if on {
                *mask |= bit;
            } else {
                *mask &= !bit;
            }
        };
        put(&mut self.cached, page.is_some());
        put(&mut self.uptodate, page.is_some_and(|p| p.state.uptodate));
        put(&mut self.dirty, page.is_some_and(|p| p.state.dirty));
        put(&mut self.writeback, page.is_some_and(|p| p.state.writeback));
        put(&mut self.evictable, page.is_some_and(|p| p.evictable()));
        put(&mut self.pinned, page.is_some_and(|p| p.pins > 0));
        self.stamps[place] = page.map_or(0, |p| p.stamp);
        self.pins[place] = page.map_or(0, |p| p.pins);
    }

    /// The pages [`Page::evictable`] by the masks.
    fn evictable_by_masks(&self) -> u32 {
        self.cached & self.uptodate & !self.dirty & !self.writeback & !self.pinned
    }

    /// The last-use stamp of the chunk's least recently used evictable page.
    fn oldest(&self) -> Option<u64> {
        places(self.evictable).map(|place| self.stamps[place]).min()
    }
}

/// The bookkeeping is kept so that every call costs O(log n) or less in the cached pages: a
/// hash map of chunks of consecutive pages finds a page (a sequential stream stays in one
/// chunk for [`CHUNK_PAGES`] pages; an ordered set of the chunks serves range queries), an
/// ordered index holds the chunks with evictable pages by the last use of their oldest one
/// (the least recently used evictable page is the oldest of its first entry, the page a scan
/// of the whole LRU list for the oldest clean page would find), and ordered sets hold the
/// chunks with dirty pages and those with pages under write-back (which the flusher walks in
/// file order and fsync queries by range).
///
/// The evictable index is filed lazily: a change that moves a chunk's evictable stamps only
/// marks the chunk stale, and the stale chunks are filed anew when eviction next reads the
/// index. A stream's 32 touches of one chunk file it once, not 32 times; what eviction sees
/// is the same as if every change had been filed at once.
pub struct PageCache {
    capacity_pages: u64,
    chunks: KeyMap<ChunkKey, Box<Chunk>>,
    /// The keys of `chunks` in file and chunk order.
    order: BTreeSet<ChunkKey>,
    /// [`Chunk::oldest`] → chunk, for the chunks with an evictable page (stamps are never
    /// reused, so no two chunks share one), as of the last [`PageCache::file_stale`].
    lru: LruIndex,
    /// Chunks marked [`Chunk::stale`] (a key may repeat after its chunk was dropped and made
    /// anew; filing is idempotent).
    stale: Vec<ChunkKey>,
    /// Chunks with a dirty page.
    dirty: BTreeSet<ChunkKey>,
    /// Chunks with a page under write-back (with `dirty`, what fsync waits for).
    writeback: BTreeSet<ChunkKey>,
    pages: u64,
    dirty_pages: u64,
    writeback_pages: u64,
    clock: u64,
    evictions: u64,
}

impl PageCache {
    pub fn new(capacity_pages: u64) -> Self {
        assert!(capacity_pages > 0, "the capacity is validated positive");
        PageCache {
            capacity_pages,
            chunks: KeyMap::default(),
            order: BTreeSet::new(),
            lru: LruIndex::default(),
            stale: Vec::new(),
            dirty: BTreeSet::new(),
            writeback: BTreeSet::new(),
            pages: 0,
            dirty_pages: 0,
            writeback_pages: 0,
            clock: 0,
            evictions: 0,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.pages * PAGE_BYTES
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_pages * PAGE_BYTES
    }

    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_pages * PAGE_BYTES
    }

    /// Dirty bytes plus bytes under write-back: what the dirty limit bounds (Linux's
    /// `balance_dirty_pages` counts both).
    pub fn unwritten_bytes(&self) -> u64 {
        (self.dirty_pages + self.writeback_pages) * PAGE_BYTES
    }

    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    fn page(&self, key: PageKey) -> Option<Page> {
        let (ck, place) = key.chunk();
        self.chunks.get(&ck).and_then(|c| c.get(place))
    }

    /// Changes page `key` by `f` (`None`: not cached; `f` may insert or drop it), keeping the
    /// counts, the evictable index and the dirty and write-back chunk sets true; returns the
    /// page's state after.
    fn change(&mut self, key: PageKey, f: impl FnOnce(&mut Option<Page>)) -> Option<PageState> {
        let (ck, place) = key.chunk();
        let entry = self.chunks.entry(ck);
        let before = match &entry {
            Entry::Occupied(chunk) => chunk.get().get(place),
            Entry::Vacant(_) => None,
        };
        let mut after = before;
        f(&mut after);
        if before.is_none() && after.is_none() {
            return None;
        }
        let chunk = match entry {
            Entry::Occupied(chunk) => chunk.into_mut(),
            Entry::Vacant(place) => {
                self.order.insert(ck);
                place.insert(Box::default())
            }
        };
        let evictable = |p: Option<Page>| p.filter(Page::evictable).map(|p| p.stamp);
        let moved = evictable(before) != evictable(after);
        let (was_dirty, was_writeback) = (chunk.dirty != 0, chunk.writeback != 0);
        chunk.set(place, after);
        let (is_dirty, is_writeback, empty) =
            (chunk.dirty != 0, chunk.writeback != 0, chunk.cached == 0);
        if empty {
            if chunk.indexed.is_some() {
                self.lru.reindex(ck, chunk.indexed, None);
            }
            self.chunks.remove(&ck);
            self.order.remove(&ck);
        } else if moved {
            mark_stale(&mut self.stale, ck, chunk);
        }
        let flag = |p: Option<Page>, f: fn(&Page) -> bool| u64::from(p.as_ref().is_some_and(f));
        self.pages = self.pages + flag(after, |_| true) - flag(before, |_| true);
        self.dirty_pages =
            self.dirty_pages + flag(after, |p| p.state.dirty) - flag(before, |p| p.state.dirty);
        self.writeback_pages = self.writeback_pages + flag(after, |p| p.state.writeback)
            - flag(before, |p| p.state.writeback);
        let toggle = |set: &mut BTreeSet<ChunkKey>, was: bool, is: bool| toggle(set, ck, was, is);
        toggle(&mut self.dirty, was_dirty, is_dirty);
        toggle(&mut self.writeback, was_writeback, is_writeback);
        after.map(|p| p.state)
    }

    /// Files every stale chunk in the evictable index under its oldest evictable page.
    fn file_stale(&mut self) {
        for ck in self.stale.drain(..) {
            let Some(chunk) = self.chunks.get_mut(&ck) else {
                continue; // dropped since it was marked
            };
            chunk.stale = false;
            let oldest = chunk.oldest();
            if oldest != chunk.indexed {
                self.lru.reindex(ck, chunk.indexed, oldest);
                chunk.indexed = oldest;
            }
        }
    }

    /// The page's state, marking it recently used.
    pub fn touch(&mut self, key: PageKey) -> Option<PageState> {
        let (ck, place) = key.chunk();
        let chunk = self.chunks.get_mut(&ck)?;
        if chunk.cached >> place & 1 == 0 {
            return None;
        }
        self.clock += 1;
        chunk.stamps[place] = self.clock;
        if chunk.evictable >> place & 1 != 0 {
            mark_stale(&mut self.stale, ck, chunk);
        }
        chunk.get(place).map(|p| p.state)
    }

    /// [`PageCache::touch`] of the cached pages of `file` from `from` on, in order, up to the
    /// first uncached page, `to` or the end of `from`'s chunk of [`CHUNK_PAGES`]: one lookup
    /// for up to a chunk's pages, the same stamps as page by page. `end == from` when page
    /// `from` is not cached.
    pub fn touch_run(&mut self, file: u32, from: u64, to: u64) -> TouchedRun {
        let untouched = TouchedRun {
            end: from,
            pending: 0,
        };
        let (ck, place) = PageKey { file, index: from }.chunk();
        let Some(chunk) = self.chunks.get_mut(&ck) else {
            return untouched;
        };
        // The cached pages from `place` on, up to the first uncached one.
        let above = chunk.cached >> place;
        let run = u64::from((!above).trailing_zeros()).min(CHUNK_PAGES - place as u64);
        let run = run.min(to.saturating_sub(from));
        if run == 0 {
            return untouched;
        }
        let mask = ck.mask(from, from + run - 1);
        for p in place..place + run as usize {
            self.clock += 1;
            chunk.stamps[p] = self.clock;
        }
        if chunk.evictable & mask != 0 {
            mark_stale(&mut self.stale, ck, chunk);
        }
        TouchedRun {
            end: from + run,
            pending: (mask & !chunk.uptodate) >> place,
        }
    }

    pub fn state(&self, key: PageKey) -> Option<PageState> {
        self.page(key).map(|p| p.state)
    }

    /// Makes room for `key` (evicting the least recently used clean page if full) and
    /// inserts it not yet up to date. False when every page is pinned (being read, dirty or
    /// under write-back): the caller waits for one to become clean.
    pub fn reserve(&mut self, key: PageKey) -> bool {
        if self.pages >= self.capacity_pages && !self.evict_one() {
            return false;
        }
        let (ck, place) = key.chunk();
        let chunk = match self.chunks.entry(ck) {
            Entry::Occupied(chunk) => chunk.into_mut(),
            Entry::Vacant(slot) => {
                self.order.insert(ck);
                slot.insert(Box::default())
            }
        };
        let bit = 1u32 << place;
        assert_eq!(chunk.cached & bit, 0, "reserve a page once");
        debug_assert_eq!(
            (chunk.uptodate | chunk.dirty | chunk.writeback | chunk.pinned) & bit,
            0,
            "an uncached page has no state"
        );
        // Not up to date: not evictable, so the evictable index is unchanged.
        chunk.cached |= bit;
        self.clock += 1;
        chunk.stamps[place] = self.clock;
        self.pages += 1;
        assert!(
            self.pages <= self.capacity_pages,
            "the cache holds its limit"
        );
        true
    }

    /// Whether the page is cached (in any state), without marking it used.
    pub fn is_cached(&self, key: PageKey) -> bool {
        let (ck, place) = key.chunk();
        self.chunks
            .get(&ck)
            .is_some_and(|c| c.cached >> place & 1 != 0)
    }

    /// The first page of `file` in `from..to` that is cached, or `to`: the pages before it
    /// are a run [`PageCache::reserve_run`] may take.
    pub fn uncached_until(&self, file: u32, from: u64, to: u64) -> u64 {
        let mut index = from;
        while index < to {
            let (ck, place) = PageKey { file, index }.chunk();
            let above = self
                .chunks
                .get(&ck)
                .map_or(0, |c| c.cached >> place << place);
            if above != 0 {
                let first = ck.chunk * CHUNK_PAGES + u64::from(above.trailing_zeros());
                return first.min(to);
            }
            index = (ck.chunk + 1) * CHUNK_PAGES;
        }
        to
    }

    /// [`PageCache::reserve`] of pages `first..first + count` of `file` (none of them cached),
    /// in order, stopping at the first that finds no room; how many were reserved. The same
    /// pages are evicted and the same stamps given as page by page: a page just reserved is
    /// not evictable, so making all the room first evicts what each reserve would have,
    /// in the same order, a chunk at a time.
    pub fn reserve_run(&mut self, file: u32, first: u64, count: u64) -> u64 {
        let free = self.capacity_pages - self.pages;
        let evicted = if count > free {
            self.evict_pages(count - free)
        } else {
            0
        };
        let n = count.min(free) + evicted;
        let mut index = first;
        while index < first + n {
            let (ck, place) = PageKey { file, index }.chunk();
            let take = (CHUNK_PAGES - place as u64).min(first + n - index);
            let chunk = match self.chunks.entry(ck) {
                Entry::Occupied(chunk) => chunk.into_mut(),
                Entry::Vacant(slot) => {
                    self.order.insert(ck);
                    slot.insert(Box::default())
                }
            };
            let mask = ck.mask(index, index + take - 1);
            assert_eq!(chunk.cached & mask, 0, "reserve a page once");
            debug_assert_eq!(
                (chunk.uptodate | chunk.dirty | chunk.writeback | chunk.pinned) & mask,
                0,
                "an uncached page has no state"
            );
            // Not up to date: not evictable, so the evictable index is unchanged.
            chunk.cached |= mask;
            for p in place..place + take as usize {
                self.clock += 1;
                chunk.stamps[p] = self.clock;
            }
            index += take;
        }
        self.pages += n;
        assert!(
            self.pages <= self.capacity_pages,
            "the cache holds its limit"
        );
        n
    }

    /// [`PageCache::evict_one`] up to `n` times, stopping when nothing is evictable; how
    /// many were evicted. The least recently used chunk gives its pages oldest first while
    /// its next one is older than every other chunk's oldest (one lookup and one sort of its
    /// stamps instead of a lookup and two scans per page).
    fn evict_pages(&mut self, n: u64) -> u64 {
        self.file_stale();
        let mut done = 0;
        while done < n {
            let Some((stamp, ck)) = self.lru.first() else {
                break;
            };
            let limit = self.lru.second_stamp().unwrap_or(u64::MAX);
            let chunk = self
                .chunks
                .get_mut(&ck)
                .expect("an indexed chunk is cached");
            debug_assert_eq!(chunk.indexed, Some(stamp));
            let mut by_age = [(0u64, 0u8); CHUNK_PAGES as usize];
            let mut len = 0;
            for place in places(chunk.evictable) {
                by_age[len] = (chunk.stamps[place], place as u8);
                len += 1;
            }
            let by_age = &mut by_age[..len];
            by_age.sort_unstable();
            debug_assert_eq!(by_age[0].0, stamp, "the chunk's oldest evictable page");
            let mut k = 0;
            while k < len && done < n && (k == 0 || by_age[k].0 < limit) {
                let place = by_age[k].1 as usize;
                let bit = 1u32 << place;
                debug_assert_eq!((chunk.dirty | chunk.writeback | chunk.pinned) & bit, 0);
                chunk.cached &= !bit;
                chunk.uptodate &= !bit;
                chunk.evictable &= !bit;
                chunk.stamps[place] = 0;
                k += 1;
                done += 1;
            }
            let oldest = (k < len).then(|| by_age[k].0);
            self.lru.reindex(ck, chunk.indexed, oldest);
            chunk.indexed = oldest;
            if chunk.cached == 0 {
                self.chunks.remove(&ck);
                self.order.remove(&ck);
            }
            self.pages -= k as u64;
            self.evictions += k as u64;
        }
        done
    }

    /// Evicts the least recently used evictable page, and files its chunk anew at once
    /// (nothing is stale after [`PageCache::file_stale`]).
    fn evict_one(&mut self) -> bool {
        self.file_stale();
        let Some((stamp, ck)) = self.lru.first() else {
            return false;
        };
        let chunk = self
            .chunks
            .get_mut(&ck)
            .expect("an indexed chunk is cached");
        let place = places(chunk.evictable)
            .find(|&place| chunk.stamps[place] == stamp)
            .expect("the chunk's oldest evictable page");
        let bit = 1u32 << place;
        debug_assert_eq!((chunk.dirty | chunk.writeback | chunk.pinned) & bit, 0);
        chunk.cached &= !bit;
        chunk.uptodate &= !bit;
        chunk.evictable &= !bit;
        chunk.stamps[place] = 0;
        debug_assert_eq!(chunk.indexed, Some(stamp));
        let oldest = chunk.oldest();
        self.lru.reindex(ck, chunk.indexed, oldest);
        chunk.indexed = oldest;
        if chunk.cached == 0 {
            self.chunks.remove(&ck);
            self.order.remove(&ck);
        }
        self.pages -= 1;
        self.evictions += 1;
        true
    }

    /// Keeps the page from eviction until [`PageCache::unpin`].
    pub fn pin(&mut self, key: PageKey) {
        let (ck, place) = key.chunk();
        let chunk = self
            .chunks
            .get_mut(&ck)
            .filter(|c| c.cached >> place & 1 != 0)
            .expect("a pinned page is cached");
        chunk.pins[place] += 1;
        chunk.pinned |= 1 << place;
        refresh_evictable(&mut self.stale, ck, chunk);
    }

    /// Releases a pin (a page dropped meanwhile, after a failed read, needs none).
    pub fn unpin(&mut self, key: PageKey) {
        let (ck, place) = key.chunk();
        let Some(chunk) = self
            .chunks
            .get_mut(&ck)
            .filter(|c| c.cached >> place & 1 != 0)
        else {
            return;
        };
        assert!(chunk.pins[place] > 0, "unpin what was pinned");
        chunk.pins[place] -= 1;
        if chunk.pins[place] == 0 {
            chunk.pinned &= !(1 << place);
            refresh_evictable(&mut self.stale, ck, chunk);
        }
    }

    /// [`PageCache::unpin`] of pages `pages` of `file`: one lookup per chunk, the same state
    /// as page by page (unpinning only makes pages evictable, so a chunk turns stale here
    /// exactly when it would have at one of its pages).
    pub fn unpin_run(&mut self, file: u32, pages: std::ops::Range<u64>) {
        let mut index = pages.start;
        while index < pages.end {
            let (ck, _) = PageKey { file, index }.chunk();
            let chunk_end = ((index / CHUNK_PAGES) + 1) * CHUNK_PAGES;
            let last = pages.end.min(chunk_end) - 1;
            if let Some(chunk) = self.chunks.get_mut(&ck) {
                // Pages dropped meanwhile (a failed read) need no unpin.
                let mask = ck.mask(index, last) & chunk.cached;
                for place in places(mask) {
                    assert!(chunk.pins[place] > 0, "unpin what was pinned");
                    chunk.pins[place] -= 1;
                    if chunk.pins[place] == 0 {
                        chunk.pinned &= !(1 << place);
                    }
                }
                refresh_evictable(&mut self.stale, ck, chunk);
            }
            index = last + 1;
        }
    }

    pub fn set_uptodate(&mut self, key: PageKey) {
        self.set_uptodate_pages([key]);
    }

    pub fn set_dirty(&mut self, key: PageKey) {
        self.change_pages([key], "a page written is cached", |c, m| {
            assert_eq!(c.uptodate & m, m, "a page is dirtied once up to date");
            c.dirty |= m;
        });
    }

    /// Write-back takes the page's dirty data: it is clean unless written again meanwhile.
    pub fn start_writeback(&mut self, key: PageKey) {
        self.start_writeback_pages([key]);
    }

    pub fn end_writeback(&mut self, key: PageKey) {
        self.end_writeback_pages([key]);
    }

    /// [`PageCache::set_uptodate`] of each page (ascending): one chunk lookup per chunk.
    pub fn set_uptodate_pages(&mut self, keys: impl IntoIterator<Item = PageKey>) {
        self.change_pages(keys, "a page read in was reserved", |c, m| {
            assert_eq!(c.uptodate & m, 0, "a page is read in once");
            c.uptodate |= m;
        });
    }

    /// [`PageCache::start_writeback`] of each page (ascending).
    pub fn start_writeback_pages(&mut self, keys: impl IntoIterator<Item = PageKey>) {
        self.change_pages(keys, "a dirty page is cached", |c, m| {
            assert!(c.dirty & m == m && c.writeback & m == 0);
            c.dirty &= !m;
            c.writeback |= m;
        });
    }

    /// [`PageCache::end_writeback`] of each page (ascending).
    pub fn end_writeback_pages(&mut self, keys: impl IntoIterator<Item = PageKey>) {
        self.change_pages(keys, "a page under write-back is cached", |c, m| {
            assert_eq!(c.writeback & m, m);
            c.writeback &= !m;
        });
    }

    /// A writer's copy has landed in its pinned pages (ascending): each becomes dirty and
    /// loses the writer's pin.
    pub fn land_write_pages(&mut self, keys: impl IntoIterator<Item = PageKey>) {
        self.change_pages(keys, "a page written is cached", |c, m| {
            assert_eq!(c.uptodate & m, m, "a page is dirtied once up to date");
            c.dirty |= m;
            for place in places(m) {
                assert!(c.pins[place] > 0, "unpin what was pinned");
                c.pins[place] -= 1;
                if c.pins[place] == 0 {
                    c.pinned &= !(1 << place);
                }
            }
        });
    }

    /// Applies `f` to the state masks of cached pages, a chunk at a time: `f` gets the chunk
    /// and the mask of its pages among `keys` (ascending), and may change their `uptodate`,
    /// `dirty`, `writeback`, `pins` and `pinned` — never which pages are cached nor their
    /// stamps. Keeps the counts, the evictable mask and index and the dirty and write-back
    /// chunk sets true, as [`PageCache::change`] does page by page.
    fn change_pages(
        &mut self,
        keys: impl IntoIterator<Item = PageKey>,
        what: &str,
        mut f: impl FnMut(&mut Chunk, u32),
    ) {
        let mut run: Option<(ChunkKey, u32)> = None;
        for key in keys {
            let (ck, place) = key.chunk();
            match &mut run {
                Some((at, mask)) if *at == ck => {
                    debug_assert!(*mask >> place == 0, "pages come in ascending order");
                    *mask |= 1 << place;
                }
                _ => {
                    if let Some((at, mask)) = run.replace((ck, 1 << place)) {
                        self.change_chunk(at, mask, what, &mut f);
                    }
                }
            }
        }
        if let Some((at, mask)) = run {
            self.change_chunk(at, mask, what, &mut f);
        }
    }

    fn change_chunk(
        &mut self,
        ck: ChunkKey,
        mask: u32,
        what: &str,
        f: &mut impl FnMut(&mut Chunk, u32),
    ) {
        let chunk = self.chunks.get_mut(&ck).unwrap_or_else(|| panic!("{what}"));
        assert_eq!(chunk.cached & mask, mask, "{what}");
        let (cached, dirty, writeback) = (chunk.cached, chunk.dirty, chunk.writeback);
        f(chunk, mask);
        assert_eq!(chunk.cached, cached, "which pages are cached stays");
        refresh_evictable(&mut self.stale, ck, chunk);
        let count = |m: u32| u64::from(m.count_ones());
        self.dirty_pages = self.dirty_pages + count(chunk.dirty) - count(dirty);
        self.writeback_pages = self.writeback_pages + count(chunk.writeback) - count(writeback);
        let toggle = |set: &mut BTreeSet<ChunkKey>, was: bool, is: bool| toggle(set, ck, was, is);
        toggle(&mut self.dirty, dirty != 0, chunk.dirty != 0);
        toggle(&mut self.writeback, writeback != 0, chunk.writeback != 0);
    }

    /// Drops a page (a failed read, or an O_DIRECT write making it stale). Must be clean.
    pub fn remove(&mut self, key: PageKey) {
        self.change(key, |page| {
            if let Some(p) = page.take() {
                assert!(
                    !p.state.dirty && !p.state.writeback,
                    "never drop unwritten data"
                );
            }
        });
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
        self.page(key).is_some_and(|p| p.evictable())
    }

    /// Dirty pages not under write-back, in file and page order, from `from` on.
    pub fn dirty_from(&self, from: PageKey) -> impl Iterator<Item = PageKey> + '_ {
        self.dirty
            .range(from.chunk().0..)
            .flat_map(|&ck| {
                let chunk = &self.chunks[&ck];
                ck.pages(chunk.dirty & !chunk.writeback)
            })
            .filter(move |&key| key >= from)
    }

    /// Whether any page of `file` in `first..=last` is dirty or under write-back.
    pub fn unwritten_in(&self, file: u32, first: u64, last: u64) -> bool {
        let lo = PageKey { file, index: first }.chunk().0;
        let hi = PageKey { file, index: last }.chunk().0;
        let any = |set: &BTreeSet<ChunkKey>, mask: fn(&Chunk) -> u32| {
            set.range(lo..=hi)
                .any(|&ck| mask(&self.chunks[&ck]) & ck.mask(first, last) != 0)
        };
        any(&self.dirty, |c| c.dirty) || any(&self.writeback, |c| c.writeback)
    }

    /// Pages of `file` in `first..=last` that are cached, in page order.
    pub fn cached_in(&self, file: u32, first: u64, last: u64) -> Vec<PageKey> {
        let lo = PageKey { file, index: first }.chunk().0;
        let hi = PageKey { file, index: last }.chunk().0;
        self.order
            .range(lo..=hi)
            .flat_map(|&ck| ck.pages(self.chunks[&ck].cached & ck.mask(first, last)))
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
            ops in proptest::collection::vec((0u8..12, 0u64..12), 1..400),
            stride in 1u64..40,
        ) {
            // Page i of the story is page i × stride of the file: with a stride, the pages
            // fall in different chunks of the page table.
            let key = |index: u64| key(index * stride);
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
                    (5, Some(_)) if index % 2 == 1 => {
                        // A run touched at once: the file's pages from k on while cached, to
                        // the end of k's chunk or 4 pages, each as `touch` would.
                        let to = k.index + 4;
                        let run = c.touch_run(0, k.index, to);
                        let mut end = k.index;
                        let mut pending = 0u32;
                        while end < to
                            && (end == k.index || !end.is_multiple_of(CHUNK_PAGES))
                            && m.find(PageKey { file: 0, index: end }).is_some()
                        {
                            m.clock += 1;
                            let clock = m.clock;
                            let p = m.find(PageKey { file: 0, index: end }).unwrap();
                            p.1 = clock;
                            if !p.2.uptodate {
                                pending |= 1 << (end - k.index);
                            }
                            end += 1;
                        }
                        proptest::prop_assert_eq!(run, TouchedRun { end, pending });
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
                    // The many-page calls, over the story's pages `index..index + 4` (in
                    // one chunk or several, by the stride) that qualify.
                    (8..=10, _) => {
                        let keys: Vec<PageKey> = (index..(index + 4).min(12))
                            .map(key)
                            .filter(|&k| c.state(k).is_some_and(|s| match op {
                                8 => !s.uptodate,
                                9 => s.dirty && !s.writeback,
                                _ => s.writeback,
                            }))
                            .collect();
                        for &k in &keys {
                            let s = &mut m.find(k).unwrap().2;
                            match op {
                                8 => s.uptodate = true,
                                9 => (s.dirty, s.writeback) = (false, true),
                                _ => s.writeback = false,
                            }
                        }
                        match op {
                            8 => c.set_uptodate_pages(keys),
                            9 => c.start_writeback_pages(keys),
                            _ => c.end_writeback_pages(keys),
                        }
                    }
                    (11, _) => {
                        // A writer's copy lands in the pinned, up-to-date pages.
                        let mut keys: Vec<PageKey> = pinned
                            .iter()
                            .copied()
                            .filter(|&k| c.state(k).is_some_and(|s| s.uptodate))
                            .collect();
                        keys.sort();
                        keys.dedup();
                        for &k in &keys {
                            let p = m.find(k).unwrap();
                            p.2.dirty = true;
                            p.3 -= 1;
                            let at = pinned.iter().position(|&q| q == k).unwrap();
                            pinned.remove(at);
                        }
                        c.land_write_pages(keys);
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
                proptest::prop_assert_eq!(c.unwritten_in(0, 0, 11 * stride), dirty + writeback > 0);
                let cached: Vec<PageKey> = m.pages.iter().map(|p| p.0).collect();
                proptest::prop_assert_eq!(c.cached_in(0, 0, 11 * stride).len(), cached.len());
                let (lo, hi) = (2 * stride, 3 * stride);
                proptest::prop_assert_eq!(c.cached_in(0, lo, hi).len(), cached.iter().filter(|k| (lo..=hi).contains(&k.index)).count());
            }
        }
    }

    proptest::proptest! {
        /// Story: reserving a run of pages at once (`reserve_run`, with its chunk-at-a-time
        /// eviction), or releasing a run's pins at once (`unpin_run`), leaves the cache
        /// exactly as doing it page by page would — the same
        /// pages cached in the same states, the same evictions, the same LRU order after.
        #[test]
        fn a_run_reserved_at_once_is_the_same_as_page_by_page(
            ops in proptest::collection::vec((0u8..10, 0u64..100, 1u64..40), 1..300),
            capacity in 8u64..70,
        ) {
            let mut a = PageCache::new(capacity);
            let mut b = PageCache::new(capacity);
            let mut pinned: Vec<PageKey> = Vec::new();
            // Runs of pages pinned together, as an operation pins a chunk's pages.
            let mut pinned_runs: Vec<std::ops::Range<u64>> = Vec::new();
            for (op, index, n) in ops {
                let k = key(index);
                match (op, a.state(k)) {
                    (0 | 1, _) => {
                        let to = (index + n).min(100);
                        let end = a.uncached_until(0, index, to);
                        proptest::prop_assert_eq!(end, b.uncached_until(0, index, to));
                        proptest::prop_assert!((index..end).all(|i| !a.is_cached(key(i))));
                        proptest::prop_assert!(end == to || a.is_cached(key(end)));
                        let got = a.reserve_run(0, index, end - index);
                        let mut want = 0;
                        for i in index..end {
                            if !b.reserve(key(i)) {
                                break;
                            }
                            want += 1;
                        }
                        proptest::prop_assert_eq!(got, want);
                    }
                    (2, Some(s)) if !s.uptodate => {
                        let to = (index + n).min(100);
                        let keys: Vec<PageKey> = (index..to)
                            .map(key)
                            .filter(|&k| a.state(k).is_some_and(|s| !s.uptodate))
                            .collect();
                        a.set_uptodate_pages(keys.iter().copied());
                        b.set_uptodate_pages(keys);
                    }
                    (3, Some(s)) if s.uptodate && !s.dirty => {
                        a.set_dirty(k);
                        b.set_dirty(k);
                    }
                    (4, Some(s)) if s.dirty && !s.writeback => {
                        a.start_writeback(k);
                        b.start_writeback(k);
                    }
                    (5, Some(s)) if s.writeback => {
                        a.end_writeback(k);
                        b.end_writeback(k);
                    }
                    (6, Some(_)) => {
                        a.touch(k);
                        b.touch(k);
                        if pinned.len() < 4 && n % 3 == 0 {
                            a.pin(k);
                            b.pin(k);
                            pinned.push(k);
                        }
                    }
                    (7, _) if !pinned.is_empty() => {
                        let k = pinned.remove(index as usize % pinned.len());
                        a.unpin(k);
                        b.unpin(k);
                    }
                    (8, Some(_)) if pinned_runs.len() < 3 => {
                        // The cached pages from `index` on, up to the first uncached one.
                        let to = (index..(index + n).min(100)).find(|&i| !a.is_cached(key(i))).unwrap_or((index + n).min(100));
                        for i in index..to {
                            a.pin(key(i));
                            b.pin(key(i));
                        }
                        pinned_runs.push(index..to);
                    }
                    (9, _) if !pinned_runs.is_empty() => {
                        // Released at once in `a`, page by page in `b`.
                        let r = pinned_runs.remove(index as usize % pinned_runs.len());
                        a.unpin_run(0, r.clone());
                        for i in r {
                            b.unpin(key(i));
                        }
                    }
                    _ => {}
                }
                let states = |c: &PageCache| (0..100).map(|i| c.state(key(i))).collect::<Vec<_>>();
                proptest::prop_assert_eq!(states(&a), states(&b));
                proptest::prop_assert_eq!((a.bytes(), a.evictions(), a.clock), (b.bytes(), b.evictions(), b.clock));
                // The same LRU order: the stamps of the cached pages agree.
                let stamps = |c: &PageCache| (0..100).map(|i| c.page(key(i)).map(|p| p.stamp)).collect::<Vec<_>>();
                proptest::prop_assert_eq!(stamps(&a), stamps(&b));
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
    fn range_queries_cross_chunk_boundaries() {
        let mut c = PageCache::new(16);
        for i in [30, 31, 32, 33, 63, 64, 95] {
            fill(&mut c, i);
        }
        c.set_dirty(key(31));
        c.set_dirty(key(64));
        c.start_writeback(key(64));
        c.set_dirty(key(33));
        let indexes = |keys: Vec<PageKey>| keys.iter().map(|k| k.index).collect::<Vec<_>>();
        assert_eq!(indexes(c.cached_in(0, 31, 64)), vec![31, 32, 33, 63, 64]);
        assert_eq!(indexes(c.cached_in(0, 34, 62)), Vec::<u64>::new());
        assert_eq!(indexes(c.dirty_from(key(32)).collect()), vec![33]);
        assert_eq!(indexes(c.dirty_from(key(0)).collect()), vec![31, 33]);
        assert!(c.unwritten_in(0, 64, 64) && c.unwritten_in(0, 0, 31));
        assert!(!c.unwritten_in(0, 34, 63) && !c.unwritten_in(0, 65, u64::MAX));
        assert!(!c.unwritten_in(1, 0, u64::MAX), "another file");
        assert_eq!(c.unwritten_bytes(), 3 * PAGE_BYTES);
    }

    #[test]
    fn a_page_written_during_write_back_stays_dirty() {
        let mut c = PageCache::new(2);
        fill(&mut c, 0);
        c.set_dirty(key(0));
        c.start_writeback(key(0));
        c.set_dirty(key(0));
        assert_eq!(c.dirty_from(key(0)).count(), 0, "goes once write-back ends");
        c.end_writeback(key(0));
        assert!(c.state(key(0)).unwrap().dirty);
        assert_eq!(c.dirty_from(key(0)).collect::<Vec<_>>(), vec![key(0)]);
    }
}
