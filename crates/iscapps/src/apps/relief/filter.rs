//! Relief pass 2 on the drive: streams the samples again and outputs, per sample, only the
//! features whose weight is at least the threshold (little-endian i32 each).
//!
//! Params: one message, the threshold (i32) followed by the 256 weights (i32) of pass 1.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use super::{FEATURES, SAMPLE_BYTES};
use crate::records::{EndGuard, RecordFramer};
use crate::wire::i32_at;

#[derive(Debug)]
pub struct ReliefFilterProgram {
    /// Feature indices kept, ascending.
    kept: Option<Vec<usize>>,
    framer: RecordFramer,
    guard: EndGuard,
}

impl Default for ReliefFilterProgram {
    fn default() -> ReliefFilterProgram {
        ReliefFilterProgram {
            kept: None,
            framer: RecordFramer::new(SAMPLE_BYTES),
            guard: EndGuard::default(),
        }
    }
}

fn params_error(reason: String) -> ProgramError {
    ProgramError::Params {
        program: "relief-filter",
        reason,
    }
}

impl StreamProgram for ReliefFilterProgram {
    fn name(&self) -> &'static str {
        "relief-filter"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        if self.kept.is_some() {
            return Err(params_error("weights already set".into()));
        }
        if params.len() != 4 + SAMPLE_BYTES {
            return Err(params_error(format!(
                "expected threshold + {FEATURES} weights ({} bytes), got {} bytes",
                4 + SAMPLE_BYTES,
                params.len()
            )));
        }
        let threshold = i32_at(params);
        let kept = params[4..]
            .chunks_exact(4)
            .enumerate()
            .filter(|(_, w)| i32_at(w) >= threshold)
            .map(|(f, _)| f)
            .collect();
        self.kept = Some(kept);
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let Some(kept) = &self.kept else {
            return Err(params_error("data arrived before the weights".into()));
        };
        self.framer.feed(input.payload(), |sample| {
            for &f in kept {
                out.push(&sample[4 * f..4 * f + 4]);
            }
            Ok::<(), ProgramError>(())
        })?;
        if input.eop() {
            self.framer.finish()?;
            out.end();
        }
        Ok(())
    }

    /// Slot: a fixed mask drives a 16-lane compaction network per flit, II = 1: one
    /// 64-byte flit per cycle.
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("relief", 1),
        }
    }
}
