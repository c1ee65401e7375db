//! db_bench's value source: `test::RandomString`, `test::CompressibleString` (util/testutil.cc)
//! and `RandomGenerator` (benchmarks/db_bench.cc) — a 1 MiB pool of fragments, each made of a
//! random printable run repeated until the fragment is full, so the pool compresses to about
//! the requested ratio. Values are consecutive slices of the pool, wrapping to its start.
//!
//! Bounded: the pool is built once (just over 1 MiB); a request longer than the pool is refused
//! by the caller's validation (upstream asserts `len < data_.size()`).

use crate::random::LevelDbRandom;

/// The pool size upstream fills to (`while (data_.size() < 1048576)`).
pub const POOL_SIZE_BYTES: usize = 1 << 20;
/// The seed of the value pool's generator (`Random rnd(301)`).
pub const POOL_SEED: u32 = 301;
/// Upstream's fragment length (`CompressibleString(..., 100, ...)`); Hayagui's fork uses 128.
pub const FRAGMENT_LEN_UPSTREAM_BYTES: usize = 100;

/// `test::RandomString`: `len` printable characters `' ' + Uniform(95)`.
pub fn random_string(rnd: &mut LevelDbRandom, len: usize, dst: &mut Vec<u8>) {
    dst.clear();
    dst.extend((0..len).map(|_| b' ' + rnd.uniform(95) as u8));
}

/// `test::CompressibleString`: a random run of `len · compressed_fraction` bytes (at least 1),
/// repeated to fill `len` bytes.
pub fn compressible_string(
    rnd: &mut LevelDbRandom,
    compressed_fraction: f64,
    len: usize,
    dst: &mut Vec<u8>,
) {
    // `static_cast<int>(len * compressed_fraction)` truncates toward zero.
    let raw_len = ((len as f64 * compressed_fraction) as usize).max(1);
    let mut raw = Vec::with_capacity(raw_len);
    random_string(rnd, raw_len, &mut raw);
    dst.clear();
    while dst.len() < len {
        dst.extend_from_slice(&raw);
    }
    dst.truncate(len);
}

/// db_bench's `RandomGenerator`: the value pool and a cursor into it.
#[derive(Debug, Clone)]
pub struct RandomGenerator {
    data: Vec<u8>,
    pos: usize,
}

impl RandomGenerator {
    /// Builds the pool from `Random(301)` with fragments of `fragment_len` bytes compressible to
    /// `compression_ratio` (upstream: 100 bytes and 0.5).
    pub fn new(compression_ratio: f64, fragment_len: usize) -> Self {
        assert!(fragment_len > 0, "fragment length validated by the caller");
        let mut rnd = LevelDbRandom::new(POOL_SEED);
        let mut data = Vec::with_capacity(POOL_SIZE_BYTES + fragment_len);
        let mut piece = Vec::with_capacity(fragment_len);
        while data.len() < POOL_SIZE_BYTES {
            compressible_string(&mut rnd, compression_ratio, fragment_len, &mut piece);
            data.extend_from_slice(&piece);
        }
        assert!(data.len() >= POOL_SIZE_BYTES && data.len() < POOL_SIZE_BYTES + fragment_len);
        Self { data, pos: 0 }
    }

    /// The pool's length in bytes.
    pub fn pool_len_bytes(&self) -> usize {
        self.data.len()
    }

    /// The next `len` bytes of the pool (`Generate`), restarting at the pool's start when they
    /// would run past its end. `len` must be shorter than the pool.
    pub fn generate(&mut self, len: usize) -> &[u8] {
        assert!(
            len < self.data.len(),
            "value length validated by the caller"
        );
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fragment_matches_an_independent_computation() {
        // Computed once with Python from the Park–Miller definition:
        //   s=301; out=''
        //   for _ in range(50): s=s*16807%(2**31-1); out+=chr(32+s%95)
        // The first 100-byte fragment at ratio 0.5 is that 50-byte run twice.
        let run: &[u8] = br#"^{Vhz"!/%wMZ;'a F/REZJ4Tw@%NXxy2?.ArVCZ2B6[jnUd)4 "#;
        let mut g = RandomGenerator::new(0.5, FRAGMENT_LEN_UPSTREAM_BYTES);
        let first = g.generate(100).to_vec();
        assert_eq!(&first[..50], run);
        assert_eq!(&first[50..], run);
    }

    #[test]
    fn pool_is_one_mebibyte_rounded_up_to_whole_fragments() {
        assert_eq!(RandomGenerator::new(0.5, 100).pool_len_bytes(), 1_048_600);
        assert_eq!(RandomGenerator::new(0.5, 128).pool_len_bytes(), 1_048_576);
    }

    #[test]
    fn generate_wraps_to_the_start_of_the_pool() {
        let mut g = RandomGenerator::new(0.5, 100);
        let first = g.generate(1000).to_vec();
        for _ in 0..1047 {
            g.generate(1000);
        }
        // 1048 values end at 1_048_000; the next would end past 1_048_600, so it starts over.
        assert!(g.generate(1000) == &first[..]);
    }

    #[test]
    fn compressible_string_compresses_to_about_half_with_snappy() {
        let g = RandomGenerator::new(0.5, 100);
        let mut enc = snap::raw::Encoder::new();
        // A 4 KiB block, as db_bench's snappycomp feeds the compressor.
        let mut g2 = g.clone();
        let block = g2.generate(4096).to_vec();
        let compressed = enc.compress_vec(&block).unwrap();
        let ratio = compressed.len() as f64 / block.len() as f64;
        assert!((0.45..0.62).contains(&ratio), "snappy ratio {ratio}");
    }
}
