//! The FIFO server lives in `nearflash-sim` (shared with the INSIDER drive model); re-exported
//! here so the accelerator's modules keep their paths.

pub use nearflash_sim::server::{transfer, FifoServer};
