//! grep's drive program: per line, the first occurrence of the pattern, as a (row, col)
//! pair of little-endian u32s. Lines end at `\n` (a final line without one still counts).
//!
//! Matching is KMP over each line, so a pattern occurrence may straddle any flit boundary;
//! once a line matched, the rest of it is skipped up to its newline. Lines without a match
//! produce nothing: the host fills them in as −1.
//!
//! Params: one message, the pattern (1–64 bytes, no `\n`). A flit before the pattern is a
//! parameter error (the program cannot know what to look for).

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::records::EndGuard;
use crate::wire::put_u32;

/// Longest pattern accepted (one flit).
pub const PATTERN_BYTES_MAX: usize = 64;
/// Bytes per output pair: row u32, col u32.
pub const PAIR_BYTES: usize = 8;

#[derive(Debug, Default)]
pub struct GrepProgram {
    pattern: Vec<u8>,
    /// KMP failure function: `fail[i]` = length of the longest proper border of pattern[..=i].
    fail: Vec<usize>,
    /// Pattern bytes matched so far at the current position of the current line.
    matched_bytes: usize,
    row_index: u64,
    col_index: u64,
    /// The current line already produced its pair.
    line_done: bool,
    guard: EndGuard,
}

impl GrepProgram {
    fn params_error(reason: String) -> ProgramError {
        ProgramError::Params {
            program: "grep",
            reason,
        }
    }

    fn scan(&mut self, bytes: &[u8], out: &mut FlitWriter) -> Result<(), ProgramError> {
        let mut i = 0;
        while i < bytes.len() {
            if self.line_done {
                match bytes[i..].iter().position(|&b| b == b'\n') {
                    Some(k) => {
                        i += k + 1;
                        self.next_line();
                    }
                    None => return Ok(()),
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            if b == b'\n' {
                self.next_line();
                continue;
            }
            while self.matched_bytes > 0 && self.pattern[self.matched_bytes] != b {
                self.matched_bytes = self.fail[self.matched_bytes - 1];
            }
            if self.pattern[self.matched_bytes] == b {
                self.matched_bytes += 1;
            }
            self.col_index += 1;
            if self.matched_bytes == self.pattern.len() {
                let col = self.col_index - self.pattern.len() as u64;
                let row = u32::try_from(self.row_index).map_err(|_| ProgramError::Fault {
                    program: "grep",
                    reason: "more than 2^32 lines".into(),
                })?;
                let col = u32::try_from(col).map_err(|_| ProgramError::Fault {
                    program: "grep",
                    reason: "a line longer than 2^32 bytes".into(),
                })?;
                let mut pair = Vec::with_capacity(PAIR_BYTES);
                put_u32(&mut pair, row);
                put_u32(&mut pair, col);
                out.push(&pair);
                self.line_done = true;
            }
        }
        Ok(())
    }

    fn next_line(&mut self) {
        self.row_index += 1;
        self.col_index = 0;
        self.matched_bytes = 0;
        self.line_done = false;
    }
}

/// KMP failure function of `pattern`.
fn failure(pattern: &[u8]) -> Vec<usize> {
    let mut fail = vec![0usize; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = k;
    }
    fail
}

impl StreamProgram for GrepProgram {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        if !self.pattern.is_empty() {
            return Err(Self::params_error("pattern already set".into()));
        }
        if params.is_empty() || params.len() > PATTERN_BYTES_MAX {
            return Err(Self::params_error(format!(
                "pattern of {} bytes; 1–{PATTERN_BYTES_MAX} accepted",
                params.len()
            )));
        }
        if params.contains(&b'\n') {
            return Err(Self::params_error("pattern contains a newline".into()));
        }
        self.pattern = params.to_vec();
        self.fail = failure(params);
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        if self.pattern.is_empty() {
            return Err(Self::params_error("data arrived before the pattern".into()));
        }
        self.scan(input.payload(), out)?;
        if input.eop() {
            out.end();
        }
        Ok(())
    }

    /// Slot: INSIDER's grep is a chain (input preprocessor → matcher → reducer → writer)
    /// whose matcher compares the pattern at all 64 offsets of a flit at once under
    /// `#pragma HLS pipeline` (II = 1), so the slot takes one 64-byte flit per cycle.
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("grep", 0),
        }
    }
}

/// A hand derivation for an ideal scalar core, kept only as the reference the fuel schedule
/// was calibrated against (crates/wasm/tests/calibration.rs), not used by any model: per byte
/// before the line's first match KMP does ≈ 6 instructions (load, two compares, branch,
/// column/state updates) over the expected first-match column of 16–20, ≈ 120 per
/// 65,536-byte line; the rest of the line is a word-at-a-time newline search, ≈ 7
/// instructions per 8 bytes. Per byte: 0.875 + 120/65,536 ≈ 0.877.
pub const HAND_DERIVED_INSTRUCTIONS_PER_BYTE: f64 = 7.0 / 8.0 + 120.0 / 65_536.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::run_program;
    use nearflash_stream::flits_of;

    #[test]
    fn first_match_per_line_even_across_flits_and_with_self_overlap() {
        let mut text = vec![b'A'; 70];
        text.extend_from_slice(b"AAB\nBBBB\nAABAAB");
        let mut p = GrepProgram::default();
        let out = run_program(&mut p, &[b"AAB".to_vec()], &flits_of(&text)).unwrap();
        // row 0: col 70 (72 A's then B), row 1: none, row 2: col 0.
        assert_eq!(out, [0, 0, 0, 0, 70, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn bad_patterns_and_missing_pattern_are_param_errors() {
        for bad in [vec![], vec![b'A'; 65], b"A\nB".to_vec()] {
            assert!(matches!(
                GrepProgram::default().on_params(&bad),
                Err(ProgramError::Params { .. })
            ));
        }
        let mut p = GrepProgram::default();
        let mut w = FlitWriter::new();
        assert!(matches!(
            p.on_flit(&flits_of(b"AB")[0], &mut w),
            Err(ProgramError::Params { .. })
        ));
    }
}
