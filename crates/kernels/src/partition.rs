//! Splitting an index range into screens: even contiguous chunks, or chunks of equal work
//! for triangular loops (row i costs ∝ i+1), so screens of one microblock are balanced.

use crate::error::KernelError;
use std::ops::Range;

/// Screens requested per microblock. The number actually used is min(requested, extent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenPlan {
    pub screens_per_microblock: u32,
}

impl Default for ScreenPlan {
    /// One screen per worker LWP of FlashAbacus: 8 LWPs − Flashvisor − Storengine = 6
    /// (seed 000 §3–§4). A device model may ask for more to feed the out-of-order scheduler.
    fn default() -> Self {
        ScreenPlan {
            screens_per_microblock: 6,
        }
    }
}

impl ScreenPlan {
    pub fn new(screens_per_microblock: u32) -> Self {
        ScreenPlan {
            screens_per_microblock,
        }
    }

    /// Screens for a parallel loop of `extent` iterations; zero is an error.
    pub fn screens(&self, kernel: &str, phase: &str, extent: usize) -> Result<u32, KernelError> {
        if self.screens_per_microblock == 0 {
            return Err(KernelError::ZeroScreens {
                kernel: kernel.into(),
                phase: phase.into(),
                reason: "the screen plan asks for 0 screens per microblock".into(),
            });
        }
        if extent == 0 {
            return Err(KernelError::ZeroScreens {
                kernel: kernel.into(),
                phase: phase.into(),
                reason: "its parallel loop has 0 iterations at these dimensions".into(),
            });
        }
        Ok(self
            .screens_per_microblock
            .min(extent.min(u32::MAX as usize) as u32))
    }
}

/// Screen `s` of `screens` over `0..extent`, contiguous and as even as possible.
pub fn even(extent: usize, screens: u32, s: u32) -> Range<usize> {
    let n = screens as usize;
    let s = s as usize;
    (s * extent / n)..((s + 1) * extent / n)
}

/// Screen `s` of `screens` over rows `0..extent` where row i costs i+1 (lower triangle):
/// boundaries at equal shares of the total work Σ(i+1) = extent(extent+1)/2.
pub fn triangular(extent: usize, screens: u32, s: u32) -> Range<usize> {
    let bound = |k: usize| -> usize {
        if k == 0 {
            return 0;
        }
        if k == screens as usize {
            return extent;
        }
        let total = (extent as u128) * (extent as u128 + 1) / 2;
        let target = total * k as u128 / screens as u128;
        // smallest r with r(r+1)/2 >= target
        let (mut lo, mut hi) = (0usize, extent);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if (mid as u128) * (mid as u128 + 1) / 2 >= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    };
    bound(s as usize)..bound(s as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn even_and_triangular_cover_exactly(extent in 1usize..5000, req in 1u32..64) {
            let screens = ScreenPlan::new(req).screens("k", "p", extent).unwrap();
            for split in [even as fn(usize, u32, u32) -> Range<usize>, triangular] {
                let mut next = 0;
                for s in 0..screens {
                    let r = split(extent, screens, s);
                    prop_assert_eq!(r.start, next);
                    prop_assert!(r.end >= r.start);
                    next = r.end;
                }
                prop_assert_eq!(next, extent);
            }
        }
    }

    #[test]
    fn zero_screens_is_an_error() {
        assert!(matches!(
            ScreenPlan::new(0).screens("atax", "tmp", 10),
            Err(KernelError::ZeroScreens { .. })
        ));
        let e = ScreenPlan::new(4).screens("fdtd-2d", "hz", 0).unwrap_err();
        assert!(e.to_string().contains("zero screens"), "{e}");
    }
}
