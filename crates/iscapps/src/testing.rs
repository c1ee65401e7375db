//! Programs for testing the runtime: `FaultAfter(n)` passes data through and faults on the
//! flit after `n`, the way a buggy drive program would (INSIDER's isolation test: its reader
//! gets an I/O error, the other slots keep running).

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::records::EndGuard;

/// Passes the first `flits_ok` flits through, then returns `ProgramError::Fault` on every
/// later flit (without ending its output).
#[derive(Debug)]
pub struct FaultAfter {
    flits_ok: u64,
    flits_seen: u64,
    guard: EndGuard,
}

impl FaultAfter {
    pub fn new(flits_ok: u64) -> FaultAfter {
        FaultAfter {
            flits_ok,
            flits_seen: 0,
            guard: EndGuard::default(),
        }
    }
}

impl StreamProgram for FaultAfter {
    fn name(&self) -> &'static str {
        "fault-after"
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        if self.flits_seen >= self.flits_ok {
            return Err(ProgramError::Fault {
                program: "fault-after",
                reason: format!("deliberate fault on flit {}", self.flits_seen),
            });
        }
        self.guard.accept(input)?;
        self.flits_seen += 1;
        out.push(input.payload());
        if input.eop() {
            out.end();
        }
        Ok(())
    }

    /// Costs as pass-through (a wire; a copy loop on a core).
    fn cost(&self) -> WorkCost {
        crate::apps::PassThrough::default().cost()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::run_program;
    use nearflash_stream::flits_of;

    #[test]
    fn faults_on_the_flit_after_n_and_passes_short_streams() {
        let data = vec![9u8; 64 * 5];
        let e = run_program(&mut FaultAfter::new(3), &[], &flits_of(&data)).unwrap_err();
        assert!(matches!(e, ProgramError::Fault { .. }));
        let out = run_program(&mut FaultAfter::new(5), &[], &flits_of(&data)).unwrap();
        assert_eq!(out, data);
    }
}
