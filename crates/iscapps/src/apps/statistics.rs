//! statistics (WORKLOADS.md §4): rows of uniform little-endian u32; per row the drive emits
//! (max, min, sum low 32 bits, sum high 32 bits), INSIDER's output layout; the host turns
//! each tuple into min, max, sum and ⌊sum ÷ n⌋.
//!
//! Params: one message, the row size in bytes as a little-endian u32 (a positive multiple
//! of 4), as INSIDER's host sends COL_NUM.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::app::{expect_outputs, only_pass_zero, whole_records};
use crate::draw::Draw;
use crate::records::{EndGuard, RecordFramer};
use crate::wire::{put_u32, tuples, u32_at};
use crate::{
    AppError, AppOutput, Dataset, HostCost, IscApp, OutputRatio, RatioBasis, RowStat, Side, Stage,
};

/// Paper: 65,536 rows of 786,432 bytes (196,608 u32).
pub const PAPER_ROW_BYTES: u32 = 786_432;
pub const PAPER_ROWS: u64 = 65_536;
/// Output per row: max, min, sum_lo, sum_hi.
pub const TUPLE_BYTES: usize = 16;

#[derive(Debug, Default)]
pub struct StatisticsProgram {
    row_values: u64,
    words: Option<RecordFramer>,
    values_in_row: u64,
    min: u32,
    max: u32,
    sum: u64,
    guard: EndGuard,
}

impl StatisticsProgram {
    fn params_error(reason: String) -> ProgramError {
        ProgramError::Params {
            program: "statistics",
            reason,
        }
    }

    fn reset_row(&mut self) {
        self.values_in_row = 0;
        self.min = u32::MAX;
        self.max = 0;
        self.sum = 0;
    }
}

impl StreamProgram for StatisticsProgram {
    fn name(&self) -> &'static str {
        "statistics"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        if self.words.is_some() {
            return Err(Self::params_error("row size already set".into()));
        }
        if params.len() != 4 {
            return Err(Self::params_error(format!(
                "expected a 4-byte row size, got {} bytes",
                params.len()
            )));
        }
        let row_bytes = u32_at(params);
        if row_bytes == 0 || !row_bytes.is_multiple_of(4) {
            return Err(Self::params_error(format!(
                "row size {row_bytes} is not a positive multiple of 4"
            )));
        }
        self.row_values = u64::from(row_bytes / 4);
        self.words = Some(RecordFramer::new(4));
        self.reset_row();
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let Some(mut words) = self.words.take() else {
            return Err(Self::params_error(
                "data arrived before the row size".into(),
            ));
        };
        let fed = words.feed(input.payload(), |w| {
            let v = u32_at(w);
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            self.sum += u64::from(v);
            self.values_in_row += 1;
            if self.values_in_row == self.row_values {
                let mut tuple = Vec::with_capacity(TUPLE_BYTES);
                put_u32(&mut tuple, self.max);
                put_u32(&mut tuple, self.min);
                put_u32(&mut tuple, self.sum as u32);
                put_u32(&mut tuple, (self.sum >> 32) as u32);
                out.push(&tuple);
                self.reset_row();
            }
            Ok::<(), ProgramError>(())
        });
        let framing = if input.eop() { words.finish() } else { Ok(()) };
        self.words = Some(words);
        fed?;
        framing?;
        if input.eop() {
            if self.values_in_row != 0 {
                return Err(ProgramError::Framing("stream ends inside a row"));
            }
            out.end();
        }
        Ok(())
    }

    /// Slot: 16 u32 lanes per flit feed a 16-input min tree, max tree and adder tree,
    /// pipelined at II = 1: one 64-byte flit per cycle.
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("statistics", 0),
        }
    }
}

/// A hand derivation for an ideal scalar core, kept only as the reference the fuel schedule
/// was calibrated against (crates/wasm/tests/calibration.rs), not used by any model: per u32,
/// load, two compare + conditional moves (min, max), add into the 64-bit sum = 6, plus 3 loop
/// instructions per 4 values unrolled: 6.75 per 4 bytes ≈ 1.69 per byte.
pub const HAND_DERIVED_INSTRUCTIONS_PER_BYTE: f64 = (6.0 + 3.0 / 4.0) / 4.0;

