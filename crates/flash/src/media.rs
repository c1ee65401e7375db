//! Flash media errors: the raw bit error rate (RBER) of a page as its block wears, its data
//! ages and its block is read, the bit errors each ECC codeword of a read draws from the run's
//! seeded RNG, the ECC that corrects up to `correctable_bits` per codeword, and read-retry.
//!
//! RBER model — the composite power law of Mielke et al., "Bit Error Rate in NAND Flash
//! Memories" (IRPS 2008), who found write/wear, retention and read-disturb errors each
//! growing as a power of their cause, with retention and disturb errors growing faster on
//! worn blocks:
//!
//! ```text
//! RBER(N, t, r) = ε + α·N^k + β·N^m·t^n + γ·N^p·r^q
//!   N = P/E cycles of the block, t = retention age of the page in days (simulated time since
//!   it was programmed + `retention_offset_days`), r = reads of the block since its erase
//! ```
//!
//! Cai et al. measured the same three causes on 2y-nm MLC: errors grow exponentially-to-
//! power-law with P/E cycles ("Error Patterns in MLC NAND Flash Memory", DATE 2012),
//! sub-linearly with retention age ("Data Retention in MLC NAND Flash Memory", HPCA 2015) and
//! about linearly with the read count ("Read Disturb Errors in MLC NAND Flash Memory",
//! DSN 2015: q ≈ 1). The fitted constants below are assumptions sized to those papers'
//! magnitudes (RBER ~1e-4 fresh, ~1e-3 at 3000 P/E, a few 1e-3 after a year at 3000 P/E),
//! not a fit of one chip.
//!
//! Bit errors per codeword: each of the codeword's n bits (data + BCH parity) flips
//! independently with probability RBER, so the count is Binomial(n, RBER), drawn as its
//! Poisson(n·RBER) approximation (n ≥ 8192, RBER ≤ 1e-2: the approximation error is below
//! the RBER itself, Le Cam's bound). Only the outcome the ECC can see is drawn: the exact count
//! up to t, or "more than t" — by inverting the Poisson CDF over 0..=t, O(t) per codeword.
//!
//! Read-retry: a read whose codewords do not all decode is sensed again with shifted
//! reference voltages. Shifting the references follows threshold-voltage distributions that
//! *moved* — retention charge loss and read-disturb charge gain, which is what Cai et al.
//! (HPCA 2015, "retention optimized reading") recover by re-reading at the optimal voltage —
//! but cannot narrow distributions that *widened* with wear. So a codeword's errors are split:
//! the fixed part (ε + α·N^k: cells whose threshold voltage lies in the wrong window) is drawn
//! once per read and is the same at every retry step — the same cells are still wrong; the
//! shift part (retention + disturb) is drawn again at each step, its rate multiplied by
//! `read_retry_rber_factor` per step. A codeword decodes at the first step where the two
//! together are at most t; a worn-out codeword (fixed part > t) stays uncorrectable whatever
//! the retries. Codewords already decoded are kept. After `read_retry_steps_max` steps the rest are
//! uncorrectable. The retries themselves are real backbone operations (`backbone.rs`): each
//! occupies the die for tR and the channel for the transfer again.
//!
//! Tolerates: pages never programmed since their erase (erased pages are recognised and not
//! decoded), any RBER up to 0.5 (clamped), λ far beyond t (the CDF underflows to "more than
//! t", never a NaN).

use crate::config::{invalid, ConfigError};
use crate::geometry::{BlockId, PageId};
use nearflash_sim::{SimRng, SimTime};
use serde::{Deserialize, Serialize};

/// Largest correction capability accepted: decoding draws cost O(t) per codeword.
pub const CORRECTABLE_BITS_MAX: u32 = 1024;
/// Most read-retry steps: vendor retry tables hold a handful to a few tens of entries.
pub const READ_RETRY_STEPS_MAX: u32 = 64;
/// Most codewords per page (bounds the decode work of one page read).
pub const CODEWORDS_PER_PAGE_MAX: u32 = 256;
const NS_PER_DAY: f64 = 86_400e9;

