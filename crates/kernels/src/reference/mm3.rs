//! 3MM reference: PolyBench/C 4.2.1 `kernel_3mm`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(ni: usize, nj: usize, nk: usize, nl: usize, nm: usize, input: &State) -> State {
    let a = f64v(input, "A");
    let b = f64v(input, "B");
    let c = f64v(input, "C");
    let d = f64v(input, "D");
    let mut e = vec![0.0; ni * nj];
    let mut f = vec![0.0; nj * nl];
    let mut g = vec![0.0; ni * nl];
    for i in 0..ni {
        for j in 0..nj {
            e[i * nj + j] = 0.0;
            for k in 0..nk {
                e[i * nj + j] += a[i * nk + k] * b[k * nj + j];
            }
        }
    }
    for i in 0..nj {
        for j in 0..nl {
            f[i * nl + j] = 0.0;
            for k in 0..nm {
                f[i * nl + j] += c[i * nm + k] * d[k * nl + j];
            }
        }
    }
    for i in 0..ni {
        for j in 0..nl {
            g[i * nl + j] = 0.0;
            for k in 0..nj {
                g[i * nl + j] += e[i * nj + k] * f[k * nl + j];
            }
        }
    }
    result(vec![("G", vec![ni, nl], Data::F64(g))])
}
