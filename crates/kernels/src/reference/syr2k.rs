//! SYR2K reference: PolyBench/C 4.2.1 `kernel_syr2k` (lower triangle).

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(m: usize, n: usize, alpha: f64, beta: f64, input: &State) -> State {
    let a = f64v(input, "A");
    let b = f64v(input, "B");
    let mut c = f64v(input, "C");
    for i in 0..n {
        for j in 0..=i {
            c[i * n + j] *= beta;
        }
        for k in 0..m {
            for j in 0..=i {
                c[i * n + j] +=
                    a[j * m + k] * alpha * b[i * m + k] + b[j * m + k] * alpha * a[i * m + k];
            }
        }
    }
    result(vec![("C", vec![n, n], Data::F64(c))])
}
