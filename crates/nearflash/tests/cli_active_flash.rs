//! `nearflash model active-flash` and `nearflash reproduce active-flash`: the model table and
//! Fig. 1, a small reproduction's summary.json, and bad input failing with a named error.

mod common;

use common::{fails_naming, nearflash};

#[test]
fn model_prints_the_seed_parameters_and_writes_fig1() {
    let dir = tempfile::tempdir().unwrap();
    let out = nearflash(&[
        "model",
        "active-flash",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("s = host / controller speed = 7922 / 1600 DMIPS = 4.9512"),
        "{text}"
    );
    assert!(text.contains("0.2020"), "the knee x = 1/s: {text}");
    let svg = std::fs::read_to_string(dir.path().join("fig1.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg:.80}");
}

#[test]
fn small_reproduction_writes_summary_with_the_issue_claims() {
    let dir = tempfile::tempdir().unwrap();
    let out = nearflash(&[
        "reproduce",
        "active-flash",
        "--volume-mib",
        "8",
        "--foreground-mb-s",
        "8,60",
        "--splits",
        "0,0.5",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let ids: Vec<&str> = json["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in [
        "model_saving_at_60pct_host_utilization",
        "model_saving_light_computation",
        "fig2_foreground_limit_io_only",
        "fig3_throughput_peak_controller_share",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert_eq!(json["runs"].as_array().unwrap().len(), 2 * 2 + 2);
    assert!(dir.path().join("report.html").exists());
}

#[test]
fn same_seed_same_summary_apart_from_wall_time() {
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let out = nearflash(&[
            "reproduce",
            "active-flash",
            "--volume-mib",
            "4",
            "--foreground-mb-s",
            "20",
            "--splits",
            "0.2",
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
        let mut json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        json["wall_s"] = serde_json::Value::Null;
        json
    };
    assert_eq!(run(), run());
}

#[test]
fn split_outside_unit_range_is_named() {
    fails_naming(
        &["reproduce", "active-flash", "--splits", "0.2,1.5"],
        "controller share",
    );
}

#[test]
fn zero_controller_clock_is_named() {
    fails_naming(
        &[
            "model",
            "active-flash",
            "--set",
            "active_flash.controller_clock_mhz=0",
        ],
        "controller_clock_mhz",
    );
}

#[test]
fn foreground_above_the_devices_throughput_is_named() {
    fails_naming(
        &[
            "reproduce",
            "active-flash",
            "--volume-mib",
            "4",
            "--foreground-mb-s",
            "500",
            "--splits",
            "0",
        ],
        "exceeds the device's 4 KiB random-write ceiling",
    );
}

#[test]
fn preset_without_active_flash_table_is_named() {
    fails_naming(
        &["model", "active-flash", "--preset", "test-min"],
        "no [active_flash] table",
    );
}
