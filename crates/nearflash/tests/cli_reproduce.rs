//! `nearflash reproduce flashabacus` through the real binary, restricted to a few workloads
//! so it runs in seconds: it writes summary.json with the schema and report.html
//! with the figures, and is deterministic apart from the wall time. Bad arguments are named.

mod common;
use common::{fails_naming, nearflash};

fn reproduce(dir: &std::path::Path, only: &str, jobs: &str) -> serde_json::Value {
    let out = nearflash(&[
        "reproduce",
        "flashabacus",
        "--only",
        only,
        "--jobs",
        jobs,
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("intra_o3_vs_simd_throughput"), "{stdout}");
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn a_restricted_reproduction_writes_claims_runs_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let v = reproduce(dir.path(), "atax,gemm,mx2,nn", "2");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        2 * 4 * 5,
        "every workload under all five systems and both cost models"
    );
    // The configured (default) model's runs come first.
    assert!(runs[..20]
        .iter()
        .all(|r| r["extra"]["cost_model"] == "counted"));
    assert!(runs[20..]
        .iter()
        .all(|r| r["extra"]["cost_model"] == "table2"));
    for r in runs {
        for key in [
            "system",
            "workload",
            "throughput_mb_s",
            "latency_ms",
            "energy_j",
            "utilization",
        ] {
            assert!(!r[key].is_null(), "run lacks {key}: {r}");
        }
        assert!(r["throughput_mb_s"].as_f64().unwrap() > 0.0);
        for k in ["min", "avg", "max"] {
            assert!(r["latency_ms"][k].as_f64().unwrap() > 0.0);
        }
    }
    let claims = v["claims"].as_array().unwrap();
    let ids: Vec<&str> = claims.iter().map(|c| c["id"].as_str().unwrap()).collect();
    for id in [
        "intra_o3_vs_simd_throughput",
        "intra_o3_vs_simd_energy",
        "flashabacus_vs_simd_data_intensive",
        "inter_dy_vs_inter_st_heterogeneous",
        "intra_o3_vs_inter_dy_heterogeneous",
        "inter_dy_utilization_homogeneous",
        "intra_o3_utilization_heterogeneous",
        "s56_intra_o3_vs_simd_throughput",
        "s56_intra_o3_energy_saving",
    ] {
        assert!(ids.contains(&id), "claim {id} missing from {ids:?}");
        let other = format!("{id}.table2");
        assert!(ids.contains(&other.as_str()), "claim {other} missing");
    }
    for c in claims {
        for key in ["description", "paper", "ours", "unit", "note", "reference"] {
            assert!(!c[key].is_null(), "claim lacks {key}: {c}");
        }
        assert!(
            ["paper_figure", "own_bound", "direction"].contains(&c["reference"].as_str().unwrap()),
            "{c}"
        );
    }
    // Every run records how many of its instances reuse flash an earlier one still holds,
    // and the mix claims' notes are written from those counts.
    for r in runs {
        assert!(
            r["extra"]["reused_instances"].is_u64(),
            "run lacks reused_instances: {r}"
        );
        assert!(r["extra"]["lock_wait"]["instances_waiting"].is_u64(), "{r}");
        // §5.4's utilization (execution time, flash waits included) is at least the
        // computing-only one.
        let (u, c) = (
            r["utilization"].as_f64().unwrap(),
            r["extra"]["worker_compute_utilization"].as_f64().unwrap(),
        );
        assert!(u + 1e-9 >= c && u <= 1.0 + 1e-9, "{u} vs {c}: {r}");
    }
    let mix_note = claims
        .iter()
        .find(|c| c["id"] == "intra_o3_vs_inter_dy_heterogeneous")
        .unwrap()["note"]
        .as_str()
        .unwrap();
    assert!(
        mix_note.contains("reuse flash") || mix_note.contains("flash of its own"),
        "{mix_note}"
    );
    assert!(v["wall_s"].as_f64().unwrap() > 0.0);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for fig in [
        "Fig. 10a", "Fig. 12a", "Fig. 13a", "Fig. 14b", "Fig. 15b", "Fig. 16a",
    ] {
        assert!(html.contains(fig), "report lacks {fig}");
    }
    assert!(html.matches("<svg").count() >= 14);
    assert!(html.contains("Claims under both cost models"));
}

