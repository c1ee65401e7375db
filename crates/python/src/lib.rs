//! `nearflash._native`: the Rust side of the Python package. Every job crosses the boundary
//! as JSON text (options in, the CLI's JSON out), so the Python wrappers (`python/nearflash`)
//! turn keyword arguments into the jobs' typed options (`nearflash-jobs`, unknown names
//! refused there) and results into dicts and DataFrames. Each long call releases the GIL
//! (`Python::detach`) and answers Ctrl-C within a fraction of a second (`long`: the Python
//! signal handlers run between batches of simulated events, and an exception they raise —
//! `KeyboardInterrupt` — abandons the run and is raised); every error is raised as
//! `nearflash.NearflashError` carrying the CLI's message.

mod cs;

use nearflash_jobs as jobs;
use nearflash_sim::interrupt::interruptible;
use nearflash_sweep::{Point, Sweep, WorkerCommand};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a long call runs Python's signal handlers (Ctrl-C is answered within about this).
pub(crate) const SIGNALS_EVERY: Duration = Duration::from_millis(100);

create_exception!(
    _native,
    NearflashError,
    PyException,
    "A nearflash job failed; the message names the problem."
);

pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    NearflashError::new_err(e.to_string())
}

fn doc(options: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(options).map_err(|e| err(format!("options are not JSON: {e}")))
}

/// Runs `job` with the GIL released; every `SIGNALS_EVERY` of wall time (checked between
/// batches of simulated events, or by `reproduce`'s waiting thread, which then stops its
/// workers) it takes the GIL to run Python's signal handlers, and if one raises (Ctrl-C:
/// `KeyboardInterrupt`), the run is abandoned and that exception is raised.
fn long<T: Send>(py: Python<'_>, job: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    py.detach(|| {
        let raised: Rc<RefCell<Option<PyErr>>> = Rc::default();
        let keep = raised.clone();
        let mut last = Instant::now();
        let check = move || {
            if last.elapsed() < SIGNALS_EVERY {
                return false;
            }
            last = Instant::now();
            match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    *keep.borrow_mut() = Some(e);
                    true
                }
            }
        };
        match interruptible(check, job) {
            // A job that answers the interrupt itself (a reproduction's workers stop and it
            // returns its error) raises the exception that stopped it, not that error.
            Ok(r) => raised.take().map_or(r, Err),
            Err(_) => Err(raised
                .take()
                .expect("an interrupted run has the exception that stopped it")),
        }
    })
}

fn text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("a result serialises")
}

/// `io(options_json) -> report_json`: the JSON of `nearflash io --json` (the zoned drive's
/// report when the preset has `zns.enabled = true`).
#[pyfunction]
fn io(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::IoOptions = jobs::options_from("io", doc(options)?).map_err(err)?;
    long(py, || {
        jobs::io_any(&o, &mut |_, _, _| {})
            .map(|r| text(&r))
            .map_err(err)
    })
}

/// `run(options_json) -> json`: the JSON of `nearflash run --json`.
#[pyfunction]
fn run(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::RunOptions = jobs::options_from("run", doc(options)?).map_err(err)?;
    long(py, || {
        jobs::run(&o)
            .map(|out| text(&out.json()))
            .map_err(|f| err(f.error))
    })
}

/// `insider(options_json) -> json`: one INSIDER application on one system.
#[pyfunction]
fn insider(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::InsiderOptions = jobs::options_from("insider", doc(options)?).map_err(err)?;
    long(py, || jobs::insider(&o).map(|v| text(&v)).map_err(err))
}

/// `insider_share(options_json) -> json`: programs side by side in the drive's slots.
#[pyfunction]
fn insider_share(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::ShareOptions = jobs::options_from("insider-share", doc(options)?).map_err(err)?;
    long(py, || {
        jobs::insider_share(&o).map(|v| text(&v)).map_err(err)
    })
}

/// `fileops(options_json) -> json`: the JSON of `nearflash fileops --json` (Hayagui).
#[pyfunction]
fn fileops(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::FileopsOptions = jobs::options_from("fileops", doc(options)?).map_err(err)?;
    long(py, || jobs::fileops(&o).map(|v| text(&v)).map_err(err))
}

