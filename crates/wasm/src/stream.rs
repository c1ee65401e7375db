//! A WebAssembly program behind INSIDER's drive-program interface (`StreamProgram`): the
//! flits of the bound file are gathered into chunks of `CHUNK_BYTES` (or up to the `eop` flit)
//! and fed to the run; its output goes to the output FIFO, and the fuel it burnt is reported
//! as metered instructions, which the runtime charges on the slot or core that runs it
//! instead of a per-byte cost.
//!
//! A program has no parameter messages: its arguments were given when it was installed. A
//! run error or a non-zero exit is the program's fault (the reader's `vread` reports it); a
//! program that exits before its input ends reads no more of it.

use crate::cost::instructions;
use crate::run::{Run, Status};
use crate::{Program, RunError};
use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};
use std::cell::RefCell;
use std::rc::Rc;

/// Input gathered before a feed: big enough that resuming the interpreter is cheap next to
/// the work, small enough that output follows input closely.
pub const CHUNK_BYTES: usize = 64 << 10;

/// What a run behind a virtual file did, for whoever installed it (the CLI's report): fuel
/// burnt so far and the exit code once it exited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meter {
    pub fuel: u64,
    pub exit_code: Option<i32>,
}

/// A WebAssembly run as a drive program (or the error that kept it from starting, reported
/// on its first flit).
pub struct WasmStreamProgram {
    run: Result<Run, RunError>,
    pending: Vec<u8>,
    now_ns: u64,
    unreported_fuel: u64,
    exited: Option<i32>,
    meter: Option<Rc<RefCell<Meter>>>,
}

impl WasmStreamProgram {
    pub fn new(run: Result<Run, RunError>) -> WasmStreamProgram {
        WasmStreamProgram {
            run,
            pending: Vec::with_capacity(CHUNK_BYTES),
            now_ns: 0,
            unreported_fuel: 0,
            exited: None,
            meter: None,
        }
    }

    /// Also keeps `meter` up to date.
    pub fn with_meter(mut self, meter: Rc<RefCell<Meter>>) -> WasmStreamProgram {
        self.meter = Some(meter);
        self
    }

    /// A factory of fresh runs of `program` (INSIDER resets a slot to a fresh instance at
    /// every vopen): each with `args` and `seed`.
    pub fn factory(
        program: Program,
        args: Vec<String>,
        seed: u64,
    ) -> impl Fn() -> Box<dyn StreamProgram> {
        move || Box::new(WasmStreamProgram::new(program.start(&args, seed)))
    }

    /// As `factory`, each run keeping `meter` up to date.
    pub fn metered_factory(
        program: Program,
        args: Vec<String>,
        seed: u64,
        meter: Rc<RefCell<Meter>>,
    ) -> impl Fn() -> Box<dyn StreamProgram> {
        move || {
            Box::new(WasmStreamProgram::new(program.start(&args, seed)).with_meter(meter.clone()))
        }
    }

    fn fault(e: impl std::fmt::Display) -> ProgramError {
        ProgramError::Fault {
            program: "wasm",
            reason: e.to_string(),
        }
    }

    fn feed(&mut self, last: bool, out: &mut FlitWriter) -> Result<(), RunError> {
        if self.exited.is_some() {
            self.pending.clear();
            return Ok(());
        }
        let run = self.run.as_mut().map_err(|e| e.clone())?;
        // A feed that fails (out of fuel, a trap) burnt fuel too: it is charged all the same.
        let before = run.fuel_consumed();
        let step = run.feed(self.now_ns, &self.pending, last);
        let fuel = run.fuel_consumed() - before;
        self.unreported_fuel += fuel;
        if let Some(m) = &self.meter {
            m.borrow_mut().fuel += fuel;
        }
        let step = step?;
        assert_eq!(step.fuel, fuel, "a feed answers the fuel it burnt");
        self.pending.clear();
        let output = run.take_output();
        if !output.is_empty() {
            out.push(&output);
        }
        if let Status::Exited { code } = step.status {
            self.exited = Some(code);
        }
        if let Some(m) = &self.meter {
            m.borrow_mut().exit_code = self.exited;
        }
        Ok(())
    }
}

impl StreamProgram for WasmStreamProgram {
    fn name(&self) -> &'static str {
        "wasm"
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.pending.extend_from_slice(input.payload());
        assert!(self.pending.len() < CHUNK_BYTES + 64, "fed at every chunk");
        if self.pending.len() >= CHUNK_BYTES || input.eop() {
            self.feed(input.eop(), out).map_err(Self::fault)?;
        }
        if input.eop() {
            match self.exited {
                Some(0) => out.end(),
                Some(code) => {
                    out.end();
                    let name = self.run.as_ref().map_or("program", |r| r.name());
                    return Err(Self::fault(format!("{name} exited with code {code}")));
                }
                None => unreachable!("a run fed its last chunk exits or errs"),
            }
        }
        Ok(())
    }

    /// Never used to charge time: `take_metered_instructions` replaces it. The slot figure is
    /// a pipeline of one byte per cycle (a soft core), the core figure one instruction per
    /// byte; both only size the timing-fidelity estimate, which WebAssembly programs do not
    /// have (they run in functional fidelity).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 1.0,
            instructions_per_byte: 1.0,
        }
    }

    fn set_now_ns(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
    }

    fn take_metered_instructions(&mut self) -> Option<f64> {
        Some(instructions(std::mem::take(&mut self.unreported_fuel)))
    }
}
