//! One run of a program, sans-IO: the caller feeds the input in chunks as the device reads
//! them (`feed(now, chunk, last)`), and each feed runs the guest until it wants more input or
//! exits, answering the fuel it burnt (so the caller charges engine time per chunk) and
//! leaving its output to be taken (`take_output`).
//!
//! Fuel, memory, output and stack are bounded, so a feed always returns: a trap, out-of-fuel,
//! out-of-bounds access, memory-limit hit or output-limit hit is a `RunError` of this run, and
//! the run refuses further feeds after it.

use crate::error::RunError;
use crate::module::Program;
use crate::wasi::{read_input, Stop, WasiState};
use wasmi::TrapCode;
use wasmi::{Func, Memory, ResumableCall, ResumableCallHostTrap, Store, Val};

/// What a feed ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The chunk is consumed; feed the next.
    NeedInput,
    /// The program exited (`proc_exit` or `_start` returned: code 0); any further input is
    /// not read.
    Exited { code: i32 },
}

/// One feed's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Fuel burnt during this feed.
    pub fuel: u64,
    pub status: Status,
}

enum State {
    Fresh(Func),
    Waiting(ResumableCallHostTrap),
    Exited(i32),
    Failed(RunError),
}

/// A running program.
pub struct Run {
    name: String,
    store: Store<WasiState>,
    memory: Memory,
    state: State,
    fuel_max: u64,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("name", &self.name)
            .field("fuel_consumed", &self.fuel_consumed())
            .finish()
    }
}

impl Run {
    pub(crate) fn new(program: &Program, state: WasiState) -> Result<Run, RunError> {
        let (engine, module, linker) = program.parts();
        let name = program.name().to_string();
        let fuel_max = state.limits.fuel_max;
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.limiter);
        store.set_fuel(fuel_max).expect("fuel metering is on");
        let instantiate = |reason: String| RunError::Instantiate {
            name: name.clone(),
            reason,
        };
        let instance = linker
            .instantiate_and_start(&mut store, module)
            .map_err(|e| instantiate(e.to_string()))?;
        let start = instance
            .get_func(&store, "_start")
            .ok_or_else(|| instantiate("no _start".into()))?;
        let memory = instance
            .get_memory(&store, "memory")
            .ok_or_else(|| instantiate("no memory".into()))?;
        Ok(Run {
            name,
            store,
            memory,
            state: State::Fresh(start),
            fuel_max,
        })
    }

    /// The program's name (argv[0]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Fuel burnt so far.
    pub fn fuel_consumed(&self) -> u64 {
        self.fuel_max - self.store.get_fuel().expect("fuel metering is on")
    }

    /// Input bytes the program read.
    pub fn input_read_bytes(&self) -> u64 {
        self.store.data().input_read_bytes
    }

    /// Output bytes written so far (taken or not).
    pub fn output_bytes(&self) -> u64 {
        self.store.data().output_bytes
    }

    /// Takes the output written since the last call.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.store.data_mut().output)
    }

    /// What the program wrote to fd 2 (bounded; `diagnostics_dropped_bytes` beyond it).
    pub fn diagnostics(&self) -> &[u8] {
        &self.store.data().diagnostics
    }

    pub fn diagnostics_dropped_bytes(&self) -> u64 {
        self.store.data().diagnostics_dropped_bytes
    }

    /// The exit code, once exited.
    pub fn exit_code(&self) -> Option<i32> {
        match self.state {
            State::Exited(c) => Some(c),
            _ => None,
        }
    }

    /// Feeds one chunk of input at simulated time `now_ns`; `last` says none follows.
    /// Runs the program until it has read the whole chunk and wants more, or exits.
    pub fn feed(&mut self, now_ns: u64, chunk: &[u8], last: bool) -> Result<Step, RunError> {
        match &self.state {
            State::Failed(e) => return Err(e.clone()),
            State::Exited(code) => {
                return Ok(Step {
                    fuel: 0,
                    status: Status::Exited { code: *code },
                })
            }
            State::Fresh(_) | State::Waiting(_) => {}
        }
        let before = self.fuel_consumed();
        {
            let st = self.store.data_mut();
            assert_eq!(
                st.input_at,
                st.input.len(),
                "a chunk is fed once the last is read"
            );
            assert!(!st.input_last, "no chunk is fed after the last");
            st.input.clear();
            st.input.extend_from_slice(chunk);
            st.input_at = 0;
            st.input_last = last;
            st.now_ns = now_ns;
        }
        let state = std::mem::replace(&mut self.state, State::Exited(0));
        let call = match state {
            State::Fresh(start) => start.call_resumable(&mut self.store, &[], &mut []),
            State::Waiting(invocation) => {
                let p = self
                    .store
                    .data_mut()
                    .pending_read
                    .take()
                    .expect("a waiting run has a pending read");
                let (mem, st) = self.memory.data_and_store_mut(&mut self.store);
                let (errno, n) = read_input(mem, st, p);
                let fuel = crate::cost::iovec_call_fuel(u64::from(p.iovs_len), n);
                let left = self.store.get_fuel().expect("fuel metering is on");
                if left < fuel {
                    self.store.set_fuel(0).expect("fuel metering is on");
                    let e = self.out_of_fuel();
                    self.state = State::Failed(e.clone());
                    return Err(e);
                }
                self.store
                    .set_fuel(left - fuel)
                    .expect("fuel metering is on");
                invocation.resume(&mut self.store, &[Val::I32(errno)], &mut [])
            }
            State::Exited(_) | State::Failed(_) => unreachable!("answered above"),
        };
        let status = self.settle(call);
        let fuel = self.fuel_consumed() - before;
        match status {
            Ok(status) => Ok(Step { fuel, status }),
            Err(e) => {
                self.state = State::Failed(e.clone());
                Err(e)
            }
        }
    }

    /// Turns what the guest did into the next state.
    fn settle(&mut self, call: Result<ResumableCall, wasmi::Error>) -> Result<Status, RunError> {
        match call {
            Ok(ResumableCall::Finished) => {
                self.state = State::Exited(0);
                Ok(Status::Exited { code: 0 })
            }
            Ok(ResumableCall::HostTrap(t)) => {
                match t.host_error().downcast_ref::<Stop>().copied() {
                    Some(Stop::NeedInput) => {
                        self.state = State::Waiting(t);
                        Ok(Status::NeedInput)
                    }
                    Some(stop) => self.stopped(stop),
                    None => Err(self.trap(t.host_error())),
                }
            }
            Ok(ResumableCall::OutOfFuel(_)) => Err(self.out_of_fuel()),
            Err(e) => match e.downcast_ref::<Stop>().copied() {
                Some(stop) => self.stopped(stop),
                None => match e.i32_exit_status() {
                    Some(code) => {
                        self.state = State::Exited(code);
                        Ok(Status::Exited { code })
                    }
                    None => Err(self.trap(&e)),
                },
            },
        }
    }

    fn stopped(&mut self, stop: Stop) -> Result<Status, RunError> {
        match stop {
            Stop::Exit(code) => {
                self.state = State::Exited(code);
                Ok(Status::Exited { code })
            }
            Stop::OutputLimit => {
                let st = self.store.data();
                let l = st.limits;
                Err(RunError::OutputLimit {
                    name: self.name.clone(),
                    bytes_max: l.output_bytes_max(st.input_read_bytes),
                    input_bytes: st.input_read_bytes,
                    base_bytes: l.output_base_bytes,
                    per_input_byte: l.output_bytes_per_input_byte,
                })
            }
            Stop::OutOfFuel => Err(self.out_of_fuel()),
            Stop::NeedInput | Stop::NoMemory => Err(RunError::Trap {
                name: self.name.clone(),
                reason: format!("WASI call stopped outside a read: {stop}"),
            }),
        }
    }

    fn out_of_fuel(&self) -> RunError {
        RunError::OutOfFuel {
            name: self.name.clone(),
            fuel_max: self.fuel_max,
        }
    }

    fn trap(&self, e: &wasmi::Error) -> RunError {
        let name = self.name.clone();
        if self.store.data().limiter.hit {
            return RunError::MemoryLimit {
                name,
                pages_max: self.store.data().limits.memory_pages_max,
            };
        }
        match e.as_trap_code() {
            Some(TrapCode::MemoryOutOfBounds) => RunError::OutOfBounds { name },
            Some(TrapCode::OutOfFuel) => self.out_of_fuel(),
            _ => RunError::Trap {
                name,
                reason: e.to_string(),
            },
        }
    }
}

