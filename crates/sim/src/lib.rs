//! The deterministic simulation core: virtual time, the event queue, the one seeded RNG,
//! latency statistics, the trace hash, hash maps for the model's integer keys and lazily
//! allocated per-page tables.
//!
//! Nothing here reads a wall clock, spawns a thread or touches a file: the driver owns the
//! clock and hands `now` to components, which answer with the events they want scheduled. A
//! caller may ask for a run to be interrupted (`interrupt`): the check it gives decides.

pub mod driver;
pub mod fidelity;
pub mod hash;
pub mod histogram;
pub mod interrupt;
pub mod keymap;
pub mod lazy_table;
pub mod queue;
pub mod rng;
pub mod run;
pub mod sched;
pub mod time;

pub use driver::Driver;
pub use fidelity::{Fidelity, UnknownFidelity};
pub use hash::TraceHasher;
pub use histogram::LatencyHistogram;
pub use keymap::{KeyHasher, KeyMap};
pub use lazy_table::LazyTable;
pub use queue::EventQueue;
pub use rng::SimRng;
pub use run::{Model, Progress, Sim, Stall, StallReason, TraceEvent, Watchdog, STALL_LIMIT};
pub use sched::{Mapped, Schedule};
pub use time::{SimDuration, SimTime};
