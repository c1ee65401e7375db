//! YCSB core workloads over rusty-leveldb's in-memory Env: the checker finds no mismatch,
//! the same seed gives the same operations and figures, zipfian requests are skewed.

use nearflash_kvbench::{
    build_key_name, CoreWorkload, CounterClock, CountingHook, InsertOrder, PhaseReport,
    Transaction, Ycsb, YcsbConfig, YcsbOp,
};
use std::collections::HashMap;

fn config(workload: CoreWorkload, seed: u64, records: i64, ops: i64) -> YcsbConfig {
    YcsbConfig {
        record_count: records,
        operation_count: ops,
        check: true,
        ..YcsbConfig::new(workload, seed)
    }
}

/// Load then run over a fresh in-memory database; returns both phases and the hook's counts.
fn load_and_run(cfg: YcsbConfig) -> (PhaseReport, PhaseReport, CountingHook) {
    let mut db = rusty_leveldb::DB::open("/ycsb", rusty_leveldb::in_memory()).unwrap();
    let clock = CounterClock::new(1.0);
    let mut hook = CountingHook::default();
    let mut y = Ycsb::new(cfg).unwrap();
    let load = y.load(&mut db, &clock, &mut hook).unwrap();
    let run = y.run(&mut db, &clock, &mut hook).unwrap();
    (load, run, hook)
}

fn count(r: &PhaseReport, op: YcsbOp) -> u64 {
    r.per_op.iter().find(|o| o.op == op).map_or(0, |o| o.count)
}

#[test]
fn workload_a_over_mem_env_reads_back_everything_it_wrote() {
    // 20,000 records of ~1 KiB overflow the 4 MiB memtable several times, so reads go to tables.
    let (load, run, _) = load_and_run(config(CoreWorkload::a(), 42, 20_000, 20_000));
    assert_eq!(load.operations, 20_000);
    assert_eq!(count(&load, YcsbOp::Insert), 20_000);
    let check = run.check.clone().unwrap();
    assert_eq!(check.mismatches, 0, "{:?}", check.first_mismatch);
    assert_eq!(check.reads_checked, count(&run, YcsbOp::Read));
    assert_eq!(
        count(&run, YcsbOp::Read) + count(&run, YcsbOp::Update),
        20_000
    );
    let reads = count(&run, YcsbOp::Read) as f64 / 20_000.0;
    assert!((0.48..0.52).contains(&reads), "read share {reads}");
    assert!(run.per_op.iter().all(|o| o.not_found == 0));
    let lat = &run.per_op[0].latency;
    assert!(lat.p50_us <= lat.p95_us && lat.p95_us <= lat.p99_us && lat.p99_us <= lat.p999_us);
    assert!(lat.p999_us <= lat.max_us);
}

#[test]
fn every_core_workload_passes_the_checker() {
    for (name, w) in [
        ("a", CoreWorkload::a()),
        ("b", CoreWorkload::b()),
        ("c", CoreWorkload::c()),
        ("d", CoreWorkload::d()),
        ("e", CoreWorkload::e()),
        ("f", CoreWorkload::f()),
    ] {
        let (_, run, _) = load_and_run(config(w, 7, 2000, 2000));
        let check = run.check.unwrap();
        assert_eq!(
            check.mismatches, 0,
            "workload {name}: {:?}",
            check.first_mismatch
        );
        assert!(
            check.reads_checked + check.scans_checked > 0,
            "workload {name}"
        );
    }
}

#[test]
fn workload_f_counts_the_reads_inside_read_modify_write_as_reads() {
    let (_, run, _) = load_and_run(config(CoreWorkload::f(), 5, 1000, 1000));
    let rmw = count(&run, YcsbOp::ReadModifyWrite);
    assert!(rmw > 400);
    assert_eq!(count(&run, YcsbOp::Read), 1000);
    assert_eq!(count(&run, YcsbOp::Update), rmw);
}

#[test]
fn the_same_seed_gives_the_same_operations_and_another_seed_does_not() {
    let ops = |seed| {
        let mut y = Ycsb::new(config(CoreWorkload::d(), seed, 1000, 0)).unwrap();
        (0..2000).map(|_| y.next_transaction()).collect::<Vec<_>>()
    };
    assert_eq!(ops(11), ops(11));
    assert_ne!(ops(11), ops(12));
    // Workload D inserts new keys after the loaded ones, in order.
    let inserts: Vec<Vec<u8>> = ops(11)
        .into_iter()
        .filter_map(|t| match t {
            Transaction::Insert { key, .. } => Some(key),
            _ => None,
        })
        .collect();
    assert!(!inserts.is_empty());
    assert_eq!(
        inserts[0],
        build_key_name(1000, 1, InsertOrder::Hashed).into_bytes()
    );
}

#[test]
fn workload_e_repeats_identically_including_every_db_operation() {
    let a = load_and_run(config(CoreWorkload::e(), 99, 3000, 1500));
    let b = load_and_run(config(CoreWorkload::e(), 99, 3000, 1500));
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.2.counts, b.2.counts);
    assert_eq!(a.1.check.as_ref().unwrap().mismatches, 0);
    let json = serde_json::to_string(&a.1).unwrap();
    assert_eq!(serde_json::from_str::<PhaseReport>(&json).unwrap(), a.1);
}

#[test]
fn zipfian_requests_make_one_key_far_more_popular_than_uniform() {
    let records = 1000;
    let draws = 100_000;
    let share_of_top = |w: CoreWorkload| {
        let mut y = Ycsb::new(config(w, 3, records, 0)).unwrap();
        let mut hits: HashMap<Vec<u8>, u32> = HashMap::new();
        for _ in 0..draws {
            match y.next_transaction() {
                Transaction::Read { key } => *hits.entry(key).or_default() += 1,
                t => panic!("workload C only reads: {t:?}"),
            }
        }
        f64::from(*hits.values().max().unwrap()) / f64::from(draws)
    };
    // Rank 0 of a zipfian over 10¹⁰ items has probability 1/ζ = 1/26.47 ≈ 3.8 %, and hashing
    // may land a few other popular ranks on the same key.
    let zipf = share_of_top(CoreWorkload::c());
    assert!((0.035..0.10).contains(&zipf), "top key share {zipf}");
    let uniform = share_of_top(CoreWorkload {
        request_distribution: nearflash_kvbench::RequestDistribution::Uniform,
        ..CoreWorkload::c()
    });
    assert!(uniform < 0.003, "uniform top share {uniform}");
}

#[test]
fn keys_are_user_plus_the_fnv_hash_of_the_key_number() {
    assert_eq!(
        build_key_name(0, 1, InsertOrder::Hashed),
        "user6284781860667377211"
    );
    assert_eq!(build_key_name(7, 1, InsertOrder::Ordered), "user7");
    assert_eq!(build_key_name(7, 4, InsertOrder::Ordered), "user0007");
}

#[test]
fn bad_configurations_name_the_field() {
    let mut cfg = config(CoreWorkload::a(), 1, 0, 10);
    assert!(Ycsb::new(cfg.clone())
        .err()
        .unwrap()
        .to_string()
        .contains("record_count"));
    cfg.record_count = 10;
    cfg.operation_count = -1;
    assert!(Ycsb::new(cfg.clone())
        .err()
        .unwrap()
        .to_string()
        .contains("operation_count"));
    cfg.operation_count = 10;
    cfg.workload.max_scan_length = 0;
    assert!(Ycsb::new(cfg).err().unwrap().to_string().contains("scan"));
    assert!(CoreWorkload::named("g").is_err());
}
