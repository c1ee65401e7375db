//! [`LazyTable`]: a fixed-length table of integers, all zero until written, that costs
//! memory only near the entries written — and little where they were written in order.
//!
//! The models keep per-page tables sized by the device (an FTL's logical → physical map, the
//! sequence numbers beside it and the reverse map, Active Flash's page versions). A run that
//! writes a few pages at random over a large device touches nearly every 4 KiB page of a
//! dense table, and each first touch is a page the kernel must zero: `perf` put 45 % of
//! `reproduce active-flash`'s CPU time in `clear_page_erms` under those tables (65,536 random
//! writes over 16 M-entry tables, 46 runs, each on a fresh device). Here entries live in
//! leaves of [`LEAF_ENTRIES`], allocated at a leaf's first non-zero write and found through
//! a dense index of one `u32` per leaf, so such a run touches a few MB instead of hundreds.
//!
//! A drive written end to end is the opposite case: every leaf is written, but in order, so
//! a leaf's entries are an arithmetic run (consecutive physical units, consecutive sequence
//! numbers). Such a leaf is kept as a [`Run`] — its first value, step and extent, 12 or 24
//! bytes instead of 64 or 128 — and becomes a dense leaf only when a write breaks the run.
//! A dense leaf written back into a run (a second sequential pass) or back to zero is
//! folded again, and freed leaves are reused. A fully written 1 TB page-mapped drive keeps
//! its three tables in about 1 GB instead of 4 (docs/measured.md). A table read is a table
//! read whatever its layout: nothing simulated changes.

/// Entries per leaf: small, so that scattered writes allocate little beside each entry.
pub const LEAF_ENTRIES: usize = 16;

/// Index entries with this bit set name a run leaf; others (non-zero) a dense leaf + 1.
const RUN_BIT: u32 = 1 << 31;

/// An integer a [`LazyTable`] holds: zero is "unset", and runs need wrapping arithmetic.
pub trait TableEntry: Copy + Default + PartialEq + std::fmt::Debug {
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    /// `self × k` (wrapping), for a position `k` inside a leaf.
    fn wrapping_mul_pos(self, k: u8) -> Self;
}

macro_rules! table_entry {
    ($($t:ty),*) => {$(
        impl TableEntry for $t {
            #[inline]
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            #[inline]
            fn wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
            #[inline]
            fn wrapping_mul_pos(self, k: u8) -> Self {
                <$t>::wrapping_mul(self, <$t>::from(k))
            }
        }
    )*};
}
table_entry!(u32, u64);

/// A leaf whose entries `start..end` are `base + step × (k − start)`, every one non-zero,
/// and whose other entries are zero.
#[derive(Clone, Copy, Debug)]
struct Run<T> {
    base: T,
    step: T,
    start: u8,
    end: u8,
}

impl<T: TableEntry> Run<T> {
    #[inline]
    fn at(&self, k: u8) -> T {
        if k >= self.start && k < self.end {
            self.base
                .wrapping_add(self.step.wrapping_mul_pos(k - self.start))
        } else {
            T::default()
        }
    }

    fn len(&self) -> usize {
        usize::from(self.end - self.start)
    }

    /// The run a dense leaf's entries form, if they form one.
    fn of(leaf: &[T; LEAF_ENTRIES]) -> Option<Run<T>> {
        let zero = T::default();
        let start = leaf.iter().position(|&v| v != zero)?;
        let end = LEAF_ENTRIES - leaf.iter().rev().position(|&v| v != zero)?;
        let base = leaf[start];
        let step = if end - start > 1 {
            leaf[start + 1].wrapping_sub(base)
        } else {
            zero
        };
        let run = Run {
            base,
            step,
            start: start as u8,
            end: end as u8,
        };
        (start..end)
            .all(|k| leaf[k] != zero && leaf[k] == run.at(k as u8))
            .then_some(run)
    }
}

/// `len` entries of `T`, zero (`T::default()`) until written.
#[derive(Clone, Debug)]
pub struct LazyTable<T> {
    /// Per leaf: 0 when absent (every entry zero), `RUN_BIT | r` for `runs[r]`, else its
    /// place in `leaves` + 1.
    index: Vec<u32>,
    leaves: Vec<[T; LEAF_ENTRIES]>,
    runs: Vec<Run<T>>,
    /// Slots of `leaves` and `runs` no index entry names, to reuse.
    free_leaves: Vec<u32>,
    free_runs: Vec<u32>,
    len: usize,
}