/// The `[flash.media]` table. Off by default: presets that reproduce papers keep it off
/// because none of the seed papers modelled media errors.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MediaConfig {
    pub enabled: bool,
    /// ε: RBER of a fresh block (assumption: ~1e-4 × 0.5, Cai et al. DATE 2012 Fig. 2 shows
    /// RBER in the low 1e-4 range before wear).
    pub rber_floor: f64,
    /// α, k: wear term α·N^k. k = 2 (assumption: Mielke et al. 2008 report a power law with
    /// exponent between 1 and 3 across vendors); α so that the term is 1e-3 at 3000 P/E
    /// (assumption, Cai et al. DATE 2012: ~1e-3 near the rated 3000 cycles of 2y-nm MLC).
    pub rber_wear_coeff: f64,
    pub rber_wear_exponent: f64,
    /// β, m, n: retention term β·N^m·t^n, t in days. n = 0.5 (assumption: Cai et al. HPCA
    /// 2015 report sub-linear growth with age), m = 1 (assumption: retention loss grows
    /// with wear, Mielke et al. 2008); β so that the term is 3e-3 after 365 days at 3000 P/E.
    pub rber_retention_coeff: f64,
    pub rber_retention_pe_exponent: f64,
    pub rber_retention_exponent: f64,
    /// γ, p, q: read-disturb term γ·N^p·r^q, r = reads of the block since its erase.
    /// q = 1 (Cai et al. DSN 2015: RBER grows linearly with the read count), p = 1
    /// (assumption: worn blocks disturb faster, same paper Fig. 4); γ so that the term is
    /// 1e-3 after 100,000 reads at 3000 P/E (assumption, order of the DSN 2015 slopes).
    pub rber_disturb_coeff: f64,
    pub rber_disturb_pe_exponent: f64,
    pub rber_disturb_exponent: f64,
    /// Data bytes one ECC codeword protects. 1 KiB with t = 40: BCH of the 40-bit/1 KiB
    /// class Micron specifies for its 2x-nm MLC (assumption: the "minimum required ECC" of
    /// those datasheets, not one part number's).
    pub codeword_bytes: u32,
    /// t: bit errors the ECC corrects per codeword.
    pub correctable_bits: u32,
    /// Read-retry steps after the first read (assumption: vendor retry tables hold ~7
    /// shifted-reference sets; Cai et al., DATE 2013, used such a table on 2y-nm MLC).
    pub read_retry_steps_max: u32,
    /// RBER multiplier of each retry step (assumption: each step roughly halves the errors
    /// of a shifted distribution).
    pub read_retry_rber_factor: f64,
    /// A block is retired once this many of its reads needed a retry or failed (lifetime
    /// count; assumption).
    pub retire_error_reads: u32,
    /// Wear every block starts with (0: a new device). For end-of-life studies.
    pub initial_pe_cycles: u32,
    /// Age added to every page's retention time: the device sat this long (powered off)
    /// before the run. For retention studies.
    pub retention_offset_days: f64,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            enabled: false,
            rber_floor: 5e-5,
            // 1e-3 / 3000^2.
            rber_wear_coeff: 1.0e-3 / 9.0e6,
            rber_wear_exponent: 2.0,
            // 3e-3 / (3000 × 365^0.5).
            rber_retention_coeff: 3.0e-3 / (3000.0 * 19.105),
            rber_retention_pe_exponent: 1.0,
            rber_retention_exponent: 0.5,
            // 1e-3 / (3000 × 100,000).
            rber_disturb_coeff: 1.0e-3 / 3.0e8,
            rber_disturb_pe_exponent: 1.0,
            rber_disturb_exponent: 1.0,
            codeword_bytes: 1024,
            correctable_bits: 40,
            read_retry_steps_max: 7,
            read_retry_rber_factor: 0.5,
            retire_error_reads: 16,
            initial_pe_cycles: 0,
            retention_offset_days: 0.0,
        }
    }
}

