//! Scenario tests of `nearflash fio`, run through the real binary: every example job file
//! runs and its JSON reads through a parser written for fio's documented structure (the
//! fields fio's own tools and plotting scripts read); the same seed gives byte-identical
//! output; a one-job file gives the figures of the same `nearflash io` run; verify checks
//! real data; unsupported options are errors naming the option and its line.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
mod common;
use common::{fails_naming, nearflash};

/// fio's JSON, as far as fio's tools read it (`fio_jsonplus_clat2csv`, fio-plot, ad-hoc
/// scripts: `jobs[].read.iops`, `.bw`, `.clat_ns.percentile["99.000000"]`, `.bins`...).
#[derive(Deserialize, Debug)]
struct FioDoc {
    #[serde(rename = "fio version")]
    version: String,
    timestamp: u64,
    timestamp_ms: u64,
    time: String,
    #[serde(rename = "global options", default)]
    global_options: BTreeMap<String, String>,
    jobs: Vec<FioJob>,
    disk_util: Vec<DiskUtil>,
    nearflash: serde_json::Value,
}

#[derive(Deserialize, Debug)]
struct FioJob {
    jobname: String,
    groupid: u32,
    error: i32,
    #[serde(rename = "job options")]
    job_options: BTreeMap<String, String>,
    read: Dir,
    write: Dir,
    trim: Dir,
    sync: Sync,
    job_runtime: u64,
    usr_cpu: f64,
    sys_cpu: f64,
    iodepth_level: BTreeMap<String, f64>,
    latency_ns: BTreeMap<String, f64>,
    latency_us: BTreeMap<String, f64>,
    latency_ms: BTreeMap<String, f64>,
    /// fio writes it for `zonemode=zbd` jobs that write (stat.c, `count_zone_resets`).
    zone_resets: Option<u64>,
    nearflash: serde_json::Value,
}

#[derive(Deserialize, Debug)]
struct Dir {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: Lat,
    clat_ns: Lat,
    lat_ns: Lat,
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
}

#[derive(Deserialize, Debug)]
struct Lat {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    #[serde(rename = "N")]
    n: u64,
    percentile: Option<BTreeMap<String, u64>>,
    bins: Option<BTreeMap<String, u64>>,
}

#[derive(Deserialize, Debug)]
struct Sync {
    total_ios: u64,
    lat_ns: Lat,
}

#[derive(Deserialize, Debug)]
struct DiskUtil {
    name: String,
    read_ios: u64,
    write_ios: u64,
    util: f64,
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fio")
}

fn example(name: &str) -> String {
    examples().join(name).to_str().unwrap().to_string()
}

