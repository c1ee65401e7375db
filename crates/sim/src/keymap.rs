//! Hash maps for the model's own integer keys (request ids, page-group numbers, lock ids):
//! [`KeyMap`] is std's `HashMap` with [`KeyHasher`], one folded multiply per word instead of
//! SipHash. The keys come from the model, not from an adversary, so flooding is no concern;
//! the hasher has no per-process keys, so a map's state depends only on what was inserted.
//!
//! A `KeyMap` must never be iterated where the order could reach a result: iteration order
//! is the table's, not the keys'. Use it for lookups by key only, and a `BTreeMap` wherever
//! the model walks the map.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by the model's integers, hashed with [`KeyHasher`].
pub type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// Hashes integer words: each is xored into the state, multiplied (64 × 64 → 128 bits) by an
/// odd constant and folded (high half xor low half), so every key bit reaches both the low
/// bits a table picks its bucket with and the high bits it keeps as a tag.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        let p = u128::from(self.0 ^ n) * u128::from(Self::MULTIPLIER);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn keys_apart_in_low_or_high_bits_differ_in_bucket_and_tag_bits() {
        let h = BuildHasherDefault::<KeyHasher>::default();
        // Next group, another instance (bit 40 up), the top bit: each pair must land in
        // different buckets and carry different tags.
        for (a, b) in [(1u64, 2u64), (1, 1 | 1 << 40), (0, 1 << 63)] {
            let (ha, hb) = (h.hash_one(a), h.hash_one(b));
            assert_ne!(ha & 0xffff, hb & 0xffff, "{a:#x} vs {b:#x}: low bits");
            assert_ne!(ha >> 57, hb >> 57, "{a:#x} vs {b:#x}: high bits");
        }
    }

    #[test]
    fn same_keys_hash_alike_in_every_map() {
        let h = BuildHasherDefault::<KeyHasher>::default();
        assert_eq!(h.hash_one(12345u64), h.hash_one(12345u64));
        assert_eq!(h.hash_one(7usize), h.hash_one(7u64));
        let mut m: KeyMap<u64, u32> = KeyMap::default();
        for k in 0..10_000u64 {
            m.insert(k << 20, k as u32);
        }
        assert!((0..10_000u64).all(|k| m[&(k << 20)] == k as u32));
    }
}