/// A whole run's result (`run_chunks`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub output: Vec<u8>,
    pub fuel: u64,
    pub exit_code: i32,
    pub input_read_bytes: u64,
    pub diagnostics: Vec<u8>,
    /// Fuel of each feed, in order (the per-chunk charge a device engine makes).
    pub fuel_per_chunk: Vec<u64>,
}

/// Runs `program` over `input` fed in chunks of `chunk_bytes` (the last may be shorter; an
/// empty input is one empty last chunk), all at simulated time 0. For tests and the host.
pub fn run_chunks(
    program: &Program,
    args: &[String],
    seed: u64,
    input: &[u8],
    chunk_bytes: usize,
) -> Result<Outcome, RunError> {
    assert!(chunk_bytes > 0, "chunks hold at least a byte");
    let mut run = program.start(args, seed)?;
    let mut output = Vec::new();
    let mut fuel_per_chunk = Vec::new();
    let chunks: Vec<&[u8]> = if input.is_empty() {
        vec![&[]]
    } else {
        input.chunks(chunk_bytes).collect()
    };
    let mut code = None;
    for (i, chunk) in chunks.iter().enumerate() {
        let step = run.feed(0, chunk, i + 1 == chunks.len())?;
        fuel_per_chunk.push(step.fuel);
        output.extend(run.take_output());
        if let Status::Exited { code: c } = step.status {
            code = Some(c);
            break;
        }
    }
    let exit_code = code.expect("a program that read its last chunk exits or waits no more");
    Ok(Outcome {
        output,
        fuel: run.fuel_consumed(),
        exit_code,
        input_read_bytes: run.input_read_bytes(),
        diagnostics: run.diagnostics().to_vec(),
        fuel_per_chunk,
    })
}
