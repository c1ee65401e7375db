//! GEMM reference: PolyBench/C 4.2.1 `kernel_gemm` (i, k, j loop order).

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(ni: usize, nj: usize, nk: usize, alpha: f64, beta: f64, input: &State) -> State {
    let a = f64v(input, "A");
    let b = f64v(input, "B");
    let mut c = f64v(input, "C");
    for i in 0..ni {
        for j in 0..nj {
            c[i * nj + j] *= beta;
        }
        for k in 0..nk {
            for j in 0..nj {
                c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
            }
        }
    }
    result(vec![("C", vec![ni, nj], Data::F64(c))])
}