#[derive(Debug)]
pub struct StatisticsApp {
    row_bytes: u32,
}

impl Default for StatisticsApp {
    fn default() -> StatisticsApp {
        StatisticsApp {
            row_bytes: PAPER_ROW_BYTES,
        }
    }
}

impl StatisticsApp {
    /// Rows of `row_values` u32 (≥ 1), for reduced-size runs.
    pub fn with_row_values(row_values: u32) -> Result<StatisticsApp, AppError> {
        match row_values.checked_mul(4) {
            Some(row_bytes) if row_bytes > 0 => Ok(StatisticsApp { row_bytes }),
            _ => Err(AppError::Config {
                app: "statistics",
                reason: format!("{row_values} values per row"),
            }),
        }
    }

    fn row_values(&self) -> u64 {
        u64::from(self.row_bytes / 4)
    }
}

impl IscApp for StatisticsApp {
    fn name(&self) -> &'static str {
        "statistics"
    }

    fn record_bytes(&self) -> u64 {
        u64::from(self.row_bytes)
    }

    fn paper_input_bytes(&self) -> u64 {
        PAPER_ROWS * u64::from(PAPER_ROW_BYTES)
    }

    /// Uniform u32 (INSIDER fills rows with `rand()`; we use the full 32-bit range so the
    /// 64-bit sum's high word is exercised).
    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let rows = whole_records(self.name(), input_bytes, self.record_bytes())?;
        let mut input = vec![0u8; (rows * self.record_bytes()) as usize];
        Draw::new(seed).fill_bytes(&mut input);
        Ok(Dataset {
            input,
            params: vec![self.row_bytes.to_le_bytes().to_vec()],
            record_count: rows,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[
            Stage {
                name: "per-row max, min and 64-bit sum",
                side: Side::Drive { pass: 0 },
            },
            Stage {
                name: "per-row average",
                side: Side::Host,
            },
        ]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(StatisticsProgram::default()))
    }

    fn host_remainder(
        &self,
        dataset: &Dataset,
        outputs: &[Vec<u8>],
    ) -> Result<AppOutput, AppError> {
        let out = &expect_outputs(self, outputs)?[0];
        let n = self.row_values();
        let rows: Vec<RowStat> = tuples(self.name(), out, TUPLE_BYTES)?
            .map(|t| {
                let sum = u64::from(u32_at(&t[8..])) | (u64::from(u32_at(&t[12..])) << 32);
                RowStat {
                    max: u32_at(t),
                    min: u32_at(&t[4..]),
                    sum,
                    mean_floor: sum / n,
                }
            })
            .collect();
        if rows.len() as u64 != dataset.record_count {
            return Err(AppError::DriveOutput {
                app: self.name(),
                reason: format!(
                    "{} row tuples for {} rows",
                    rows.len(),
                    dataset.record_count
                ),
            });
        }
        Ok(AppOutput::RowStats(rows))
    }

    /// Whole rows, values decoded with `from_le_bytes`, folded with iterator min/max/sum.
    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        let rows = dataset
            .input
            .chunks_exact(self.row_bytes as usize)
            .map(|row| {
                let values: Vec<u32> = row
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect();
                let sum: u64 = values.iter().map(|&v| u64::from(v)).sum();
                RowStat {
                    min: *values.iter().min().expect("a row has values"),
                    max: *values.iter().max().expect("a row has values"),
                    sum,
                    mean_floor: sum / values.len() as u64,
                }
            })
            .collect();
        Ok(AppOutput::RowStats(rows))
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(OutputRatio {
            ratio: TUPLE_BYTES as f64 / f64::from(PAPER_ROW_BYTES),
            basis: RatioBasis::Analytic,
            derivation: "one 16-byte (max, min, sum_lo, sum_hi) tuple per 786,432-byte row",
        })
    }

    /// Measured (`crate::measure`): the per-row finish per output byte, the host-only
    /// formulation per input byte.
    fn host_cost(&self) -> HostCost {
        crate::measure::host("statistics")
    }
}
