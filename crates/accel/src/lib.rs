//! nearflash-accel: the FlashAbacus accelerator (seed 000, EuroSys'18) as a deterministic,
//! sans-IO model. Eight light-weight processors (LWPs) sit next to the flash backbone: LWP0
//! runs Flashvisor (address translation, range locks, kernel scheduling), LWP1 Storengine
//! (GC, journaling — done by the `nearflash-ftl` device in the background), LWP2..7 are
//! workers. The host downloads kernel descriptions over PCIe and raises an interrupt; from
//! then on Flashvisor maps each kernel's data sections under range locks and schedules its
//! microblocks and screens on the workers with one of the four schedulers of §4.1–4.2.
//!
//! Layers: `config` (Table 1; `cost_model`: counted or Table 2–calibrated instructions; FIFO servers, energy meters and time bins come from
//! `nearflash-hw`) → `chain` (multi-app execution
//! chain, the dependency rule) → `sched` (the four policies) → `timeline` (abstract
//! unit-time executor for the paper's examples) / `plan` (per-unit cost and page-group
//! footprint) → `layout` (sections in logical space) → `machine` (the event-driven device
//! over the FTL; `functional` moves and verifies real data in functional fidelity) →
//! `workload` (homogeneous and MX1–MX14 sets) → `run` → `report`.
//! The conventional baseline: `simd` (the LWPs under `openmp`, PCIe, and `ssd`: the shared
//! host model `nearflash-host` over the NVMe front end `nearflash-nvme` over the FTL
//! device). `energy`: power × busy/idle time, Fig. 13 groups.

pub mod chain;
pub mod config;
pub mod cost_model;
pub mod ddr_cache;
pub mod error;
pub mod functional;
pub mod host_pages;
pub mod layout;
pub mod machine;
pub mod openmp;
pub mod plan;
pub mod preload;
pub mod report;
pub mod run;
pub mod sched;
pub mod simd;
pub mod ssd;
pub mod timeline;
pub mod workload;

// The shared hardware resources, under the paths this crate has always used.
pub use nearflash_hw::{energy, series, server};

pub use chain::{Chain, Shape, Unit};
pub use config::AccelConfig;
pub use cost_model::{CostModel, CostSource};
pub use error::AccelError;
pub use functional::{Fault, InstanceCheck};
pub use machine::Preconditioned;
pub use nearflash_host::{HostConfig, PageCacheConfig};
pub use nearflash_nvme::NvmeConfig;
pub use report::RunReport;
pub use run::{
    precondition, run_workload, run_workload_from, run_workload_functional, verified, Fidelity,
    FunctionalRun, RunSpec, FUNCTIONAL_MAX_BYTES_DEFAULT,
};
pub use sched::{Scheduler, SchedulerKind};
pub use simd::{run_simd, run_simd_checked, run_simd_functional, SimdSpec};
