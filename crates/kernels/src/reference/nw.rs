//! nw reference: the plain row-major Needleman–Wunsch recurrence, scoring from the two
//! sequences and BLOSUM62 directly (not from the precomputed `reference` matrix).

use super::result;
use crate::rodinia::blosum62::BLOSUM62;
use crate::state::{Data, State};

fn i32v(s: &State, name: &str) -> Vec<i32> {
    match &s.get(name).expect(name).data {
        Data::I32(v) => v.clone(),
        _ => panic!("{name} is not i32"),
    }
}

pub fn run(len: usize, penalty: i32, input: &State) -> State {
    let a = i32v(input, "seq_a");
    let b = i32v(input, "seq_b");
    let w = len + 1;
    let mut h = vec![0i32; w * w];
    for i in 0..w {
        h[i * w] = -(i as i32) * penalty;
    }
    for j in 0..w {
        h[j] = -(j as i32) * penalty;
    }
    for i in 1..w {
        for j in 1..w {
            let m = h[(i - 1) * w + (j - 1)] + BLOSUM62[a[i - 1] as usize][b[j - 1] as usize];
            let del = h[(i - 1) * w + j] - penalty;
            let ins = h[i * w + (j - 1)] - penalty;
            let mut best = m;
            if del > best {
                best = del;
            }
            if ins > best {
                best = ins;
            }
            h[i * w + j] = best;
        }
    }
    result(vec![("score", vec![w, w], Data::I32(h))])
}
