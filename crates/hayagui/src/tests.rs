//! Scenario tests of the two access paths on the tiny test device.

use crate::config::HayaguiConfig;
use crate::fileops::{self, FileOp};
use crate::files::{Access, OpenMode, PathStats, Ve};
use nearflash_flash::{FlashConfig, MemoryStore, NoStore, PageStore};
use nearflash_ftl::FtlConfig;
use nearflash_wcache::WriteCacheConfig;

fn test_min() -> (FlashConfig, FtlConfig) {
    let doc: toml::Table = include_str!("../../../configs/test-min.toml")
        .parse()
        .unwrap();
    (
        doc["flash"].clone().try_into().unwrap(),
        doc["ftl"].clone().try_into().unwrap(),
    )
}

/// test-min's write buffer, on: the paths run over a drive that buffers writes and reports
/// a volatile write cache, as the 970 EVO does.
fn write_buffer() -> WriteCacheConfig {
    let doc: toml::Table = include_str!("../../../configs/test-min.toml")
        .parse()
        .unwrap();
    WriteCacheConfig {
        enabled: true,
        ..doc["write_cache"].clone().try_into().unwrap()
    }
}

fn ve(access: Access, functional: bool) -> Ve {
    let (flash, ftl) = test_min();
    let store: Box<dyn PageStore> = if functional {
        Box::new(MemoryStore::new(
            nearflash_flash::Geometry::from_config(&flash).page_count(),
            flash.page_size_bytes,
        ))
    } else {
        Box::new(NoStore)
    };
    Ve::format(
        &flash,
        &ftl,
        &write_buffer(),
        store,
        &HayaguiConfig::default(),
        access,
        7,
    )
    .unwrap()
}

#[test]
fn both_paths_read_back_what_they_wrote_in_both_fidelities() {
    for access in [Access::Direct, Access::Redirected] {
        for functional in [false, true] {
            for op in [FileOp::Read, FileOp::Write, FileOp::WriteSync] {
                let mut v = ve(access, functional);
                let r = fileops::run(&mut v, op, 12_288, 5, 1).unwrap();
                assert_eq!(r.verified_bytes, 5 * 12_288, "{access:?} {op:?}");
            }
        }
    }
}

#[test]
fn a_direct_call_is_faster_than_a_redirected_one_for_every_operation() {
    for op in [FileOp::Read, FileOp::Write, FileOp::WriteSync] {
        let d = fileops::run(&mut ve(Access::Direct, false), op, 4096, 4, 1).unwrap();
        let r = fileops::run(&mut ve(Access::Redirected, false), op, 4096, 4, 1).unwrap();
        assert!(
            d.latency.mean_ns < r.latency.mean_ns,
            "{op:?}: direct {} ns, redirected {} ns",
            d.latency.mean_ns,
            r.latency.mean_ns
        );
    }
}

#[test]
fn a_redirected_page_cache_hit_costs_the_call_the_host_and_the_copy() {
    let mut v = ve(Access::Redirected, false);
    let fd = v.open("/f", OpenMode::CREATE_TRUNC).unwrap();
    v.write_at(fd, 0, &[5u8; 4096]).unwrap();
    let t0 = v.now();
    let got = v.read_at(fd, 0, 4096).unwrap();
    let took = v.now().as_ns() - t0.as_ns();
    assert_eq!(got, vec![5u8; 4096]);
    let cfg = HayaguiConfig::default();
    // The call's overhead (42,748 − 105 ns), the host file system's call (2 µs) and its
    // 4 KiB copy (400 ns), then VEOS's DMA of 4 KiB at 350 MB/s (11,703 ns).
    let expect = cfg.redirect.call_overhead_ns
        + cfg.host_fs.op_cpu_ns
        + cfg.host_fs.copy_ns_per_4k
        + (4096f64 * 1e3 / 350.0).ceil() as u64;
    assert_eq!(expect, 42_643 + 2_000 + 400 + 11_703);
    assert_eq!(took, expect);
}

