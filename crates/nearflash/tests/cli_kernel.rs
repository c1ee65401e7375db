//! `nearflash kernel` through the real binary: a run verifies and dumps its live-out arrays
//! in the documented format; bad names and sizes are named.

mod common;
use common::{fails_naming, nearflash};

#[test]
fn gemm_runs_verifies_and_dumps_row_major_f64() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("dump");
    let out = nearflash(&[
        "kernel",
        "gemm",
        "--dataset",
        "mini",
        "--dump-dir",
        d.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("verified against the reference: ok"));
    // PolyBench mini gemm: C is NI x NJ = 20 x 25 doubles.
    let bytes = std::fs::read(d.join("C.f64")).unwrap();
    assert_eq!(bytes.len(), 20 * 25 * 8);
    let first = f64::from_le_bytes(bytes[..8].try_into().unwrap());
    assert!(first.is_finite());
}

#[test]
fn every_workload_verifies_at_mini() {
    // Every name the registry knows, so a workload added there is exercised here too.
    for &k in nearflash_kernels::KERNELS {
        let out = nearflash(&["kernel", k, "--dataset", "mini", "--seed", "3"]);
        assert!(
            out.status.success(),
            "{k}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn bad_kernel_inputs_are_named() {
    for (args, needle) in [
        (vec!["kernel", "nosuch"], "unknown kernel"),
        (
            vec!["kernel", "gemm", "--dataset", "huge"],
            "unknown dataset",
        ),
        (vec!["kernel", "gemm", "--screens", "0"], "--screens"),
    ] {
        fails_naming(&args, needle);
    }
}
