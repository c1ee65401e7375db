//! db_bench over rusty-leveldb's in-memory Env: report lines, replayable key streams,
//! iteration order, determinism, configuration errors.

use nearflash_kvbench::{
    run_db_bench, CounterClock, CountingHook, DbBenchConfig, DbBenchReport, KvBenchError,
    LevelDbRandom, NoHook, SeedScheme,
};
use std::collections::HashSet;
use std::path::Path;

fn config(benchmarks: &[&str], num: i64) -> DbBenchConfig {
    DbBenchConfig {
        benchmarks: benchmarks.iter().map(|s| s.to_string()).collect(),
        num,
        ..DbBenchConfig::upstream()
    }
}

fn run(cfg: &DbBenchConfig) -> DbBenchReport {
    let clock = CounterClock::new(1.0);
    run_db_bench(
        cfg,
        rusty_leveldb::in_memory(),
        Path::new("/bench"),
        &clock,
        &mut NoHook,
    )
    .unwrap()
}

#[test]
fn report_line_is_printed_exactly_as_db_bench_prints_it() {
    // One clock step between start and stop: 1 µs for 1000 ops of 116 bytes.
    let r = run(&config(&["fillseq"], 1000));
    let fillseq = &r.results[0];
    assert_eq!(fillseq.ops, 1000);
    assert_eq!(fillseq.bytes, 116_000);
    assert_eq!(
        fillseq.line,
        "fillseq      :       0.001 micros/op; 110626.2 MB/s"
    );
    assert_eq!(r.header[0], "Keys:       16 bytes each");
    assert_eq!(
        r.header[1],
        "Values:     100 bytes each (50 bytes after compression)"
    );
}

/// The keys `n` draws of `Random(seed)` produce, as db_bench's DoWrite picks them.
fn replay(seed: u32, n: i64, range: u32) -> Vec<u32> {
    let mut r = LevelDbRandom::new(seed);
    (0..n).map(|_| r.uniform(range)).collect()
}

#[test]
fn readrandom_finds_exactly_the_keys_a_replay_of_the_key_streams_predicts() {
    let num = 3000;
    let cfg = config(&["fillrandom", "readrandom"], num);
    // Upstream seeds: fillrandom is thread 1 (seed 1001), readrandom thread 2 (seed 1002).
    let written: HashSet<u32> = replay(1001, num, num as u32).into_iter().collect();
    let expected = replay(1002, num, num as u32)
        .iter()
        .filter(|k| written.contains(k))
        .count() as u64;
    let r = run(&cfg);
    assert_eq!(r.results[1].found, Some(expected));
    assert_eq!(
        r.results[1].line.split(';').nth(1).unwrap(),
        &format!(" ({expected} of {num} found)")
    );
    // About 1 − 1/e of the keys exist after one random fill.
    assert!((0.60..0.66).contains(&(expected as f64 / num as f64)));

    // Before 2021 every benchmark's thread used seed 1000, so reads replay the fill exactly.
    let old = DbBenchConfig {
        seed_scheme: SeedScheme::ThreadIndex,
        ..cfg
    };
    let r = run(&old);
    assert_eq!(r.results[1].found, Some(num as u64));
}

#[test]
fn readseq_and_readreverse_visit_each_distinct_key_once_in_order() {
    let num = 2000;
    let r = run(&config(
        &[
            "fillrandom",
            "overwrite",
            "readseq",
            "readreverse",
            "compact",
            "readseq",
            "readreverse",
        ],
        num,
    ));
    let distinct: HashSet<u32> = replay(1001, num, num as u32)
        .into_iter()
        .chain(replay(1002, num, num as u32))
        .collect();
    for res in &r.results[2..] {
        if res.name == "compact" {
            continue;
        }
        assert_eq!(res.ops, distinct.len() as u64, "{}", res.name);
        assert_eq!(res.bytes, distinct.len() as u64 * 116, "{}", res.name);
    }
    // The largest key exists with high probability, so SeekToLast costs two seeks.
    assert!(r.results[3].emulation_seeks >= 2);
}

#[test]
fn readreverse_finds_the_last_key_when_the_top_key_is_missing() {
    // fillseq writes 0..1500; readreverse first probes key 1999 (fillbatch's rounding), finds
    // nothing, and binary-searches down to 1499.
    let r = run(&config(&["fillseq", "readreverse"], 1500));
    assert_eq!(r.results[1].ops, 1500);
    assert!(r.results[1].emulation_seeks > 2);
}

