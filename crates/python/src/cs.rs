//! `nearflash._native.CsDevice`: a computational drive driven one NVMe command at a time from
//! Python (`nearflash.cs.Device` wraps it). Each method submits one command of the
//! Computational Programs / Subsystem Local Memory command sets (or host block writes to the
//! NVM namespace) and runs the simulation until it completes; every command is kept as a step
//! with its simulated latency and status. A command the device refuses raises
//! `CsCommandFailed(message, status_name, status_code_type, status_code)`; the device stays
//! usable. Ctrl-C abandons the command in flight and leaves the device unusable (a command
//! half done cannot be resumed), which any later call says.

use crate::err;
use nearflash_cs::device::{Command, LBA_BYTES};
use nearflash_cs::program::Chunk;
use nearflash_cs::rangeset::{RangeDescriptor, NSID_COMPUTE_FIRST, NSID_SLM};
use nearflash_cs::sequence::Step;
use nearflash_cs::session::Session;
use nearflash_cs::{CommandError, ProgramType, Status};
use nearflash_jobs::cs::CsDrive;
use nearflash_sim::interrupt::interruptible;
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::time::Instant;

create_exception!(
    _native,
    CsCommandFailed,
    crate::NearflashError,
    "A computational-storage command completed with an error status: args are (message, \
     status name, status code type, status code)."
);

/// Steps kept for `steps()`: the oldest are dropped beyond this, so that a long-lived device
/// driven in a loop does not grow without bound.
const STEPS_KEPT_MAX: usize = 100_000;

/// The program identifier Load Program carries (any value; "nfcs").
const PUID: u64 = 0x6e66_6373;

#[pyclass(name = "CsDevice", unsendable)]
pub struct PyCsDevice {
    drive: CsDrive,
    steps: Vec<Step>,
    /// Set when Ctrl-C abandoned a command midway.
    broken: bool,
}

impl PyCsDevice {
    /// Runs `work` on the session; Ctrl-C (Python's signal handlers, run between batches of
    /// events) abandons it and leaves the device unusable.
    fn run<T>(&mut self, py: Python<'_>, work: impl FnOnce(&mut Session) -> T) -> PyResult<T> {
        if self.broken {
            return Err(err(
                "a command on this device was interrupted midway; open a new Device",
            ));
        }
        let session = &mut self.drive.session;
        interruptible(signal_check(), || work(session)).map_err(|_| {
            self.broken = true;
            py.check_signals()
                .err()
                .unwrap_or_else(|| err("interrupted"))
        })
    }

    /// Runs `cmd` to its completion and keeps it as a step.
    fn call(&mut self, py: Python<'_>, cmd: Command, detail: String) -> PyResult<(u64, Vec<u8>)> {
        let name = cmd.name();
        let done = self.run(py, |s| s.call(cmd))?.map_err(err)?;
        let latency = done.completed.since(done.submitted);
        let status = done
            .result
            .as_ref()
            .map_or_else(CommandError::status, |_| Status::Success);
        self.push(Step {
            name,
            detail,
            latency,
            status,
        });
        match done.result {
            Ok(v) => Ok((v, done.data)),
            Err(e) => {
                let (sct, sc) = status.code();
                Err(CsCommandFailed::new_err((
                    format!("{name} failed with {}: {e}", status.name()),
                    status.name(),
                    sct,
                    sc,
                )))
            }
        }
    }

    fn push(&mut self, step: Step) {
        if self.steps.len() == STEPS_KEPT_MAX {
            self.steps.remove(0);
        }
        self.steps.push(step);
    }
}

/// Python's signal handlers, run at most every `SIGNALS_EVERY` of wall time; true to stop.
fn signal_check() -> impl FnMut() -> bool + 'static {
    let mut last = Instant::now();
    move || {
        if last.elapsed() < crate::SIGNALS_EVERY {
            return false;
        }
        last = Instant::now();
        Python::attach(|py| py.check_signals().is_err())
    }
}

fn program_type(ptype: &str) -> PyResult<ProgramType> {
    match ptype {
        "ebpf" => Ok(ProgramType::Ebpf),
        "wasm" => Ok(ProgramType::Wasm),
        other => Err(err(format!(
            "ptype {other:?}: \"ebpf\" (an ELF object from clang -target bpf) or \"wasm\""
        ))),
    }
}

