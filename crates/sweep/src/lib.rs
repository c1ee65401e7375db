//! Design-space sweeps over nearflash's jobs: a spec (TOML: the job, a grid and random
//! sampling over any preset field and any job option, × seeds) becomes points, each
//! identified by a hash of what determines its result; finished points are appended to
//! `DIR/results.csv` as they finish, so a sweep interrupted at any moment resumes by computing
//! only the missing ones; at the end the table is rewritten in point order and
//! `DIR/summary.html` draws every metric against every swept parameter.
//!
//! The engine is Rust and backend-neutral: `Sweep` plans, hands out the missing points and
//! records rows. Two backends drive it: `run_local` here (a pool of worker processes on this
//! machine, `worker`: each point crosses a pipe as JSON and is run by `Point::run` in the
//! worker, so a point that aborts or is killed fails alone), and the Python package's Ray
//! backend, which ships each `Point` (JSON) to a Ray task that calls `Point::run` through the
//! same library and hands the row back to `Sweep::record`. Rows are computed by the same code
//! either way, so both backends give byte-identical tables.

mod error;
pub mod job;
pub mod point;
mod progress;
pub mod spec;
pub mod summary;
pub mod table;
pub mod worker;

pub use error::SweepError;
pub use job::Job;
pub use point::Point;
pub use spec::Spec;
pub use worker::WorkerCommand;

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
        let columns = table::Columns {
            names: header.clone(),
            first_metric: 2 + spec.swept.len(),
            text: spec
                .metrics
                .iter()
                .map(|m| job::is_text_metric(m))
                .collect(),
        };
        let table = Table::open(dir, &columns, &hashes)?;
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

    /// Rows of the table that were not kept when it was opened (a cell that is not what a run
    /// writes): their points are missing again and run again.
    pub fn rerun(&self) -> &[table::Rerun] {
        self.table.rerun()
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

    /// Runs the missing points on `jobs` worker processes of this machine (started with
    /// `worker`, which must serve `worker::serve`'s protocol), recording each row as it
    /// finishes; on the first failure — a point's error, or its worker's death — no new
    /// point starts, the running ones finish and are recorded, and the failure is returned
    /// (a rerun resumes).
    pub fn run_local(
        &mut self,
        jobs: usize,
        worker: &WorkerCommand,
    ) -> Result<Finished, SweepError> {
        assert!(jobs >= 1, "at least one job");
        let todo = self.missing();
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<Result<String, SweepError>>();
        let mut first_error = None;
        // Threads here only wait on pipes: each feeds one worker process.
        std::thread::scope(|s| {
            for _ in 0..jobs.min(todo.len()) {
                let tx = tx.clone();
                let (todo, next, stop) = (&todo, &next, &stop);
                s.spawn(move || {
                    let mut w = match worker.spawn() {
                        Ok(w) => w,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    loop {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(p) = todo.get(i) else { break };
                        let r = w.run(p);
                        let died = matches!(r, Err(SweepError::Worker { .. }));
                        if tx.send(r).is_err() || died {
                            break;
                        }
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
