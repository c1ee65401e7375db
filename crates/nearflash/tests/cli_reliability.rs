//! Issue 12, tried as a hostile but ordinary user would: every command below used to hang,
//! panic, lose data, report nonsense or silently ignore what it was told. Each test opens
//! with the story of what went wrong.

mod common;
use common::{fails_naming, nearflash};
use serde_json::Value;

fn json_of(args: &[&str], dir: &std::path::Path, name: &str) -> (std::process::Output, Value) {
    let path = dir.join(name);
    let p = path.to_str().unwrap().to_string();
    let mut all = args.to_vec();
    all.extend(["--quiet", "--json", &p]);
    let out = nearflash(&all);
    let v = std::fs::read_to_string(&path)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out, v)
}

/// Story: 64 channels × 2 planes make a 128-page group; the page masks were one u64, the
/// group's write submitted no flash operation, and the run spun on the checkpoint timer.
#[test]
fn sixty_four_channels_on_flashabacus_complete_a_sequential_write() {
    let dir = tempfile::tempdir().unwrap();
    let (out, v) = json_of(
        &[
            "io",
            "--preset",
            "flashabacus",
            "--set",
            "flash.channels=64",
            "--pattern",
            "seq-write",
            "--request-kib",
            "64",
            "--requests",
            "50",
        ],
        dir.path(),
        "io.json",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["requests"], 50);
    assert_eq!(v["requests_failed"], 0);
}

/// Story: with 4097-byte pages the crash test lost acknowledged writes and read garbage.
#[test]
fn a_page_size_that_is_not_a_sector_multiple_loses_nothing_in_the_crash_test() {
    let out = nearflash(&[
        "crashtest",
        "--preset",
        "test-min",
        "--set",
        "flash.page_size_bytes=4097",
        "--seeds",
        "4",
        "--quiet",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("4 passed, 0 failed"), "{stdout}");
}

/// Story: with injected program failures 28% of requests failed, the exit status was 0 and
/// the IOPS were 9× the healthy device's — failures completed fast and counted as I/O.
#[test]
fn failed_requests_are_counted_by_kind_left_out_of_iops_and_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "io",
        "--preset",
        "test-min",
        "--set",
        "flash.program_fail_probability=0.2",
        "--pattern",
        "rand-write",
        "--requests",
        "3000",
        "--queue-depth",
        "8",
    ];
    let (out, v) = json_of(&args, dir.path(), "fail.json");
    assert!(!out.status.success(), "failures must fail the run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-failures"), "{err}");
    let failed = v["requests_failed"].as_u64().unwrap();
    assert!(failed > 0, "{v}");
    let by_kind: u64 = v["requests_failed_by_kind"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(by_kind, failed);
    // IOPS count the successful requests only.
    let ok = (v["requests"].as_u64().unwrap() - failed) as f64;
    let iops = v["iops"].as_f64().unwrap() * v["sim_time_s"].as_f64().unwrap();
    assert!((iops - ok).abs() < 1.0, "{iops} vs {ok}");

    let mut allowed = args.to_vec();
    allowed.push("--allow-failures");
    let (out, v2) = json_of(&allowed, dir.path(), "allowed.json");
    assert!(out.status.success());
    assert_eq!(v2["requests_failed"], v["requests_failed"]);
}

/// Story: `--precondition --no-precondition` silently let the last one win.
#[test]
fn conflicting_or_inapplicable_flags_are_refused() {
    let base = ["io", "--preset", "test-min", "--pattern", "rand-read"];
    let mut a = base.to_vec();
    a.extend(["--requests", "10", "--precondition", "--no-precondition"]);
    fails_naming(&a, "cannot be used with");
    let mut a = base.to_vec();
    a.extend(["--requests", "10", "--read-percent", "50"]);
    fails_naming(&a, "--read-percent applies to --pattern mixed only");
    let mut a = base.to_vec();
    a.extend(["--requests", "10", "--disk", "1"]);
    fails_naming(&a, "apply to --trace only");
    // `reproduce insider --only` ran every application anyway.
    fails_naming(&["reproduce", "insider", "--only", "grep"], "--only");
    fails_naming(
        &["reproduce", "insider", "--splits", "0.5"],
        "--splits applies to `reproduce active-flash` only",
    );
}

