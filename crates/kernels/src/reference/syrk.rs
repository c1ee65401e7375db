//! SYRK reference: PolyBench/C 4.2.1 `kernel_syrk` (lower triangle).

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(m: usize, n: usize, alpha: f64, beta: f64, input: &State) -> State {
    let a = f64v(input, "A");
    let mut c = f64v(input, "C");
    for i in 0..n {
        for j in 0..=i {
            c[i * n + j] *= beta;
        }
        for k in 0..m {
            for j in 0..=i {
                c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
            }
        }
    }
    result(vec![("C", vec![n, n], Data::F64(c))])
}
