//! LevelDB's `Random` (util/random.h): the Park–Miller "minimal standard" generator
//! x ← 16807·x mod (2³¹ − 1), computed exactly as upstream does (the 64-bit product folded
//! with `(p >> 31) + (p & M)`), so key streams match db_bench's bit for bit.
//!
//! Tolerates any seed: 0 and 2³¹ − 1 are replaced by 1 as upstream does.

/// The Park–Miller modulus 2³¹ − 1.
const MODULUS: u32 = 2_147_483_647;
/// The Park–Miller multiplier.
const MULTIPLIER: u64 = 16_807;

/// LevelDB's `Random`: deterministic, 31-bit, period 2³¹ − 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelDbRandom {
    seed: u32,
}

impl LevelDbRandom {
    /// A generator seeded like `Random(s)`: the seed is masked to 31 bits and the two bad
    /// seeds (0 and 2³¹ − 1) become 1.
    pub fn new(seed: u32) -> Self {
        let mut seed = seed & 0x7fff_ffff;
        if seed == 0 || seed == MODULUS {
            seed = 1;
        }
        Self { seed }
    }

    /// The next value in [1, 2³¹ − 2] (`Random::Next`).
    pub fn next_u32(&mut self) -> u32 {
        let product = u64::from(self.seed) * MULTIPLIER;
        // (product % M) using ((x << 31) % M) == x; the first fold may exceed M by less than M.
        let mut seed = ((product >> 31) + (product & u64::from(MODULUS))) as u32;
        if seed > MODULUS {
            seed -= MODULUS;
        }
        assert!(
            seed != 0 && seed != MODULUS,
            "Park–Miller state left its cycle"
        );
        self.seed = seed;
        seed
    }

    /// A value in [0, n − 1] (`Random::Uniform`); `n` must be positive (callers validate it).
    pub fn uniform(&mut self, n: u32) -> u32 {
        assert!(n > 0, "Uniform(0) is undefined");
        self.next_u32() % n
    }

    /// True about one time in `n` (`Random::OneIn`).
    pub fn one_in(&mut self, n: u32) -> bool {
        self.uniform(n) == 0
    }

    /// `Random::Skewed`: a base drawn uniformly from [0, max_log], then that many random bits.
    pub fn skewed(&mut self, max_log: u32) -> u32 {
        assert!(max_log < 31, "Skewed needs max_log < 31");
        let bits = self.uniform(max_log + 1);
        self.uniform(1 << bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values computed once, independently of this code, with Python's big integers:
    //   python3 -c "s=301
    //   for _ in range(5): s=s*16807%(2**31-1); print(s)"
    // and likewise for seeds 1000 and 1 (the plain definition x·16807 mod (2³¹−1), no folding).
    #[test]
    fn first_outputs_match_an_independent_park_miller_computation() {
        let mut r = LevelDbRandom::new(301);
        let got: Vec<u32> = (0..5).map(|_| r.next_u32()).collect();
        assert_eq!(got, EXPECTED_301);
        let mut r = LevelDbRandom::new(1000);
        let got: Vec<u32> = (0..5).map(|_| r.next_u32()).collect();
        assert_eq!(got, EXPECTED_1000);
    }

    #[test]
    fn bad_seeds_become_one() {
        let mut zero = LevelDbRandom::new(0);
        let mut max = LevelDbRandom::new(MODULUS);
        let mut one = LevelDbRandom::new(1);
        let expected = one.next_u32();
        assert_eq!(expected, 16_807);
        assert_eq!(zero.next_u32(), expected);
        assert_eq!(max.next_u32(), expected);
        // The top bit is masked away, as `seed_(s & 0x7fffffffu)` does.
        assert_eq!(
            LevelDbRandom::new(0x8000_0000 | 301),
            LevelDbRandom::new(301)
        );
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut r = LevelDbRandom::new(1000);
        for _ in 0..10_000 {
            assert!(r.uniform(7) < 7);
        }
    }

    const EXPECTED_301: [u32; 5] = [
        5_058_907,
        1_273_187_716,
        938_884_104,
        115_297_772,
        779_404_410,
    ];
    const EXPECTED_1000: [u32; 5] = [
        16_807_000,
        1_154_891_243,
        1_299_919_515,
        1_396_147_674,
        1_647_629_796,
    ];
}