impl MediaConfig {
    /// Checks every field; `page_size_bytes` bounds the codeword count of a page.
    pub fn validate(&self, page_size_bytes: u32) -> Result<(), ConfigError> {
        for (field, v) in [
            ("flash.media.rber_floor", self.rber_floor),
            ("flash.media.rber_wear_coeff", self.rber_wear_coeff),
            (
                "flash.media.rber_retention_coeff",
                self.rber_retention_coeff,
            ),
            ("flash.media.rber_disturb_coeff", self.rber_disturb_coeff),
        ] {
            if !(v.is_finite() && (0.0..=0.5).contains(&v)) {
                return Err(invalid(field, format!("must be within 0..=0.5, got {v}")));
            }
        }
        for (field, v) in [
            ("flash.media.rber_wear_exponent", self.rber_wear_exponent),
            (
                "flash.media.rber_retention_pe_exponent",
                self.rber_retention_pe_exponent,
            ),
            (
                "flash.media.rber_retention_exponent",
                self.rber_retention_exponent,
            ),
            (
                "flash.media.rber_disturb_pe_exponent",
                self.rber_disturb_pe_exponent,
            ),
            (
                "flash.media.rber_disturb_exponent",
                self.rber_disturb_exponent,
            ),
        ] {
            if !(v.is_finite() && (0.0..=4.0).contains(&v)) {
                return Err(invalid(field, format!("must be within 0..=4, got {v}")));
            }
        }
        if !(64..=16384).contains(&self.codeword_bytes) {
            return Err(invalid(
                "flash.media.codeword_bytes",
                format!("must be within 64..=16384, got {}", self.codeword_bytes),
            ));
        }
        if page_size_bytes.div_ceil(self.codeword_bytes) > CODEWORDS_PER_PAGE_MAX {
            return Err(invalid(
                "flash.media.codeword_bytes",
                format!(
                    "a page would hold more than {CODEWORDS_PER_PAGE_MAX} codewords; use at least {} bytes",
                    page_size_bytes.div_ceil(CODEWORDS_PER_PAGE_MAX)
                ),
            ));
        }
        if !(1..=CORRECTABLE_BITS_MAX).contains(&self.correctable_bits) {
            return Err(invalid(
                "flash.media.correctable_bits",
                format!(
                    "must be within 1..={CORRECTABLE_BITS_MAX}, got {}",
                    self.correctable_bits
                ),
            ));
        }
        if self.read_retry_steps_max > READ_RETRY_STEPS_MAX {
            return Err(invalid(
                "flash.media.read_retry_steps_max",
                format!(
                    "must be within 0..={READ_RETRY_STEPS_MAX}, got {}",
                    self.read_retry_steps_max
                ),
            ));
        }
        let f = self.read_retry_rber_factor;
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            return Err(invalid(
                "flash.media.read_retry_rber_factor",
                format!("must be within (0, 1], got {f}"),
            ));
        }
        if self.retire_error_reads == 0 {
            return Err(invalid(
                "flash.media.retire_error_reads",
                "must be at least 1",
            ));
        }
        let d = self.retention_offset_days;
        if !(d.is_finite() && (0.0..=36_500.0).contains(&d)) {
            return Err(invalid(
                "flash.media.retention_offset_days",
                format!("must be within 0..=36500 days, got {d}"),
            ));
        }
        Ok(())
    }

    /// The model's raw bit error rate for a page of a block with `pe_cycles`, data
    /// `retention_days` old, on a block read `reads` times since its erase.
    pub fn rber(&self, pe_cycles: u32, retention_days: f64, reads: u64) -> Rber {
        debug_assert!(retention_days >= 0.0);
        let n = f64::from(pe_cycles);
        let wear = self.rber_wear_coeff * n.powf(self.rber_wear_exponent);
        let retention = self.rber_retention_coeff
            * n.powf(self.rber_retention_pe_exponent)
            * retention_days.powf(self.rber_retention_exponent);
        let disturb = self.rber_disturb_coeff
            * n.powf(self.rber_disturb_pe_exponent)
            * (reads as f64).powf(self.rber_disturb_exponent);
        let r = Rber {
            fixed: self.rber_floor + wear,
            shift: retention + disturb,
        };
        assert!(
            r.fixed.is_finite() && r.shift.is_finite() && r.fixed >= 0.0 && r.shift >= 0.0,
            "RBER {r:?} out of range"
        );
        r
    }

    /// Stored bits of one codeword: its data plus the BCH parity, m·t bits over GF(2^m)
    /// for the smallest m whose code length 2^m − 1 holds data and parity (Lin & Costello,
    /// "Error Control Coding", §6.1).
    pub fn codeword_bits(&self) -> u64 {
        let data_bits = u64::from(self.codeword_bytes) * 8;
        let t = u64::from(self.correctable_bits);
        let m = (1..64u64)
            .find(|&m| (1u64 << m) > data_bits + m * t)
            .expect("validated codeword sizes fit GF(2^63)");
        data_bits + m * t
    }

    /// RBER seen by a sensing after `step` read-retry steps (at most 0.5: a coin flip).
    pub fn rber_at_step(&self, rber: Rber, step: u32) -> f64 {
        (rber.fixed + self.shift_at_step(rber, step)).min(0.5)
    }

    /// The shift part of the RBER after `step` retry steps (the total kept at most 0.5).
    pub fn shift_at_step(&self, rber: Rber, step: u32) -> f64 {
        (rber.shift * self.read_retry_rber_factor.powi(step as i32))
            .min((0.5 - rber.fixed).max(0.0))
    }

    /// Probability that a codeword read at `rber` holds more than t errors (the ECC fails):
    /// the analytic expectation the sampler is tested against.
    pub fn codeword_failure_probability(&self, rber: f64) -> f64 {
        let lambda = rber * self.codeword_bits() as f64;
        let cdf: f64 = (0..=self.correctable_bits)
            .map(|k| poisson_pmf(lambda, k))
            .sum();
        (1.0 - cdf).clamp(0.0, 1.0)
    }

    /// Probability that a codeword is still uncorrectable after every retry step: its fixed
    /// errors j exceed t, or for every step s its fresh shift errors exceed t − j.
    pub fn codeword_loss_probability(&self, rber: Rber) -> f64 {
        let n = self.codeword_bits() as f64;
        let t = self.correctable_bits;
        let lambda_fixed = n * rber.fixed.min(0.5);
        let cdf = |lambda: f64, up_to: u32| -> f64 {
            (0..=up_to)
                .map(|k| poisson_pmf(lambda, k))
                .sum::<f64>()
                .min(1.0)
        };
        let mut loss = 1.0 - cdf(lambda_fixed, t);
        for j in 0..=t {
            let every_step_fails: f64 = (0..=self.read_retry_steps_max)
                .map(|s| 1.0 - cdf(n * self.shift_at_step(rber, s), t - j))
                .product();
            loss += poisson_pmf(lambda_fixed, j) * every_step_fails;
        }
        loss.clamp(0.0, 1.0)
    }

    /// Draws the bit errors of one codeword read at `rber`: `Some(count)` if the ECC
    /// corrects them (count ≤ t), `None` if there are more than t.
    pub fn draw_codeword_errors(&self, rber: f64, rng: &mut SimRng) -> Option<u32> {
        self.draw_errors_up_to(rber, self.correctable_bits, rng)
    }

    /// Draws Poisson(codeword bits × `rber`) errors: `Some(count)` if at most `limit`.
    pub fn draw_errors_up_to(&self, rber: f64, limit: u32, rng: &mut SimRng) -> Option<u32> {
        let lambda = rber * self.codeword_bits() as f64;
        let u = unit_f64(rng);
        let mut cdf = 0.0;
        for k in 0..=limit {
            cdf += poisson_pmf(lambda, k);
            if u < cdf {
                return Some(k);
            }
        }
        None
    }
}