/// Runs `nearflash fio` and returns its output file's text.
fn run_to(dir: &Path, name: &str, args: &[&str]) -> String {
    let path = dir.join(name);
    let p = path.to_str().unwrap().to_string();
    let mut all = vec!["fio"];
    all.extend(args);
    all.extend(["--output", &p]);
    let out = nearflash(&all);
    assert!(
        out.status.success(),
        "nearflash {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&path).unwrap()
}

fn run_json(dir: &Path, file: &str, extra: &[&str]) -> FioDoc {
    let mut args = vec![file, "--preset", "test-min", "--output-format", "json"];
    args.extend(extra);
    serde_json::from_str(&run_to(dir, "out.json", &args)).unwrap()
}

/// What holds for every direction a job issued in, in fio's own terms.
fn check_direction(job: &str, d: &Dir) {
    assert!(d.total_ios > 0 && d.io_bytes > 0, "{job}: {d:?}");
    assert_eq!(d.io_kbytes, d.io_bytes >> 10);
    assert_eq!(d.bw, d.bw_bytes / 1024);
    assert!(d.runtime > 0);
    // IOPS over the exact runtime; fio's runtime field is whole ms, rounded up.
    let iops_from_ms = d.total_ios as f64 * 1000.0 / d.runtime as f64;
    assert!(
        d.iops >= iops_from_ms * 0.999,
        "{job}: {} vs {iops_from_ms}",
        d.iops
    );
    assert_eq!((d.short_ios, d.drop_ios), (0, 0));
    assert_eq!(d.clat_ns.n, d.total_ios);
    assert_eq!(d.slat_ns.n, d.total_ios);
    assert_eq!(d.lat_ns.n, d.total_ios);
    assert!(d.clat_ns.min <= d.clat_ns.max && d.clat_ns.min > 0);
    assert!(d.clat_ns.mean >= d.clat_ns.min as f64 && d.clat_ns.mean <= d.clat_ns.max as f64);
    assert!(d.clat_ns.stddev >= 0.0 && d.lat_ns.percentile.is_none());
    let p = d.clat_ns.percentile.as_ref().expect("clat percentiles");
    assert_eq!(p.len(), 17, "fio's default percentile list");
    let p99 = p["99.000000"];
    assert!(
        p99 >= p["50.000000"] && p99 <= d.clat_ns.max,
        "{job}: {p:?}"
    );
    assert!(p["1.000000"] >= d.clat_ns.min);
    if d.bw_samples > 0 {
        assert!(d.bw_min as f64 <= d.bw_mean && d.bw_mean <= d.bw_max as f64 + 1.0);
        assert!(d.bw_dev >= 0.0 && d.bw_agg > 0.0);
        assert_eq!(d.iops_samples, d.bw_samples);
        assert!(d.iops_min as f64 <= d.iops_mean && d.iops_stddev >= 0.0);
        assert!(d.iops_mean <= d.iops_max as f64 + 1.0);
    }
}

fn check_job(j: &FioJob) {
    assert!(j.error == 0, "{}: error {}", j.jobname, j.error);
    assert!(j.job_runtime > 0);
    assert_eq!((j.usr_cpu, j.sys_cpu), (0.0, 0.0));
    let used: Vec<(&str, &Dir)> = [("read", &j.read), ("write", &j.write), ("trim", &j.trim)]
        .into_iter()
        .filter(|(_, d)| d.total_ios > 0)
        .collect();
    assert!(!used.is_empty(), "{} issued nothing", j.jobname);
    for (name, d) in &used {
        check_direction(&format!("{}.{name}", j.jobname), d);
    }
    let lat_share: f64 = j
        .latency_ns
        .values()
        .chain(j.latency_us.values())
        .chain(j.latency_ms.values())
        .sum();
    assert!(
        (lat_share - 100.0).abs() < 0.01,
        "{}: {lat_share}",
        j.jobname
    );
    assert_eq!(j.latency_ms.len(), 12);
    let depth: f64 = j.iodepth_level.values().sum();
    assert!((depth - 100.0).abs() < 0.01);
}

fn doc(dir: &Path, file: &str) -> FioDoc {
    // The FDP example needs a drive with Flexible Data Placement (its header says how).
    let fdp: &[&str] = &[
        "--set",
        "ftl.mapping=\"page\"",
        "--set",
        "fdp.enabled=true",
        "--set",
        "fdp.handles=4",
    ];
    // The zbd example needs a zoned drive.
    let zoned: &[&str] = &["--set", "zns.enabled=true"];
    let extra = match file {
        "fdp.fio" => fdp,
        "zbd.fio" => zoned,
        _ => &[],
    };
    let d = run_json(dir, &example(file), extra);
    assert!(d.version.starts_with("fio-3."), "{}", d.version);
    assert_eq!((d.timestamp, d.timestamp_ms), (0, 0));
    assert_eq!(d.time, "Thu Jan  1 00:00:00 1970");
    assert_eq!(d.disk_util.len(), 1);
    assert!(d.disk_util[0].util > 0.0 && !d.disk_util[0].name.is_empty());
    for j in &d.jobs {
        check_job(j);
    }
    d
}

#[test]
fn every_example_job_file_runs_and_its_json_reads_as_fios() {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().to_string())
        .filter(|n| n.ends_with(".fio"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bssplit.fio",
            "fdp.fio",
            "randread.fio",
            "randrw.fio",
            "randtrim.fio",
            "randwrite.fio",
            "read.fio",
            "rw.fio",
            "stonewall.fio",
            "trim.fio",
            "verify.fio",
            "write.fio",
            "zbd.fio",
            "zipf.fio"
        ],
        "a new example gets its checks here"
    );
    for name in &names {
        let d = doc(dir.path(), name);
        let j = &d.jobs[0];
        match name.as_str() {
            "read.fio" => assert_eq!(j.read.io_bytes, 8 << 20, "two loops over 4 MiB"),
            "randread.fio" => {
                assert_eq!(j.read.total_ios, 4096);
                assert_eq!(j.job_options["randseed"], "42");
                assert_eq!(d.global_options["size"], "4m");
            }
            "write.fio" => {
                assert_eq!(j.write.total_ios, 64);
                assert_eq!(j.sync.total_ios, 4, "a flush every 16 writes");
                assert_eq!(j.sync.lat_ns.n, 4);
                assert!(j.sync.lat_ns.percentile.is_some());
                assert_eq!(d.disk_util[0].write_ios, 64);
            }
            "trim.fio" => assert_eq!(j.trim.total_ios, 16),
            "randtrim.fio" => assert_eq!(j.trim.total_ios, 128, "each block once"),
            "randwrite.fio" => {
                assert_eq!(j.write.total_ios, 3000);
                assert!(
                    d.nearflash["gc_runs"].as_u64().unwrap() > 0,
                    "GC on test-min"
                );
                assert!(d.nearflash["waf"].as_f64().unwrap() > 1.0);
            }
            "rw.fio" => {
                assert!(j.read.total_ios > 2 * j.write.total_ios, "70% reads");
                assert!((2..=3).contains(&j.job_runtime), "{}", j.job_runtime);
                assert!(j.read.bw_samples >= 20, "100 µs windows over 2 ms");
            }
            "randrw.fio" => {
                assert_eq!(j.read.total_ios + j.write.total_ios, 1500);
                assert!(
                    j.read.iops <= 20_000.0 * 1.02,
                    "rate_iops caps reads: {}",
                    j.read.iops
                );
                assert_eq!(j.write.io_bytes, j.write.total_ios * 8192);
            }
            "zipf.fio" => assert_eq!(j.read.total_ios, 2000),
            "fdp.fio" => {
                let host: Vec<u64> = d.nearflash["fdp"]["handles"]
                    .as_array()
                    .expect("the FDP report")
                    .iter()
                    .map(|h| h["host_bytes_written"].as_u64().unwrap())
                    .collect();
                assert_eq!(host, [800 * 4096, 200 * 4096, 200 * 4096, 0]);
            }
            "bssplit.fio" => {
                assert_eq!(j.write.total_ios, 800);
                let avg = j.write.io_bytes as f64 / 800.0;
                // 0.6·4 + 0.3·16 + 0.1·64 = 13.6 KiB on average.
                assert!((avg / 1024.0 - 13.6).abs() < 1.5, "{avg}");
            }
            "verify.fio" => {
                assert_eq!(j.write.total_ios, 128);
                assert_eq!(j.read.total_ios, 128, "every block read back");
                assert_eq!(
                    j.nearflash["verify_unchecked"], 128,
                    "timing carries no data"
                );
                assert_eq!(d.disk_util[0].read_ios, 128);
            }
            "stonewall.fio" => {
                assert_eq!(d.jobs.len(), 2, "group reporting: one report per group");
                assert_eq!((d.jobs[0].groupid, d.jobs[1].groupid), (0, 1));
                assert_eq!(d.jobs[0].nearflash["jobs"], 3);
                assert_eq!(d.jobs[0].write.io_bytes, 4 << 20, "two writers of 2 MiB");
                assert_eq!(d.jobs[0].read.io_bytes, 2 << 20);
                assert_eq!(d.jobs[1].read.total_ios, 1000);
            }
            "zbd.fio" => {
                assert_eq!(j.write.io_bytes, 6 << 20, "three passes over 2 MiB");
                assert!(
                    j.zone_resets.unwrap() > 0,
                    "full zones drawn again are reset"
                );
                assert_eq!(d.jobs[1].zone_resets, None, "a reader resets nothing");
                assert_eq!(d.jobs[1].read.total_ios, 1000);
                let zoned = &d.nearflash["zoned"];
                assert_eq!(zoned["reads_past_write_pointer"], 0);
                assert_eq!(zoned["zone_resets"], j.zone_resets.unwrap());
            }
            other => unreachable!("{other}"),
        }
    }
}

