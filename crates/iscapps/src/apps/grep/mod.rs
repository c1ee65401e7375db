//! grep (WORKLOADS.md §4): lines of random {A–D} with a 2-char pattern drawn from {A–D}.
//! The drive emits (row, col) of each line's first match; the host expands them into the
//! per-line answer of INSIDER's pure_cpu grep (first column or −1).

mod program;
mod reference;

pub use program::{GrepProgram, HAND_DERIVED_INSTRUCTIONS_PER_BYTE};

use nearflash_stream::StreamProgram;

use crate::app::{expect_outputs, only_pass_zero, whole_records};
use crate::draw::{Draw, ABCD};
use crate::wire::{tuples, u32_at};
use crate::{AppError, AppOutput, Dataset, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage};

/// Paper line: 65,535 chars plus `\n`; 983,040 lines.
pub const PAPER_LINE_CHARS: u64 = 65_535;
pub const PAPER_LINES: u64 = 983_040;
pub const PATTERN_CHARS: usize = 2;

#[derive(Debug)]
pub struct GrepApp {
    line_chars: u64,
}

impl Default for GrepApp {
    fn default() -> GrepApp {
        GrepApp {
            line_chars: PAPER_LINE_CHARS,
        }
    }
}

impl GrepApp {
    /// Lines of `line_chars` chars (≥ 1) plus `\n`, for reduced-size runs.
    pub fn with_line_chars(line_chars: u64) -> Result<GrepApp, AppError> {
        if line_chars == 0 {
            return Err(AppError::Config {
                app: "grep",
                reason: "a line needs at least one char".into(),
            });
        }
        Ok(GrepApp { line_chars })
    }
}

impl IscApp for GrepApp {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn record_bytes(&self) -> u64 {
        self.line_chars + 1
    }

    fn paper_input_bytes(&self) -> u64 {
        PAPER_LINES * (PAPER_LINE_CHARS + 1)
    }

    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let lines = whole_records(self.name(), input_bytes, self.record_bytes())?;
        let mut draw = Draw::new(seed);
        let mut pattern = vec![0u8; PATTERN_CHARS];
        draw.fill_from(&mut pattern, ABCD);
        let mut input = vec![0u8; (lines * self.record_bytes()) as usize];
        for line in input.chunks_exact_mut(self.record_bytes() as usize) {
            let (chars, newline) = line.split_at_mut(self.line_chars as usize);
            draw.fill_from(chars, ABCD);
            newline[0] = b'\n';
        }
        Ok(Dataset {
            input,
            params: vec![pattern],
            record_count: lines,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[
            Stage {
                name: "first match per line as (row, col)",
                side: Side::Drive { pass: 0 },
            },
            Stage {
                name: "per-line first column, -1 when none",
                side: Side::Host,
            },
        ]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(GrepProgram::default()))
    }

    /// Every line starts at −1; each (row, col) pair sets its line. Rows must be strictly
    /// increasing and within the file.
    fn host_remainder(
        &self,
        dataset: &Dataset,
        outputs: &[Vec<u8>],
    ) -> Result<AppOutput, AppError> {
        let out = &expect_outputs(self, outputs)?[0];
        let mut first = vec![-1i64; dataset.record_count as usize];
        let mut last_row: Option<u32> = None;
        for pair in tuples(self.name(), out, program::PAIR_BYTES)? {
            let (row, col) = (u32_at(&pair[..4]), u32_at(&pair[4..]));
            let bad = |reason: String| AppError::DriveOutput {
                app: "grep",
                reason,
            };
            if last_row.is_some_and(|r| r >= row) {
                return Err(bad(format!("row {row} out of order")));
            }
            let slot = first
                .get_mut(row as usize)
                .ok_or_else(|| bad(format!("row {row} beyond the file's lines")))?;
            *slot = i64::from(col);
            last_row = Some(row);
        }
        Ok(AppOutput::FirstMatch(first))
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        Ok(AppOutput::FirstMatch(reference::first_matches(
            &dataset.input,
            &dataset.params[0],
        )))
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(OutputRatio {
            ratio: program::PAIR_BYTES as f64 / (PAPER_LINE_CHARS + 1) as f64,
            basis: RatioBasis::Analytic,
            derivation: "one 8-byte pair per 65,536-byte line: P(no match of a 2-char pattern \
                         in 65,535 uniform {A-D} chars) <= (15/16)^32767 (disjoint pairs) ~ 0",
        })
    }

    /// Measured (`crate::measure`): the remainder per output pair, the host-only
    /// formulation (the drive program run on the host, then the remainder) per input byte.
    fn host_cost(&self) -> HostCost {
        crate::measure::host("grep")
    }
}
