//! CORRELATION reference: PolyBench/C 4.2.1 `kernel_correlation`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(m: usize, n: usize, eps: f64, input: &State) -> State {
    let float_n = n as f64;
    let mut data = f64v(input, "data");
    let mut mean = vec![0.0; m];
    let mut stddev = vec![0.0; m];
    let mut corr = vec![0.0; m * m];
    for j in 0..m {
        mean[j] = 0.0;
        for i in 0..n {
            mean[j] += data[i * m + j];
        }
        mean[j] /= float_n;
    }
    for j in 0..m {
        stddev[j] = 0.0;
        for i in 0..n {
            stddev[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
        }
        stddev[j] /= float_n;
        stddev[j] = stddev[j].sqrt();
        stddev[j] = if stddev[j] <= eps { 1.0 } else { stddev[j] };
    }
    for i in 0..n {
        for j in 0..m {
            data[i * m + j] -= mean[j];
            data[i * m + j] /= float_n.sqrt() * stddev[j];
        }
    }
    for i in 0..m.saturating_sub(1) {
        corr[i * m + i] = 1.0;
        for j in i + 1..m {
            corr[i * m + j] = 0.0;
            for k in 0..n {
                corr[i * m + j] += data[k * m + i] * data[k * m + j];
            }
            corr[j * m + i] = corr[i * m + j];
        }
    }
    corr[(m - 1) * m + (m - 1)] = 1.0;
    result(vec![
        ("corr", vec![m, m], Data::F64(corr)),
        ("mean", vec![m], Data::F64(mean)),
        ("stddev", vec![m], Data::F64(stddev)),
    ])
}
