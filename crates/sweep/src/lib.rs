//! Design-space sweeps over nearflash's jobs: a spec (TOML: the job, a grid and random
//! sampling over any preset field and any job option, × seeds) becomes points, each
//! identified by a hash of what determines its result; finished points are appended to
//! `DIR/results.csv` as they finish, so a sweep interrupted at any moment resumes by computing
//! only the missing ones; at the end the table is rewritten in point order and
//! `DIR/summary.html` draws every metric against every swept parameter.
//!
//! The engine is Rust and backend-neutral: `Sweep` plans, hands out the missing points and
//! records rows. Two backends drive it: `run_local` here (threads on this machine: each
//! simulation is single-threaded, deterministic and shares nothing, so a thread is as
//! isolated as a process and needs no serialisation), and the Python package's Ray backend,
//! which ships each `Point` (JSON) to a Ray task that calls `Point::run` through the same
//! library and hands the row back to `Sweep::record`. Rows are computed by the same code
//! either way, so both backends give byte-identical tables.

mod error;
pub mod job;
pub mod point;
mod progress;
pub mod spec;
pub mod summary;
pub mod table;

pub use error::SweepError;
pub use job::Job;
pub use point::Point;
pub use spec::Spec;

use progress::Bar;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use table::Table;

pub const SUMMARY_FILE: &str = "summary.html";

/// A sweep opened on its output directory.
pub struct Sweep {
    spec: Spec,
    spec_text: String,
    title: String,
    dir: PathBuf,
    points: Vec<Point>,
    header: Vec<String>,
    table: Table,
    bar: Bar,
    recorded_now: usize,
}

/// What a finished sweep did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    pub points: usize,
    /// Points computed by this call (the others were in the table already).
    pub computed: usize,
    pub table: PathBuf,
    pub summary: PathBuf,
}

impl Sweep {
    /// Reads a spec file (bounded) and opens the sweep on `dir`.
    pub fn open_file(spec: &Path, dir: &Path, progress: bool) -> Result<Sweep, SweepError> {
        let meta = std::fs::metadata(spec).map_err(|source| SweepError::Io {
            what: format!("reading {}", spec.display()),
            source,
        })?;
        if meta.len() > spec::SPEC_BYTES_MAX {
            return Err(SweepError::Spec {
                source_name: spec.display().to_string(),
                reason: format!("larger than {} bytes", spec::SPEC_BYTES_MAX),
            });
        }
        let text = std::fs::read_to_string(spec).map_err(|source| SweepError::Io {
            what: format!("reading {}", spec.display()),
            source,
        })?;
        let title = spec
            .file_stem()
            .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
        Self::open(&spec.display().to_string(), &title, &text, dir, progress)
    }

    /// Checks the spec and every point, then opens (or resumes) the table in `dir`.
    pub fn open(
        source_name: &str,
        title: &str,
        text: &str,
        dir: &Path,
        progress: bool,
    ) -> Result<Sweep, SweepError> {
        let spec = Spec::parse(source_name, text)?;
        let points = point::points(&spec)?;
        let hashes: BTreeSet<String> = points.iter().map(|p| p.hash.clone()).collect();
        if hashes.len() != points.len() {
            return Err(SweepError::Spec {
                source_name: source_name.into(),
                reason: "two points are the same simulation (a value repeated in the grid, or \
                         a seed repeated)"
                    .into(),
            });
        }
        let mut header = vec!["point".to_string(), "seed".to_string()];
        header.extend(spec.swept.iter().cloned());
        header.extend(spec.metrics.iter().cloned());
        let table = Table::open(dir, &header.join(","), &hashes)?;
        let bar = Bar::new(progress, points.len() as u64, table.len() as u64);
        Ok(Sweep {
            spec,
            spec_text: text.to_string(),
            title: title.to_string(),
            dir: dir.to_path_buf(),
            points,
            header,
            table,
            bar,
            recorded_now: 0,
        })
    }

