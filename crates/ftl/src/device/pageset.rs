//! A set of the pages of one page group (page `k` = channel `k % channels`, plane
//! `k / channels`). A group has channels × planes pages — up to 2^20 dies × 4 planes on a
//! geometry validation accepts — so the set is a bit vector of any length. The first 256 pages
//! live inline (no allocation for the common geometries, `flashabacus`'s 128-page groups
//! among them: a page set is built on every host read and write); the rest in a vector.
//!
//! Story: page sets used to be a `u64`. A group of more than 64 pages (64 channels × 2 planes
//! on `flashabacus`) shifted past the word, so a whole-group mask came out empty, a write
//! submitted no flash operation and waited for a completion that never came — a deadlock on
//! a geometry validation accepted.

/// Words of a page set held inline.
const INLINE_WORDS: u32 = 4;

/// Pages of one group, as a bit set.
#[derive(Clone, Debug, Default)]
pub struct PageSet {
    low: [u64; INLINE_WORDS as usize],
    high: Vec<u64>,
}

impl PartialEq for PageSet {
    fn eq(&self, other: &PageSet) -> bool {
        (0..self.words().max(other.words())).all(|i| self.word(i) == other.word(i))
    }
}

impl Eq for PageSet {}

impl PageSet {
    /// Pages `a..=b`.
    pub fn range(a: u32, b: u32) -> PageSet {
        assert!(a <= b, "an empty page range {a}..={b}");
        let mut s = PageSet::default();
        // A word at a time: the bits of word `i` that fall in a..=b (this sits on every host
        // read's path, so no loop over single pages).
        for i in a / 64..=b / 64 {
            let bit_first = if i == a / 64 { a % 64 } else { 0 };
            let bit_last = if i == b / 64 { b % 64 } else { 63 };
            s.set_word(i, (u64::MAX >> (63 - bit_last)) & (u64::MAX << bit_first));
        }
        debug_assert_eq!(s.count(), b - a + 1);
        s
    }

    fn word(&self, i: u32) -> u64 {
        if i < INLINE_WORDS {
            self.low[i as usize]
        } else {
            self.high
                .get((i - INLINE_WORDS) as usize)
                .copied()
                .unwrap_or(0)
        }
    }

    fn set_word(&mut self, i: u32, w: u64) {
        if i < INLINE_WORDS {
            self.low[i as usize] = w;
        } else {
            let j = (i - INLINE_WORDS) as usize;
            if self.high.len() <= j {
                self.high.resize(j + 1, 0);
            }
            self.high[j] = w;
        }
    }

    fn words(&self) -> u32 {
        INLINE_WORDS + self.high.len() as u32
    }

    pub fn insert(&mut self, k: u32) {
        let w = self.word(k / 64) | 1 << (k % 64);
        self.set_word(k / 64, w);
    }

    pub fn contains(&self, k: u32) -> bool {
        self.word(k / 64) & 1 << (k % 64) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.low.iter().chain(&self.high).all(|&w| w == 0)
    }

    pub fn count(&self) -> u32 {
        self.low
            .iter()
            .chain(&self.high)
            .map(|w| w.count_ones())
            .sum()
    }

    /// Pages in `self` but not in `other`.
    pub fn minus(&self, other: &PageSet) -> PageSet {
        self.zip(other, |a, b| a & !b)
    }

    /// Pages in both `self` and `other`.
    pub fn intersect(&self, other: &PageSet) -> PageSet {
        self.zip(other, |a, b| a & b)
    }

    /// Adds every page of `other`.
    pub fn union_with(&mut self, other: &PageSet) {
        *self = self.zip(other, |a, b| a | b);
    }

    fn zip(&self, other: &PageSet, f: impl Fn(u64, u64) -> u64) -> PageSet {
        let mut out = PageSet::default();
        for i in 0..self.words().max(other.words()) {
            let w = f(self.word(i), other.word(i));
            if w != 0 {
                out.set_word(i, w);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::PageSet;
    use proptest::prelude::*;

    #[test]
    fn ranges_cover_inclusive_bounds_past_one_word() {
        assert_eq!(PageSet::range(0, 0).count(), 1);
        let r = PageSet::range(1, 3);
        assert!(!r.contains(0) && r.contains(1) && r.contains(3) && !r.contains(4));
        assert_eq!(PageSet::range(0, 63).count(), 64);
        // The geometry that deadlocked: 64 channels x 2 planes = 128 pages a group.
        let all = PageSet::range(0, 127);
        assert_eq!(all.count(), 128);
        assert!(all.contains(127) && !all.contains(128));
        assert_eq!(PageSet::range(60, 200).count(), 141);
    }

    proptest! {
        /// Word-at-a-time ranges hold exactly the pages of a page-by-page model.
        #[test]
        fn ranges_hold_exactly_their_pages(a in 0u32..300, len in 0u32..300) {
            let b = a + len;
            let r = PageSet::range(a, b);
            for k in 0..b + 70 {
                prop_assert_eq!(r.contains(k), (a..=b).contains(&k), "page {}", k);
            }
            let mut model = PageSet::default();
            for k in a..=b {
                model.insert(k);
            }
            prop_assert_eq!(r, model);
        }
    }

    #[test]
    fn set_algebra_works_across_words() {
        let all = PageSet::range(0, 399);
        let mid = PageSet::range(100, 299);
        let rest = all.minus(&mid);
        assert_eq!(rest.count(), 200);
        assert!(rest.contains(99) && !rest.contains(100) && rest.contains(300));
        assert!(mid.minus(&all).is_empty());
        let mut u = rest.clone();
        u.union_with(&mid);
        assert_eq!(u, all);
        assert!(PageSet::default().is_empty());
        let mut one = PageSet::default();
        one.insert(250);
        assert_eq!(one.count(), 1);
        assert!(!one.is_empty() && one.contains(250));
    }
}