/// `db_bench(options_json) -> json`: the JSON of `nearflash db-bench --json` (Hayagui).
#[pyfunction]
fn db_bench(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::DbBenchOptions = jobs::options_from("db-bench", doc(options)?).map_err(err)?;
    long(py, || jobs::db_bench(&o).map(|v| text(&v)).map_err(err))
}

/// `ycsb(options_json) -> json`: the JSON of `nearflash ycsb --json` (Hayagui).
#[pyfunction]
fn ycsb(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::YcsbOptions = jobs::options_from("ycsb", doc(options)?).map_err(err)?;
    long(py, || jobs::ycsb(&o).map(|v| text(&v)).map_err(err))
}

/// `genome(options_json) -> json`: the JSON of `nearflash genome --json` (Hayagui).
#[pyfunction]
fn genome(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::GenomeOptions = jobs::options_from("genome", doc(options)?).map_err(err)?;
    long(py, || jobs::genome(&o).map(|v| text(&v)).map_err(err))
}

/// `program(options_json) -> json`: the JSON of `nearflash program run --json` (the
/// program's output is not returned; `exit_code` says how it ended).
#[pyfunction]
fn program(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::ProgramOptions = jobs::options_from("program", doc(options)?).map_err(err)?;
    long(py, || {
        jobs::program(&o).map(|v| text(&v.report)).map_err(err)
    })
}

/// `active_flash(options_json) -> json`: one Active Flash point (Fig. 2 or Fig. 3's setting).
#[pyfunction]
fn active_flash(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::ActiveFlashOptions =
        jobs::options_from("active-flash", doc(options)?).map_err(err)?;
    long(py, || jobs::active_flash(&o).map(|v| text(&v)).map_err(err))
}

/// `placement(options_json) -> json`: a hot and a cold write stream on the conventional
/// drive, on FDP handles and on zones placed by the host (`nearflash placement --json`).
#[pyfunction]
fn placement(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::PlacementOptions = jobs::options_from("placement", doc(options)?).map_err(err)?;
    long(py, || jobs::placement(&o).map(|v| text(&v)).map_err(err))
}

/// `vfile_demo(options_json) -> json`: the `nearflash vfile demo` walk-through's figures.
#[pyfunction]
fn vfile_demo(py: Python<'_>, options: &str) -> PyResult<String> {
    let o: jobs::VfileOptions = jobs::options_from("vfile", doc(options)?).map_err(err)?;
    long(py, || jobs::vfile_demo(&o).map(|v| text(&v)).map_err(err))
}

/// `reproduce(paper, options_json) -> summary_json`; writes summary.json and report.html.
#[pyfunction]
fn reproduce(py: Python<'_>, paper: &str, options: &str) -> PyResult<String> {
    let o: jobs::ReproduceOptions = jobs::options_from("reproduce", doc(options)?).map_err(err)?;
    long(py, || {
        jobs::reproduce(paper, &o, &|_, _| {})
            .map(|r| text(&r.summary))
            .map_err(err)
    })
}

/// `presets() -> json`: [{name, tables, description}] of the built-in presets.
#[pyfunction]
fn presets() -> PyResult<String> {
    let list = jobs::presets().map_err(err)?;
    Ok(text(
        &list
            .iter()
            .map(|p| {
                serde_json::json!({"name": p.name, "tables": p.tables, "description": p.description})
            })
            .collect::<Vec<_>>(),
    ))
}

/// `preset(name, overrides) -> json`: a preset after `table.field=value` overrides.
#[pyfunction]
fn preset(name: &str, overrides: Vec<String>) -> PyResult<String> {
    jobs::preset(name, &overrides)
        .map(|v| text(&v))
        .map_err(err)
}

/// `run_point(point_json) -> row`: one sweep point (on any process, e.g. a Ray worker).
#[pyfunction]
fn run_point(py: Python<'_>, point: &str) -> PyResult<String> {
    let p: Point =
        serde_json::from_str(point).map_err(|e| err(format!("not a sweep point: {e}")))?;
    long(py, || p.run().map_err(err))
}