#[test]
fn accelfs_reads_a_cold_megabyte_in_one_run_and_a_cached_one_without_the_ssd() {
    let mut v = ve(Access::Direct, true);
    let fd = v.open("/big", OpenMode::CREATE_TRUNC).unwrap();
    let data: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 253) as u8).collect();
    v.write_at(fd, 0, &data).unwrap();
    v.sync(fd).unwrap();
    v.close(fd).unwrap();
    v.drop_caches().unwrap();
    let PathStats::Direct(before) = v.path_stats() else {
        panic!()
    };
    let fd = v.open("/big", OpenMode::EXISTING).unwrap();
    assert_eq!(v.read_at(fd, 0, 1 << 20).unwrap(), data);
    let PathStats::Direct(after) = v.path_stats() else {
        panic!()
    };
    // 128 chunk misses, allocated contiguously: at most a few commands of ≤ 2 MiB.
    assert_eq!(after.chunk_misses - before.chunk_misses, 128);
    let commands = after.read_commands - before.read_commands;
    assert!((1..=4).contains(&commands), "{commands} read commands");
    let nvme_before = v.nvme_stats().commands;
    assert_eq!(v.read_at(fd, 4096, 100_000).unwrap(), data[4096..104_096]);
    assert_eq!(
        v.nvme_stats().commands,
        nvme_before,
        "a cached read issues nothing"
    );
}

#[test]
fn a_file_larger_than_its_cache_is_written_back_and_read_back_exactly() {
    let mut v = ve(Access::Direct, true);
    let fd = v.open("/wide", OpenMode::CREATE_TRUNC).unwrap();
    // 3 MiB of appends in odd sizes, past the 2 MiB cache: dirty chunks are evicted.
    let data: Vec<u8> = (0..3 << 20).map(|i: u32| (i * 7 % 251) as u8).collect();
    let mut at = 0usize;
    for len in [1usize, 5000, 8192, 100_000, 3].iter().cycle() {
        if at >= data.len() {
            break;
        }
        let n = (*len).min(data.len() - at);
        v.write_at(fd, at as u64, &data[at..at + n]).unwrap();
        at += n;
    }
    let PathStats::Direct(s) = v.path_stats() else {
        panic!()
    };
    assert!(s.dirty_evictions > 0);
    // An overwrite in the middle, partial chunks on both sides.
    v.write_at(fd, 10_000, &[9u8; 20_000]).unwrap();
    v.sync(fd).unwrap();
    assert_eq!(v.size("/wide").unwrap(), 3 << 20);
    let mut want = data.clone();
    want[10_000..30_000].fill(9);
    assert_eq!(v.read_at(fd, 0, 3 << 20).unwrap(), want);
    v.close(fd).unwrap();
    // Forgotten and reread from the SSD.
    v.drop_caches().unwrap();
    let fd = v.open("/wide", OpenMode::EXISTING).unwrap();
    assert_eq!(v.read_at(fd, 0, 3 << 20).unwrap(), want);
}

#[test]
fn namespace_calls_behave_the_same_on_both_paths() {
    for access in [Access::Direct, Access::Redirected] {
        let mut v = ve(access, false);
        v.mkdir("/db").unwrap();
        let fd = v.open("/db/a", OpenMode::CREATE).unwrap();
        v.write_at(fd, 0, b"hello").unwrap();
        v.sync(fd).unwrap();
        v.close(fd).unwrap();
        v.rename("/db/a", "/db/b").unwrap();
        assert!(!v.exists("/db/a").unwrap());
        assert!(v.exists("/db/b").unwrap());
        assert_eq!(v.size("/db/b").unwrap(), 5);
        assert_eq!(v.children("/db").unwrap(), vec!["b".to_string()]);
        let fd = v.open("/db/b", OpenMode::EXISTING).unwrap();
        assert_eq!(v.read_at(fd, 0, 100).unwrap(), b"hello");
        v.close(fd).unwrap();
        v.delete("/db/b").unwrap();
        assert!(v.children("/db").unwrap().is_empty());
        assert!(v.open("/db/b", OpenMode::EXISTING).is_err());
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    let a = fileops::run(
        &mut ve(Access::Direct, false),
        FileOp::WriteSync,
        8192,
        6,
        3,
    )
    .unwrap();
    let b = fileops::run(
        &mut ve(Access::Direct, false),
        FileOp::WriteSync,
        8192,
        6,
        3,
    )
    .unwrap();
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.timed_ns, b.timed_ns);
}

#[test]
fn zero_counts_and_unknown_names_are_errors() {
    let mut v = ve(Access::Direct, false);
    assert!(fileops::run(&mut v, FileOp::Read, 0, 1, 1).is_err());
    assert!(fileops::run(&mut v, FileOp::Read, 4096, 0, 1).is_err());
    assert!(FileOp::parse("append")
        .unwrap_err()
        .to_string()
        .contains("append"));
    assert!(Access::parse("host").is_err());
}

