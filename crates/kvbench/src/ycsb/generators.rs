//! YCSB's number generators (site.ycsb.generator), ported with their arithmetic intact:
//! `ZipfianGenerator` (Gray et al., incremental ζ, and YCSB's own quirk of recomputing η with
//! the construction-time item count), `ScrambledZipfianGenerator` (ζ over 10¹⁰ + 1 items fixed
//! at 26.46902820178302, then FNV-1a-64 of the draw modulo the item count),
//! `SkewedLatestGenerator`, `UniformLongGenerator`, a single-threaded
//! `AcknowledgedCounterGenerator` and `DiscreteGenerator`.
//!
//! Randomness: YCSB draws from `ThreadLocalRandom` (unseedable); here every draw comes from one
//! seeded xoshiro256++ stream, converted as Java does (`nextDouble` = top 53 bits · 2⁻⁵³,
//! `nextLong` = the 64 bits as a signed integer). Same seed ⇒ same draws ⇒ same operations.

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The run's random stream.
pub type YcsbRng = Xoshiro256PlusPlus;

/// `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// `ScrambledZipfianGenerator.ZETAN`: ζ(10¹⁰, 0.99).
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;
/// `ScrambledZipfianGenerator.ITEM_COUNT`.
pub const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;

/// Java's `ThreadLocalRandom.nextDouble()` construction over our stream: [0, 1).
pub fn next_double(rng: &mut YcsbRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Java's `nextLong()`: 64 random bits as a signed integer.
pub fn next_long(rng: &mut YcsbRng) -> i64 {
    rng.next_u64() as i64
}

/// `Utils.fnvhash64`: FNV-1a over the 8 little-end octets of `val`, then `Math.abs` (which
/// leaves `i64::MIN` negative, as Java does).
pub fn fnvhash64(mut val: i64) -> i64 {
    const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    const FNV_PRIME_64: i64 = 1_099_511_628_211;
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash.wrapping_abs()
}

/// `ZipfianGenerator.zetastatic(st, n, theta, initialsum)`: Σ_{i=st}^{n−1} (i+1)^−θ.
pub fn zeta_static(st: i64, n: i64, theta: f64, initial_sum: f64) -> f64 {
    let mut sum = initial_sum;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// YCSB's `ZipfianGenerator` over [base, base + items − 1].
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

impl Zipfian {
    /// `new ZipfianGenerator(min, max, theta[, zetan])`; like the Java constructor it draws
    /// one value, so construction consumes one random number.
    pub fn new(min: i64, max: i64, theta: f64, zetan: Option<f64>, rng: &mut YcsbRng) -> Self {
        let items = max - min + 1;
        assert!(items >= 1, "a zipfian needs at least one item");
        let zetan = zetan.unwrap_or_else(|| zeta_static(0, items, theta, 0.0));
        let zeta2theta = zeta_static(0, 2, theta, 0.0);
        let mut z = Self {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            count_for_zeta: items,
        };
        z.next_value(rng);
        z
    }

    /// `nextLong(itemcount)`: grows ζ incrementally when `item_count` grew (never shrinks it,
    /// as `allowitemcountdecrease` defaults to false).
    pub fn next_long(&mut self, item_count: i64, rng: &mut YcsbRng) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta_static(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            // YCSB recomputes η with `items` (the construction-time count), not `itemcount`.
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = next_double(rng);
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }

    /// `nextValue()`: a draw over the construction-time item count.
    pub fn next_value(&mut self, rng: &mut YcsbRng) -> i64 {
        self.next_long(self.items, rng)
    }
}

/// `ScrambledZipfianGenerator(min, max)` with θ = 0.99.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: i64,
    item_count: i64,
}

impl ScrambledZipfian {
    /// Over [min, max]; the inner zipfian spans 0..=10¹⁰ with the precomputed ζ.
    pub fn new(min: i64, max: i64, rng: &mut YcsbRng) -> Self {
        assert!(max >= min, "scrambled zipfian over an empty range");
        let gen = Zipfian::new(
            0,
            SCRAMBLED_ITEM_COUNT,
            ZIPFIAN_CONSTANT,
            Some(SCRAMBLED_ZETAN),
            rng,
        );
        Self {
            gen,
            min,
            item_count: max - min + 1,
        }
    }

    /// `min + fnvhash64(zipf draw) % itemcount` (Java remainder: the sign of the dividend).
    pub fn next_value(&mut self, rng: &mut YcsbRng) -> i64 {
        let v = self.gen.next_value(rng);
        self.min + fnvhash64(v) % self.item_count
    }
}

/// `UniformLongGenerator(lb, ub)`: `abs(nextLong) % interval + lb`.
#[derive(Debug, Clone)]
pub struct UniformLong {
    lb: i64,
    interval: i64,
}

impl UniformLong {
    /// Over [lb, ub].
    pub fn new(lb: i64, ub: i64) -> Self {
        assert!(ub >= lb, "uniform over an empty range");
        Self {
            lb,
            interval: ub - lb + 1,
        }
    }

    /// The next value; Java's `Math.abs(Long.MIN_VALUE)` stays negative, and so would the
    /// result — `rem_euclid` keeps it in range instead (a 2⁻⁶⁴ event).
    pub fn next_value(&mut self, rng: &mut YcsbRng) -> i64 {
        next_long(rng).wrapping_abs().rem_euclid(self.interval) + self.lb
    }
}

/// `AcknowledgedCounterGenerator` for one client thread: inserts are acknowledged in order as
/// soon as they complete, so the acknowledged limit is simply the last inserted key number.
#[derive(Debug, Clone)]
pub struct AcknowledgedCounter {
    next: i64,
    limit: i64,
}

impl AcknowledgedCounter {
    /// Counting from `start`; nothing acknowledged yet (`limit = start − 1`).
    pub fn new(start: i64) -> Self {
        Self {
            next: start,
            limit: start - 1,
        }
    }

    /// `nextValue()`: the next key number to insert.
    pub fn next_value(&mut self) -> i64 {
        self.next += 1;
        self.next - 1
    }

    /// `acknowledge(v)`: `v` must be the oldest unacknowledged value.
    pub fn acknowledge(&mut self, value: i64) {
        assert_eq!(
            value,
            self.limit + 1,
            "single-threaded inserts complete in order"
        );
        self.limit = value;
    }

    /// `lastValue()`: the highest acknowledged key number.
    pub fn last_value(&self) -> i64 {
        self.limit
    }
}

/// `SkewedLatestGenerator`: `last − zipf(last)`, favouring the newest keys.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// Over the counter's current last value; like Java, construction draws twice (the
    /// zipfian's constructor and this constructor's `nextValue`).
    pub fn new(basis: &AcknowledgedCounter, rng: &mut YcsbRng) -> Self {
        let items = basis.last_value();
        assert!(items >= 1, "latest needs at least two records");
        let mut s = Self {
            zipfian: Zipfian::new(0, items - 1, ZIPFIAN_CONSTANT, None, rng),
        };
        s.next_value(basis, rng);
        s
    }

    /// The next key number.
    pub fn next_value(&mut self, basis: &AcknowledgedCounter, rng: &mut YcsbRng) -> i64 {
        let max = basis.last_value();
        max - self.zipfian.next_long(max, rng)
    }
}

