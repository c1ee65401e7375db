//! `nearflash run` through the real binary: a small run reports and writes JSON; a
//! functional run verifies every instance and prints the verdicts; an unknown system,
//! workload, kernel or fidelity, and a dataset that does not fit the device, exit non-zero
//! with an error naming the culprit.

mod common;
use common::{fails_naming, nearflash};

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

#[test]
fn simd_runs_with_energy_and_chunks_under_a_small_ddr3l() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = nearflash(&[
        "run",
        "--preset",
        "flashabacus",
        "--set",
        "accel.ddr_bytes=69632",
        "--system",
        "simd",
        "--workload",
        "atax",
        "--dataset",
        "mini",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("energy total") && stdout.contains("host_cpu"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let r = &v["report"];
    assert_eq!(r["scheduler"], "simd");
    assert!(r["instances"][0]["chunks"].as_u64().unwrap() > 1);
    let e = &r["energy_j"];
    let parts = ["data_movement", "computation", "storage_access"]
        .iter()
        .map(|k| e[k].as_f64().unwrap())
        .sum::<f64>();
    assert!((parts - e["total"].as_f64().unwrap()).abs() < 1e-9);
    assert!(e["per_component"]["ssd"]["energy_j"].as_f64().unwrap() > 0.0);
}

#[test]
fn zero_power_and_unknown_system_are_named() {
    fails_naming(
        &[
            "run",
            "--preset",
            "flashabacus",
            "--set",
            "host.ssd_active_power_w=0",
            "--system",
            "simd",
            "--workload",
            "atax",
        ],
        "host.ssd_active_power_w",
    );
    fails_naming(
        &[
            "run",
            "--preset",
            "flashabacus",
            "--set",
            "accel.backbone_active_power_w=0",
            "--system",
            "intra-o3",
            "--workload",
            "atax",
        ],
        "accel.backbone_active_power_w",
    );
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "simd3",
            "--workload",
            "atax",
        ],
        "simd, inter-st",
    );
    fails_naming(
        &[
            "run",
            "--preset",
            "test-min",
            "--system",
            "simd",
            "--workload",
            "atax",
        ],
        "[host]",
    );
}

#[test]
fn a_functional_run_verifies_every_instance_and_prints_the_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("f.json");
    let out = nearflash(&[
        "run",
        "--system",
        "intra-o3",
        "--workload",
        "bicg",
        "--dataset",
        "mini",
        "--fidelity",
        "functional",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("functional verification: 6 of 6 instances match"),
        "{stdout}"
    );
    assert!(stdout.contains("s, q") && stdout.contains("ok"), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(v["fidelity"], "functional");
    let checks = v["verification"].as_array().unwrap();
    assert_eq!(checks.len(), 6);
    assert!(checks.iter().all(|c| c["ok"] == true));
}

#[test]
fn unknown_fidelity_and_functional_memory_limits_are_named() {
    let base = [
        "run",
        "--system",
        "intra-o3",
        "--workload",
        "atax",
        "--dataset",
        "mini",
    ];
    fails_naming(
        &[&base[..], &["--fidelity", "exact"]].concat(),
        "unknown fidelity 'exact'",
    );
    fails_naming(
        &[
            &base[..],
            &["--fidelity", "functional", "--max-functional-mib", "0"],
        ]
        .concat(),
        "above the limit of 0 MiB",
    );
}

/// SIMD in functional fidelity, its instances cut into passes by a DDR3L of 4 KiB beside the
/// 64 KiB kernel description: every instance read back from the SSD matches its reference.
#[test]
fn a_functional_simd_run_in_passes_verifies_every_instance() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = nearflash(&[
        "run",
        "--system",
        "simd",
        "--set",
        "accel.ddr_bytes=69632",
        "--workload",
        "mvt",
        "--dataset",
        "mini",
        "--fidelity",
        "functional",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("functional verification: 6 of 6 instances match"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(v["report"]["scheduler"], "simd");
    assert!(v["report"]["instances"][0]["chunks"].as_u64().unwrap() > 1);
    let checks = v["verification"].as_array().unwrap();
    assert!(checks.len() == 6 && checks.iter().all(|c| c["ok"] == true));
}
