//! The common face of every INSIDER application: generator, drive program(s) per pass,
//! host-side remainder, independent reference, data reduction and cost figures.
//!
//! How the runtime drives an app (functional fidelity):
//! ```text
//! let data = app.generate(seed, bytes)?;               // the real file (or what the host vwrites)
//! let mut outs = vec![];
//! for pass in 0..app.pass_count() {                    // a global barrier between passes
//!     let params = app.pass_params(&data, pass, &outs)?; // host side: send_params messages
//!     let prog = app.program(pass)?;                     // drive side: runs in a slot or on cores
//!     outs.push(/* the bytes vread (or written to the real file) */);
//! }
//! let got = app.host_remainder(&data, &outs)?;         // host side, after the drive output
//! app.verify(&got, &app.reference(&data)?)?;
//! ```
//! Timing fidelity does not generate data: it takes `paper_input_bytes`, `output_ratio`
//! per pass, `program(pass)?.cost()` and `host_cost`.

use nearflash_stream::StreamProgram;

use crate::{AppError, AppOutput, VerifyError};

/// Which way data flows through the drive program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Virtual read: the real file is the program's input, its output goes to the host.
    Read,
    /// Virtual write: the host's `vwrite` bytes are the input, the output is written to
    /// the real file on the drive.
    Write,
}

/// Where one step of an app runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// In the drive program of this pass (a slot or the drive's cores).
    Drive { pass: usize },
    /// On the host, after the drive output of the passes before it arrived.
    Host,
}

/// One step of an app, in execution order (e.g. KNN's MB1 on the drive, MB2 on the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    pub name: &'static str,
    pub side: Side,
}

/// One generated input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// The real file's content (Read) or the bytes the host writes (Write).
    pub input: Vec<u8>,
    /// The pass-0 parameter messages (`send_params`), in order.
    pub params: Vec<Vec<u8>>,
    /// Records (lines, rows, samples, pairs) in `input`; the host knows its file's shape.
    pub record_count: u64,
}

/// How a data-reduction figure was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatioBasis {
    /// Computed from the generator's distribution (derivation beside the figure).
    Analytic,
    /// Measured on generated data.
    Sampled,
}

/// Drive output bytes ÷ drive input bytes of one pass at the paper's size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputRatio {
    pub ratio: f64,
    pub basis: RatioBasis,
    /// One line: how the figure follows from the record layout and the distribution.
    pub derivation: &'static str,
}

/// Host CPU work (instructions, scalar, one core), measured by running the app
/// (`crate::measure`, the table `measured.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostCost {
    /// The host-side remainder, per byte of drive output (summed over passes' outputs).
    pub remainder_instructions_per_output_byte: f64,
    /// The host-only ("pure_cpu") formulation, per input-file byte, summed over all passes
    /// (the host-only baseline reads the file `pass_count()` times).
    pub pure_cpu_instructions_per_input_byte: f64,
}

/// An INSIDER application.
pub trait IscApp {
    /// Registry name, e.g. `grep`.
    fn name(&self) -> &'static str;

    /// Read (most) or write (RLE decoding).
    fn direction(&self) -> Direction {
        Direction::Read
    }

    /// The input's granularity: generated sizes round down to whole records.
    fn record_bytes(&self) -> u64;

    /// The paper's input size (WORKLOADS.md §4), in bytes, per pass.
    fn paper_input_bytes(&self) -> u64;

    /// A seeded input of at most `input_bytes` bytes (whole records, at least one).
    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError>;

    /// Passes over the input, separated by global barriers (Relief: 2).
    fn pass_count(&self) -> usize {
        1
    }

    /// The app's steps in order: what runs on the drive in each pass and what on the host.
    fn stages(&self) -> &'static [Stage];

    /// Virtual write only: the bytes to preallocate for the real file (the drive's output
    /// size), known to the host from what it writes. `None` for read apps.
    fn preallocate_bytes(&self, _dataset: &Dataset) -> Option<u64> {
        None
    }

    /// The drive program of `pass`, fresh (reset) state.
    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError>;

    /// Parameter messages for `pass`, given the drive outputs of the earlier passes (the
    /// host-side work at a barrier). Pass 0 gets the dataset's params.
    fn pass_params(
        &self,
        dataset: &Dataset,
        pass: usize,
        earlier_outputs: &[Vec<u8>],
    ) -> Result<Vec<Vec<u8>>, AppError> {
        match pass {
            0 if earlier_outputs.is_empty() => Ok(dataset.params.clone()),
            0 => Err(AppError::OutputCount {
                app: self.name(),
                expected: 0,
                got: earlier_outputs.len(),
            }),
            _ => Err(AppError::NoSuchPass {
                app: self.name(),
                pass,
                pass_count: self.pass_count(),
            }),
        }
    }

    /// The host-side remainder: turns the drive outputs (one per pass) into the result.
    fn host_remainder(
        &self,
        dataset: &Dataset,
        drive_outputs: &[Vec<u8>],
    ) -> Result<AppOutput, AppError>;

    /// An independent whole-buffer computation of the result.
    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError>;

    /// Compares a result with the reference (exact unless the app says otherwise).
    fn verify(&self, got: &AppOutput, want: &AppOutput) -> Result<(), VerifyError> {
        crate::output::verify_exact(self.name(), got, want)
    }

    /// Data reduction (or amplification) of `pass` at the paper's configuration.
    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError>;

    /// Host CPU work of the remainder and of the host-only formulation.
    fn host_cost(&self) -> HostCost;
}

/// Checks that `drive_outputs` has one entry per pass.
pub fn expect_outputs<'a>(
    app: &dyn IscApp,
    drive_outputs: &'a [Vec<u8>],
) -> Result<&'a [Vec<u8>], AppError> {
    if drive_outputs.len() == app.pass_count() {
        Ok(drive_outputs)
    } else {
        Err(AppError::OutputCount {
            app: app.name(),
            expected: app.pass_count(),
            got: drive_outputs.len(),
        })
    }
}

/// Errors unless `pass` is 0 (single-pass apps).
pub fn only_pass_zero(app: &'static str, pass: usize) -> Result<(), AppError> {
    if pass == 0 {
        Ok(())
    } else {
        Err(AppError::NoSuchPass {
            app,
            pass,
            pass_count: 1,
        })
    }
}

/// Whole records of `record_bytes` in `input_bytes`, at least one.
pub fn whole_records(
    app: &'static str,
    input_bytes: u64,
    record_bytes: u64,
) -> Result<u64, AppError> {
    let n = input_bytes / record_bytes;
    if n == 0 {
        Err(AppError::TooSmall {
            app,
            input_bytes,
            record_bytes,
        })
    } else {
        Ok(n)
    }
}
