//! `nearflash crashtest` through the real binary: a short sweep passes with the documented
//! last line and JSON summary; bad arguments are named.

mod common;
use common::{fails_naming, nearflash};

#[test]
fn short_sweep_loses_nothing_and_ends_with_the_pass_line() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("crash.json");
    let out = nearflash(&[
        "crashtest",
        "--preset",
        "test-min",
        "--seeds",
        "8",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("8 passed, 0 failed"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let s = &v["summary"];
    assert_eq!(s["lost_flushed_writes"], 0);
    assert_eq!(s["wrong_data_reads"], 0);
    let cuts: u64 = s["cuts_by_phase"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(cuts, 8);
    assert!(s["flushed_writes_checked"].as_u64().unwrap() > 0);
}

/// `--set fdp.enabled=true`: writes spread over the placement handles, and the table
/// counts recoveries whose FDP counters were not those the last checkpoint saved.
#[test]
fn an_fdp_drive_loses_nothing_and_keeps_its_logs() {
    let out = nearflash(&[
        "crashtest",
        "--preset",
        "test-min",
        "--set",
        "ftl.mapping=\"page\"",
        "--set",
        "fdp.enabled=true",
        "--set",
        "fdp.handles=3",
        "--seeds",
        "8",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("8 passed, 0 failed"));
    let row = stdout
        .lines()
        .find(|l| l.contains("FDP logs not as checkpointed"))
        .unwrap_or_else(|| panic!("no FDP row: {stdout}"));
    assert!(row.trim_end_matches(['│', ' ']).ends_with(" 0"), "{row}");
    // Page-group mapping cannot keep handles apart: refused, naming the field.
    fails_naming(
        &["crashtest", "--set", "fdp.enabled=true", "--seeds", "1"],
        "fdp.enabled",
    );
}

#[test]
fn same_seeds_give_the_same_summary() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let p = dir.path().join(name);
        let out = nearflash(&[
            "crashtest",
            "--seeds",
            "4",
            "--first-seed",
            "100",
            "--quiet",
            "--json",
            p.to_str().unwrap(),
        ]);
        assert!(out.status.success());
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        v["summary"].clone()
    };
    assert_eq!(run("a.json"), run("b.json"));
}

#[test]
fn bad_arguments_are_named() {
    for (args, needle) in [
        (vec!["crashtest", "--seeds", "0"], "--seeds"),
        (vec!["crashtest", "--ops", "0", "--seeds", "1"], "--ops"),
        (vec!["crashtest", "--preset", "nosuch"], "unknown preset"),
        (
            vec![
                "crashtest",
                "--set",
                "flash.page_size_bytes=0",
                "--seeds",
                "1",
            ],
            "flash.page_size_bytes",
        ),
    ] {
        fails_naming(&args, needle);
    }
}