impl<T: TableEntry> LazyTable<T> {
    /// A table of `len` zero entries (the index is zeroed memory the kernel maps lazily).
    pub fn new(len: usize) -> Self {
        LazyTable {
            index: vec![0; len.div_ceil(LEAF_ENTRIES)],
            leaves: Vec::new(),
            runs: Vec::new(),
            free_leaves: Vec::new(),
            free_runs: Vec::new(),
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry `i` (panics beyond `len`, as a slice would).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        assert!(i < self.len, "index {i} beyond a table of {}", self.len);
        let k = i % LEAF_ENTRIES;
        match self.index[i / LEAF_ENTRIES] {
            0 => T::default(),
            slot if slot & RUN_BIT != 0 => self.runs[(slot & !RUN_BIT) as usize].at(k as u8),
            leaf => self.leaves[leaf as usize - 1][k],
        }
    }

    /// Sets entry `i` to `value` (a zero written where nothing was allocates nothing).
    #[inline]
    pub fn set(&mut self, i: usize, value: T) {
        assert!(i < self.len, "index {i} beyond a table of {}", self.len);
        let l = i / LEAF_ENTRIES;
        let k = (i % LEAF_ENTRIES) as u8;
        let zero = T::default();
        match self.index[l] {
            0 => {
                if value != zero {
                    let run = Run {
                        base: value,
                        step: zero,
                        start: k,
                        end: k + 1,
                    };
                    self.index[l] = self.new_run(run);
                }
            }
            slot if slot & RUN_BIT != 0 => {
                let r = (slot & !RUN_BIT) as usize;
                let run = &mut self.runs[r];
                if run.at(k) == value {
                    return;
                }
                if value != zero && k == run.end {
                    if run.len() == 1 {
                        run.step = value.wrapping_sub(run.base);
                        run.end += 1;
                        return;
                    }
                    if run.at(k - 1).wrapping_add(run.step) == value {
                        run.end += 1;
                        return;
                    }
                } else if value == zero && k + 1 == run.end {
                    run.end -= 1;
                    self.drop_run_if_empty(l, r);
                    return;
                } else if value == zero && k == run.start {
                    run.base = run.base.wrapping_add(run.step);
                    run.start += 1;
                    self.drop_run_if_empty(l, r);
                    return;
                }
                let run = *run;
                let mut leaf = [zero; LEAF_ENTRIES];
                for (j, v) in leaf.iter_mut().enumerate() {
                    *v = run.at(j as u8);
                }
                leaf[usize::from(k)] = value;
                self.free_runs.push(r as u32);
                self.index[l] = self.new_leaf(leaf);
            }
            leaf => {
                let d = leaf as usize - 1;
                self.leaves[d][usize::from(k)] = value;
                // Fold the leaf back when a write may have emptied it or closed a run.
                if value == zero || usize::from(k) == LEAF_ENTRIES - 1 {
                    let folded = if self.leaves[d].iter().all(|&v| v == zero) {
                        Some(0)
                    } else {
                        Run::of(&self.leaves[d]).map(|run| self.new_run(run))
                    };
                    if let Some(slot) = folded {
                        self.free_leaves.push(d as u32);
                        self.index[l] = slot;
                    }
                }
            }
        }
    }

    fn new_run(&mut self, run: Run<T>) -> u32 {
        let r = match self.free_runs.pop() {
            Some(r) => {
                self.runs[r as usize] = run;
                r
            }
            None => {
                self.runs.push(run);
                u32::try_from(self.runs.len() - 1).expect("fewer than 2^31 runs")
            }
        };
        assert!(r < RUN_BIT, "fewer than 2^31 runs");
        RUN_BIT | r
    }

    fn new_leaf(&mut self, leaf: [T; LEAF_ENTRIES]) -> u32 {
        let d = match self.free_leaves.pop() {
            Some(d) => {
                self.leaves[d as usize] = leaf;
                d
            }
            None => {
                self.leaves.push(leaf);
                u32::try_from(self.leaves.len() - 1).expect("fewer than 2^31 leaves")
            }
        };
        assert!(d + 1 < RUN_BIT, "fewer than 2^31 leaves");
        d + 1
    }

    fn drop_run_if_empty(&mut self, l: usize, r: usize) {
        if self.runs[r].start == self.runs[r].end {
            self.free_runs.push(r as u32);
            self.index[l] = 0;
        }
    }

    /// Every entry in index order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Entries that are not zero (absent leaves are skipped whole).
    pub fn count_nonzero(&self) -> usize {
        let zero = T::default();
        self.index
            .iter()
            .map(|&slot| match slot {
                0 => 0,
                s if s & RUN_BIT != 0 => self.runs[(s & !RUN_BIT) as usize].len(),
                d => self.leaves[d as usize - 1]
                    .iter()
                    .filter(|&&v| v != zero)
                    .count(),
            })
            .sum()
    }

    /// The indexes of the entries that are not zero, in order.
    pub fn nonzero_indexes(&self) -> Vec<usize> {
        let zero = T::default();
        let mut out = Vec::new();
        for (l, &slot) in self.index.iter().enumerate() {
            match slot {
                0 => {}
                s if s & RUN_BIT != 0 => {
                    let run = &self.runs[(s & !RUN_BIT) as usize];
                    out.extend((run.start..run.end).map(|k| l * LEAF_ENTRIES + usize::from(k)));
                }
                d => {
                    let leaf = &self.leaves[d as usize - 1];
                    out.extend(
                        (0..LEAF_ENTRIES)
                            .filter(|&k| leaf[k] != zero)
                            .map(|k| l * LEAF_ENTRIES + k),
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_new_table_reads_zero_and_allocates_no_leaf() {
        let t: LazyTable<u64> = LazyTable::new(1000);
        assert_eq!(t.len(), 1000);
        assert!(t.iter().all(|v| v == 0));
        assert_eq!(t.count_nonzero(), 0);
        assert!(t.leaves.is_empty());
    }

    #[test]
    fn writing_zero_where_nothing_was_allocates_nothing() {
        let mut t: LazyTable<u32> = LazyTable::new(100);
        t.set(42, 0);
        assert!(t.leaves.is_empty());
        t.set(42, 7);
        t.set(43, 0);
        assert_eq!(t.runs.len(), 1, "one leaf, shared by its entries");
        assert_eq!((t.get(42), t.get(43)), (7, 0));
        t.set(42, 0);
        assert_eq!(
            t.index[42 / LEAF_ENTRIES],
            0,
            "zeroing the last entry frees the leaf"
        );
    }

    #[test]
    fn a_table_written_in_order_keeps_runs_not_dense_leaves() {
        // Consecutive values (a sequential fill of a map) and equal steps of 3.
        let mut t: LazyTable<u64> = LazyTable::new(10_000);
        for i in 0..10_000 {
            t.set(i, 1000 + 3 * i as u64);
        }
        assert!(t.leaves.is_empty());
        assert_eq!(t.runs.len(), 10_000usize.div_ceil(LEAF_ENTRIES));
        assert_eq!(t.get(9_999), 1000 + 3 * 9_999);
        assert_eq!(t.count_nonzero(), 10_000);
        // One write out of order makes its leaf dense; writing the run back folds it again
        // and the next dense leaf reuses the freed slot.
        t.set(5, 7);
        assert_eq!((t.leaves.len(), t.get(5), t.get(6)), (1, 7, 1018));
        for i in 0..LEAF_ENTRIES {
            t.set(i, 1000 + 3 * i as u64);
        }
        assert_eq!(t.index[0] & RUN_BIT, RUN_BIT, "folded back into a run");
        t.set(40, 1);
        assert_eq!(t.leaves.len(), 1, "the freed dense slot is reused");
        assert_eq!(t.get(40), 1);
    }

    #[test]
    fn trimming_a_run_from_either_end_keeps_it_a_run() {
        let mut t: LazyTable<u32> = LazyTable::new(16);
        for i in 0..16 {
            t.set(i, 10 + i as u32);
        }
        t.set(0, 0);
        t.set(15, 0);
        assert!(t.leaves.is_empty());
        assert_eq!(t.nonzero_indexes(), (1..15).collect::<Vec<_>>());
        assert_eq!((t.get(1), t.get(14)), (11, 24));
    }

    #[test]
    #[should_panic(expected = "beyond a table of 17")]
    fn an_index_beyond_the_length_panics_even_inside_the_last_leaf() {
        let t: LazyTable<u32> = LazyTable::new(17);
        t.get(20);
    }

    proptest! {
        /// Against a dense `Vec`: any sequence of writes reads back the same entries, the
        /// same non-zero count and the same non-zero indexes.
        #[test]
        fn a_lazy_table_agrees_with_a_dense_vec(
            len in 1usize..200,
            writes in proptest::collection::vec((0usize..200, 0u32..4), 0..300),
        ) {
            let mut t = LazyTable::new(len);
            let mut v = vec![0u32; len];
            for (i, value) in writes {
                let i = i % len;
                t.set(i, value);
                v[i] = value;
            }
            prop_assert_eq!(t.iter().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(t.count_nonzero(), v.iter().filter(|&&x| x != 0).count());
            let nonzero: Vec<usize> = (0..len).filter(|&i| v[i] != 0).collect();
            prop_assert_eq!(t.nonzero_indexes(), nonzero);
        }

        /// Against a dense `Vec`, with writes that form runs (ascending, descending or flat,
        /// of any length and start) mixed with scattered ones and zeroes: the table reads
        /// back the same whatever mix of runs and dense leaves it chose.
        #[test]
        fn runs_and_dense_leaves_agree_with_a_dense_vec(
            len in 1usize..120,
            bursts in proptest::collection::vec(
                (0usize..120, 1usize..40, 0u64..6, 0u64..4, proptest::bool::ANY),
                0..40,
            ),
        ) {
            let mut t: LazyTable<u64> = LazyTable::new(len);
            let mut v = vec![0u64; len];
            for (start, count, base, step, descending) in bursts {
                for j in 0..count {
                    let i = (start + j) % len;
                    let value = if descending {
                        base.wrapping_sub(step * j as u64)
                    } else {
                        base + step * j as u64
                    };
                    t.set(i, value);
                    v[i] = value;
                }
            }
            prop_assert_eq!(t.iter().collect::<Vec<_>>(), v.clone());
            prop_assert_eq!(t.count_nonzero(), v.iter().filter(|&&x| x != 0).count());
            let nonzero: Vec<usize> = (0..len).filter(|&i| v[i] != 0).collect();
            prop_assert_eq!(t.nonzero_indexes(), nonzero);
        }
    }
}