/// `serve_worker()`: a local sweep's worker process — answers each point read on standard
/// input with its row on standard output, until end of input (`python -m nearflash._worker`).
#[pyfunction]
fn serve_worker(py: Python<'_>) -> PyResult<()> {
    long(py, || {
        let stdin = std::io::stdin().lock();
        let stdout = std::io::stdout().lock();
        nearflash_sweep::worker::serve(stdin, stdout).map_err(err)
    })
}

/// A sweep opened on its output directory (the engine of both backends).
#[pyclass(name = "Sweep")]
struct PySweep {
    inner: Mutex<Sweep>,
}

#[pymethods]
impl PySweep {
    #[new]
    fn new(
        source_name: &str,
        title: &str,
        spec: &str,
        out: PathBuf,
        progress: bool,
    ) -> PyResult<Self> {
        let s = Sweep::open(source_name, title, spec, &out, progress).map_err(err)?;
        Ok(PySweep {
            inner: Mutex::new(s),
        })
    }

    /// Points not in the table yet, as JSON texts.
    fn missing(&self) -> Vec<String> {
        self.lock().missing().iter().map(text).collect()
    }

    fn points(&self) -> usize {
        self.lock().points().len()
    }

    /// Rows of the table not kept when it was opened (each names its point and why): their
    /// points run again.
    fn rerun(&self) -> Vec<String> {
        self.lock()
            .rerun()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn record(&self, row: &str) -> PyResult<()> {
        self.lock().record(row).map_err(err)
    }

    /// Rewrites the table in point order and writes the summary: {points, computed, table, summary}.
    fn finish(&self) -> PyResult<String> {
        self.lock().finish().map(|f| finished(&f)).map_err(err)
    }

    /// The local backend: `jobs` worker processes started by `worker` (a command line, e.g.
    /// `[sys.executable, "-m", "nearflash._worker"]`), GIL released.
    fn run_local(&self, py: Python<'_>, jobs: usize, worker: Vec<String>) -> PyResult<String> {
        if jobs == 0 {
            return Err(err("jobs must be at least 1"));
        }
        let Some((program, args)) = worker.split_first() else {
            return Err(err("the worker command is empty"));
        };
        let worker = WorkerCommand::new(program, args);
        let done = py.detach(|| self.lock().run_local(jobs, &worker).map(|f| finished(&f)));
        // Ctrl-C reaches the workers too (one process group): they stop, and the sweep with
        // them; the interrupt, not the workers' ends, is what to raise.
        py.check_signals()?;
        done.map_err(err)
    }
}

impl PySweep {
    fn lock(&self) -> std::sync::MutexGuard<'_, Sweep> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn finished(f: &nearflash_sweep::Finished) -> String {
    text(&serde_json::json!({
        "points": f.points,
        "computed": f.computed,
        "table": f.table,
        "summary": f.summary,
    }))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NearflashError", m.py().get_type::<NearflashError>())?;
    m.add("VERSION", jobs::VERSION)?;
    m.add_function(wrap_pyfunction!(io, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(insider, m)?)?;
    m.add_function(wrap_pyfunction!(insider_share, m)?)?;
    m.add_function(wrap_pyfunction!(vfile_demo, m)?)?;
    m.add_function(wrap_pyfunction!(fileops, m)?)?;
    m.add_function(wrap_pyfunction!(db_bench, m)?)?;
    m.add_function(wrap_pyfunction!(ycsb, m)?)?;
    m.add_function(wrap_pyfunction!(genome, m)?)?;
    m.add_function(wrap_pyfunction!(program, m)?)?;
    m.add_function(wrap_pyfunction!(active_flash, m)?)?;
    m.add_function(wrap_pyfunction!(placement, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset, m)?)?;
    m.add_function(wrap_pyfunction!(run_point, m)?)?;
    m.add_function(wrap_pyfunction!(serve_worker, m)?)?;
    m.add_class::<PySweep>()?;
    m.add_class::<cs::PyCsDevice>()?;
    m.add("CsCommandFailed", m.py().get_type::<cs::CsCommandFailed>())?;
    Ok(())
}