fn small_bench(benchmarks: &str, num: i64) -> nearflash_kvbench::DbBenchConfig {
    let mut c = nearflash_kvbench::DbBenchConfig::hayagui();
    c.benchmarks = benchmarks.split(',').map(str::to_string).collect();
    c.num = num;
    c
}

#[test]
fn leveldb_runs_db_bench_on_both_paths_and_leaves_a_database_it_reopens() {
    let cost = HayaguiConfig::default().leveldb;
    for access in [Access::Direct, Access::Redirected] {
        let cfg = small_bench(
            "fillseq,fillrandom,overwrite,readrandom,readseq,readreverse",
            3000,
        );
        let (run, ve) = crate::dbbench::run(ve(access, true), &cfg, "/db", &cost);
        let run = run.unwrap();
        let names: Vec<&str> = run.report.results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names.len(), 6, "{names:?}");
        for r in &run.report.results {
            assert!(r.micros_per_op > 0.0, "{access:?} {}: {r:?}", r.name);
        }
        assert!(run.compute_ns > 0 && run.nvme_commands > 0);
        // The database is on the device: reopen it with a plain rusty-leveldb over the same
        // Env and read every key fillseq/fillrandom wrote (Hayagui's seeds: one key stream).
        let shared = std::rc::Rc::new(std::cell::RefCell::new(ve));
        let opt = rusty_leveldb::Options {
            env: std::rc::Rc::new(Box::new(crate::leveldb::SimEnv::new(
                shared.clone(),
                cost.clone(),
            ))),
            create_if_missing: false,
            ..rusty_leveldb::Options::default()
        };
        let mut db = rusty_leveldb::DB::open("/db", opt).unwrap();
        let mut it = db.new_iter().unwrap();
        let mut n = 0;
        use rusty_leveldb::LdbIterator;
        while it.advance() {
            let (k, _) = it.current().expect("an advanced iterator has an entry");
            assert_eq!(k.len(), 16);
            n += 1;
        }
        assert!(n > 0 && n <= 3000, "{access:?}: {n} keys");
        let files = shared.borrow_mut().children("/db").unwrap();
        assert!(files.iter().any(|f| f == "CURRENT"), "{files:?}");
        assert!(
            files.iter().any(|f| f.starts_with("MANIFEST-")),
            "{files:?}"
        );
    }
}

#[test]
fn db_bench_replays_identically_including_iterators() {
    let cost = HayaguiConfig::default().leveldb;
    let cfg = small_bench("fillrandom,readseq,readreverse,readrandom", 2000);
    let once = || {
        crate::dbbench::run(ve(Access::Direct, false), &cfg, "/db", &cost)
            .0
            .unwrap()
    };
    let (a, b) = (once(), once());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.sim_ns, b.sim_ns);
    assert_eq!(a.report.text(), b.report.text());
}

#[test]
fn a_full_device_reaches_leveldb_as_an_error_not_a_panic() {
    let cost = HayaguiConfig::default().leveldb;
    // 12 MiB of flash cannot hold 200k 100-byte values.
    let cfg = small_bench("fillseq", 200_000);
    let (Err(e), _) = crate::dbbench::run(ve(Access::Direct, false), &cfg, "/db", &cost) else {
        panic!("12 MiB cannot hold it")
    };
    let msg = e.to_string();
    assert!(msg.contains("space") || msg.contains("No space"), "{msg}");
}

#[test]
fn ycsb_reads_return_what_was_written_on_both_paths() {
    let cost = HayaguiConfig::default().leveldb;
    for access in [Access::Direct, Access::Redirected] {
        for w in ["a", "e"] {
            let mut cfg = nearflash_kvbench::YcsbConfig::new(
                nearflash_kvbench::CoreWorkload::named(w).unwrap(),
                5,
            );
            cfg.record_count = 500;
            cfg.operation_count = 500;
            cfg.check = true;
            let (r, _) = crate::ycsb::run(ve(access, true), w, cfg, "/ycsb", &cost);
            let r = r.unwrap();
            let check = r.run.check.clone().expect("check mode");
            assert_eq!(check.mismatches, 0, "{access:?} {w}: {check:?}");
            assert!(r.run.throughput_ops_per_s > 0.0);
        }
    }
}