#[test]
fn verify_in_functional_fidelity_checks_every_block_written_against_its_digest() {
    let dir = tempfile::tempdir().unwrap();
    for method in ["crc32c", "md5"] {
        let job = dir.path().join(format!("{method}.fio"));
        std::fs::write(
            &job,
            format!("[v]\nrw=randwrite\nbs=8k,16k\niodepth=8\nsize=1m\nverify={method}\n"),
        )
        .unwrap();
        let d = run_json(
            dir.path(),
            job.to_str().unwrap(),
            &["--fidelity", "functional"],
        );
        let j = &d.jobs[0];
        assert_eq!(j.write.total_ios, 64);
        assert_eq!(j.nearflash["verified_blocks"], 64, "{method}");
        assert_eq!(j.nearflash["verify_errors"], 0);
        assert!(d.nearflash["reads_verified"].as_u64().unwrap() >= 64);
    }
}

#[test]
fn json_plus_adds_clat_bins_that_fios_clat2csv_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d: FioDoc = serde_json::from_str(&run_to(
        dir.path(),
        "plus.json",
        &[
            &example("randrw.fio"),
            "--preset",
            "test-min",
            "--output-format",
            "json+",
        ],
    ))
    .unwrap();
    for dir in [&d.jobs[0].read, &d.jobs[0].write] {
        let bins = dir.clat_ns.bins.as_ref().expect("json+ has bins");
        // fio_jsonplus_clat2csv: int(key) is the latency in ns, the value its count.
        let keys: Vec<u64> = bins.keys().map(|k| k.parse().unwrap()).collect();
        assert_eq!(bins.values().sum::<u64>(), dir.clat_ns.n);
        assert!(keys
            .iter()
            .all(|&k| k >= dir.clat_ns.min && k <= dir.clat_ns.max));
    }
    let plain = run_json(dir.path(), &example("randrw.fio"), &[]);
    assert!(plain.jobs[0].read.clat_ns.bins.is_none());
}