/// Story: a refused `reproduce` (an option its paper does not take, found only once the run
/// starts) left an empty `reproduce-PAPER` directory in the working directory — the test
/// suite's own refusals littered `crates/nearflash/` with them.
#[test]
fn a_refused_reproduction_leaves_no_output_directory() {
    let cwd = tempfile::tempdir().unwrap();
    for args in [
        &["reproduce", "insider", "--splits", "0.5"][..],
        &["reproduce", "insider", "--set", "insider.credits_initial=0"][..],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_nearflash"))
            .args(args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        let left: Vec<_> = std::fs::read_dir(cwd.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

/// Story: `ftl.over_provisioning_percent` changed nothing on test-min.
#[test]
fn over_provisioning_changes_the_reported_capacity() {
    let dir = tempfile::tempdir().unwrap();
    let cap = |op: &str| {
        let set = format!("ftl.over_provisioning_percent={op}");
        let (out, v) = json_of(
            &[
                "io",
                "--preset",
                "test-min",
                "--set",
                &set,
                "--pattern",
                "seq-write",
                "--requests",
                "10",
            ],
            dir.path(),
            &format!("op{op}.json"),
        );
        assert!(out.status.success());
        v["logical_capacity_bytes"].as_u64().unwrap()
    };
    assert!(cap("0") > cap("10"));
    assert!(cap("10") > cap("30"));
}

/// Story: a trace that never ends (`/dev/zero`, an endless generator) was read into memory
/// whole.
#[test]
fn an_endless_or_oversized_trace_is_refused_in_bounded_memory() {
    fails_naming(
        &["io", "--preset", "flashabacus", "--trace", "msr:/dev/zero"],
        "longer than 4096 bytes",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    let line = "128166372003061629,hm,1,Read,4096,4096,1472\n";
    std::fs::write(&path, line.repeat(100)).unwrap();
    let t = format!("msr:{}", path.display());
    fails_naming(
        &[
            "io",
            "--preset",
            "flashabacus",
            "--trace",
            &t,
            "--trace-requests-max",
            "10",
        ],
        "more than 10 requests",
    );
}

/// Story: a crash test of a paper-scale device tried to hold 32 GiB of pages in RAM, and a
/// demo of a huge file tried to hold it all.
#[test]
fn runs_sized_past_the_memory_limit_refuse_up_front() {
    fails_naming(
        &["crashtest", "--preset", "flashabacus", "--seeds", "1"],
        "--memory-max-mib",
    );
    fails_naming(
        &["vfile", "demo", "--size-mib", "1000000"],
        "--memory-max-mib",
    );
}

/// Story: an extreme timing value passed validation and panicked with "simulated time
/// overflow" deep in the backbone.
#[test]
fn extreme_timing_values_are_validation_errors_not_panics() {
    for set in [
        "flash.erase_latency_us=1e300",
        "flash.channel_rate_mb_s=1e-300",
        "ftl.checkpoint_interval_us=1e300",
    ] {
        let field = set.split('=').next().unwrap();
        fails_naming(
            &[
                "io",
                "--preset",
                "test-min",
                "--set",
                set,
                "--pattern",
                "seq-write",
                "--requests",
                "10",
            ],
            field,
        );
    }
}

/// Story: outputs were checked only when written, after the whole run.
#[test]
fn an_unwritable_output_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no/such/dir/out.json");
    let b = bad.to_str().unwrap();
    // A run of minutes: the error must come before it.
    let t0 = std::time::Instant::now();
    fails_naming(
        &[
            "io",
            "--preset",
            "flashabacus",
            "--pattern",
            "rand-write",
            "--requests",
            "100000000",
            "--json",
            b,
        ],
        "does not exist",
    );
    fails_naming(&["crashtest", "--json", b], "does not exist");
    assert!(t0.elapsed().as_secs() < 30);
}

/// Story: a killed rerun of `reproduce` left the previous run's summary.json looking current.
#[test]
fn a_rerun_of_reproduce_removes_the_previous_outputs_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.json");
    std::fs::write(&summary, "{\"stale\": true}").unwrap();
    std::fs::write(dir.path().join("report.html"), "stale").unwrap();
    // This rerun fails after starting (the preset has no INSIDER drive): the stale outputs
    // must be gone, not left looking like its result.
    fails_naming(
        &[
            "reproduce",
            "insider",
            "--preset",
            "test-min",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        "insider",
    );
    assert!(!summary.exists());
    assert!(!dir.path().join("report.html").exists());
}