#[test]
fn genome_phases_run_on_both_paths_and_match_the_in_memory_run() {
    let cost = HayaguiConfig::default().genome;
    let ds = nearflash_genome::generate(&nearflash_genome::DatasetSizes::tiny(), 3);
    // The same pipeline in memory: the reference answer for the paths' runs.
    let want = crate::genome::in_memory(&ds.reference_fasta, &ds.target_fasta, &cost).unwrap();
    // The 970 EVO (k = 12's offset table alone is 64 MiB), timing fidelity: the shadow copy
    // answers reads with the bytes written.
    let doc: toml::Table = include_str!("../../../configs/hayagui.toml")
        .parse()
        .unwrap();
    let flash: FlashConfig = doc["flash"].clone().try_into().unwrap();
    let ftl: FtlConfig = doc["ftl"].clone().try_into().unwrap();
    for access in [Access::Direct, Access::Redirected] {
        let mut v = Ve::format(
            &flash,
            &ftl,
            &write_buffer(),
            Box::new(NoStore),
            &HayaguiConfig::default(),
            access,
            7,
        )
        .unwrap();
        let (run, report) =
            crate::genome::run(&mut v, &ds.reference_fasta, &ds.target_fasta, &cost).unwrap();
        assert_eq!(report.hits, want.hits, "{access:?}");
        assert_eq!(run.phases.len(), 6);
        assert!(
            run.phases.iter().all(|p| p.ns > 0),
            "{access:?}: {:?}",
            run.phases
        );
        assert!(run.mapped > 0);
    }
}

#[test]
fn an_overwrite_larger_than_the_cache_writes_back_every_evicted_chunk() {
    let doc: toml::Table = include_str!("../../../configs/hayagui.toml")
        .parse()
        .unwrap();
    let flash: FlashConfig = doc["flash"].clone().try_into().unwrap();
    let ftl: FtlConfig = doc["ftl"].clone().try_into().unwrap();
    let mut v = Ve::format(
        &flash,
        &ftl,
        &write_buffer(),
        Box::new(NoStore),
        &HayaguiConfig::default(),
        Access::Direct,
        7,
    )
    .unwrap();
    v.mkdir("/g").unwrap();
    let data: Vec<u8> = (0..5_190_000u32)
        .map(|i| (i * 13 % 251) as u8 + 1)
        .collect();
    for name in ["/g/a", "/g/b"] {
        let fd = v.open(name, OpenMode::CREATE_TRUNC).unwrap();
        v.write_at(fd, 0, &data[..7400.min(data.len())]).unwrap();
        if name == "/g/b" {
            v.write_at(fd, 0, &data).unwrap();
        }
        v.sync(fd).unwrap();
        v.close(fd).unwrap();
    }
    v.sync_all().unwrap();
    v.drop_caches().unwrap();
    for (name, want) in [("/g/a", &data[..7400]), ("/g/b", &data[..])] {
        let fd = v.open(name, OpenMode::EXISTING).unwrap();
        let mut at = 0;
        while at < want.len() {
            let got = v.read_at(fd, at as u64, 1 << 20).unwrap();
            let n = got.len();
            assert!(n > 0);
            let bad = (0..n).find(|&i| got[i] != want[at + i]);
            assert!(
                bad.is_none(),
                "{name}: first bad byte at {}",
                at + bad.unwrap()
            );
            at += n;
        }
    }
}

#[test]
fn ycsb_e_replays_identically() {
    let cost = HayaguiConfig::default().leveldb;
    let once = || {
        let mut cfg = nearflash_kvbench::YcsbConfig::new(
            nearflash_kvbench::CoreWorkload::named("e").unwrap(),
            9,
        );
        cfg.record_count = 400;
        cfg.operation_count = 400;
        let (r, _) = crate::ycsb::run(ve(Access::Redirected, false), "e", cfg, "/y", &cost);
        let r = r.unwrap();
        (r.trace_hash, r.run.elapsed_us)
    };
    assert_eq!(once(), once());
}

