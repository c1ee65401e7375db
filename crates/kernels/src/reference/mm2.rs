//! 2MM reference: PolyBench/C 4.2.1 `kernel_2mm`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(
    ni: usize,
    nj: usize,
    nk: usize,
    nl: usize,
    alpha: f64,
    beta: f64,
    input: &State,
) -> State {
    let a = f64v(input, "A");
    let b = f64v(input, "B");
    let c = f64v(input, "C");
    let mut d = f64v(input, "D");
    let mut tmp = vec![0.0; ni * nj];
    for i in 0..ni {
        for j in 0..nj {
            tmp[i * nj + j] = 0.0;
            for k in 0..nk {
                tmp[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
            }
        }
    }
    for i in 0..ni {
        for j in 0..nl {
            d[i * nl + j] *= beta;
            for k in 0..nj {
                d[i * nl + j] += tmp[i * nj + k] * c[k * nl + j];
            }
        }
    }
    result(vec![("D", vec![ni, nl], Data::F64(d))])
}
