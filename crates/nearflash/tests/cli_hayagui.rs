//! Hayagui through the real binary: `fileops` on both paths, its JSON, and bad input named.

mod common;
use common::{fails_naming, nearflash};

#[test]
fn fileops_times_both_paths_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    for access in ["direct", "redirected"] {
        let json = dir.path().join(format!("{access}.json"));
        let out = nearflash(&[
            "fileops",
            "--access",
            access,
            "--op",
            "write-sync",
            "--size-kib",
            "16",
            "--count",
            "5",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(v["access"], access);
        assert_eq!(v["verified_bytes"], 5 * 16 * 1024);
        assert!(v["latency"]["mean_ns"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bad_fileops_input_is_named() {
    let base = [
        "fileops",
        "--access",
        "direct",
        "--op",
        "read",
        "--size-kib",
    ];
    fails_naming(&[&base[..], &["4", "--count", "0"]].concat(), "--count");
    fails_naming(&[&base[..], &["0"]].concat(), "--size-kib");
    fails_naming(
        &[
            "fileops",
            "--access",
            "host",
            "--op",
            "read",
            "--size-kib",
            "4",
        ],
        "host",
    );
    fails_naming(
        &[
            "fileops",
            "--access",
            "direct",
            "--op",
            "append",
            "--size-kib",
            "4",
        ],
        "append",
    );
    fails_naming(
        &[&base[..], &["4", "--preset", "test-min"]].concat(),
        "[hayagui]",
    );
    fails_naming(
        &[
            &base[..],
            &["4", "--set", "hayagui.accelfs.chunk_bytes=1000"],
        ]
        .concat(),
        "accelfs.chunk_bytes",
    );
}
