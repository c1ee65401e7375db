//! UMass Trace Repository / SPC traces (Financial1-2, WebSearch1-3): CSV
//! `ASU,LBA,Size,Opcode,Timestamp`, LBA in 512-byte blocks, Size in bytes, Opcode `r`/`w`
//! (either case), Timestamp in seconds as a decimal (STANDARDS.md §4; the SPC trace format
//! specification the UMass repository ships). The selector is the ASU (application-specific
//! storage unit): the ASUs of one file are separate address spaces, so replaying a whole
//! file puts them on top of each other — select one.

use super::{is_blank_or_comment, keep, LineParser, Parsed, Record};
use crate::fields::{parse_seconds_ns, parse_sectors, parse_uint, split_exact};
use crate::{TraceError, TraceOp};

pub struct Spc {
    asu: Option<u64>,
}

impl Spc {
    pub fn new(asu: Option<u64>) -> Self {
        Spc { asu }
    }
}

impl LineParser for Spc {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) {
            return Ok(Parsed::Nothing);
        }
        let [asu, lba, size, opcode, timestamp] = split_exact::<5>(line, text, ',')?;
        let asu = parse_uint(line, "ASU", asu)?;
        let op = match opcode {
            "r" | "R" => TraceOp::Read,
            "w" | "W" => TraceOp::Write,
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: opcode.to_string(),
                    expected: "r or w",
                })
            }
        };
        let record = Record {
            offset_bytes: parse_sectors(line, "LBA", lba)?,
            size_bytes: parse_uint(line, "Size", size)?,
            timestamp_ns: parse_seconds_ns(line, "Timestamp", timestamp)?,
            op,
            stream: 0,
        };
        Ok(keep(self.asu, asu, record))
    }

    fn selected(&self) -> Option<String> {
        self.asu.map(|a| format!("ASU {a}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_with, request, select};
    use crate::{TraceFormat, TraceOp};

    const SPC: TraceFormat = TraceFormat::Spc;

    const SAMPLE: &str = "\
0,303567,3584,w,0.000000
1,55590,3072,w,0.000000
0,303574,3584,W,0.026214
1,240840,8192,r,0.026214
";

    #[test]
    fn lba_is_sectors_and_size_is_bytes() {
        assert_eq!(
            parse(SPC, SAMPLE).unwrap(),
            vec![
                request(0, TraceOp::Write, 303567 * 512, 3584),
                request(0, TraceOp::Write, 55590 * 512, 3072),
                request(26_214_000, TraceOp::Write, 303574 * 512, 3584),
                request(26_214_000, TraceOp::Read, 240840 * 512, 8192),
            ]
        );
    }

    #[test]
    fn the_asu_selector_keeps_one_asu() {
        assert_eq!(parse_with(SPC, SAMPLE, &select("1")).unwrap().len(), 2);
        assert_eq!(
            parse_with(SPC, SAMPLE, &select("3"))
                .unwrap_err()
                .to_string(),
            "trace contains no requests for ASU 3"
        );
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = format!("{SAMPLE}0,1,512,w,0.03s\n");
        assert_eq!(
            error_message(SPC, &text),
            "line 5: field 'Timestamp' is not a decimal number of seconds: \"0.03s\""
        );
    }
}