/// A page's raw bit error rate, split by what read-retry can do about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rber {
    /// ε + wear: widened distributions, not recovered by shifting the references.
    pub fixed: f64,
    /// Retention + read disturb: shifted distributions, reduced by each retry step.
    pub shift: f64,
}

impl Rber {
    pub fn total(&self) -> f64 {
        (self.fixed + self.shift).min(0.5)
    }
}

/// P(X = k) for X ~ Poisson(λ), in log space so that a large λ underflows to 0, not NaN.
fn poisson_pmf(lambda: f64, k: u32) -> f64 {
    if lambda <= 0.0 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    let ln_fact: f64 = (2..=k).map(|i| f64::from(i).ln()).sum();
    (-lambda + f64::from(k) * lambda.ln() - ln_fact).exp()
}

/// Uniform in [0, 1) from the run's RNG (53 random bits).
fn unit_f64(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// What the ECC and read-retry did, counted over the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MediaStats {
    /// Codewords decoded that held at least one bit error.
    pub codewords_corrected: u64,
    pub bits_corrected: u64,
    /// Element `s`: reads that went on to retry step `s + 1`.
    pub read_retries_by_step: Vec<u64>,
    /// Page reads (per plane) with a codeword still uncorrectable after the last step.
    pub uncorrectable_page_reads: u64,
    /// Blocks whose error-read count reached `retire_error_reads` (reported to the FTL).
    pub weak_blocks: u64,
}

