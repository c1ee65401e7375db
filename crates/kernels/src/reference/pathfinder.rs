//! pathfinder reference: Rodinia's OpenMP row loop with two swapped row buffers.

use super::result;
use crate::state::{Data, State};

pub fn run(cols: usize, rows: usize, input: &State) -> State {
    let wall = match &input.get("wall").expect("wall").data {
        Data::I32(v) => v.clone(),
        _ => panic!("wall is not i32"),
    };
    let mut src = vec![0i32; cols];
    let mut dst: Vec<i32> = wall[..cols].to_vec();
    for t in 0..rows - 1 {
        std::mem::swap(&mut src, &mut dst);
        for n in 0..cols {
            let mut m = src[n];
            if n > 0 {
                m = m.min(src[n - 1]);
            }
            if n < cols - 1 {
                m = m.min(src[n + 1]);
            }
            dst[n] = wall[(t + 1) * cols + n] + m;
        }
    }
    result(vec![("result", vec![cols], Data::I32(dst))])
}