#[test]
fn the_same_seed_gives_byte_identical_output_and_another_seed_differs() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, seed: &str, format: &str| {
        run_to(
            dir.path(),
            name,
            &[
                &example("stonewall.fio"),
                "--preset",
                "test-min",
                "--seed",
                seed,
                "--output-format",
                format,
            ],
        )
    };
    assert_eq!(run("a", "5", "json"), run("b", "5", "json"));
    assert_eq!(run("c", "5", "normal"), run("d", "5", "normal"));
    assert_ne!(run("e", "5", "json"), run("f", "6", "json"));
}

/// Runs `nearflash io` with `args` on test-min with seed 9 and returns its JSON report.
fn io_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let path = dir.join("io.json");
    let mut all = vec![
        "io", "--preset", "test-min", "--seed", "9", "--quiet", "--json",
    ];
    all.push(path.to_str().unwrap());
    all.extend(args);
    let out = nearflash(&all);
    assert!(
        out.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The acceptance cross-check: the same workload four ways — as `nearflash io` flags, as a
/// fio job (which writes its requests as an iolog v3), as that iolog replayed by `nearflash
/// io --trace iolog:` and by a fio job's `read_iolog` — gives the same IOPS, mean latency,
/// WAF, GC runs and trace hash with the same seed. The job draws the stream `io` draws (job 0
/// takes the run seed's stream; `norandommap` because `io` draws offsets with replacement);
/// the log replays it in the same order at the same depth (`replay_no_stall`), so the
/// device sees the same submissions at the same simulated times. (A timed replay would
/// not: v3 timestamps are whole µs, so each request would go up to 1 µs off its original
/// time; docs/measured.md shows by how much.)
#[test]
fn the_same_workload_as_flags_a_job_file_and_an_iolog_v3_gives_the_same_figures() {
    let dir = tempfile::tempdir().unwrap();
    for (rw, pattern) in [
        ("randread", "rand-read"),
        ("randwrite", "rand-write"),
        ("write", "seq-write"),
    ] {
        let log = dir.path().join(format!("{rw}.log"));
        let log = log.to_str().unwrap();
        let job = dir.path().join(format!("{rw}.fio"));
        std::fs::write(
            &job,
            format!(
                "[x]\nrw={rw}\nbs=4k\niodepth=16\nsize=4m\nnumber_ios=3000\nnorandommap\n\
                 write_iolog={log}\n"
            ),
        )
        .unwrap();
        let f = run_json(dir.path(), job.to_str().unwrap(), &["--seed", "9"]);
        let flags = io_json(
            dir.path(),
            &[
                "--pattern",
                pattern,
                "--request-kib",
                "4",
                "--queue-depth",
                "16",
                "--requests",
                "3000",
                "--span-gib",
                "0.00390625",
            ],
        );
        let trace = format!("iolog:{log}");
        let mut replay_args = vec![
            "--trace",
            &trace,
            "--replay-no-stall",
            "--queue-depth",
            "16",
            "--span-gib",
            "0.00390625",
        ];
        if rw == "randread" {
            replay_args.push("--precondition");
        }
        let traced = io_json(dir.path(), &replay_args);
        let replay_job = dir.path().join(format!("{rw}-replay.fio"));
        std::fs::write(
            &replay_job,
            format!("[x]\nread_iolog={log}\nreplay_no_stall=1\niodepth=16\nsize=4m\n"),
        )
        .unwrap();
        let g = run_json(dir.path(), replay_job.to_str().unwrap(), &["--seed", "9"]);
        let dir_of = |d: &FioDoc| {
            if rw == "randread" {
                (d.jobs[0].read.iops, d.jobs[0].read.clat_ns.mean)
            } else {
                (d.jobs[0].write.iops, d.jobs[0].write.clat_ns.mean)
            }
        };
        let io_figures = |io: &serde_json::Value| {
            (
                io["iops"].as_f64().unwrap(),
                io["latency_us"]["mean"].as_f64().unwrap() * 1000.0,
            )
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b;
        let (iops, mean_ns) = io_figures(&flags);
        for (leg, (i, m)) in [
            ("fio job", dir_of(&f)),
            ("io --trace", io_figures(&traced)),
            ("fio read_iolog", dir_of(&g)),
        ] {
            assert!(
                close(i, iops) && close(m, mean_ns),
                "{rw} {leg}: {i} IOPS, {m} ns vs {iops}, {mean_ns}"
            );
        }
        assert_eq!(u64_of(&traced, "requests"), 3000, "{rw}");
        for key in ["waf", "trace_hash", "gc_runs"] {
            for (leg, v) in [
                ("fio job", &f.nearflash[key]),
                ("io --trace", &traced[key]),
                ("fio read_iolog", &g.nearflash[key]),
            ] {
                assert_eq!(v, &flags[key], "{rw} {leg} {key}");
            }
        }
    }
}

fn u64_of(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The options a fio user is most likely to bring that nearflash does not model are errors
/// naming the option and its line, not silently dropped: verify_backlog (interleaved
/// verification), zonerange (fio's strided zone mode), unified_rw_reporting (the mixed
/// report), rate_process (a Poisson rate), merge_blktrace_file (merging traces). Host-only options (ioengine, filename, thread, cpus_allowed) change nothing the
/// drive sees, so they are accepted and listed as ignored instead.
#[test]
fn unsupported_options_are_errors_naming_the_option_and_its_line() {
    let dir = tempfile::tempdir().unwrap();
    for opt in [
        "verify_backlog=16",
        "zonerange=1m",
        "unified_rw_reporting=1",
        "rate_process=poisson",
        "merge_blktrace_file=merged.bin",
        "no_such_option=1",
    ] {
        let job = dir.path().join("bad.fio");
        std::fs::write(&job, format!("[j]\nrw=read\nsize=1m\n{opt}\n")).unwrap();
        let name = opt.split('=').next().unwrap();
        let p = job.to_str().unwrap();
        fails_naming(
            &["fio", p, "--preset", "test-min"],
            &format!("option '{name}'"),
        );
        fails_naming(&["fio", p, "--preset", "test-min"], &format!("{p}:4"));
    }
}

#[test]
fn host_only_options_are_accepted_and_listed_as_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("host.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=io_uring\nfilename=/dev/nvme0n1\nthread\ncpus_allowed=0-3\n\
         [j]\nrw=randread\nsize=1m\nnumber_ios=100\ndirect=1\n",
    )
    .unwrap();
    let p = job.to_str().unwrap();
    let text = run_to(dir.path(), "out.txt", &[p, "--preset", "test-min"]);
    for o in ["ioengine", "filename", "thread", "cpus_allowed"] {
        assert!(text.contains(&format!("{o} ({p}:")), "{o}: {text}");
    }
    let d = run_json(dir.path(), p, &[]);
    assert_eq!(d.nearflash["ignored_options"].as_array().unwrap().len(), 4);
}

#[test]
fn the_normal_output_follows_fios_layout() {
    let dir = tempfile::tempdir().unwrap();
    let text = run_to(
        dir.path(),
        "out.txt",
        &[&example("randrw.fio"), "--preset", "test-min"],
    );
    for line in [
        "randmix: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 8192B-8192B",
        "randmix: (groupid=0, jobs=1): err= 0: pid=0:",
        "  read: IOPS=",
        "  write: IOPS=",
        "    clat (usec): min=",
        "    clat percentiles (usec):",
        "     |  1.00th=[",
        "99.99th=[",
        "  IO depths    : 1=",
        "     issued rwts: total=",
        "Run status group 0 (all jobs):",
        "   READ: bw=",
        "  WRITE: bw=",
        "Disk stats (read/write):",
        "nearflash: preset=\"test-min\"",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn write_iolog_records_every_request_as_a_fio_iolog_v3_in_simulated_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("w.log");
    let job = dir.path().join("w.fio");
    std::fs::write(
        &job,
        format!(
            "[w]\nrw=randwrite\nbs=4k\nsize=1m\nnumber_ios=50\nfsync=10\nwrite_iolog={}\n",
            log.display()
        ),
    )
    .unwrap();
    run_to(
        dir.path(),
        "o.txt",
        &[job.to_str().unwrap(), "--preset", "test-min"],
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "fio version 3 iolog");
    assert_eq!(lines[1], "0 nearflash0n1 add");
    assert_eq!(lines[2], "0 nearflash0n1 open");
    assert!(lines.last().unwrap().ends_with(" close"));
    let stamps: Vec<u64> = lines[1..]
        .iter()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "µs in issue order");
    assert!(*stamps.last().unwrap() > 0, "the run takes simulated time");
    let writes: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(" write "))
        .collect();
    assert_eq!(writes.len(), 50);
    assert_eq!(lines.iter().filter(|l| l.ends_with(" sync 0 0")).count(), 5);
    for w in writes {
        let f: Vec<&str> = w.split(' ').collect();
        let (off, len): (u64, u64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
        assert!(
            len == 4096 && off % 4096 == 0 && off + len <= 1 << 20,
            "{w}"
        );
    }
}

#[test]
fn environment_variables_and_includes_reach_the_job() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("common.fio"), "bs=${NF_TEST_BS}\nsize=1m\n").unwrap();
    let job = dir.path().join("env.fio");
    std::fs::write(&job, "[global]\ninclude common.fio\n[e]\nrw=write\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(["fio", job.to_str().unwrap(), "--preset", "test-min"])
        .args(["--output-format", "json"])
        .env("NF_TEST_BS", "16k")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: FioDoc = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d.jobs[0].write.total_ios, 64, "1 MiB in 16 KiB writes");
    assert_eq!(d.global_options["bs"], "16k");
    let err = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(["fio", job.to_str().unwrap(), "--preset", "test-min"])
        .env_remove("NF_TEST_BS")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&err.stderr);
    assert!(
        !err.status.success() && e.contains("common.fio:1") && e.contains("NF_TEST_BS"),
        "{e}"
    );
}