#[pymethods]
impl PyCsDevice {
    /// `CsDevice(preset, overrides, seed)`: a freshly formatted drive of `preset` with its
    /// `[cs]` engines and memory namespace.
    #[new]
    fn new(preset: &str, overrides: Vec<String>, seed: u64) -> PyResult<Self> {
        Ok(PyCsDevice {
            drive: nearflash_jobs::cs::open(preset, &overrides, seed).map_err(err)?,
            steps: Vec::new(),
            broken: false,
        })
    }

    /// The preset's name.
    #[getter]
    fn preset(&self) -> String {
        self.drive.preset.clone()
    }

    /// The compute engines' names; engine `i` is compute namespace `i + 2`.
    #[getter]
    fn engines(&self) -> Vec<String> {
        self.drive.engines.clone()
    }

    /// Simulated time since the drive was formatted, in microseconds.
    #[getter]
    fn now_us(&self) -> f64 {
        self.drive.session.now().as_ns() as f64 / 1e3
    }

    /// The run's trace hash so far: same seed and same commands ⇒ same hash.
    #[getter]
    fn trace_hash(&self) -> u64 {
        self.drive.session.trace_hash()
    }

    /// Bytes of an LBA of the NVM namespace (`write_nvm`'s `lba`, `memory_copy`'s ranges).
    #[getter]
    fn lba_bytes(&self) -> u64 {
        LBA_BYTES
    }

    /// The index of the engine named `name`, or None.
    fn engine_index(&self, name: &str) -> Option<usize> {
        self.drive.engine(name)
    }

    /// Host block writes of `data` to the NVM namespace from LBA `lba`, then a flush; answers
    /// the simulated microseconds it took.
    fn write_nvm(&mut self, py: Python<'_>, data: &[u8], lba: u64) -> PyResult<f64> {
        let w = self.drive.writes();
        let start = self.drive.session.now();
        self.run(py, |s| {
            s.write_nvm(lba * LBA_BYTES, data, w.request_bytes, w.depth)
        })?
        .map_err(err)?;
        let latency = self.drive.session.now().since(start);
        self.push(Step {
            name: "write_nvm",
            detail: format!("{} bytes at LBA {lba}", data.len()),
            latency,
            status: Status::Success,
        });
        Ok(latency.as_ns() as f64 / 1e3)
    }

    /// Load Program in chunks of `chunk_bytes` into program slot `pind`.
    fn load_program(
        &mut self,
        py: Python<'_>,
        program: &[u8],
        ptype: &str,
        pind: u16,
        chunk_bytes: u64,
    ) -> PyResult<()> {
        let ptype = program_type(ptype)?;
        if chunk_bytes == 0 {
            return Err(err("chunk_bytes must be positive"));
        }
        let total = program.len() as u64;
        for (i, part) in program.chunks(chunk_bytes as usize).enumerate() {
            let offset_bytes = i as u64 * chunk_bytes;
            let chunk = Chunk {
                pind,
                ptype,
                puid: PUID,
                size_bytes: total,
                offset_bytes,
                data: part.to_vec(),
            };
            let detail = format!("{} bytes at {offset_bytes} of {total}", part.len());
            self.call(py, Command::LoadProgram(chunk), detail)?;
        }
        Ok(())
    }

    /// Program Activation Management: activate (or deactivate) slot `pind`.
    fn activate(&mut self, py: Python<'_>, pind: u16, activate: bool) -> PyResult<()> {
        let detail = format!("program {pind}");
        self.call(py, Command::ActivateProgram { pind, activate }, detail)
            .map(drop)
    }

    /// Unload Program: frees slot `pind`.
    fn unload(&mut self, py: Python<'_>, pind: u16) -> PyResult<()> {
        let detail = format!("program {pind}");
        self.call(py, Command::UnloadProgram { pind }, detail)
            .map(drop)
    }

