//! LevelDB's `db_bench` (the faithful port in `nearflash-kvbench`) run by a real LevelDB on
//! the VE over either access path: the benchmark's clock is simulated time, LevelDB's compute
//! is charged on a VE core, its files go through [`crate::leveldb::SimEnv`].

use crate::config::LevelDbCostConfig;
use crate::files::{Access, PathStats, Ve};
use crate::leveldb::{SimEnv, VeClock, VeHook};
use nearflash_kvbench::{DbBenchConfig, DbBenchReport, KvBenchError};
use serde::Serialize;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum DbBenchError {
    #[error(transparent)]
    Bench(#[from] KvBenchError),
    #[error(
        "{count} buffered write(s) failed where LevelDB could not be told; the first: {first}"
    )]
    Lost { count: u64, first: String },
}

/// One db_bench run on one path, with what the machine did.
#[derive(Clone, Debug, Serialize)]
pub struct DbBenchRun {
    pub access: Access,
    pub report: DbBenchReport,
    /// Simulated time of the whole run, ns.
    pub sim_ns: u64,
    /// Of which LevelDB's own compute, ns.
    pub compute_ns: u64,
    pub path: PathStats,
    pub nvme_commands: u64,
    pub ssd_flushes: u64,
    pub events: u64,
    pub trace_hash: String,
}

/// Runs `cfg` on `ve` with the database at `db`; gives the VE back (an image's device is
/// inside it).
pub fn run(
    ve: Ve,
    cfg: &DbBenchConfig,
    db: &str,
    cost: &LevelDbCostConfig,
) -> (Result<DbBenchRun, DbBenchError>, Ve) {
    let start = ve.now();
    let nvme0 = ve.nvme_stats();
    let compute0 = ve.compute_ns();
    let access = ve.access();
    let shared = Rc::new(RefCell::new(ve));
    let env = SimEnv::new(shared.clone(), cost.clone());
    let failures = env.failures();
    let options = rusty_leveldb::Options {
        env: Rc::new(Box::new(env)),
        ..rusty_leveldb::Options::default()
    };
    let clock = VeClock(shared.clone());
    let mut hook = VeHook {
        ve: shared.clone(),
        cost: cost.clone(),
    };
    let result = nearflash_kvbench::run_db_bench(cfg, options, Path::new(db), &clock, &mut hook);
    drop(hook);
    drop(clock);
    let ve = Rc::try_unwrap(shared)
        .ok()
        .expect("the database and its Env are gone")
        .into_inner();
    let f = failures.borrow().clone();
    let report = match result {
        Err(e) => return (Err(e.into()), ve),
        Ok(_) if f.count > 0 => {
            let lost = DbBenchError::Lost {
                count: f.count,
                first: f.first.unwrap_or_default(),
            };
            return (Err(lost), ve);
        }
        Ok(r) => r,
    };
    let nvme = ve.nvme_stats();
    let run = DbBenchRun {
        access,
        report,
        sim_ns: ve.now().as_ns() - start.as_ns(),
        compute_ns: ve.compute_ns() - compute0,
        path: ve.path_stats(),
        nvme_commands: nvme.commands - nvme0.commands,
        ssd_flushes: nvme.flushes - nvme0.flushes,
        events: ve.events(),
        trace_hash: ve.trace_hash(),
    };
    (Ok(run), ve)
}