const NEVER_PROGRAMMED: u64 = u64::MAX;

/// Per-page and per-block state the model needs: when each page was programmed, how often
/// each block was read since its erase, and how many of its reads needed help.
#[derive(Clone)]
pub(crate) struct MediaState {
    pub(crate) cfg: MediaConfig,
    programmed_at_ns: Vec<u64>,
    reads_since_erase: Vec<u64>,
    error_reads: Vec<u32>,
    pub(crate) stats: MediaStats,
}

impl MediaState {
    pub(crate) fn new(cfg: &MediaConfig, blocks: u64, pages: u64) -> Self {
        MediaState {
            cfg: cfg.clone(),
            programmed_at_ns: vec![NEVER_PROGRAMMED; pages as usize],
            reads_since_erase: vec![0; blocks as usize],
            error_reads: vec![0; blocks as usize],
            stats: MediaStats {
                read_retries_by_step: vec![0; cfg.read_retry_steps_max as usize],
                ..MediaStats::default()
            },
        }
    }

    pub(crate) fn on_program(&mut self, page: PageId, now: SimTime) {
        self.programmed_at_ns[page.0 as usize] = now.as_ns();
    }

    pub(crate) fn on_erase(&mut self, block: BlockId, first_page: PageId, pages: u32) {
        let a = first_page.0 as usize;
        self.programmed_at_ns[a..a + pages as usize].fill(NEVER_PROGRAMMED);
        self.reads_since_erase[block.0 as usize] = 0;
    }

    /// One sensing of a page of `block` (a read or a retry step): it disturbs the block.
    pub(crate) fn on_sense(&mut self, block: BlockId) {
        self.reads_since_erase[block.0 as usize] += 1;
    }

    /// The RBER of `page` now, before any retry; `None` for an erased page (not decoded).
    pub(crate) fn page_rber(
        &self,
        block: BlockId,
        page: PageId,
        pe_cycles: u32,
        now: SimTime,
    ) -> Option<Rber> {
        let at = self.programmed_at_ns[page.0 as usize];
        if at == NEVER_PROGRAMMED {
            return None;
        }
        let age_days =
            now.as_ns().saturating_sub(at) as f64 / NS_PER_DAY + self.cfg.retention_offset_days;
        Some(self.cfg.rber(
            pe_cycles,
            age_days,
            self.reads_since_erase[block.0 as usize],
        ))
    }

    /// Records that a read of `block` needed a retry or failed; true when this read makes
    /// the block weak (exactly once per block).
    pub(crate) fn on_error_read(&mut self, block: BlockId) -> bool {
        let n = &mut self.error_reads[block.0 as usize];
        *n = n.saturating_add(1);
        let weak = *n == self.cfg.retire_error_reads;
        self.stats.weak_blocks += u64::from(weak);
        weak
    }

