//! Where a job's random requests land: fio's distributions over the blocks of its region
//! (uniform, Zipf, Pareto, normal, zoned), drawn from the job's own RNG stream, and fio's
//! random map (each block once per pass unless `norandommap`). Zipf follows Gray et al.'s
//! "Quickly generating billion-record synthetic databases" (SIGMOD'94) as fio's `lib/zipf.c`
//! does, Pareto fio's power transform, and the skewed ones are scattered over the region by
//! fio's golden-ratio hash so the hot blocks are not all at its start.

use crate::options::Distribution;
use nearflash_sim::SimRng;

/// fio sums zeta(n, θ) over at most this many terms (`ZIPF_MAX_GEN` in `lib/zipf.c`).
const ZIPF_TERMS_MAX: u64 = 10_000_000;
/// fio's `GOLDEN_RATIO_64` (`lib/hash.h`), its scatter hash.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// Most blocks a random map tracks (one bit each: 128 MiB of map); a larger region needs
/// `norandommap`.
pub const RANDOM_MAP_BLOCKS_MAX: u64 = 1 << 30;

/// A uniform f64 in [0, 1).
fn unit(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn scatter(v: u64, n: u64) -> u64 {
    v.wrapping_mul(GOLDEN_RATIO_64) % n
}

/// Draws block indices in [0, n).
#[derive(Clone, Debug)]
pub enum BlockDraw {
    Uniform,
    Zipf {
        theta: f64,
        zetan: f64,
        zeta2: f64,
    },
    Pareto {
        power: f64,
    },
    Normal {
        stddev_blocks: f64,
    },
    /// Cumulative access percentages with each zone's first block and block count.
    Zoned(Vec<(u32, u64, u64)>),
}

impl BlockDraw {
    pub fn new(d: &Distribution, n: u64) -> BlockDraw {
        assert!(n > 0, "a region of at least one block");
        match d {
            Distribution::Uniform => BlockDraw::Uniform,
            &Distribution::Zipf(theta) => {
                let terms = n.min(ZIPF_TERMS_MAX);
                let zetan = (1..=terms).map(|i| (1.0 / i as f64).powf(theta)).sum();
                BlockDraw::Zipf {
                    theta,
                    zetan,
                    zeta2: 1.0 + 0.5f64.powf(theta),
                }
            }
            // fio lib/zipf.c: pareto_pow = log(h) / log(1 − h).
            &Distribution::Pareto(h) => BlockDraw::Pareto {
                power: h.ln() / (1.0 - h).ln(),
            },
            &Distribution::Normal(pct) => BlockDraw::Normal {
                stddev_blocks: n as f64 * pct / 100.0,
            },
            Distribution::Zoned(zones) => {
                let mut out = Vec::with_capacity(zones.len());
                let (mut acc, mut region_pct) = (0u32, 0u64);
                for &(a, r) in zones {
                    let first = n * region_pct / 100;
                    region_pct += u64::from(r);
                    let end = n * region_pct / 100;
                    acc += a;
                    out.push((acc, first, end.saturating_sub(first).max(1)));
                }
                BlockDraw::Zoned(out)
            }
        }
    }

    /// A block in [0, n).
    pub fn draw(&self, rng: &mut SimRng, n: u64) -> u64 {
        let b = match self {
            BlockDraw::Uniform => rng.below(n),
            &BlockDraw::Zipf {
                theta,
                zetan,
                zeta2,
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let nf = n as f64;
                let eta = (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = unit(rng);
                let z = u * zetan;
                let rank = if z < 1.0 {
                    1
                } else if z < zeta2 {
                    2
                } else {
                    1 + (nf * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                scatter(rank - 1, n)
            }
            &BlockDraw::Pareto { power } => {
                let v = ((n - 1) as f64 * unit(rng).powf(power)) as u64;
                scatter(v, n)
            }
            &BlockDraw::Normal { stddev_blocks } => {
                // Irwin–Hall: the sum of 12 uniforms less 6 is close to a standard normal
                // (fio's lib/gauss.c also sums 12 draws).
                let z: f64 = (0..12).map(|_| unit(rng)).sum::<f64>() - 6.0;
                let v = (n as f64 / 2.0 + z * stddev_blocks).rem_euclid(n as f64) as u64;
                scatter(v.min(n - 1), n)
            }
            BlockDraw::Zoned(zones) => {
                let pick = rng.below(100) as u32;
                let &(_, first, count) = zones
                    .iter()
                    .find(|&&(acc, _, _)| pick < acc)
                    .expect("zones add up to 100%");
                (first + rng.below(count)).min(n - 1)
            }
        };
        assert!(b < n, "a drawn block lies in the region");
        b
    }
}

/// fio's random map: which blocks this pass has touched, so a uniform random job covers
/// every block once before any twice.
#[derive(Clone, Debug)]
pub struct RandomMap {
    words: Vec<u64>,
    blocks: u64,
    used: u64,
}

impl RandomMap {
    pub fn new(blocks: u64) -> RandomMap {
        assert!(blocks > 0 && blocks <= RANDOM_MAP_BLOCKS_MAX);
        RandomMap {
            words: vec![0; blocks.div_ceil(64) as usize],
            blocks,
            used: 0,
        }
    }

    fn is_set(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] >> (b % 64) & 1 == 1
    }

    /// The first free block at or after `b` (wrapping); starts a new pass when all are used.
    pub fn take(&mut self, b: u64) -> u64 {
        assert!(b < self.blocks);
        if self.used == self.blocks {
            self.words.iter_mut().for_each(|w| *w = 0);
            self.used = 0;
        }
        let mut at = b;
        loop {
            let word = self.words[(at / 64) as usize] | ((1u64 << (at % 64)) - 1);
            if word != u64::MAX {
                let free = (at / 64) * 64 + u64::from(word.trailing_ones());
                if free < self.blocks {
                    at = free;
                    break;
                }
            }
            at = ((at / 64) + 1) * 64;
            if at >= self.blocks {
                at = 0;
            }
        }
        assert!(!self.is_set(at));
        self.words[(at / 64) as usize] |= 1 << (at % 64);
        self.used += 1;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: &Distribution, n: u64, draws: usize) -> Vec<u64> {
        let bd = BlockDraw::new(d, n);
        let mut rng = SimRng::seed_from_u64(3);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[bd.draw(&mut rng, n) as usize] += 1;
        }
        c
    }

    fn top_share(mut c: Vec<u64>, top: usize) -> f64 {
        let total: u64 = c.iter().sum();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c[..top].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn zipf_concentrates_accesses_on_few_blocks_and_uniform_does_not() {
        let z = top_share(counts(&Distribution::Zipf(1.2), 1000, 50_000), 10);
        let u = top_share(counts(&Distribution::Uniform, 1000, 50_000), 10);
        assert!(z > 0.5, "the 1% hottest blocks take {z} of zipf:1.2");
        assert!(u < 0.03, "{u}");
    }

    #[test]
    fn pareto_and_normal_skew_and_stay_in_range() {
        let p = top_share(counts(&Distribution::Pareto(0.9), 1000, 50_000), 100);
        assert!(p > 0.5, "pareto:0.9: the hottest 10% take {p}");
        let g = top_share(counts(&Distribution::Normal(5.0), 1000, 50_000), 200);
        assert!(g > 0.8, "normal:5%: the hottest 20% take {g}");
    }

    #[test]
    fn zoned_sends_each_zone_its_share() {
        let c = counts(
            &Distribution::Zoned(vec![(80, 10), (20, 90)]),
            1000,
            100_000,
        );
        let first: u64 = c[..100].iter().sum();
        assert!((78_000..82_000).contains(&first), "{first}");
    }

    #[test]
    fn the_random_map_covers_every_block_once_per_pass() {
        let mut m = RandomMap::new(130);
        let mut rng = SimRng::seed_from_u64(1);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..130 {
            assert!(seen.insert(m.take(rng.below(130))));
        }
        assert_eq!(seen.len(), 130);
        m.take(5);
        assert_eq!(m.used, 1, "a new pass starts when every block is used");
    }
}