    pub fn points(&self) -> &[Point] {
        &self.points
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The points the table does not have yet, in point order.
    pub fn missing(&self) -> Vec<Point> {
        self.points
            .iter()
            .filter(|p| !self.table.has(&p.hash))
            .cloned()
            .collect()
    }

    /// Records a finished point's row (from `Point::run`, here or in another process).
    pub fn record(&mut self, row: &str) -> Result<(), SweepError> {
        let hash = row.split(',').next().unwrap_or("");
        if !self.points.iter().any(|p| p.hash == hash) {
            return Err(SweepError::Table {
                path: self.dir.join(table::TABLE_FILE).display().to_string(),
                reason: format!("a row for point '{hash}', which this sweep does not have"),
            });
        }
        let before = self.table.len();
        self.table.append(row)?;
        if self.table.len() > before {
            self.recorded_now += 1;
            self.bar.set(self.table.len() as u64);
        }
        Ok(())
    }

    /// Once every point is in: rewrites the table in point order and writes the summary.
    pub fn finish(&mut self) -> Result<Finished, SweepError> {
        self.bar.finish();
        let missing = self.missing().len();
        if missing > 0 {
            return Err(SweepError::Table {
                path: self.dir.join(table::TABLE_FILE).display().to_string(),
                reason: format!("{missing} points are still missing; run the sweep again"),
            });
        }
        let order: Vec<String> = self.points.iter().map(|p| p.hash.clone()).collect();
        let text = self.table.finish(&order)?;
        let rows: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
        let html = summary::page(
            &self.title,
            &self.spec_text,
            &self.spec.swept,
            &self.header,
            &rows,
        );
        let summary = self.dir.join(SUMMARY_FILE);
        nearflash_jobs::output::write_atomic(&summary, html.as_bytes())?;
        Ok(Finished {
            points: self.points.len(),
            computed: self.recorded_now,
            table: self.dir.join(table::TABLE_FILE),
            summary,
        })
    }

    /// Runs the missing points on `jobs` threads of this machine, recording each row as it
    /// finishes; on the first error no new point starts, the running ones finish and are
    /// recorded, and the error is returned (a rerun resumes).
    pub fn run_local(&mut self, jobs: usize) -> Result<Finished, SweepError> {
        assert!(jobs >= 1, "at least one job");
        let todo = self.missing();
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<Result<String, SweepError>>();
        let mut first_error = None;
        std::thread::scope(|s| {
            for _ in 0..jobs.min(todo.len()) {
                let tx = tx.clone();
                let (todo, next, stop) = (&todo, &next, &stop);
                s.spawn(move || loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = todo.get(i) else { break };
                    if tx.send(p.run()).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            for r in rx {
                let r = r.and_then(|row| self.record(&row));
                if let Err(e) = r {
                    stop.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        });
        if let Some(e) = first_error {
            self.bar.finish();
            return Err(e);
        }
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "job = \"io\"\npreset = \"test-min\"\nseeds = [1, 2]\nmetrics = [\"iops\", \"trace_hash\"]\n[fixed]\npattern = \"rand-read\"\nrequests = 200\n[grid]\nqueue_depth = [1, 4]\n";

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
        let f = s.run_local(2).unwrap();
        assert_eq!((f.points, f.computed), (4, 2));
        let resumed = std::fs::read_to_string(&f.table).unwrap();
        // The same sweep from scratch gives the same table, byte for byte.
        let fresh = tempfile::tempdir().unwrap();
        let f2 = Sweep::open("t", "t", SPEC, fresh.path(), false)
            .unwrap()
            .run_local(1)
            .unwrap();
        assert_eq!(f2.computed, 4);
        assert_eq!(resumed, std::fs::read_to_string(&f2.table).unwrap());
        assert_eq!(resumed.lines().count(), 5);
        assert!(std::fs::read_to_string(&f.summary)
            .unwrap()
            .contains("iops vs queue_depth"));
        // Nothing left: a third run computes nothing.
        let f3 = Sweep::open("t", "t", SPEC, dir.path(), false)
            .unwrap()
            .run_local(2)
            .unwrap();
        assert_eq!(f3.computed, 0);
    }
}
