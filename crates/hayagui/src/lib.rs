//! Hayagui (seed 003, "Designing a Storage Software Stack for Accelerators", HotStorage'20):
//! an application on an accelerator (an NEC SX-Aurora TSUBASA Vector Engine) reaches its
//! files either through a storage stack inside the accelerator — AccelFS over a direct NVMe
//! engine whose SSD DMAs straight into the accelerator's memory — or, as the baseline, by
//! system calls redirected to the host. Both paths run on one machine model
//! ([`machine::Machine`]: the SSD behind an NVMe front end, the shared file system) and give
//! the program one API ([`files::Ve`]).

pub mod accelfs;
pub mod config;
pub mod dbbench;
pub mod fileops;
pub mod files;
pub mod genome;
pub mod leveldb;
pub mod machine;
pub mod redirect;
pub mod ycsb;

pub use config::HayaguiConfig;
pub use files::{Access, Fd, FileError, OpenMode, Ve};

#[cfg(test)]
mod tests;
