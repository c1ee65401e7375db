//! 2DCONV reference: PolyBench/GPU 1.0 `conv2D` CPU loop, in float.

use super::result;
use crate::state::{Data, State};

pub fn run(n: usize, input: &State) -> State {
    let a = match &input.get("A").expect("A").data {
        Data::F32(v) => v.clone(),
        _ => panic!("A is not f32"),
    };
    let (c11, c21, c31) = (0.2f32, 0.5f32, -0.8f32);
    let (c12, c22, c32) = (-0.3f32, 0.6f32, -0.9f32);
    let (c13, c23, c33) = (0.4f32, 0.7f32, 0.10f32);
    let mut b = vec![0.0f32; n * n];
    for i in 1..n - 1 {
        for j in 1..n - 1 {
            b[i * n + j] = c11 * a[(i - 1) * n + (j - 1)]
                + c12 * a[i * n + (j - 1)]
                + c13 * a[(i + 1) * n + (j - 1)]
                + c21 * a[(i - 1) * n + j]
                + c22 * a[i * n + j]
                + c23 * a[(i + 1) * n + j]
                + c31 * a[(i - 1) * n + (j + 1)]
                + c32 * a[i * n + (j + 1)]
                + c33 * a[(i + 1) * n + (j + 1)];
        }
    }
    result(vec![("B", vec![n, n], Data::F32(b))])
}
