//! SNIA SYSTOR'17 (Fujitsu VDI traces, IOTTA 4928): CSV
//! `Timestamp,Response,IOType,LUN,Offset,Size`, Timestamp in Unix seconds with a 9-digit
//! fraction (accurate to µs), Response in seconds, IOType `R`, `W` or blank, Offset and Size
//! in bytes (STANDARDS.md §4). A blank IOType is counted as ignored (`untyped`); the header
//! line is skipped; the selector is the LUN.

use super::{is_blank_or_comment, is_csv_header, keep, LineParser, Parsed, Record};
use crate::fields::{parse_seconds_ns, parse_uint, split_exact};
use crate::{TraceError, TraceOp};

pub struct Systor {
    lun: Option<u64>,
}

impl Systor {
    pub fn new(lun: Option<u64>) -> Self {
        Systor { lun }
    }
}

impl LineParser for Systor {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) || is_csv_header(text, "Timestamp") {
            return Ok(Parsed::Nothing);
        }
        let [timestamp, response, io_type, lun, offset, size] = split_exact::<6>(line, text, ',')?;
        let timestamp_ns = parse_seconds_ns(line, "Timestamp", timestamp)?;
        parse_seconds_ns(line, "Response", response)?;
        let lun = parse_uint(line, "LUN", lun)?;
        let offset_bytes = parse_uint(line, "Offset", offset)?;
        let size_bytes = parse_uint(line, "Size", size)?;
        let op = match io_type {
            "R" | "r" => TraceOp::Read,
            "W" | "w" => TraceOp::Write,
            "" => return Ok(Parsed::Ignored("untyped")),
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: io_type.to_string(),
                    expected: "R, W or blank",
                })
            }
        };
        let record = Record {
            timestamp_ns,
            op,
            offset_bytes,
            size_bytes,
            stream: 0,
        };
        Ok(keep(self.lun, lun, record))
    }

    fn selected(&self) -> Option<String> {
        self.lun.map(|l| format!("LUN {l}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_full, request, select};
    use crate::{ReadOptions, TraceFormat, TraceOp};

    const SYSTOR: TraceFormat = TraceFormat::Systor;

    const SAMPLE: &str = "\
Timestamp,Response,IOType,LUN,Offset,Size
1487024047.045166963,0.000459,R,0,1048576,4096
1487024047.045223000,0.000210,W,1,2097152,8192
1487024047.046000000,0.000300,,0,0,4096
1487024047.047166963,0.001100,W,0,4096,65536
";

    #[test]
    fn parses_seconds_with_nine_decimals_and_counts_untyped() {
        let t = parse_full(SYSTOR, SAMPLE, &ReadOptions::default()).unwrap();
        let got: Vec<_> = t
            .requests
            .iter()
            .map(|r| (r.arrival_ns, r.op, r.offset_bytes, r.size_bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                request(0, TraceOp::Read, 1 << 20, 4096),
                request(56_037, TraceOp::Write, 2 << 20, 8192),
                request(2_000_000, TraceOp::Write, 4096, 65536),
            ]
        );
        assert_eq!(t.summary.ignored.get("untyped"), Some(&1));
    }

    #[test]
    fn the_lun_selector_keeps_one_lun() {
        let got = crate::testing::parse_with(SYSTOR, SAMPLE, &select("1")).unwrap();
        assert_eq!(got, vec![request(0, TraceOp::Write, 2 << 20, 8192)]);
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = format!("{SAMPLE}1487024047.1,0.1,X,0,0,4096\n");
        assert_eq!(
            error_message(SYSTOR, &text),
            "line 6: unknown request type \"X\" (expected R, W or blank)"
        );
        assert_eq!(
            error_message(SYSTOR, "1.5,0.1,R,0,0\n"),
            "line 1: expected 6 comma-separated fields, found 5"
        );
        assert!(parse(SYSTOR, "1.5,0.1,R,0,0,0\n").is_err());
    }
}
