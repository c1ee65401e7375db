//! [`LazyTable`]: a fixed-length table of integers, all zero until written, that costs
//! memory only near the entries written.
//!
//! The models keep per-page tables sized by the device (an FTL's logical → physical map and
//! the sequence numbers beside it, Active Flash's page versions). A run that writes a few
//! pages at random over a large device touches nearly every 4 KiB page of a dense table, and
//! each first touch is a page the kernel must zero: `perf` put 45 % of `reproduce
//! active-flash`'s CPU time in `clear_page_erms` under those tables (65,536 random writes
//! over 16 M-entry tables, 46 runs, each on a fresh device). Here entries live in leaves of
//! [`LEAF_ENTRIES`], allocated at a leaf's first non-zero write and found through a dense
//! index of one `u32` per leaf, so such a run touches a few MB instead of hundreds. A table
//! read is a table read whatever its layout: nothing simulated changes.

/// Entries per leaf: small, so that scattered writes allocate little beside each entry.
pub const LEAF_ENTRIES: usize = 16;

/// `len` entries of `T`, zero (`T::default()`) until written.
#[derive(Clone, Debug)]
pub struct LazyTable<T> {
    /// Per leaf: 0 when absent (every entry zero), else its place in `leaves` + 1.
    index: Vec<u32>,
    leaves: Vec<[T; LEAF_ENTRIES]>,
    len: usize,
}

impl<T: Copy + Default + PartialEq> LazyTable<T> {
    /// A table of `len` zero entries (the index is zeroed memory the kernel maps lazily).
    pub fn new(len: usize) -> Self {
        LazyTable {
            index: vec![0; len.div_ceil(LEAF_ENTRIES)],
            leaves: Vec::new(),
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
        match self.index[i / LEAF_ENTRIES] {
            0 => T::default(),
            leaf => self.leaves[leaf as usize - 1][i % LEAF_ENTRIES],
        }
    }

    /// Sets entry `i` to `value` (a zero written where nothing was allocates nothing).
    #[inline]
    pub fn set(&mut self, i: usize, value: T) {
        assert!(i < self.len, "index {i} beyond a table of {}", self.len);
        let slot = &mut self.index[i / LEAF_ENTRIES];
        if *slot == 0 {
            if value == T::default() {
                return;
            }
            self.leaves.push([T::default(); LEAF_ENTRIES]);
            *slot = u32::try_from(self.leaves.len()).expect("fewer than 2^32 leaves");
        }
        self.leaves[*slot as usize - 1][i % LEAF_ENTRIES] = value;
    }

    /// Every entry in index order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Entries that are not zero (absent leaves are skipped whole).
    pub fn count_nonzero(&self) -> usize {
        self.leaves
            .iter()
            .flatten()
            .filter(|&&v| v != T::default())
            .count()
    }

    /// The indexes of the entries that are not zero, in order.
    pub fn nonzero_indexes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for (l, &slot) in self.index.iter().enumerate() {
            if slot == 0 {
                continue;
            }
            let leaf = &self.leaves[slot as usize - 1];
            for (k, &v) in leaf.iter().enumerate() {
                if v != T::default() {
                    out.push(l * LEAF_ENTRIES + k);
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
        assert_eq!(t.leaves.len(), 1, "one leaf, shared by its entries");
        assert_eq!((t.get(42), t.get(43)), (7, 0));
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
    }
}