#[test]
fn same_seed_gives_the_same_summary_for_any_job_count_apart_from_wall_time() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut x = reproduce(a.path(), "atax,gemm", "1");
    let mut y = reproduce(b.path(), "atax,gemm", "2");
    x["wall_s"] = serde_json::json!(0);
    y["wall_s"] = serde_json::json!(0);
    assert_eq!(x, y);
    let html = |d: &tempfile::TempDir| {
        let h = std::fs::read_to_string(d.path().join("report.html")).unwrap();
        // The header carries the wall time: cut it out.
        let at = h.find(" · wall ").expect("wall time in the header");
        let end = at + h[at..].find("</p>").unwrap();
        format!("{}{}", &h[..at], &h[end..])
    };
    assert_eq!(html(&a), html(&b));
}

#[test]
fn bad_reproduce_arguments_are_named() {
    fails_naming(&["reproduce", "hayagui2"], "unknown paper 'hayagui2'");
    fails_naming(
        &["reproduce", "flashabacus", "--only", "atax,nosuch"],
        "'nosuch' is not a workload",
    );
    fails_naming(&["reproduce", "flashabacus", "--jobs", "0"], "--jobs");
    fails_naming(
        &["reproduce", "flashabacus", "--fidelity", "exact"],
        "unknown fidelity 'exact'",
    );
    fails_naming(
        &[
            "reproduce",
            "flashabacus",
            "--dataset",
            "huge",
            "--only",
            "gemm",
        ],
        "huge",
    );
    // Real data at paper size would need ~10 GiB of RAM: refused before running.
    fails_naming(
        &[
            "reproduce",
            "flashabacus",
            "--fidelity",
            "functional",
            "--dataset",
            "paper",
            "--only",
            "atax",
        ],
        "MiB",
    );
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(["kernel", "--table2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_functional_reproduction_verifies_every_instance_of_every_system() {
    let dir = tempfile::tempdir().unwrap();
    let out = nearflash(&[
        "reproduce",
        "flashabacus",
        "--fidelity",
        "functional",
        "--only",
        "atax,mx4,bfs",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    // 5 systems (SIMD and the 4 FlashAbacus schedulers) × (6 + 24 + 6) instances.
    assert!(
        stdout.contains("180 kernel instances computed real data"),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(v["fidelity"], "functional");
    assert_eq!(v["runs"].as_array().unwrap().len(), 15);
}

/// Story (issue 28): with `--jobs` above 1 the simulations ran on worker threads that never
/// looked for Ctrl-C. Now SIGINT stops every worker at its next poll: the command exits 130
/// within seconds saying it was interrupted, and leaves no output (the directory it created
/// is removed; outputs are only ever written, atomically, at the end).
#[test]
fn ctrl_c_stops_a_reproduction_on_every_worker_and_leaves_no_output() {
    for jobs in ["2", "1"] {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("out");
        // The whole FlashAbacus evaluation takes minutes: the signal comes long before its end.
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nearflash"))
            .args(["reproduce", "flashabacus", "--jobs", jobs, "--out"])
            .arg(&out_dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(child.try_wait().unwrap().is_none(), "still running");
        // SAFETY: a signal to the child this test started and has not reaped.
        let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(rc, 0);
        let t0 = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("--jobs {jobs}: still running 20 s after Ctrl-C");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let wall = t0.elapsed();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(130), "--jobs {jobs}: {err}");
        assert!(err.contains("interrupted (Ctrl-C)"), "--jobs {jobs}: {err}");
        assert!(!err.contains("panicked"), "--jobs {jobs}: {err}");
        assert!(
            !out_dir.exists(),
            "--jobs {jobs}: left {}",
            out_dir.display()
        );
        assert!(
            wall < std::time::Duration::from_secs(5),
            "--jobs {jobs}: stopped {wall:?} after Ctrl-C"
        );
        println!("--jobs {jobs}: stopped {wall:?} after Ctrl-C");
    }
}
