//! `nearflash run` through the real binary: a small run reports and writes JSON; an unknown
//! system, workload or kernel, and a dataset that does not fit the device, exit non-zero with
//! an error naming the culprit.

use std::process::Command;

fn nearflash(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(args)
        .output()
        .expect("runs the binary")
}

fn fails_naming(args: &[&str], name: &str) {
    let out = nearflash(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(stderr.contains(name), "{stderr}");
}

#[test]
fn a_small_run_reports_throughput_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = nearflash(&[
        "run",
        "--preset",
        "test-min",
        "--system",
        "intra-o3",
        "--workload",
        "gemm",
        "--dataset",
        "mini",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("throughput") && stdout.contains("Flashvisor"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(v["report"]["scheduler"], "intra-o3");
    assert_eq!(v["report"]["instances"].as_array().unwrap().len(), 6);
    assert_eq!(v["report"]["lwp_utilization"].as_array().unwrap().len(), 8);
}

#[test]
fn unknown_system_is_named() {
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "simd2",
            "--workload",
            "atax",
        ],
        "simd2",
    );
}

#[test]
fn unknown_workload_or_kernel_is_named() {
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "inter-dy",
            "--workload",
            "mx99",
        ],
        "mx99",
    );
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "inter-dy",
            "--workload",
            "fft",
        ],
        "fft",
    );
}

#[test]
fn a_dataset_that_does_not_fit_the_device_is_an_error() {
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "inter-dy",
            "--workload",
            "atax",
            "--dataset",
            "paper",
        ],
        "logical bytes",
    );
}

#[test]
fn zero_screens_per_microblock_is_named() {
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "intra-o3",
            "--workload",
            "gemm",
            "--dataset",
            "mini",
            "--set",
            "accel.screens_per_microblock=0",
        ],
        "accel.screens_per_microblock",
    );
}
