//! Pass-through (PT): the drive returns its input unchanged. Slot 0 runs it for ordinary
//! reads; the host-bypass baselines register it over each app's real file (INSIDER §5.2).

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::app::{expect_outputs, only_pass_zero, whole_records};
use crate::records::EndGuard;
use crate::{AppError, AppOutput, Dataset, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage};

/// The pass-through program.
#[derive(Debug, Default)]
pub struct PassThrough {
    guard: EndGuard,
}

impl StreamProgram for PassThrough {
    fn name(&self) -> &'static str {
        "passthrough"
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        out.push(input.payload());
        if input.eop() {
            out.end();
        }
        Ok(())
    }

    /// Slot: a wire from input FIFO to output FIFO, one 64-byte flit per cycle.
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("passthrough", 0),
        }
    }
}

/// The pass-through application over random bytes.
#[derive(Debug, Default)]
pub struct PassThroughApp;

impl IscApp for PassThroughApp {
    fn name(&self) -> &'static str {
        "passthrough"
    }

    fn record_bytes(&self) -> u64 {
        1
    }

    /// WORKLOADS.md gives PT no size of its own; 60 GiB is the largest app input, what
    /// the host-bypass baselines stream through it.
    fn paper_input_bytes(&self) -> u64 {
        60 << 30
    }

    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let n = whole_records(self.name(), input_bytes, 1)?;
        let mut input = vec![0u8; n as usize];
        crate::draw::Draw::new(seed).fill_bytes(&mut input);
        Ok(Dataset {
            input,
            params: Vec::new(),
            record_count: n,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[Stage {
            name: "copy",
            side: Side::Drive { pass: 0 },
        }]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(PassThrough::default()))
    }

    fn host_remainder(&self, _: &Dataset, outputs: &[Vec<u8>]) -> Result<AppOutput, AppError> {
        Ok(AppOutput::Bytes(expect_outputs(self, outputs)?[0].clone()))
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        Ok(AppOutput::Bytes(dataset.input.clone()))
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(OutputRatio {
            ratio: 1.0,
            basis: RatioBasis::Analytic,
            derivation: "every input byte is output once",
        })
    }

    /// The host consumes the bytes as they are (no remainder); there is no host-only
    /// computation beyond the read itself.
    fn host_cost(&self) -> HostCost {
        HostCost {
            remainder_instructions_per_output_byte: 0.0,
            pure_cpu_instructions_per_input_byte: 0.0,
        }
    }
}
