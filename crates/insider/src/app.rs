//! What the experiments need to know about an application: its passes over the data, and for
//! each the drive program (whose `cost()` gives its slot and core rates), how much output it
//! makes per input byte, and the host's work — the whole computation per input byte when the
//! host does everything (host-only, host-bypass), and the remainder per output byte when the
//! drive has done its part (INSIDER). The applications themselves (generators, programs,
//! references, cost derivations) live in `nearflash-iscapps`; this is the interface.

use crate::runtime::ProgramFactory;
use crate::stream::Direction;

pub struct Pass {
    /// Bytes the pass streams through the drive program (read: the file; write: the
    /// host's input to vwrite).
    pub input_bytes: u64,
    /// Read: the program filters a real file into a virtual one. Write: it materialises
    /// a real file from what the host writes.
    pub direction: Direction,
    pub program: ProgramFactory,
    /// Output bytes per input byte (timing fidelity; functional runs make real output).
    pub output_per_input: f64,
    /// Host-only / host-bypass: host instructions per input byte for the whole computation.
    pub host_instructions_per_input_byte: f64,
    /// INSIDER: host instructions per byte of the drive's output (the remainder).
    pub host_instructions_per_output_byte: f64,
}

pub struct AppProfile {
    pub name: String,
    pub passes: Vec<Pass>,
}

impl AppProfile {
    pub fn input_bytes(&self) -> u64 {
        self.passes.iter().map(|p| p.input_bytes).sum()
    }
}