/// Story: on the 970 EVO with its SLC cache off, a genome run's `sync` of the reference on
/// the redirected path (4 KiB writes, each a read-modify-write of a page group at TLC program
/// latency) ran longer than the watchdog's then 10 s while the drive kept completing block
/// commands; the machine counted only file-system operations as progress and declared the
/// run stalled. Here programs take 1 s (the most a config allows), so syncing 4 MiB takes
/// well over the watchdog's 60 s while every block command finishes within seconds: the sync
/// completes and the data reads back.
#[test]
fn a_sync_longer_than_the_watchdog_limit_is_not_a_stall_while_blocks_complete() {
    let (mut flash, mut ftl) = test_min();
    flash.program_latency_us = 1_000_000.0;
    ftl.checkpoint_interval_us = 0.0;
    let mut v = Ve::format(
        &flash,
        &ftl,
        &write_buffer(),
        Box::new(NoStore),
        &HayaguiConfig::default(),
        Access::Redirected,
        7,
    )
    .unwrap();
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    let fd = v.open("/big", OpenMode::CREATE_TRUNC).unwrap();
    v.write_at(fd, 0, &data).unwrap();
    let t0 = v.now();
    v.sync(fd).unwrap();
    let took = v.now().as_ns() - t0.as_ns();
    assert!(
        took > nearflash_sim::STALL_LIMIT.0,
        "the sync took {took} ns: not longer than the watchdog's limit"
    );
    v.drop_caches().unwrap();
    assert_eq!(v.read_at(fd, 0, data.len() as u64).unwrap(), data);
}

/// Story: the redirected db_bench reported 0 NVMe flushes for 100,000 synchronous puts. The
/// drive had no write buffer, so it reported no volatile write cache and the host's ext4,
/// as Linux's block layer does for such a queue, sent no FLUSH. The 970 EVO buffers writes
/// in DRAM: with its buffer the host's fsync reaches the drive as ext4's barriers (a FLUSH
/// before the journal's commit record, the record with FUA); without one, none is sent.
#[test]
fn a_redirected_fsync_reaches_a_buffering_drive_as_a_flush() {
    let (flash, ftl) = test_min();
    for buffered in [true, false] {
        let wc = WriteCacheConfig {
            enabled: buffered,
            ..write_buffer()
        };
        let mut v = Ve::format(
            &flash,
            &ftl,
            &wc,
            Box::new(NoStore),
            &HayaguiConfig::default(),
            Access::Redirected,
            7,
        )
        .unwrap();
        let fd = v.open("/f", OpenMode::CREATE_TRUNC).unwrap();
        v.write_at(fd, 0, &[7u8; 65536]).unwrap();
        let before = v.nvme_stats();
        v.sync(fd).unwrap();
        let after = v.nvme_stats();
        let (flushes, fua) = (
            after.flushes - before.flushes,
            after.fua_writes - before.fua_writes,
        );
        if buffered {
            assert!(flushes >= 1, "the journal's FLUSH reached the drive");
            assert!(fua >= 1, "and its commit record went with FUA");
        } else {
            assert_eq!(
                (flushes, fua),
                (0, 0),
                "a drive without a volatile cache gets no barrier"
            );
        }
        assert_eq!(v.read_at(fd, 0, 65536).unwrap(), vec![7u8; 65536]);
    }
}

/// The genome's FASTA stream on the redirected path: 4 KiB `read(2)` calls in order. The
/// host's read-ahead (Linux's 128 KiB `read_ahead_kb`) reads the file in windows of up to 32
/// pages, one NVMe read each, ahead of the calls — not one 4 KiB command per call.
#[test]
fn a_redirected_sequential_reader_is_served_by_the_hosts_read_ahead() {
    let mut v = ve(Access::Redirected, false);
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    let fd = v.open("/s", OpenMode::CREATE_TRUNC).unwrap();
    v.write_at(fd, 0, &data).unwrap();
    v.sync(fd).unwrap();
    v.close(fd).unwrap();
    v.drop_caches().unwrap();
    let fd = v.open("/s", OpenMode::EXISTING).unwrap();
    let reads_before = v.nvme_stats().commands;
    let mut got = Vec::new();
    for i in 0..256u64 {
        got.extend(v.read_at(fd, i * 4096, 4096).unwrap());
    }
    assert!(got == data, "the stream reads back what was written");
    let s = v.fs_stats();
    assert_eq!(s.readahead_blocks, 256, "{s:?}");
    let commands = v.nvme_stats().commands - reads_before;
    assert!(
        commands <= 256 / 32 + 8,
        "{commands} NVMe commands for 256 calls: one per window, not one per call"
    );
}
