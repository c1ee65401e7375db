//! MQSim / DiskSim ASCII traces (CMU-SAFARI/MQSim `src/host/ASCII_Trace_Definition.h` and
//! `IO_Flow_Trace_Based.cpp`): five space-separated fields `TIME DEVICE LBA SIZE TYPE`, TIME
//! an integer in ns (MQSim hands it to `Register_sim_event`, whose clock is in ns), LBA and
//! SIZE in sectors of `SECTOR_SIZE_IN_BYTE` = 512 (`src/ssd/SSD_Defs.h`), TYPE
//! `ASCIITraceWriteCode` "0" = write and `ASCIITraceReadCode` "1" = read. (MQSim reads any
//! TYPE other than "0" as a read; nearflash refuses anything but 0 and 1.) The selector is
//! the DEVICE.

use super::{is_blank_or_comment, keep, LineParser, Parsed, Record};
use crate::fields::{parse_sectors, parse_uint, split_whitespace_exact};
use crate::{TraceError, TraceOp};

pub struct Mqsim {
    device: Option<u64>,
}

impl Mqsim {
    pub fn new(device: Option<u64>) -> Self {
        Mqsim { device }
    }
}

impl LineParser for Mqsim {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) {
            return Ok(Parsed::Nothing);
        }
        let [time, device, lba, size, kind] = split_whitespace_exact::<5>(line, text)?;
        let timestamp_ns = u128::from(parse_uint(line, "time", time)?);
        let device = parse_uint(line, "device", device)?;
        let op = match kind {
            "0" => TraceOp::Write,
            "1" => TraceOp::Read,
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: kind.to_string(),
                    expected: "0 (write) or 1 (read)",
                })
            }
        };
        let record = Record {
            timestamp_ns,
            op,
            offset_bytes: parse_sectors(line, "lba", lba)?,
            size_bytes: parse_sectors(line, "size", size)?,
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
    use crate::testing::{error_message, parse, parse_with, request, select};
    use crate::{TraceFormat, TraceOp};

    const MQSIM: TraceFormat = TraceFormat::Mqsim;

    const SAMPLE: &str = "\
11413000 0 657728 16 1
11565000 1 31244784 64 1
11721000 1 21868784 16 0
";

    #[test]
    fn one_is_a_read_and_zero_a_write() {
        assert_eq!(
            parse(MQSIM, SAMPLE).unwrap(),
            vec![
                request(0, TraceOp::Read, 657728 * 512, 8192),
                request(152_000, TraceOp::Read, 31244784 * 512, 32768),
                request(308_000, TraceOp::Write, 21868784 * 512, 8192),
            ]
        );
    }

    #[test]
    fn the_device_selector_keeps_one_device() {
        assert_eq!(parse_with(MQSIM, SAMPLE, &select("1")).unwrap().len(), 2);
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = format!("{SAMPLE}11800000 0 0 16 2\n");
        assert_eq!(
            error_message(MQSIM, &text),
            "line 4: unknown request type \"2\" (expected 0 (write) or 1 (read))"
        );
        assert_eq!(
            error_message(MQSIM, "1 0 0 16\n"),
            "line 1: expected 5 space-separated fields, found 4"
        );
    }
}
