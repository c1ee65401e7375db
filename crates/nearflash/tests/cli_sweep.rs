//! `nearflash sweep` through the real binary: a small local sweep writes its table and
//! summary and a rerun computes nothing; a spec with an unknown field, an empty grid, a
//! wall-clock metric, and a Ray backend whose Python cannot start each exit non-zero with an
//! error naming the problem.

mod common;
use common::{fails_naming, nearflash};
use std::process::Command;

const SPEC: &str = "job = \"io\"\npreset = \"test-min\"\nmetrics = [\"iops\", \"trace_hash\"]\n[fixed]\npattern = \"rand-read\"\nrequests = 200\n[grid]\nqueue_depth = [1, 8]\n";

fn spec(dir: &std::path::Path, text: &str) -> String {
    let p = dir.join("spec.toml");
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_local_sweep_writes_its_table_and_summary_and_a_rerun_computes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = spec(dir.path(), SPEC);
    let out = dir.path().join("out");
    let args = ["sweep", &s, "--out", out.to_str().unwrap(), "--jobs", "2"];
    let first = nearflash(&args);
    assert!(first.status.success(), "{first:?}");
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(stdout.contains("2 points (2 computed now"), "{stdout}");
    let table = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        table.starts_with("point,seed,queue_depth,iops,trace_hash\n"),
        "{table}"
    );
    assert_eq!(table.lines().count(), 3);
    assert!(out.join("summary.html").exists());
    let again = nearflash(&args);
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 computed now"));
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        table
    );
}

#[test]
fn bad_specs_are_errors_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let s = spec(dir.path(), &format!("colour = 1\n{SPEC}"));
    fails_naming(&["sweep", &s, "--out", o], "unknown field `colour`");
    let s = spec(
        dir.path(),
        &SPEC.replace("queue_depth = [1, 8]", "queue_depth = []"),
    );
    fails_naming(&["sweep", &s, "--out", o], "grid.queue_depth is empty");
    let s = spec(
        dir.path(),
        &SPEC.replace("[grid]\nqueue_depth = [1, 8]\n", "[grid]\n"),
    );
    fails_naming(&["sweep", &s, "--out", o], "the grid is empty");
    let s = spec(dir.path(), &SPEC.replace("\"iops\"", "\"wall_s\""));
    fails_naming(
        &["sweep", &s, "--out", o],
        "metric 'wall_s' depends on the machine",
    );
    let s = spec(
        dir.path(),
        &SPEC.replace("queue_depth =", "\"flash.chanels\" ="),
    );
    fails_naming(&["sweep", &s, "--out", o], "chanels");
}

#[test]
fn the_ray_backend_without_its_python_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let s = spec(dir.path(), SPEC);
    let out = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(["sweep", &s, "--out", dir.path().join("o").to_str().unwrap()])
        .args(["--backend", "ray"])
        .env("NEARFLASH_PYTHON", dir.path().join("no-python"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("pip install ./crates/python") && err.contains("ray[default]"),
        "{err}"
    );
}

/// Story (issue 28): with a Python that has not the nearflash package, `--backend ray` ended
/// in Python's raw `ModuleNotFoundError` and no hint.
#[test]
fn the_ray_backend_with_a_python_lacking_the_package_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let s = spec(dir.path(), SPEC);
    // python3 without its site-packages (-S): nothing installed by pip is importable.
    let py = dir.path().join("bare-python");
    std::fs::write(&py, "#!/bin/sh\nexec python3 -S \"$@\"\n").unwrap();
    std::fs::set_permissions(&py, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(["sweep", &s, "--out", dir.path().join("o").to_str().unwrap()])
        .args(["--backend", "ray"])
        .env("NEARFLASH_PYTHON", &py)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(!err.contains("Traceback"), "{err}");
    assert!(
        err.contains("needs the nearflash Python package")
            && err.contains("pip install ./crates/python")
            && err.contains("ray[default]"),
        "{err}"
    );
}

/// A sweep of Hayagui's YCSB over both access paths: each point's table row holds the run's
/// throughput and trace, and a point equals the same run through `nearflash ycsb --json`.
#[test]
fn a_ycsb_sweep_runs_hayagui_on_both_paths_as_the_cli_does() {
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        "job = \"ycsb\"\nmetrics = [\"run.throughput_ops_per_s\", \"trace_hash\"]\n[fixed]\nworkload = \"b\"\nrecords = 40\noperations = 40\n[grid]\naccess = [\"direct\", \"redirected\"]\n",
    );
    let out = dir.path().join("out");
    let run = nearflash(&["sweep", &s, "--out", out.to_str().unwrap(), "--jobs", "1"]);
    assert!(run.status.success(), "{run:?}");
    let table = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        table.starts_with("point,seed,access,run.throughput_ops_per_s,trace_hash\n"),
        "{table}"
    );
    let json = dir.path().join("y.json");
    let cli = nearflash(&[
        "ycsb",
        "--access",
        "redirected",
        "--workload",
        "b",
        "--records",
        "40",
        "--operations",
        "40",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(cli.status.success(), "{cli:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let hash = doc["trace_hash"].as_str().unwrap();
    let row = table
        .lines()
        .find(|l| l.contains(",redirected,"))
        .expect("a redirected row");
    assert!(row.ends_with(hash), "{row} against {hash}");
}

/// A sweep of a user's program over the engines that run it next to the data: every point
/// runs the module for real (its exit code is 0 and its fuel the same on every engine, since
/// the same program reads the same bytes) and the times differ by engine.
#[test]
fn a_program_sweep_runs_a_users_module_on_each_engine() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "abc\nxyz ABC\n".repeat(2000)).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let s = spec(
        dir.path(),
        &format!(
            "job = \"program\"\nmetrics = [\"exit_code\", \"run.fuel\", \"run.time_ns\"]\n[fixed]\nprogram = \"{root}/../../examples/programs/grep.wat\"\ninput = \"{}\"\nargs = [\"ABC\"]\n[grid]\nengine = [\"slot\", \"core\", \"host\"]\n",
            input.display()
        ),
    );
    let out = dir.path().join("out");
    let run = nearflash(&["sweep", &s, "--out", out.to_str().unwrap(), "--jobs", "1"]);
    assert!(run.status.success(), "{run:?}");
    let table = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3, "{table}");
    for r in &rows {
        assert_eq!(r[3], "0", "exit code: {table}");
        assert_eq!(r[4], rows[0][4], "fuel: {table}");
    }
    assert_ne!(rows[0][5], rows[2][5], "{table}");
}

/// A sweep of Active Flash's background compression over the foreground rate: the fraction
/// compressed cannot grow as the foreground leaves the controller less idle time.
#[test]
fn an_active_flash_sweep_compresses_less_as_the_foreground_grows() {
    let dir = tempfile::tempdir().unwrap();
    let s = spec(
        dir.path(),
        "job = \"active-flash\"\nmetrics = [\"background.fraction_compressed\"]\n[fixed]\nvolume_mib = 16\n[grid]\nforeground_mb_s = [5.0, 120.0]\n",
    );
    let out = dir.path().join("out");
    let run = nearflash(&["sweep", &s, "--out", out.to_str().unwrap(), "--jobs", "1"]);
    assert!(run.status.success(), "{run:?}");
    let table = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let f: Vec<f64> = table
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(f.len(), 2, "{table}");
    assert!(f[0] >= f[1] && f[0] > 0.0, "{table}");
}
