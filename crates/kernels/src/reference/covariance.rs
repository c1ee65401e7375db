//! COVARIANCE reference: PolyBench/C 4.2.1 `kernel_covariance`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(m: usize, n: usize, input: &State) -> State {
    let float_n = n as f64;
    let mut data = f64v(input, "data");
    let mut mean = vec![0.0; m];
    let mut cov = vec![0.0; m * m];
    for j in 0..m {
        mean[j] = 0.0;
        for i in 0..n {
            mean[j] += data[i * m + j];
        }
        mean[j] /= float_n;
    }
    for i in 0..n {
        for j in 0..m {
            data[i * m + j] -= mean[j];
        }
    }
    for i in 0..m {
        for j in i..m {
            cov[i * m + j] = 0.0;
            for k in 0..n {
                cov[i * m + j] += data[k * m + i] * data[k * m + j];
            }
            cov[i * m + j] /= float_n - 1.0;
            cov[j * m + i] = cov[i * m + j];
        }
    }
    result(vec![("cov", vec![m, m], Data::F64(cov))])
}
