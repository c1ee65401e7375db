//! NVMe computational storage, the standard way: the Computational Programs (CSI 4) and
//! Subsystem Local Memory (CSI 3) command sets as a layer over the NVMe front end and the
//! modelled drive (docs/cs.md).
//!
//! * `opcodes` — the one table of opcodes, program types and status codes, with sources;
//! * `config` — `[cs]`: engines, SLM, the Identify limits;
//! * `program` — program slots: chunked load, activation (MAXACT), execution;
//! * `ebpf` — eBPF objects and the budgeted, bounds-checked machine;
//! * `rangeset` — memory range sets and reachability;
//! * `device` — the model: every command as events on the one queue;
//! * `session` — a driver issuing commands one by one under the watchdog;
//! * `port` — a drive whose namespace another loop serves (live mode's image);
//! * `sequence` — `cs run`'s offload and its host-only comparison;
//! * `script` — a TOML list of commands run one by one (`cs script`).

pub mod config;
pub mod device;
pub mod ebpf;
pub mod error;
pub mod opcodes;
pub mod port;
pub mod program;
pub mod rangeset;
pub mod script;
pub mod sequence;
pub mod session;

pub use config::{CsConfig, EngineConfig, EngineKind};
pub use error::CommandError;
pub use opcodes::{ProgramType, Status};
