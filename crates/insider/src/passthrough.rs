//! The pass-through program (PT, §5.2): every input byte is output. Host-bypass reads a real
//! file through a virtual file over PT, skipping the host storage stack; slot 0 runs the same
//! logic in hardware for ordinary firmware reads.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

pub struct PassThrough;

impl StreamProgram for PassThrough {
    fn name(&self) -> &'static str {
        "pt"
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        out.push(input.payload());
        if input.eop() {
            out.end();
        }
        Ok(())
    }

    /// A flit per cycle on a slot (a wire); on a core a load and a store per 8-byte word plus
    /// loop overhead: 0.25 instructions per byte (assumption: a memcpy-like loop).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: crate::engine::PASS_THROUGH_BYTES_PER_CYCLE,
            instructions_per_byte: 0.25,
        }
    }
}
