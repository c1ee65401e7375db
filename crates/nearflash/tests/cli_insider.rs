//! `nearflash vfile demo` and `nearflash reproduce insider` through the real binary, and
//! their failures on bad input: clear errors, non-zero exit, no panic.

mod common;
use common::{fails_naming, nearflash};

#[test]
fn vfile_demo_reads_verified_matches_and_refuses_another_user() {
    let out = nearflash(&["vfile", "demo", "--size-mib", "4"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("equal to grep's reference"), "{stdout}");
    assert!(
        stdout.contains("permission denied for user bob"),
        "{stdout}"
    );
    assert!(stdout.contains("drive requests issued: 0"), "{stdout}");
}

#[test]
fn reproduce_insider_writes_the_claims() {
    let dir = tempfile::tempdir().unwrap();
    let out = nearflash(&[
        "reproduce",
        "insider",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(v["paper"], "insider");
    let ids: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in [
        "insider_vs_host_only_x8_min",
        "fig10_x8_data_reduction_is_largest",
        "vs_arm_avg",
        "cost_efficiency_avg",
        "fairness_max_deviation_pct",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert!(v["runs"].as_array().unwrap().len() >= 70);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("Fig. 11") && html.contains("<svg"));
}

#[test]
fn bad_insider_configs_and_commands_are_named() {
    fails_naming(
        &["reproduce", "insider", "--set", "insider.credits_initial=0"],
        "insider.credits_initial",
    );
    fails_naming(
        &["vfile", "demo", "--set", "insider.pcie_lanes=3"],
        "insider.pcie_lanes",
    );
    fails_naming(
        &["vfile", "demo", "--preset", "test-min"],
        "no [insider] table",
    );
    fails_naming(&["vfile", "nope"], "unrecognized subcommand");
    fails_naming(
        &["reproduce", "insider", "--preset", "flashabacus"],
        "no [insider] table",
    );
}