/// `DiscreteGenerator`: picks an item with probability weight / Σ weights.
#[derive(Debug, Clone)]
pub struct Discrete<T: Copy> {
    values: Vec<(f64, T)>,
}

impl<T: Copy> Discrete<T> {
    /// Items with positive weights, in YCSB's order (zero weights are not added).
    pub fn new(values: Vec<(f64, T)>) -> Self {
        assert!(!values.is_empty(), "a discrete generator needs an item");
        assert!(values.iter().all(|(w, _)| *w > 0.0));
        Self { values }
    }

    /// The next item (the last one when rounding leaves `val` ≥ every share).
    pub fn next_value(&self, rng: &mut YcsbRng) -> T {
        let sum: f64 = self.values.iter().map(|(w, _)| w).sum();
        let mut val = next_double(rng);
        for (w, v) in &self.values {
            let share = w / sum;
            if val < share {
                return *v;
            }
            val -= share;
        }
        self.values.last().expect("non-empty").1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fnvhash64_matches_an_independent_computation() {
        // Computed once with Python (FNV-1a over the 8 little-end bytes, then abs of the
        // signed result):
        //   def f(v):
        //     h=0xCBF29CE484222325
        //     for i in range(8): h^=(v>>(8*i))&0xff; h=(h*1099511628211)%2**64
        //     h=h-2**64 if h>=2**63 else h; return abs(h)
        assert_eq!(fnvhash64(0), FNV_0);
        assert_eq!(fnvhash64(1), FNV_1);
        assert_eq!(fnvhash64(1000), FNV_1000);
    }

    #[test]
    fn the_scrambled_zeta_constant_is_zeta_of_ten_billion() {
        // Summing all 10¹⁰ terms is too slow: sum the first 10⁶ directly and the rest by the
        // midpoint integral (its error is below 10⁻¹²). YCSB's constant came from a plain
        // 10¹⁰-term double sum, so allow for its rounding.
        let theta = ZIPFIAN_CONSTANT;
        let head = zeta_static(0, 1_000_000, theta, 0.0);
        let n = 1e10_f64;
        let m = 1e6_f64;
        // ∫_{m+1/2}^{n+1/2} x^−θ dx approximates Σ_{i=m+1}^{n} i^−θ.
        let tail = ((n + 0.5).powf(1.0 - theta) - (m + 0.5).powf(1.0 - theta)) / (1.0 - theta);
        assert!(
            ((head + tail) - SCRAMBLED_ZETAN).abs() < 1e-4,
            "{}",
            head + tail
        );
    }

    #[test]
    fn zipfian_favours_low_ranks_with_theta_099() {
        let mut rng = YcsbRng::seed_from_u64(7);
        let n = 1000;
        let mut z = Zipfian::new(0, n - 1, ZIPFIAN_CONSTANT, None, &mut rng);
        let mut counts = vec![0u32; n as usize];
        let draws = 200_000;
        for _ in 0..draws {
            counts[z.next_value(&mut rng) as usize] += 1;
        }
        // P(rank 0) = 1/ζ(1000, 0.99) ≈ 0.1343.
        let p0 = f64::from(counts[0]) / f64::from(draws);
        let expected = 1.0 / zeta_static(0, n, ZIPFIAN_CONSTANT, 0.0);
        assert!((p0 - expected).abs() < 0.01, "p0={p0} expected={expected}");
        assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > counts[500]);
    }

