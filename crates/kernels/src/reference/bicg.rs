//! BiCG reference: PolyBench/C 4.2.1 `kernel_bicg`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(m: usize, n: usize, input: &State) -> State {
    let a = f64v(input, "A");
    let p = f64v(input, "p");
    let r = f64v(input, "r");
    let mut s = vec![0.0; m];
    let mut q = vec![0.0; n];
    for i in 0..n {
        q[i] = 0.0;
        for j in 0..m {
            s[j] += r[i] * a[i * m + j];
            q[i] += a[i * m + j] * p[j];
        }
    }
    result(vec![
        ("s", vec![m], Data::F64(s)),
        ("q", vec![n], Data::F64(q)),
    ])
}
