//! Tencent CBS (OSCA, ATC'20; SNIA IOTTA): CSV `Timestamp,Offset,Size,IOType,VolumeID`,
//! Timestamp in Unix seconds, Offset and Size in 512-byte sectors, and — unlike most traces —
//! IOType **0 = Read, 1 = Write** (STANDARDS.md §4, from the SNIA README). The hourly files
//! ship as `YYYY-MM-DD-HH.tgz`: a tar archive, to extract first (a tar is refused as binary).
//! The selector is the VolumeID.

use super::{is_blank_or_comment, is_csv_header, keep, LineParser, Parsed, Record};
use crate::fields::{parse_seconds_ns, parse_sectors, parse_uint, split_exact};
use crate::{TraceError, TraceOp};

pub struct Tencent {
    volume: Option<u64>,
}

impl Tencent {
    pub fn new(volume: Option<u64>) -> Self {
        Tencent { volume }
    }
}

impl LineParser for Tencent {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) || is_csv_header(text, "Timestamp") {
            return Ok(Parsed::Nothing);
        }
        let [timestamp, offset, size, io_type, volume] = split_exact::<5>(line, text, ',')?;
        let timestamp_ns = parse_seconds_ns(line, "Timestamp", timestamp)?;
        let offset_bytes = parse_sectors(line, "Offset", offset)?;
        let size_bytes = parse_sectors(line, "Size", size)?;
        let op = match io_type {
            "0" => TraceOp::Read,
            "1" => TraceOp::Write,
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: io_type.to_string(),
                    expected: "0 (read) or 1 (write)",
                })
            }
        };
        let volume = parse_uint(line, "VolumeID", volume)?;
        let record = Record {
            timestamp_ns,
            op,
            offset_bytes,
            size_bytes,
            stream: 0,
        };
        Ok(keep(self.volume, volume, record))
    }

    fn selected(&self) -> Option<String> {
        self.volume.map(|v| format!("volume {v}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_with, request, select};
    use crate::{TraceFormat, TraceOp};

    const TENCENT: TraceFormat = TraceFormat::Tencent;

    const SAMPLE: &str = "\
1538323200,2048,8,0,1283
1538323200,4096,16,1,1283
1538323201,0,8,1,77
1538323203,40960,128,0,1283
";

    #[test]
    fn zero_is_a_read_and_units_are_sectors_and_seconds() {
        assert_eq!(
            parse(TENCENT, SAMPLE).unwrap(),
            vec![
                request(0, TraceOp::Read, 2048 * 512, 4096),
                request(0, TraceOp::Write, 4096 * 512, 8192),
                request(1_000_000_000, TraceOp::Write, 0, 4096),
                request(3_000_000_000, TraceOp::Read, 40960 * 512, 65536),
            ]
        );
    }

    #[test]
    fn the_volume_selector_keeps_one_volume() {
        assert_eq!(
            parse_with(TENCENT, SAMPLE, &select("1283")).unwrap().len(),
            3
        );
        assert_eq!(
            parse_with(TENCENT, SAMPLE, &select("1"))
                .unwrap_err()
                .to_string(),
            "trace contains no requests for volume 1"
        );
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = format!("{SAMPLE}1538323204,0,8,R,1283\n");
        assert_eq!(
            error_message(TENCENT, &text),
            "line 5: unknown request type \"R\" (expected 0 (read) or 1 (write))"
        );
    }
}
