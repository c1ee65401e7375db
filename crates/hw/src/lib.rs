//! nearflash-hw: the hardware resources every machine is built from, written once.
//!
//! `link` (PCIe links: generation × lanes, TLP overhead, full duplex) and `server` (a FIFO server: one contended piece of hardware with a busy-until time) →
//! `dram` (a DRAM port: a FIFO server at a bandwidth) → `compute` (compute engines and the
//! one instruction → time cost model: cores run instructions × CPI ÷ clock, time-shared or
//! preemptive; FPGA-like slots stream bytes per cycle × clock) → `series` (busy time in bins
//! of simulated time) → `energy` (active power × busy + idle power × the rest, per
//! component, and power over time).
//!
//! Sans-IO and deterministic like the rest of the core: a resource is handed `now` and
//! answers with the time its work ends; the caller schedules the completion event.

pub mod compute;
pub mod dram;
pub mod energy;
pub mod link;
pub mod series;
pub mod server;

pub use compute::{CoreSpec, PreemptiveCore, SlotSpec, TimeSharedCores};
pub use dram::DramPort;
pub use energy::{Category, EnergyMeter, EnergyReport};
pub use series::TimeBins;
pub use server::{transfer, FifoServer};
