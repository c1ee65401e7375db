//! The replay time scale applied exactly: the `f64` scale as `mantissa * 2^exponent`, so
//! scaling a nanosecond count is integer arithmetic with one rounding at the end.

use crate::TraceError;

/// Relative times at or above 2^71 ns (75 thousand years) cannot be scaled into `u64`
/// nanoseconds by any scale >= 2^-7, and below it the product stays under 2^124.
const RELATIVE_NS_LIMIT: u128 = 1 << 71;

pub struct TimeScale {
    mantissa: u128,
    exponent: i32,
}

impl TimeScale {
    pub fn new(value: f64) -> Result<Self, TraceError> {
        if !(value.is_finite() && value > 0.0) {
            return Err(TraceError::InvalidTimeScale(value));
        }
        let bits = value.to_bits();
        let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = u128::from(bits & ((1 << 52) - 1));
        Ok(if biased_exponent == 0 {
            TimeScale {
                mantissa: fraction,
                exponent: -1074,
            }
        } else {
            TimeScale {
                mantissa: fraction | (1 << 52),
                exponent: biased_exponent - 1075,
            }
        })
    }

    /// `ns * scale`, rounded to the nearest nanosecond (halves round up), or `None` if that
    /// does not fit in `u64`.
    pub fn scaled_ns(&self, ns: u128) -> Option<u64> {
        if ns >= RELATIVE_NS_LIMIT {
            // Only a scale below 2^-7 could bring it back into range; refuse it as overflow
            // rather than lose the exactness of the arithmetic.
            return None;
        }
        // < 2^71 * 2^53 = 2^124: cannot overflow.
        let product = ns * self.mantissa;
        if product == 0 {
            return Some(0);
        }
        let shift = self.exponent.unsigned_abs();
        if self.exponent >= 0 {
            let fits = shift < 64 && product <= u128::from(u64::MAX) >> shift;
            fits.then(|| (product << shift) as u64)
        } else {
            if shift > 124 {
                // product < 2^124 <= 2^(shift - 1): less than half a nanosecond.
                return Some(0);
            }
            let half = 1u128 << (shift - 1);
            u64::try_from((product + half) >> shift).ok()
        }
    }
}
