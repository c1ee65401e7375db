//! RLE decoding (WORKLOADS.md §4), through the virtual-write path: the host `vwrite`s the
//! encoded stream (≈ 2/14.5 of the decoded size), the drive decodes it and writes the
//! decoded file; `vclose` returns the decoded byte count. The result is the decoded file.

mod program;
mod reference;

pub use program::RleDecodeProgram;

use nearflash_stream::StreamProgram;

use crate::app::{expect_outputs, only_pass_zero};
use crate::draw::Draw;
use crate::wire::put_u64;
use crate::{
    AppError, AppOutput, Dataset, Direction, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage,
};
use program::{HEADER_BYTES, MAGIC, MEAN_RUN_BYTES};

/// Paper: a 187,544 × 129,000 bitmap at 8 bits per pixel, decoded.
pub const PAPER_DECODED_BYTES: u64 = 187_544 * 129_000;
pub const RUN_BYTES_MAX: u32 = 28;

#[derive(Debug, Default)]
pub struct RleApp;

impl IscApp for RleApp {
    fn name(&self) -> &'static str {
        "rle"
    }

    fn direction(&self) -> Direction {
        Direction::Write
    }

    /// One (length, symbol) pair; the 16-byte header comes on top.
    fn record_bytes(&self) -> u64 {
        2
    }

    /// The encoded bytes the host writes: header + 2 bytes per mean 14.5-byte run.
    fn paper_input_bytes(&self) -> u64 {
        HEADER_BYTES as u64 + (PAPER_DECODED_BYTES as f64 * 2.0 / MEAN_RUN_BYTES).round() as u64
    }

    /// `input_bytes` of encoded data: the header and ⌊(input_bytes − 16) / 2⌋ pairs, run
    /// lengths uniform 1–28, symbols uniform 'a'–'z' (INSIDER's generator).
    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let pairs = input_bytes.saturating_sub(HEADER_BYTES as u64) / 2;
        if pairs == 0 {
            return Err(AppError::TooSmall {
                app: "rle",
                input_bytes,
                record_bytes: HEADER_BYTES as u64 + 2,
            });
        }
        let mut draw = Draw::new(seed);
        let mut input = Vec::with_capacity(HEADER_BYTES + 2 * pairs as usize);
        input.extend_from_slice(MAGIC);
        put_u64(&mut input, 0);
        let mut decoded: u64 = 0;
        for _ in 0..pairs {
            let length = 1 + draw.below(RUN_BYTES_MAX) as u8;
            input.push(length);
            input.push(b'a' + draw.below(26) as u8);
            decoded += u64::from(length);
        }
        input[8..HEADER_BYTES].copy_from_slice(&decoded.to_le_bytes());
        Ok(Dataset {
            input,
            params: Vec::new(),
            record_count: pairs,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[Stage {
            name: "decode runs, write the decoded file",
            side: Side::Drive { pass: 0 },
        }]
    }

    /// The decoded size, from the header the host itself wrote.
    fn preallocate_bytes(&self, dataset: &Dataset) -> Option<u64> {
        dataset.input.get(8..HEADER_BYTES).map(crate::wire::u64_at)
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(RleDecodeProgram::default()))
    }

    /// The drive's output is the real file's new content.
    fn host_remainder(&self, _: &Dataset, outputs: &[Vec<u8>]) -> Result<AppOutput, AppError> {
        Ok(AppOutput::Bytes(expect_outputs(self, outputs)?[0].clone()))
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        Ok(AppOutput::Bytes(reference::decode(&dataset.input)))
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(OutputRatio {
            ratio: MEAN_RUN_BYTES / 2.0,
            basis: RatioBasis::Analytic,
            derivation: "amplification: each 2-byte pair expands to a uniform 1-28 run, mean \
                         14.5 bytes: 7.25 (header ignored)",
        })
    }

    /// Remainder: none, the decoded file stays on the drive: 0 (the measured remainder takes
    /// the decoded bytes as its result, a copy the drive-side run does not make). Host-only:
    /// measured (`crate::measure`): the host decodes, then writes the 7.25× larger decoded
    /// file itself.
    fn host_cost(&self) -> HostCost {
        HostCost {
            remainder_instructions_per_output_byte: 0.0,
            ..crate::measure::host("rle")
        }
    }
}