    /// Memory Range Set Management (create) on `engine`'s compute namespace over the SLM
    /// ranges `[(start_bytes, len_bytes), ...]`; answers the new range set's identifier.
    fn create_range_set(
        &mut self,
        py: Python<'_>,
        ranges: Vec<(u64, u64)>,
        engine: u32,
    ) -> PyResult<u16> {
        let mut descriptors = Vec::with_capacity(ranges.len());
        for (start_bytes, len) in ranges {
            let len_bytes = u32::try_from(len)
                .map_err(|_| err(format!("a range of {len} bytes: its length is 32 bits")))?;
            descriptors.push(RangeDescriptor {
                nsid: NSID_SLM,
                len_bytes,
                start_bytes,
            });
        }
        let detail = format!("engine {engine}: {} ranges", descriptors.len());
        let cmd = Command::CreateRangeSet {
            nsid: NSID_COMPUTE_FIRST + engine,
            ranges: descriptors,
        };
        let (rsid, _) = self.call(py, cmd, detail)?;
        u16::try_from(rsid).map_err(|_| err(format!("range set identifier {rsid} over 16 bits")))
    }

    /// Memory Range Set Management (delete).
    fn delete_range_set(&mut self, py: Python<'_>, rsid: u16) -> PyResult<()> {
        let detail = format!("range set {rsid}");
        self.call(py, Command::DeleteRangeSet { rsid }, detail)
            .map(drop)
    }

    /// Memory Copy from the NVM namespace: LBA ranges `[(slba, nlb), ...]` → SLM at
    /// `dest_bytes`, in order.
    fn memory_copy(
        &mut self,
        py: Python<'_>,
        lbas: Vec<(u64, u64)>,
        dest_bytes: u64,
    ) -> PyResult<()> {
        let detail = format!("LBAs {lbas:?} -> SLM {dest_bytes}");
        let cmd = Command::CopyFromNvm {
            dest_bytes,
            sources: lbas,
        };
        self.call(py, cmd, detail).map(drop)
    }

    /// Memory Copy within SLM: `[(offset_bytes, len_bytes), ...]` → `dest_bytes`.
    fn copy_within_slm(
        &mut self,
        py: Python<'_>,
        sources: Vec<(u64, u64)>,
        dest_bytes: u64,
    ) -> PyResult<()> {
        let detail = format!("SLM {sources:?} -> SLM {dest_bytes}");
        let cmd = Command::CopyWithinSlm {
            dest_bytes,
            sources,
        };
        self.call(py, cmd, detail).map(drop)
    }

    /// Memory Write: host bytes → SLM at `offset_bytes`.
    fn memory_write(&mut self, py: Python<'_>, offset_bytes: u64, data: &[u8]) -> PyResult<()> {
        let detail = format!("{} bytes at SLM {offset_bytes}", data.len());
        let cmd = Command::MemoryWrite {
            offset_bytes,
            data: data.to_vec(),
        };
        self.call(py, cmd, detail).map(drop)
    }

    /// Execute Program `pind` on `engine` over range set `rsid` with CPARAM1/2; answers the
    /// program's 64-bit return.
    fn execute(
        &mut self,
        py: Python<'_>,
        pind: u16,
        rsid: u16,
        cparam1: u64,
        cparam2: u64,
        engine: u32,
    ) -> PyResult<u64> {
        let detail = format!("program {pind} on engine {engine}, range set {rsid}");
        let cmd = Command::Execute {
            nsid: NSID_COMPUTE_FIRST + engine,
            pind,
            rsid,
            cparam: [cparam1, cparam2],
        };
        self.call(py, cmd, detail).map(|(v, _)| v)
    }

    /// Memory Read: `len_bytes` of SLM at `offset_bytes` → bytes.
    fn memory_read<'py>(
        &mut self,
        py: Python<'py>,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let detail = format!("{len_bytes} bytes at SLM {offset_bytes}");
        let cmd = Command::MemoryRead {
            offset_bytes,
            len_bytes,
        };
        let (_, data) = self.call(py, cmd, detail)?;
        Ok(PyBytes::new(py, &data))
    }

    /// Every command so far (the newest `STEPS_KEPT_MAX`): dicts of command, detail,
    /// latency_us and status.
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.steps
            .iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("command", s.name)?;
                d.set_item("detail", &s.detail)?;
                d.set_item("latency_us", s.latency.as_ns() as f64 / 1e3)?;
                d.set_item("status", s.status.name())?;
                Ok(d)
            })
            .collect()
    }
}
