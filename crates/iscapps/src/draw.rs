//! Fast, seeded draws for the generators: the run's one `SimRng`, cut into 32-bit halves.
//!
//! `below(n)` maps a 32-bit draw `x` to `(x · n) >> 32` (Lemire's multiply-shift without
//! the rejection step). Its bias is below n / 2³² (< 10⁻⁸ for every alphabet here), far
//! under anything a verification or a ratio could see, and it keeps generation at about a
//! nanosecond per symbol so hundreds of MiB take well under a second per 100 MiB.

use nearflash_sim::SimRng;

pub struct Draw {
    rng: SimRng,
    spare: Option<u32>,
}

impl Draw {
    pub fn new(seed: u64) -> Draw {
        Draw {
            rng: SimRng::seed_from_u64(seed),
            spare: None,
        }
    }

    /// A uniform 32-bit word.
    pub fn word(&mut self) -> u32 {
        if let Some(w) = self.spare.take() {
            return w;
        }
        let v = self.rng.next_u64();
        self.spare = Some((v >> 32) as u32);
        v as u32
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        assert!(n > 0, "empty range");
        ((u64::from(self.word()) * u64::from(n)) >> 32) as u32
    }

    /// Fills `buf` with symbols drawn uniformly from `alphabet`.
    pub fn fill_from(&mut self, buf: &mut [u8], alphabet: &[u8]) {
        let n = u32::try_from(alphabet.len()).expect("alphabet fits in u32");
        for b in buf.iter_mut() {
            *b = alphabet[self.below(n) as usize];
        }
    }

    /// Fills `buf` with uniform bytes.
    pub fn fill_bytes(&mut self, buf: &mut [u8]) {
        self.rng.fill_bytes(buf);
    }
}

/// `A`–`D`: grep's and SQL's name alphabet.
pub const ABCD: &[u8] = b"ABCD";
/// `A`–`Z`: integration's alphabet.
pub const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// `0`–`9`.
pub const DIGITS: &[u8] = b"0123456789";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_symbols_and_every_symbol_appears() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        Draw::new(3).fill_from(&mut a, UPPER);
        Draw::new(3).fill_from(&mut b, UPPER);
        assert_eq!(a, b);
        for c in UPPER {
            assert!(a.contains(c));
        }
    }
}
