//! FIU SRCMap / IODedup traces (SNIA IOTTA 390: homes, mail, web...): space-separated
//! `TS PID PROCESS LBA SIZE OP MAJOR MINOR MD5`, TS in ns, LBA and SIZE in 512-byte sectors,
//! OP `R`/`W`, MD5 of each 4 KiB of data (STANDARDS.md §4). A process name may hold spaces:
//! the first two fields are read from the start and the last six from the end. The selector
//! is the device `MAJOR,MINOR`.

use super::{is_blank_or_comment, Device, LineParser, Parsed, Record};
use crate::fields::{field_count, parse_sectors, parse_u32, parse_uint};
use crate::{TraceError, TraceOp};

const FIELDS: usize = 9;

pub struct Fiu {
    select: Option<Device>,
}

impl Fiu {
    pub fn new(select: Option<Device>) -> Self {
        Fiu { select }
    }
}

impl LineParser for Fiu {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) {
            return Ok(Parsed::Nothing);
        }
        let tokens: Vec<&str> = text.split_whitespace().collect();
        if tokens.len() < FIELDS {
            return Err(field_count(line, FIELDS, tokens.len(), ' '));
        }
        let tail = &tokens[tokens.len() - 6..];
        let [lba, size, op, major, minor, _md5] =
            [tail[0], tail[1], tail[2], tail[3], tail[4], tail[5]];
        let timestamp_ns = u128::from(parse_uint(line, "ts", tokens[0])?);
        let pid = parse_uint(line, "pid", tokens[1])?;
        let op = match op {
            "R" | "r" => TraceOp::Read,
            "W" | "w" => TraceOp::Write,
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: op.to_string(),
                    expected: "R or W",
                })
            }
        };
        let device = Device(
            u64::from(parse_u32(line, "major", major)?) << 32
                | u64::from(parse_u32(line, "minor", minor)?),
        );
        let record = Record {
            timestamp_ns,
            op,
            offset_bytes: parse_sectors(line, "lba", lba)?,
            size_bytes: parse_sectors(line, "size", size)?,
            stream: pid,
        };
        Ok(if self.select.is_some_and(|s| s != device) {
            Parsed::Filtered
        } else {
            Parsed::Request(record)
        })
    }

    fn selected(&self) -> Option<String> {
        self.select
            .map(|Device(d)| format!("device {},{}", d >> 32, d & u64::from(u32::MAX)))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_with, request, select};
    use crate::{TraceFormat, TraceOp};

    const FIU: TraceFormat = TraceFormat::Fiu;

    const SAMPLE: &str = "\
89966527262084 4890 nfsd 5315592 8 W 6 0 2c9b8a7d9a8c7b6a5d4c3b2a1f0e9d8c
89966527363110 4890 nfsd 5315600 8 W 6 0 7e6d5c4b3a29180f7e6d5c4b3a291807
89966530011904 1221 kjournald 2 8 W 8 1 00112233445566778899aabbccddeeff
89966531000000 5112 gnome terminal 5315592 16 R 6 0 2c9b8a7d9a8c7b6a5d4c3b2a1f0e9d8c
";

    #[test]
    fn nanoseconds_and_sectors_and_a_process_name_with_a_space() {
        assert_eq!(
            parse(FIU, SAMPLE).unwrap(),
            vec![
                request(0, TraceOp::Write, 5315592 * 512, 4096),
                request(101_026, TraceOp::Write, 5315600 * 512, 4096),
                request(2_749_820, TraceOp::Write, 1024, 4096),
                request(3_737_916, TraceOp::Read, 5315592 * 512, 8192),
            ]
        );
    }

    #[test]
    fn the_device_selector_keeps_one_major_minor() {
        assert_eq!(parse_with(FIU, SAMPLE, &select("6,0")).unwrap().len(), 3);
        assert_eq!(
            parse_with(FIU, SAMPLE, &select("sda"))
                .unwrap_err()
                .to_string(),
            "fiu: cannot select \"sda\": expected MAJOR,MINOR, e.g. 8,32"
        );
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = format!("{SAMPLE}89966532000000 5112 nfsd 77 8 W 6\n");
        assert_eq!(
            error_message(FIU, &text),
            "line 5: expected 9 space-separated fields, found 7"
        );
    }
}