    #[test]
    fn uniform_and_scrambled_stay_in_range() {
        let mut rng = YcsbRng::seed_from_u64(1);
        let mut u = UniformLong::new(1, 100);
        let mut s = ScrambledZipfian::new(0, 999, &mut rng);
        for _ in 0..10_000 {
            assert!((1..=100).contains(&u.next_value(&mut rng)));
            assert!((0..1000).contains(&s.next_value(&mut rng)));
        }
    }

    #[test]
    fn skewed_latest_prefers_the_newest_keys() {
        let mut rng = YcsbRng::seed_from_u64(3);
        let mut c = AcknowledgedCounter::new(1000);
        let mut s = SkewedLatest::new(&c, &mut rng);
        let mut newest = 0;
        for _ in 0..10_000 {
            let v = s.next_value(&c, &mut rng);
            assert!((0..=c.last_value()).contains(&v));
            newest += u32::from(v == c.last_value());
        }
        assert!(
            newest > 1000,
            "the newest key is drawn ~13% of the time: {newest}"
        );
        let k = c.next_value();
        c.acknowledge(k);
        assert_eq!(c.last_value(), 1000);
    }

    const FNV_0: i64 = 6_284_781_860_667_377_211;
    const FNV_1: i64 = 8_517_097_267_634_966_620;
    const FNV_1000: i64 = 5_952_875_239_596_136_740;
}
