//! The 14 FlashAbacus Table 2 kernels: PolyBench/C 4.2.1 (plus 2DCONV from PolyBench/GPU).

pub mod atax;
pub mod bicg;
pub mod gemm;
pub mod sizes;
