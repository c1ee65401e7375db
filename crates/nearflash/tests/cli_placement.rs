//! `nearflash placement`: the three-way table and its JSON, and bad input failing with a
//! named error.

mod common;

use common::{fails_naming, nearflash};

#[test]
fn placement_prints_the_three_modes_side_by_side_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let out = nearflash(&[
        "placement",
        "--preset",
        "test-min",
        "--passes",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for word in ["conventional", "fdp", "zns", "WAF", "write p99.9 us"] {
        assert!(text.contains(word), "{word}: {text}");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let modes = doc["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 3);
    assert_eq!(modes[2]["mode"], "zns");
    assert!(modes[2]["host_waf"].as_f64().unwrap() >= 1.0);
}

#[test]
fn placement_refuses_an_unknown_mode_and_a_bad_parameter_by_name() {
    fails_naming(&["placement", "--mode", "zoned"], "zoned");
    fails_naming(
        &["placement", "--hot-write-percent", "100"],
        "hot_write_percent",
    );
}
