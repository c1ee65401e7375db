//! MVT reference: PolyBench/C 4.2.1 `kernel_mvt`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(n: usize, input: &State) -> State {
    let a = f64v(input, "A");
    let y1 = f64v(input, "y_1");
    let y2 = f64v(input, "y_2");
    let mut x1 = f64v(input, "x1");
    let mut x2 = f64v(input, "x2");
    for i in 0..n {
        for j in 0..n {
            x1[i] = x1[i] + a[i * n + j] * y1[j];
        }
    }
    for i in 0..n {
        for j in 0..n {
            x2[i] = x2[i] + a[j * n + i] * y2[j];
        }
    }
    result(vec![
        ("x1", vec![n], Data::F64(x1)),
        ("x2", vec![n], Data::F64(x2)),
    ])
}
