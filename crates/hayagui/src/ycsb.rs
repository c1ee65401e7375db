//! YCSB's core workloads (the port in `nearflash-kvbench`) against a real LevelDB on the VE
//! over either path: a load phase then a run phase, throughput and latency percentiles in
//! simulated time; in check mode every read and scan is compared with an in-memory model of
//! what was written.

use crate::config::LevelDbCostConfig;
use crate::files::{Access, PathStats, Ve};
use crate::leveldb::{SimEnv, VeClock, VeHook};
use nearflash_kvbench::{KvBenchError, PhaseReport, Ycsb, YcsbConfig};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;

/// A YCSB run on one path.
#[derive(Clone, Debug, Serialize)]
pub struct YcsbRun {
    pub access: Access,
    pub workload: String,
    pub load: PhaseReport,
    pub run: PhaseReport,
    pub path: PathStats,
    pub nvme_commands: u64,
    pub events: u64,
    pub trace_hash: String,
}

/// Loads and runs `cfg` (YCSB's workload `workload`, a letter a–f) on `ve` with the
/// database at `db`.
pub fn run(
    ve: Ve,
    workload: &str,
    cfg: YcsbConfig,
    db: &str,
    cost: &LevelDbCostConfig,
) -> (Result<YcsbRun, KvBenchError>, Ve) {
    let access = ve.access();
    let nvme0 = ve.nvme_stats().commands;
    let workload = workload.to_string();
    let shared = Rc::new(RefCell::new(ve));
    let result = (|| {
        let options = rusty_leveldb::Options {
            env: Rc::new(Box::new(SimEnv::new(shared.clone(), cost.clone()))),
            create_if_missing: true,
            ..rusty_leveldb::Options::default()
        };
        let mut db = rusty_leveldb::DB::open(db, options).map_err(|source| KvBenchError::Db {
            context: "open",
            source,
        })?;
        let clock = VeClock(shared.clone());
        let mut hook = VeHook {
            ve: shared.clone(),
            cost: cost.clone(),
        };
        let mut y = Ycsb::new(cfg)?;
        let load = y.load(&mut db, &clock, &mut hook)?;
        let run = y.run(&mut db, &clock, &mut hook)?;
        db.close().map_err(|source| KvBenchError::Db {
            context: "close",
            source,
        })?;
        Ok((load, run))
    })();
    let ve = Rc::try_unwrap(shared)
        .ok()
        .expect("the database and its Env are gone")
        .into_inner();
    let out = result.map(|(load, run)| YcsbRun {
        access,
        workload,
        load,
        run,
        path: ve.path_stats(),
        nvme_commands: ve.nvme_stats().commands - nvme0,
        events: ve.events(),
        trace_hash: ve.trace_hash(),
    });
    (out, ve)
}
