//! Alibaba block traces 2020 (`alibaba/block-traces`, `io_traces.csv`): CSV
//! `device_id,opcode,offset,length,timestamp`, opcode `R`/`W`, offset and length in bytes,
//! timestamp in µs as received by the server (STANDARDS.md §4). The selector is the
//! device_id (0–999): one file holds all 1000 virtual disks interleaved.

use super::{is_blank_or_comment, is_csv_header, keep, LineParser, Parsed, Record};
use crate::fields::{parse_uint, split_exact};
use crate::{TraceError, TraceOp};

const NS_PER_US: u128 = 1000;

pub struct Alibaba {
    device: Option<u64>,
}

impl Alibaba {
    pub fn new(device: Option<u64>) -> Self {
        Alibaba { device }
    }
}

impl LineParser for Alibaba {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) || is_csv_header(text, "device_id") {
            return Ok(Parsed::Nothing);
        }
        let [device, opcode, offset, length, timestamp] = split_exact::<5>(line, text, ',')?;
        let device = parse_uint(line, "device_id", device)?;
        let op = match opcode {
            "R" | "r" => TraceOp::Read,
            "W" | "w" => TraceOp::Write,
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: opcode.to_string(),
                    expected: "R or W",
                })
            }
        };
        let record = Record {
            offset_bytes: parse_uint(line, "offset", offset)?,
            size_bytes: parse_uint(line, "length", length)?,
            timestamp_ns: u128::from(parse_uint(line, "timestamp", timestamp)?) * NS_PER_US,
            op,
            stream: 0,
        };
        Ok(keep(self.device, device, record))
    }

    fn selected(&self) -> Option<String> {
        self.device.map(|d| format!("device {d}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_full, parse_with, request, select};
    use crate::{ReadOptions, TraceFormat, TraceOp};

    const ALIBABA: TraceFormat = TraceFormat::Alibaba;

    const SAMPLE: &str = "\
419,W,8792064,4096,1577808000000043
419,R,1929216,32768,1577808000000162
7,W,0,16384,1577808000000170
419,W,8796160,4096,1577808000001043
";

    #[test]
    fn timestamps_are_microseconds() {
        assert_eq!(
            parse(ALIBABA, SAMPLE).unwrap(),
            vec![
                request(0, TraceOp::Write, 8792064, 4096),
                request(119_000, TraceOp::Read, 1929216, 32768),
                request(127_000, TraceOp::Write, 0, 16384),
                request(1_000_000, TraceOp::Write, 8796160, 4096),
            ]
        );
    }

    #[test]
    fn the_device_selector_keeps_one_disk() {
        let t = parse_full(ALIBABA, SAMPLE, &select("419")).unwrap();
        assert_eq!(t.requests.len(), 3);
        assert_eq!(t.summary.filtered_out, 1);
        assert_eq!(
            parse_with(ALIBABA, SAMPLE, &select("5"))
                .unwrap_err()
                .to_string(),
            "trace contains no requests for device 5"
        );
        let _ = ReadOptions::default();
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = format!("{SAMPLE}419,T,0,4096,1577808000002000\n");
        assert_eq!(
            error_message(ALIBABA, &text),
            "line 5: unknown request type \"T\" (expected R or W)"
        );
        assert_eq!(
            error_message(ALIBABA, "419,W,0,-4096,1\n"),
            "line 1: field 'length' is negative: -4096"
        );
    }
}
