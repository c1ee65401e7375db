//! ATAX reference: PolyBench/C 4.2.1 `kernel_atax`, the fused i-loop.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(m: usize, n: usize, input: &State) -> State {
    let a = f64v(input, "A");
    let x = f64v(input, "x");
    let mut y = vec![0.0; n];
    let mut tmp = vec![0.0; m];
    for i in 0..n {
        y[i] = 0.0;
    }
    for i in 0..m {
        tmp[i] = 0.0;
        for j in 0..n {
            tmp[i] += a[i * n + j] * x[j];
        }
        for j in 0..n {
            y[j] += a[i * n + j] * tmp[i];
        }
    }
    result(vec![("y", vec![n], Data::F64(y))])
}
