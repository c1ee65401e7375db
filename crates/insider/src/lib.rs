//! nearflash-insider: INSIDER (seed 001, ATC'19) — in-storage computing behind virtual files.
//!
//! Layers, top to bottom: `runtime` (the host-side runtime: the device file system's host
//! operations, the virtual-file API of Table 2 with its protection checks, host compute) →
//! `machine` (the drive, its PCIe link and the host's file I/O as one event loop) → `isc`
//! (multiplexer, Slots Index FIFO, dispatcher, credits) / `engine` (FPGA-like slots,
//! time-shared cores) / `stream` (one open virtual file on both sides of the bus) →
//! `backing` (the flash device through the FTL, or DRAM-emulated storage). The host's
//! ordinary file I/O is the shared host model (`nearflash-host`), a component of `machine`
//! over the drive's firmware path (`hostport`). `devfs` is the drive's file system
//! (`nearflash-fs` on the drive, driven over the firmware path); `config` the `[insider]`
//! preset table.

pub mod app;
pub mod backing;
pub mod config;
pub mod devfs;
pub mod driveport;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod fairness;
pub mod functional;
pub mod hostport;
pub mod isc;
pub mod machine;
pub mod probe;
pub mod runtime;
pub mod stream;

pub use config::{Backing as BackingKind, EngineKind, InsiderConfig};
pub use error::InsiderError;
