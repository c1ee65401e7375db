//! RLE decoding on the drive (used through the virtual-write path): the host writes the
//! encoded stream, the drive expands it and writes the decoded file.
//!
//! Encoded layout:
//! ```text
//! bytes 0..8    magic "NFRLE001"
//! bytes 8..16   decoded size, u64 little-endian
//! then pairs    (run length u8 in 1–255, symbol u8)   — the generator uses 1–28, 'a'–'z'
//! ```
//! A header or a pair may straddle flits. Takes no parameters.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::records::EndGuard;
use crate::wire::u64_at;

pub const MAGIC: &[u8; 8] = b"NFRLE001";
pub const HEADER_BYTES: usize = 16;

#[derive(Debug, Default)]
pub struct RleDecodeProgram {
    header: Vec<u8>,
    decoded_bytes_expected: u64,
    decoded_bytes: u64,
    /// The run length of a pair whose symbol is in the next flit.
    pending_run: Option<u8>,
    guard: EndGuard,
}

fn fault(reason: String) -> ProgramError {
    ProgramError::Fault {
        program: "rle",
        reason,
    }
}

impl RleDecodeProgram {
    /// Consumes header bytes from the front of `bytes`; returns the rest.
    fn header<'a>(&mut self, bytes: &'a [u8]) -> Result<&'a [u8], ProgramError> {
        let take = (HEADER_BYTES - self.header.len()).min(bytes.len());
        self.header.extend_from_slice(&bytes[..take]);
        if self.header.len() == HEADER_BYTES && take > 0 {
            if &self.header[..8] != MAGIC {
                return Err(fault("the stream does not start with NFRLE001".into()));
            }
            self.decoded_bytes_expected = u64_at(&self.header[8..]);
        }
        Ok(&bytes[take..])
    }

    fn run(&mut self, length: u8, symbol: u8, out: &mut FlitWriter) -> Result<(), ProgramError> {
        if length == 0 {
            return Err(fault(format!(
                "a zero-length run after {} decoded bytes",
                self.decoded_bytes
            )));
        }
        self.decoded_bytes += u64::from(length);
        if self.decoded_bytes > self.decoded_bytes_expected {
            return Err(fault(format!(
                "decoding past the header's {} bytes",
                self.decoded_bytes_expected
            )));
        }
        out.push(&[symbol; 255][..usize::from(length)]);
        Ok(())
    }
}

impl StreamProgram for RleDecodeProgram {
    fn name(&self) -> &'static str {
        "rle"
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let mut bytes = self.header(input.payload())?;
        if let (Some(length), Some((&symbol, rest))) = (self.pending_run, bytes.split_first()) {
            self.pending_run = None;
            self.run(length, symbol, out)?;
            bytes = rest;
        }
        let mut pairs = bytes.chunks_exact(2);
        for p in pairs.by_ref() {
            self.run(p[0], p[1], out)?;
        }
        if let [length] = pairs.remainder() {
            self.pending_run = Some(*length);
        }
        if input.eop() {
            if self.header.len() < HEADER_BYTES || self.pending_run.is_some() {
                return Err(ProgramError::Framing(
                    "stream ends inside the header or a pair",
                ));
            }
            if self.decoded_bytes != self.decoded_bytes_expected {
                return Err(ProgramError::Framing(
                    "decoded size differs from the header's",
                ));
            }
            out.end();
        }
        Ok(())
    }

    /// Slot: output-bound. The decoder emits one 64-byte output flit per cycle; at the
    /// generator's mean run of 14.5 bytes per 2-byte pair that is 64 × 2 / 14.5 ≈ 8.83
    /// input bytes per cycle (the input side, a few pairs per cycle, is never the limit).
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0 * 2.0 / MEAN_RUN_BYTES,
            instructions_per_byte: crate::measure::drive("rle", 0),
        }
    }
}

/// Mean run length of the generator: uniform 1–28.
pub const MEAN_RUN_BYTES: f64 = 14.5;
