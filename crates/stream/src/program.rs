//! The drive-program interface: parameters, then input flits in, output flits out.

use crate::{Flit, FlitWriter, WorkCost};

/// Why a program stopped. The runtime turns this into an I/O error for the program's reader
/// and keeps every other slot running.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    #[error("malformed flit stream: {0}")]
    Framing(&'static str),
    #[error("bad parameters for {program}: {reason}")]
    Params {
        program: &'static str,
        reason: String,
    },
    #[error("{program} faulted: {reason}")]
    Fault {
        program: &'static str,
        reason: String,
    },
}

/// A drive program (INSIDER §3.4): stateful across flits, fed by the runtime.
///
/// The runtime calls `on_params` for each message of the parameter FIFO (`send_params`),
/// then `on_flit` for every input flit in order. On the input flit with `eop` the program
/// must finish its output and call `out.end()`. A program may also end its output early
/// (e.g. after a fault it reports as `Err`).
pub trait StreamProgram {
    /// A short name, e.g. `grep`.
    fn name(&self) -> &'static str;

    /// One parameter message. Programs without parameters reject any.
    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        Err(ProgramError::Params {
            program: self.name(),
            reason: format!("takes no parameters, got {} bytes", params.len()),
        })
    }

    /// One input flit.
    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError>;

    /// The work this program does per input byte, on each kind of engine.
    fn cost(&self) -> WorkCost;

    /// The simulated time, handed to the program before the runtime feeds it a chunk (a
    /// WebAssembly program's clock reads it). Built-in programs ignore it.
    fn set_now_ns(&mut self, _now_ns: u64) {}

    /// Instructions executed since the last call, for programs that meter themselves (a
    /// WebAssembly program's fuel); `None` for programs charged by `cost()` per byte.
    fn take_metered_instructions(&mut self) -> Option<f64> {
        None
    }
}
