//! Key-value benchmarks over rusty-leveldb 4.0.2, pure and deterministic: LevelDB's `db_bench`
//! (`dbbench`) and YCSB's core workloads A–F (`ycsb`). The caller supplies the `Env` (in
//! `rusty_leveldb::Options::env`), the clock (`BenchClock`) and a hook around every database
//! operation (`OpHook`); this crate reads no clock, spawns no thread, does no file I/O and uses
//! no OS randomness of its own. rusty-leveldb's iterator read sampling does use OS-seeded
//! randomness (`db_iter.rs::random_period`); `tests/env_trace.rs` checks that the Env traffic
//! still repeats run to run on iterator-heavy workloads.
//!
//! Plugging in: build `Options { env: Rc::new(Box::new(your_env)), ..Options::default() }`
//! (or `rusty_leveldb::in_memory()` in tests), then
//! - `run_db_bench(&DbBenchConfig::upstream(), options, Path::new("/db"), &clock, &mut hook)`;
//! - `let mut y = Ycsb::new(YcsbConfig::new(CoreWorkload::a(), seed))?;` then
//!   `y.load(&mut db, &clock, &mut hook)?` and `y.run(&mut db, &clock, &mut hook)?` over a `DB`
//!   you opened with those options.

#![deny(missing_docs)]

pub mod dbbench;
pub mod drive;
pub mod error;
pub mod histogram;
pub mod random;
pub mod valuegen;
pub mod ycsb;

pub use dbbench::{
    run_db_bench, BenchResult, Benchmark, DbBench, DbBenchConfig, DbBenchReport, SeedScheme,
};
pub use drive::{BenchClock, CounterClock, CountingHook, DbOp, NoHook, OpHook};
pub use error::KvBenchError;
pub use histogram::{LatencyHistogram, LatencySummary};
pub use random::LevelDbRandom;
pub use valuegen::RandomGenerator;
pub use ycsb::workload::{CoreWorkload, InsertOrder, RequestDistribution, YcsbConfig};
pub use ycsb::{build_key_name, CheckReport, OpReport, PhaseReport, Transaction, Ycsb, YcsbOp};
