//! Comparing a run's live-out arrays with the reference's (WORKLOADS.md §1):
//! |x − r| ≤ tol·max(1, |r|), tol = 1e-8 for double, 1e-4 for float, 0 for integers.
//! The first mismatch is returned as a typed error naming array, index, got and expected.

use crate::desc::KernelDesc;
use crate::error::KernelError;
use crate::state::State;

pub fn verify(desc: &KernelDesc, got: &State, expected: &State) -> Result<(), KernelError> {
    for name in &desc.live_out {
        let missing = |side| KernelError::MissingArray {
            kernel: desc.name.into(),
            array: name.to_string(),
            side,
        };
        let g = got.get(name).ok_or_else(|| missing("run"))?;
        let r = expected.get(name).ok_or_else(|| missing("reference"))?;
        if g.data.len() != r.data.len() {
            return Err(KernelError::ShapeMismatch {
                kernel: desc.name.into(),
                array: name.to_string(),
                got: g.data.len(),
                expected: r.data.len(),
            });
        }
        let tol = r.data.tolerance();
        for i in 0..r.data.len() {
            let (x, e) = (g.data.get_f64(i), r.data.get_f64(i));
            let allowed = tol * e.abs().max(1.0);
            let bad = if x.is_nan() || e.is_nan() {
                x.is_nan() != e.is_nan()
            } else {
                (x - e).abs() > allowed
            };
            if bad {
                return Err(KernelError::Mismatch {
                    kernel: desc.name.into(),
                    array: name.to_string(),
                    index: i,
                    got: x,
                    expected: e,
                    allowed,
                });
            }
        }
    }
    Ok(())
}
