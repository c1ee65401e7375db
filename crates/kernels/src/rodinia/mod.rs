//! The Rodinia workloads of FlashAbacus §5.6: nn, bfs, nw and pathfinder.

pub mod bfs;
pub mod blosum62;
pub mod nn;
pub mod nw;
pub mod pathfinder;