#[test]
fn the_default_list_minus_the_long_compute_loops_runs_and_repeats_identically() {
    let list: Vec<&str> = nearflash_kvbench::dbbench::DEFAULT_BENCHMARKS
        .iter()
        .copied()
        .filter(|b| !matches!(*b, "crc32c" | "snappycomp" | "snappyuncomp"))
        .collect();
    let cfg = config(&list, 5000);
    let once = || {
        let clock = CounterClock::new(1.0);
        let mut hook = CountingHook::default();
        let r = run_db_bench(
            &cfg,
            rusty_leveldb::in_memory(),
            Path::new("/b"),
            &clock,
            &mut hook,
        )
        .unwrap();
        (r, hook.counts)
    };
    let (a, hooks_a) = once();
    let (b, hooks_b) = once();
    assert_eq!(a, b);
    assert_eq!(hooks_a, hooks_b);
    assert_eq!(a.results.len(), list.len());
    let names: Vec<&str> = a.results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, list);
    // fillsync writes N/1000 entries and says so; fill100K too.
    assert!(
        a.results[1].line.ends_with("(5 ops)"),
        "{}",
        a.results[1].line
    );
    assert_eq!(a.results[1].ops, 5);
    assert_eq!(a.results.last().unwrap().ops, 5);
    let json = serde_json::to_string(&a).unwrap();
    let back: DbBenchReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
}

#[test]
fn hayagui_fillsync_writes_n_synchronous_puts() {
    let cfg = DbBenchConfig {
        benchmarks: vec!["fillsync".into()],
        num: 2000,
        ..DbBenchConfig::hayagui()
    };
    let clock = CounterClock::new(1.0);
    let mut hook = CountingHook::default();
    let r = run_db_bench(
        &cfg,
        rusty_leveldb::in_memory(),
        Path::new("/h"),
        &clock,
        &mut hook,
    )
    .unwrap();
    assert_eq!(r.results[0].ops, 2000);
    assert!(!r.results[0].line.contains("ops)"));
    let sync_writes = hook
        .counts
        .iter()
        .find(|(op, _, _)| {
            *op == nearflash_kvbench::DbOp::Write {
                entries: 1,
                sync: true,
            }
        })
        .unwrap();
    assert_eq!(sync_writes.1, 2000);
}

#[test]
fn crc32c_and_snappy_benchmarks_report_their_messages() {
    let r = run(&config(&["snappycomp", "crc32c"], 1000));
    assert!(
        r.results[0].message.starts_with("(output: "),
        "{}",
        r.results[0].line
    );
    // A 4 KiB block of the 0.5-compressible pool: Snappy output near half.
    let pct: f64 = r.results[0].message[9..r.results[0].message.len() - 2]
        .parse()
        .unwrap();
    assert!((45.0..62.0).contains(&pct), "{pct}");
    assert_eq!(r.results[1].ops, 500 * 256);
    assert_eq!(r.results[1].message, "(4K per op)");
}

#[test]
fn bad_configurations_are_typed_errors_naming_the_problem() {
    let clock = CounterClock::new(1.0);
    let err = |cfg: DbBenchConfig| {
        run_db_bench(
            &cfg,
            rusty_leveldb::in_memory(),
            Path::new("/e"),
            &clock,
            &mut NoHook,
        )
        .unwrap_err()
    };
    match err(config(&["fillseq", "fillsequential"], 10)) {
        KvBenchError::UnknownBenchmark { name } => assert_eq!(name, "fillsequential"),
        e => panic!("{e}"),
    }
    match err(config(&["zstdcomp"], 10)) {
        KvBenchError::UnsupportedBenchmark { name, .. } => assert_eq!(name, "zstdcomp"),
        e => panic!("{e}"),
    }
    match err(config(&["fillseq"], 0)) {
        KvBenchError::InvalidConfig { field, .. } => assert_eq!(field, "num"),
        e => panic!("{e}"),
    }
    let negative_reads = DbBenchConfig {
        reads: Some(-5),
        ..config(&["readrandom"], 10)
    };
    match err(negative_reads) {
        KvBenchError::InvalidConfig { field, value, .. } => {
            assert_eq!(field, "reads");
            assert_eq!(value, "-5");
        }
        e => panic!("{e}"),
    }
    let huge_value = DbBenchConfig {
        value_size_bytes: 2 << 20,
        ..config(&["fillseq"], 10)
    };
    assert!(err(huge_value).to_string().contains("value_size_bytes"));
}
