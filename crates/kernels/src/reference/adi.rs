//! ADI reference: PolyBench/C 4.2.1 `kernel_adi`, with its own coefficient computation.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(tsteps: usize, n: usize, input: &State) -> State {
    let mut u = f64v(input, "u");
    let mut v = vec![0.0; n * n];
    let mut p = vec![0.0; n * n];
    let mut q = vec![0.0; n * n];
    let dx = 1.0 / n as f64;
    let dy = 1.0 / n as f64;
    let dt = 1.0 / tsteps as f64;
    let b1 = 2.0;
    let b2 = 1.0;
    let mul1 = b1 * dt / (dx * dx);
    let mul2 = b2 * dt / (dy * dy);
    let a = -mul1 / 2.0;
    let b = 1.0 + mul1;
    let c = a;
    let d = -mul2 / 2.0;
    let e = 1.0 + mul2;
    let f = d;
    let ix = |i: usize, j: usize| i * n + j;
    for _t in 1..=tsteps {
        // Column sweep
        for i in 1..n - 1 {
            v[ix(0, i)] = 1.0;
            p[ix(i, 0)] = 0.0;
            q[ix(i, 0)] = v[ix(0, i)];
            for j in 1..n - 1 {
                p[ix(i, j)] = -c / (a * p[ix(i, j - 1)] + b);
                q[ix(i, j)] = (-d * u[ix(j, i - 1)] + (1.0 + 2.0 * d) * u[ix(j, i)]
                    - f * u[ix(j, i + 1)]
                    - a * q[ix(i, j - 1)])
                    / (a * p[ix(i, j - 1)] + b);
            }
            v[ix(n - 1, i)] = 1.0;
            for j in (1..n - 1).rev() {
                v[ix(j, i)] = p[ix(i, j)] * v[ix(j + 1, i)] + q[ix(i, j)];
            }
        }
        // Row sweep
        for i in 1..n - 1 {
            u[ix(i, 0)] = 1.0;
            p[ix(i, 0)] = 0.0;
            q[ix(i, 0)] = u[ix(i, 0)];
            for j in 1..n - 1 {
                p[ix(i, j)] = -f / (d * p[ix(i, j - 1)] + e);
                q[ix(i, j)] = (-a * v[ix(i - 1, j)] + (1.0 + 2.0 * a) * v[ix(i, j)]
                    - c * v[ix(i + 1, j)]
                    - d * q[ix(i, j - 1)])
                    / (d * p[ix(i, j - 1)] + e);
            }
            u[ix(i, n - 1)] = 1.0;
            for j in (1..n - 1).rev() {
                u[ix(i, j)] = p[ix(i, j)] * u[ix(i, j + 1)] + q[ix(i, j)];
            }
        }
    }
    result(vec![("u", vec![n, n], Data::F64(u))])
}
