//! The 14 FlashAbacus Table 2 kernels: PolyBench/C 4.2.1, plus 2DCONV from PolyBench/GPU.
//! One file per kernel: dimensions, init formulas, description, screen implementation and
//! cost model; the independent references live in `crate::reference`.

pub mod adi;
pub mod atax;
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
pub mod sizes;
pub mod syr2k;
pub mod syrk;
