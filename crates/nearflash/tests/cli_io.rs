//! Scenario tests of `nearflash io`, run through the real binary: determinism, the limits
//! that must emerge from the backbone model, GC under random writes, trace replay,
//! functional verification, and a clear error for every kind of bad input.

use serde_json::Value;
use std::path::{Path, PathBuf};
mod common;
use common::{fails_naming, nearflash};

const WALL_CLOCK_FIELDS: &[&str] = &["wall_s", "events_per_wall_s", "speed", "peak_rss_mb"];

fn run_json(dir: &Path, name: &str, args: &[&str]) -> Value {
    let path = dir.join(name);
    let mut all: Vec<&str> = args.to_vec();
    let p = path.to_str().unwrap().to_string();
    all.extend(["--quiet", "--json", &p]);
    let out = nearflash(&all);
    assert!(
        out.status.success(),
        "nearflash {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn without_wall_clock(mut v: Value) -> Value {
    let obj = v.as_object_mut().unwrap();
    for f in WALL_CLOCK_FIELDS {
        assert!(obj.remove(*f).is_some(), "report lacks {f}");
    }
    if let Some(Value::Object(p)) = obj.get_mut("precondition") {
        p.remove("wall_s");
    }
    v
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

const RAND_MIXED: &[&str] = &[
    "io",
    "--preset",
    "test-min",
    "--pattern",
    "mixed",
    "--request-kib",
    "8",
    "--requests",
    "3000",
    "--queue-depth",
    "8",
];

#[test]
fn same_seed_gives_identical_report_and_hash_other_seed_differs() {
    let d = tmp();
    let mut a = RAND_MIXED.to_vec();
    a.extend(["--seed", "7"]);
    let r1 = without_wall_clock(run_json(d.path(), "a.json", &a));
    let r2 = without_wall_clock(run_json(d.path(), "b.json", &a));
    assert_eq!(r1, r2);
    let mut b = RAND_MIXED.to_vec();
    b.extend(["--seed", "8"]);
    let r3 = run_json(d.path(), "c.json", &b);
    assert_ne!(r1["trace_hash"], r3["trace_hash"]);
}

#[test]
fn report_has_every_documented_field() {
    let d = tmp();
    let r = run_json(d.path(), "r.json", RAND_MIXED);
    for key in [
        "iops",
        "read_bandwidth_mb_s",
        "write_bandwidth_mb_s",
        "latency_us",
        "waf",
        "gc_runs",
        "gc_pages_copied",
        "erase_count",
        "utilization",
        "flash_ops",
        "sim_events",
        "wall_s",
        "events_per_wall_s",
        "speed",
        "peak_rss_mb",
        "trace_hash",
    ] {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    // Speed is reported for the measured phase and the whole command, flash operations both
    // per plane and per die operation, and the counts agree with the phase's figures.
    let (m, w) = (&r["speed"]["measured"], &r["speed"]["whole_command"]);
    assert_eq!(m["plane_ops"], r["flash_ops"]);
    assert_eq!(m["die_ops"], r["flash_die_ops"]);
    assert_eq!(w["sim_events"], r["sim_events"]);
    let n = |v: &Value| v.as_u64().unwrap();
    assert!(n(&m["die_ops"]) > 0 && n(&m["die_ops"]) <= n(&m["plane_ops"]));
    assert!(n(&m["plane_ops"]) <= n(&w["plane_ops"]));
    assert!(n(&m["sim_events"]) < n(&w["sim_events"]));
    assert!(m["wall_s"].as_f64().unwrap() <= w["wall_s"].as_f64().unwrap());
    for q in ["p50", "p99", "p999", "max"] {
        assert!(r["latency_us"][q].as_f64().unwrap() > 0.0);
    }
    for q in ["min", "mean", "max"] {
        assert!(r["erase_count"].get(q).is_some());
    }
    assert_eq!(r["utilization"]["channel"].as_array().unwrap().len(), 2);
    assert_eq!(r["utilization"]["die"].as_array().unwrap().len(), 4);
}

/// Requests cross the NVMe front end and its PCIe link unless `--interface bare`: the report
/// names the path, measures the link over the phase and bounds the read ceiling by it.
#[test]
fn the_report_names_the_interface_and_measures_the_link_unless_bare() {
    let d = tmp();
    let r = run_json(d.path(), "nvme.json", RAND_MIXED);
    assert_eq!(r["interface"], "nvme");
    let link = &r["link"];
    assert_eq!(link["commands"].as_u64().unwrap(), 3000);
    for dir in ["up", "down"] {
        let u = link[dir]["utilization"].as_f64().unwrap();
        assert!(u > 0.0 && u <= 1.0, "{dir}: {u}");
        assert!(link[dir]["wire_bytes"].as_u64() > link[dir]["payload_bytes"].as_u64());
    }
    let lim = &r["analytic_limits"];
    let (read, backbone, link_up) = (
        lim["read_bandwidth_mb_s"].as_f64().unwrap(),
        lim["backbone_read_bandwidth_mb_s"].as_f64().unwrap(),
        lim["link_up_payload_mb_s"].as_f64().unwrap(),
    );
    assert_eq!(read, backbone.min(link_up));
    let mut args = RAND_MIXED.to_vec();
    args.extend(["--interface", "bare"]);
    let b = run_json(d.path(), "bare.json", &args);
    assert_eq!(b["interface"], "bare");
    assert!(b["link"].is_null() && b["analytic_limits"]["link_up_payload_mb_s"].is_null());
    assert_ne!(b["trace_hash"], r["trace_hash"]);
}

#[test]
fn sequential_reads_approach_but_never_exceed_the_backbone_limit() {
    let d = tmp();
    let r = run_json(
        d.path(),
        "seq.json",
        &[
            "io",
            "--preset",
            "flashabacus",
            "--pattern",
            "seq-read",
            "--request-kib",
            "128",
            "--total-gib",
            "1",
            "--queue-depth",
            "32",
            "--span-gib",
            "1",
        ],
    );
    let bw = f(&r, "read_bandwidth_mb_s");
    let limit = r["analytic_limits"]["read_bandwidth_mb_s"]
        .as_f64()
        .unwrap();
    assert!(bw <= limit, "{bw} exceeds the analytic limit {limit}");
    assert!(bw >= 0.9 * limit, "{bw} below 90% of {limit}");
    for u in r["utilization"]["channel"].as_array().unwrap() {
        assert!(u.as_f64().unwrap() <= 1.0 + 1e-9);
    }
}

#[test]
fn random_page_reads_are_bounded_by_the_dies() {
    let d = tmp();
    let r = run_json(
        d.path(),
        "rr.json",
        &[
            "io",
            "--preset",
            "flashabacus",
            "--pattern",
            "rand-read",
            "--request-kib",
            "8",
            "--requests",
            "50000",
            "--queue-depth",
            "256",
            "--span-gib",
            "2",
        ],
    );
    let iops = f(&r, "iops");
    let limit = r["analytic_limits"]["page_read_iops"].as_f64().unwrap();
    assert!(iops <= limit, "{iops} > {limit}");
    assert!(iops >= 0.6 * limit, "{iops} far below {limit}");
    // Each read occupies a die for at least tR = 81 us.
    assert!(r["latency_us"]["min"].as_f64().unwrap() >= 81.0);
}

#[test]
fn random_writes_on_a_filled_device_trigger_gc_and_a_latency_tail() {
    let d = tmp();
    let r = run_json(
        d.path(),
        "rw.json",
        &[
            "io",
            "--preset",
            "test-min",
            "--pattern",
            "rand-write",
            "--request-kib",
            "4",
            "--requests",
            "5000",
            "--queue-depth",
            "8",
            "--precondition",
        ],
    );
    assert!(r["gc_runs"].as_u64().unwrap() > 0);
    assert!(r["gc_pages_copied"].as_u64().unwrap() > 0);
    assert!(f(&r, "waf") > 1.0);
    let lat = &r["latency_us"];
    assert!(lat["p99"].as_f64().unwrap() > 3.0 * lat["p50"].as_f64().unwrap());
}

#[test]
fn reads_without_preconditioning_cost_no_flash_access() {
    let d = tmp();
    let r = run_json(
        d.path(),
        "np.json",
        &[
            "io",
            "--preset",
            "test-min",
            "--pattern",
            "rand-read",
            "--requests",
            "500",
            "--no-precondition",
        ],
    );
    assert_eq!(r["flash_page_reads"].as_u64().unwrap(), 0);
    assert!(r["precondition"].is_null());
}

#[test]
fn functional_mixed_run_verifies_every_read() {
    let d = tmp();
    let mut a = RAND_MIXED.to_vec();
    a.extend(["--fidelity", "functional"]);
    let r = run_json(d.path(), "fn.json", &a);
    assert_eq!(r["requests_failed"].as_u64().unwrap(), 0);
    assert!(r["reads_verified"].as_u64().unwrap() > 1000);
    assert!(r["gc_runs"].as_u64().unwrap() > 0);
}

#[test]
fn functional_run_over_a_sparse_file_store() {
    let d = tmp();
    let store = d.path().join("flash.img");
    let s = store.to_str().unwrap().to_string();
    let mut a = RAND_MIXED.to_vec();
    a.extend(["--fidelity", "functional", "--store-file", &s]);
    let r = run_json(d.path(), "file.json", &a);
    assert!(r["reads_verified"].as_u64().unwrap() > 1000);
    assert!(store.exists());
}

fn sample_trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces/msr.csv")
}

#[test]
fn msr_trace_replays_open_loop_with_time_scale() {
    let d = tmp();
    let t = format!("msr:{}", sample_trace().display());
    let r1 = run_json(
        d.path(),
        "t1.json",
        &["io", "--preset", "flashabacus", "--trace", &t],
    );
    assert_eq!(r1["requests"].as_u64().unwrap(), 20);
    let r2 = run_json(
        d.path(),
        "t2.json",
        &[
            "io",
            "--preset",
            "flashabacus",
            "--trace",
            &t,
            "--time-scale",
            "0.5",
        ],
    );
    assert!(f(&r2, "sim_time_s") < f(&r1, "sim_time_s"));
}

#[test]
fn trace_past_capacity_is_an_error_unless_folded() {
    let d = tmp();
    let t = format!("msr:{}", sample_trace().display());
    fails_naming(
        &["io", "--preset", "test-min", "--trace", &t],
        "beyond the device",
    );
    let r = run_json(
        d.path(),
        "fold.json",
        &[
            "io",
            "--preset",
            "test-min",
            "--trace",
            &t,
            "--fold-offsets",
        ],
    );
    assert!(r["workload"]["folded_offsets"].as_u64().unwrap() > 0);
}

#[test]
fn malformed_trace_line_is_named() {
    let d = tmp();
    let p = d.path().join("bad.csv");
    std::fs::write(
        &p,
        "128166372003061629,hm,0,Read,4096,4096,1\n128166372003061630,hm,0,Rite,0,4096,1\n",
    )
    .unwrap();
    let t = format!("msr:{}", p.display());
    fails_naming(&["io", "--preset", "test-min", "--trace", &t], "line 2");
    fails_naming(
        &["io", "--preset", "test-min", "--trace", "csv:x"],
        "FORMAT:PATH with FORMAT one of msr,",
    );
    fails_naming(
        &[
            "io",
            "--preset",
            "test-min",
            "--trace",
            "msr:/nonexistent/t.csv",
        ],
        "/nonexistent/t.csv",
    );
}

#[test]
fn bad_presets_and_overrides_are_named() {
    let base = ["io", "--pattern", "rand-read", "--requests", "10"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    fails_naming(&with(&["--preset", "nosuch"]), "unknown preset");
    fails_naming(
        &with(&["--preset", "test-min", "--set", "flash.channel_rate_mb_s=0"]),
        "flash.channel_rate_mb_s",
    );
    fails_naming(
        &with(&["--preset", "test-min", "--set", "flash.channels=0"]),
        "flash.channels",
    );
    fails_naming(
        &with(&["--preset", "test-min", "--set", "flash.bogus=1"]),
        "bogus",
    );
    let d = tmp();
    let p = d.path().join("broken.toml");
    std::fs::write(&p, "name = \"x\"\n[flash]\nchannels = \n").unwrap();
    let ps = p.to_str().unwrap().to_string();
    let ps: &'static str = Box::leak(ps.into_boxed_str());
    fails_naming(&with(&["--preset", ps]), "broken.toml");
}

#[test]
fn bad_workloads_are_named() {
    let rr = ["io", "--preset", "test-min", "--pattern", "rand-read"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = rr.to_vec();
        v.extend_from_slice(extra);
        v
    };
    fails_naming(&with(&["--requests", "10", "--span-gib", "1"]), "beyond");
    fails_naming(
        &with(&["--requests", "10", "--queue-depth", "0"]),
        "--queue-depth",
    );
    fails_naming(&with(&["--requests", "0"]), "--requests");
    fails_naming(&with(&[]), "--requests N or --total-gib");
    fails_naming(&with(&["--total-gib=-1"]), "--total-gib");
    fails_naming(
        &with(&["--requests", "10", "--store-file", "/tmp/x"]),
        "--fidelity functional",
    );
    let big = [
        "io",
        "--preset",
        "flashabacus",
        "--pattern",
        "rand-read",
        "--requests",
        "10",
        "--fidelity",
        "functional",
    ];
    fails_naming(&big, "--store-file");
}

#[test]
fn presets_command_lists_and_prints() {
    let out = nearflash(&["presets"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("flashabacus") && s.contains("test-min"));
    // Each line names the tables beyond [flash] and [ftl]: what the preset can run.
    let line = |name: &str| s.lines().find(|l| l.starts_with(name)).unwrap_or_default();
    assert!(line("flashabacus ").contains(" host ssd accel "), "{s}");
    assert!(line("active-flash ").contains(" active_flash "), "{s}");
    let out = nearflash(&["presets", "flashabacus"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("read_latency_us = 81.0"));
}

const ZONED_WRITE: &[&str] = &[
    "io",
    "--preset",
    "test-min",
    "--set",
    "zns.enabled=true",
    "--pattern",
    "seq-write",
    "--request-kib",
    "16",
    "--requests",
    "2000",
    "--queue-depth",
    "4",
];

/// On a zoned drive `nearflash io` writes zones sequentially, four at a time, wraps to the
/// first zones and resets them; with no device GC every host byte is programmed once.
#[test]
fn io_on_a_zoned_drive_fills_zones_sequentially_and_resets_them_at_waf_one() {
    let dir = tmp();
    for (name, append) in [("w.json", false), ("a.json", true)] {
        let mut args = ZONED_WRITE.to_vec();
        if append {
            args.push("--zone-append");
        }
        let v = run_json(dir.path(), name, &args);
        let done = if append { "appends" } else { "writes" };
        assert_eq!(f(&v, done), 2000.0, "{v}");
        // 2000 × 16 KiB = 31.25 MiB over a 11 MiB zoned drive: every zone is reset on the wrap.
        assert!(f(&v, "resets") >= f(&v, "zones"), "{v}");
        assert_eq!(f(&v, "zone_full_errors") + f(&v, "boundary_errors"), 0.0);
        assert!((0.99..1.05).contains(&f(&v, "waf")), "{v}");
    }
}

#[test]
fn random_writes_and_traces_on_a_zoned_drive_are_refused_by_name() {
    let mut args = ZONED_WRITE.to_vec();
    args[6] = "rand-write";
    fails_naming(&args, "write pointer");
    fails_naming(
        &[
            "io",
            "--preset",
            "test-min",
            "--set",
            "zns.enabled=true",
            "--trace",
            "iolog:examples/traces/iolog-v3.log",
        ],
        "--trace on a zoned drive",
    );
    let mut args = RAND_MIXED.to_vec();
    args.push("--zone-append");
    fails_naming(&args, "--zone-append needs a zoned drive");
}

/// With `[fdp]` on, the report carries FDP's statistics over the phase; their WAF is the
/// report's own (flash page programs per host page), and without it there is no `fdp` key.
#[test]
fn an_fdp_drive_reports_its_statistics_and_their_waf_is_the_reports() {
    let dir = tmp();
    let args = [
        "--preset",
        "test-min",
        "--set",
        "ftl.mapping=\"page\"",
        "--pattern",
        "rand-write",
        "--request-kib",
        "4",
        "--requests",
        "5000",
        "--precondition",
    ];
    let plain = run_json(dir.path(), "plain.json", &[&["io"][..], &args].concat());
    assert!(plain.get("fdp").is_none());
    let r = run_json(
        dir.path(),
        "fdp.json",
        &[
            &["io", "--set", "fdp.enabled=true", "--set", "fdp.handles=2"][..],
            &args,
        ]
        .concat(),
    );
    let fdp = &r["fdp"];
    assert_eq!(fdp["host_bytes_written"], 5000 * 4096);
    let waf = fdp["waf"].as_f64().unwrap();
    assert!(
        (waf - f(&r, "waf")).abs() < 1e-9,
        "{waf} vs {}",
        f(&r, "waf")
    );
    assert_eq!(fdp["handles"].as_array().unwrap().len(), 2);
}
