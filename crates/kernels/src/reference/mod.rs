//! Independent sequential references: straightforward loops transcribed from PolyBench/C
//! 4.2.1's `kernel_*` functions, Rodinia's and Mars's serial formulations (as WORKLOADS.md
//! states them). They share no compute code with the screen implementations; they read the
//! same generated input and return the live-out arrays.

pub mod adi;
pub mod atax;
pub mod bfs;
pub mod bicg;
pub mod conv2d;
pub mod correlation;
pub mod covariance;
pub mod fdtd2d;
pub mod gemm;
pub mod gesummv;
pub mod mm2;
pub mod mm3;
pub mod mvt;
pub mod nn;
pub mod nw;
pub mod pathfinder;
pub mod syr2k;
pub mod syrk;
pub mod wordcount;

use crate::state::{Data, State};

/// A copy of a double array of the input state.
pub(crate) fn f64v(s: &State, name: &str) -> Vec<f64> {
    match &s
        .get(name)
        .unwrap_or_else(|| panic!("input array {name}"))
        .data
    {
        Data::F64(v) => v.clone(),
        _ => panic!("{name} is not f64"),
    }
}

/// Build a result state from (name, dims, data).
pub(crate) fn result(arrays: Vec<(&str, Vec<usize>, Data)>) -> State {
    let mut s = State::new();
    for (n, d, v) in arrays {
        s.push(n, &d, v);
    }
    s
}
