//! The local backend runs points in worker processes: an interrupted sweep resumes computing
//! only the missing points and gives the same table byte for byte as a sweep run from scratch;
//! a worker that dies mid-point fails that point, naming how the process ended, and the sweep
//! stops cleanly with every finished row kept; a worker that cannot start is named.

use nearflash_sweep::{Sweep, SweepError, WorkerCommand};

const SPEC: &str = "job = \"io\"\npreset = \"test-min\"\nseeds = [1, 2]\nmetrics = [\"iops\", \"trace_hash\"]\n[fixed]\npattern = \"rand-read\"\nrequests = 200\n[grid]\nqueue_depth = [1, 4]\n";

fn worker() -> WorkerCommand {
    WorkerCommand::new(
        env!("CARGO_BIN_EXE_nearflash-sweep-worker"),
        Vec::<String>::new(),
    )
}

#[test]
fn an_interrupted_sweep_resumes_computing_only_the_missing_points() {
    let dir = tempfile::tempdir().unwrap();
    // The first run records two of four points, then is "killed".
    let mut s = Sweep::open("t", "t", SPEC, dir.path(), false).unwrap();
    for p in s.missing().into_iter().take(2) {
        let row = p.run().unwrap();
        s.record(&row).unwrap();
    }
    drop(s);
    let mut s = Sweep::open("t", "t", SPEC, dir.path(), false).unwrap();
    assert_eq!(s.missing().len(), 2);
    let f = s.run_local(2, &worker()).unwrap();
    assert_eq!((f.points, f.computed), (4, 2));
    let resumed = std::fs::read_to_string(&f.table).unwrap();
    // The same sweep from scratch, on one worker process, gives the same table byte for byte.
    let fresh = tempfile::tempdir().unwrap();
    let f2 = Sweep::open("t", "t", SPEC, fresh.path(), false)
        .unwrap()
        .run_local(1, &worker())
        .unwrap();
    assert_eq!(f2.computed, 4);
    assert_eq!(resumed, std::fs::read_to_string(&f2.table).unwrap());
    assert_eq!(resumed.lines().count(), 5);
    assert!(std::fs::read_to_string(&f.summary)
        .unwrap()
        .contains("iops vs queue_depth"));
    // Nothing left: a third run computes nothing and starts no worker.
    let none = WorkerCommand::new("/nonexistent/worker", Vec::<String>::new());
    let f3 = Sweep::open("t", "t", SPEC, dir.path(), false)
        .unwrap()
        .run_local(2, &none)
        .unwrap();
    assert_eq!(f3.computed, 0);
}

/// Story (issue 28): a sweep resume kept a non-numeric metric cell as if it were a result.
#[test]
fn a_resumed_sweep_reruns_a_row_whose_metric_cell_is_not_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let f = Sweep::open("t", "t", SPEC, dir.path(), false)
        .unwrap()
        .run_local(2, &worker())
        .unwrap();
    let good = std::fs::read_to_string(&f.table).unwrap();
    // Damage the iops cell of the second row.
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    let mut cells: Vec<&str> = lines[2].split(',').collect();
    let point = cells[0].to_string();
    cells[3] = "n/a";
    lines[2] = cells.join(",");
    std::fs::write(&f.table, lines.join("\n") + "\n").unwrap();
    let mut s = Sweep::open("t", "t", SPEC, dir.path(), false).unwrap();
    assert_eq!(s.missing().len(), 1);
    assert_eq!(s.missing()[0].hash, point);
    let why = s.rerun()[0].to_string();
    assert!(
        why.contains(&point) && why.contains("column iops holds 'n/a'"),
        "{why}"
    );
    let f = s.run_local(1, &worker()).unwrap();
    assert_eq!(f.computed, 1);
    assert_eq!(std::fs::read_to_string(&f.table).unwrap(), good);
}

#[test]
fn a_worker_killed_mid_point_fails_that_point_and_keeps_the_finished_rows() {
    let dir = tempfile::tempdir().unwrap();
    // A worker that serves one point faithfully, then is killed while running the next.
    let real = env!("CARGO_BIN_EXE_nearflash-sweep-worker");
    let script = format!("head -n 1 | {real}; read line; kill -9 $$");
    let dying = WorkerCommand::new("sh", ["-c", script.as_str()]);
    let e = Sweep::open("t", "t", SPEC, dir.path(), false)
        .unwrap()
        .run_local(1, &dying)
        .unwrap_err();
    assert!(matches!(e, SweepError::Worker { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("killed by signal 9"), "{text}");
    // The first point's row is in the table; a rerun with healthy workers computes the rest.
    let mut s = Sweep::open("t", "t", SPEC, dir.path(), false).unwrap();
    assert_eq!(s.missing().len(), 3);
    let f = s.run_local(2, &worker()).unwrap();
    assert_eq!((f.points, f.computed), (4, 3));
}

#[test]
fn a_worker_that_answers_garbage_or_cannot_start_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = WorkerCommand::new("sh", ["-c", "read line; echo hello; read line"]);
    let e = Sweep::open("t", "t", SPEC, dir.path(), false)
        .unwrap()
        .run_local(1, &garbage)
        .unwrap_err()
        .to_string();
    assert!(e.contains("answered something that is not a row"), "{e}");
    let missing = WorkerCommand::new("/nonexistent/worker", ["--serve"]);
    let e = Sweep::open("t", "t", SPEC, dir.path(), false)
        .unwrap()
        .run_local(2, &missing)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("starting the sweep worker `/nonexistent/worker --serve`"),
        "{e}"
    );
}
