//! GESUMMV reference: PolyBench/C 4.2.1 `kernel_gesummv`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(n: usize, alpha: f64, beta: f64, input: &State) -> State {
    let a = f64v(input, "A");
    let b = f64v(input, "B");
    let x = f64v(input, "x");
    let mut tmp = vec![0.0; n];
    let mut y = vec![0.0; n];
    for i in 0..n {
        tmp[i] = 0.0;
        y[i] = 0.0;
        for j in 0..n {
            tmp[i] = a[i * n + j] * x[j] + tmp[i];
            y[i] = b[i * n + j] * x[j] + y[i];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
    result(vec![("y", vec![n], Data::F64(y))])
}
