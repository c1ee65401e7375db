//! Engine-neutral work of a program, which the runtime turns into time on an engine.

/// How much work a program does per input byte.
///
/// * `slot_bytes_per_cycle`: on an FPGA-like slot the program is a pipeline that accepts
///   this many input bytes per clock cycle (INSIDER's slots consume one 64-byte flit per
///   cycle when fully pipelined, fewer when the logic is narrower); slot time =
///   bytes ÷ (bytes_per_cycle × clock).
/// * `instructions_per_byte`: on a core (a drive's embedded core or the host CPU) the program
///   executes this many instructions per input byte; core time = bytes × instructions ×
///   CPI ÷ clock.
///
/// Each program documents where both numbers come from next to its `cost()` (INSIDER's
/// built-ins: the slot rate from the design's initiation interval, the instructions measured,
/// `nearflash_iscapps::measure`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkCost {
    pub slot_bytes_per_cycle: f64,
    pub instructions_per_byte: f64,
}

impl WorkCost {
    /// Checks both figures are positive and finite.
    pub fn is_valid(&self) -> bool {
        self.slot_bytes_per_cycle.is_finite()
            && self.slot_bytes_per_cycle > 0.0
            && self.instructions_per_byte.is_finite()
            && self.instructions_per_byte > 0.0
    }
}