    pub(crate) fn codewords_per_page(&self, page_size_bytes: u32) -> u32 {
        page_size_bytes.div_ceil(self.cfg.codeword_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_validates_and_meets_its_cited_anchor_points() {
        let c = MediaConfig::default();
        c.validate(16384).unwrap();
        // Fresh, worn, old, disturbed: the magnitudes the defaults were sized to.
        assert!((c.rber(0, 0.0, 0).total() - 5e-5).abs() < 1e-12);
        let worn = c.rber(3000, 0.0, 0).fixed - c.rber_floor;
        assert!((worn - 1e-3).abs() < 1e-9, "{worn}");
        let old = c.rber(3000, 365.0, 0).shift;
        assert!((old - 3e-3).abs() < 1e-5, "{old}");
        let disturbed = c.rber(3000, 0.0, 100_000).shift;
        assert!((disturbed - 1e-3).abs() < 1e-9, "{disturbed}");
    }

    #[test]
    fn rber_grows_with_wear_age_and_reads_and_retries_only_undo_the_shifts() {
        let c = MediaConfig::default();
        let base = c.rber(1000, 1.0, 10).total();
        assert!(base < c.rber(2000, 1.0, 10).total());
        assert!(base < c.rber(1000, 30.0, 10).total());
        assert!(base < c.rber(1000, 1.0, 10_000).total());
        let r = c.rber(3000, 365.0, 1000);
        assert_eq!(c.rber_at_step(r, 0), r.total());
        assert!(c.rber_at_step(r, 3) < c.rber_at_step(r, 1));
        assert!(c.rber_at_step(r, 60) >= r.fixed);
    }

    #[test]
    fn bad_fields_are_named_with_their_range() {
        let bad = |f: fn(&mut MediaConfig), field: &str| {
            let mut c = MediaConfig::default();
            f(&mut c);
            let e = c.validate(4096).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        };
        bad(|c| c.rber_floor = f64::NAN, "flash.media.rber_floor");
        bad(
            |c| c.rber_wear_exponent = -1.0,
            "flash.media.rber_wear_exponent",
        );
        bad(|c| c.codeword_bytes = 8, "flash.media.codeword_bytes");
        bad(|c| c.correctable_bits = 0, "flash.media.correctable_bits");
        bad(|c| c.read_retry_steps_max = 1000, "read_retry_steps_max");
        bad(|c| c.read_retry_rber_factor = 0.0, "read_retry_rber_factor");
        bad(|c| c.retire_error_reads = 0, "retire_error_reads");
        bad(|c| c.retention_offset_days = -1.0, "retention_offset_days");
    }

    #[test]
    fn bch_codeword_of_1_kib_with_t_40_stores_560_parity_bits() {
        // 8192 data bits need GF(2^14); 14 × 40 = 560 parity bits.
        assert_eq!(MediaConfig::default().codeword_bits(), 8192 + 560);
    }

    #[test]
    fn sampled_failure_rate_matches_the_poisson_tail() {
        // λ chosen so that P(X > 40) is ~10%: 20,000 draws give a standard error of 0.2%.
        let c = MediaConfig::default();
        let rber = 33.0 / c.codeword_bits() as f64;
        let expected = c.codeword_failure_probability(rber);
        assert!((0.05..0.2).contains(&expected), "{expected}");
        let mut rng = SimRng::seed_from_u64(9);
        let draws = 20_000;
        let mut failed = 0;
        let mut bits = 0u64;
        let mut ok = 0u64;
        for _ in 0..draws {
            match c.draw_codeword_errors(rber, &mut rng) {
                Some(e) => {
                    bits += u64::from(e);
                    ok += 1;
                }
                None => failed += 1,
            }
        }
        let rate = f64::from(failed) / f64::from(draws);
        let sigma = (expected * (1.0 - expected) / f64::from(draws)).sqrt();
        assert!(
            (rate - expected).abs() < 5.0 * sigma,
            "{rate} vs {expected}"
        );
        // The corrected counts are the Poisson truncated at t: mean a little below λ.
        let mean = bits as f64 / ok as f64;
        assert!((29.0..33.0).contains(&mean), "{mean}");
    }

    #[test]
    fn huge_error_rates_fail_every_codeword_without_nan() {
        let c = MediaConfig::default();
        let mut rng = SimRng::seed_from_u64(1);
        assert_eq!(c.codeword_failure_probability(0.5), 1.0);
        assert_eq!(c.draw_codeword_errors(0.5, &mut rng), None);
        assert_eq!(c.draw_codeword_errors(0.0, &mut rng), Some(0));
    }
}
