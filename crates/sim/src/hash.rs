//! The trace hash: a digest folded over every processed event, so two runs that processed the
//! same events at the same times in the same order share a hash. It works a 64-bit word at a
//! time (FNV-1a's xor-multiply on whole words, then a xor-shift so high bits reach low ones):
//! one multiply per word instead of eight keeps it off the simulator's hot path. It detects
//! divergence; it is not a cryptographic hash.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

#[derive(Clone, Debug)]
pub struct TraceHasher {
    state: u64,
}

impl Default for TraceHasher {
    fn default() -> Self {
        TraceHasher { state: FNV_OFFSET }
    }
}

impl TraceHasher {
    /// Folds one 64-bit word (time, event code, address...) into the digest.
    #[inline]
    pub fn word(&mut self, w: u64) {
        let s = (self.state ^ w).wrapping_mul(FNV_PRIME);
        self.state = s ^ (s >> 29);
    }

    pub fn finish(&self) -> u64 {
        self.state
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matters() {
        let mut a = TraceHasher::default();
        a.word(1);
        a.word(2);
        let mut b = TraceHasher::default();
        b.word(2);
        b.word(1);
        assert_ne!(a.finish(), b.finish());
        assert_eq!(a.hex().len(), 16);
    }

    #[test]
    fn every_bit_of_a_word_matters() {
        let mut base = TraceHasher::default();
        base.word(0x1234_5678_9abc_def0);
        for bit in 0..64 {
            let mut h = TraceHasher::default();
            h.word(0x1234_5678_9abc_def0 ^ (1 << bit));
            assert_ne!(h.finish(), base.finish(), "bit {bit}");
        }
    }
}