#[test]
fn bad_job_files_fail_with_the_reason_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let write = |text: &str| {
        let p = dir.path().join("bad.fio");
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let p = write("[j]\nrw=read\nbs=4q\n");
    fails_naming(
        &["fio", &p, "--preset", "test-min"],
        "bad.fio:3: option 'bs'",
    );
    let p = write("[j]\nrw=read\nsize=1g\n");
    fails_naming(&["fio", &p, "--preset", "test-min"], "beyond the device");
    let p = write("[j]\nrw=read\nbs=4k\nsize=1k\n");
    fails_naming(&["fio", &p, "--preset", "test-min"], "smaller than one");
    let p = write("; nothing but a comment\n");
    fails_naming(&["fio", &p, "--preset", "test-min"], "no job section");
    let p = write("[j]\nrw=read\nsize=1m\n");
    fails_naming(&["fio", &p, "--preset", "no-such-preset"], "no-such-preset");
    fails_naming(&["fio", "/nonexistent/job.fio"], "/nonexistent/job.fio");
    fails_naming(
        &[
            "fio",
            &p,
            "--preset",
            "test-min",
            "--output",
            "/nonexistent/dir/out",
        ],
        "--output",
    );
}

/// A replayed log's problems name the log and the line: a malformed line, a second file
/// without `replay_redirect` (the simulated drive is one device), a missing log.
#[test]
fn read_iolog_errors_name_the_log_and_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let job = |log: &str, extra: &str| {
        let p = dir.path().join("replay.fio");
        std::fs::write(&p, format!("[r]\nread_iolog={log}\n{extra}")).unwrap();
        p.to_str().unwrap().to_string()
    };
    let log = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let bad = log("bad.log", "fio version 3 iolog\n0 d add\n5 d read 0 x\n");
    fails_naming(&["fio", &job(&bad, ""), "--preset", "test-min"], "line 3");
    let two = log(
        "two.log",
        "fio version 3 iolog\n0 a add\n0 b add\n1 a read 0 4096\n2 b read 4096 4096\n",
    );
    fails_naming(&["fio", &job(&two, ""), "--preset", "test-min"], "line 3");
    let redirected = job(&two, "replay_redirect=/dev/nvme0n1\n");
    let d = run_json(dir.path(), &redirected, &[]);
    assert_eq!(d.jobs[0].read.total_ios, 2, "both files onto the one drive");
    fails_naming(
        &[
            "fio",
            &job("/nonexistent/x.log", ""),
            "--preset",
            "test-min",
        ],
        "read_iolog /nonexistent/x.log",
    );
}
