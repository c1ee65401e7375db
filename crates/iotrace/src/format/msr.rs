//! MSR Cambridge CSV (FAST'08; SNIA IOTTA 388):
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Timestamp and ResponseTime
//! in Windows FILETIME ticks of 100 ns, Type `Read`/`Write` (any case), Offset and Size in
//! bytes (STANDARDS.md §4). A header line (first field `Timestamp`) before any data is
//! skipped; the selector is the DiskNumber.

use super::{is_blank_or_comment, is_csv_header, keep, LineParser, Parsed, Record};
use crate::fields::{parse_u32, parse_uint, split_exact};
use crate::{TraceError, TraceOp};

const NS_PER_TICK: u128 = 100;

pub struct Msr {
    disk: Option<u64>,
    seen_data: bool,
}

impl Msr {
    pub fn new(disk: Option<u64>) -> Self {
        Msr {
            disk,
            seen_data: false,
        }
    }
}

impl LineParser for Msr {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if is_blank_or_comment(text) || !self.seen_data && is_csv_header(text, "Timestamp") {
            return Ok(Parsed::Nothing);
        }
        self.seen_data = true;
        let [timestamp, _hostname, disk, op, offset, size, response_time] =
            split_exact::<7>(line, text, ',')?;
        let timestamp = parse_uint(line, "Timestamp", timestamp)?;
        let disk = parse_u32(line, "DiskNumber", disk)?;
        let op = if op.eq_ignore_ascii_case("Read") {
            TraceOp::Read
        } else if op.eq_ignore_ascii_case("Write") {
            TraceOp::Write
        } else {
            return Err(TraceError::UnknownType {
                line,
                value: op.to_string(),
                expected: "Read or Write",
            });
        };
        let offset_bytes = parse_uint(line, "Offset", offset)?;
        let size_bytes = parse_uint(line, "Size", size)?;
        parse_uint(line, "ResponseTime", response_time)?;
        let record = Record {
            timestamp_ns: u128::from(timestamp) * NS_PER_TICK,
            op,
            offset_bytes,
            size_bytes,
            stream: 0,
        };
        Ok(keep(self.disk, disk.into(), record))
    }

    fn selected(&self) -> Option<String> {
        self.disk.map(|d| format!("disk {d}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_with, request, Req};
    use crate::{ReadOptions, TraceError, TraceFormat, TraceOp};

    const MSR: TraceFormat = TraceFormat::Msr;

    const SAMPLE: &str = "\
128166372003061629,hm,1,Read,3154152960,32768,1472
128166372003062629,hm,1,Write,3154186240,4096,2210
128166372003072629,hm,1,Read,3154190336,65536,1875
";

    fn opts(time_scale: f64, disk: Option<u32>) -> ReadOptions {
        ReadOptions {
            time_scale,
            select: disk.map(|d| d.to_string()),
            ..ReadOptions::default()
        }
    }

    fn strict() -> ReadOptions {
        ReadOptions {
            reorder_window: 0,
            ..ReadOptions::default()
        }
    }

    #[test]
    fn parses_msr_sample_lines() {
        assert_eq!(
            parse(MSR, SAMPLE).unwrap(),
            vec![
                request(0, TraceOp::Read, 3154152960, 32768),
                request(100_000, TraceOp::Write, 3154186240, 4096),
                request(1_100_000, TraceOp::Read, 3154190336, 65536),
            ]
        );
    }

    #[test]
    fn accepts_request_type_in_any_case() {
        let text = "10,hm,0,READ,0,4096,1\n10,hm,0,wRiTe,0,4096,1\n";
        let ops: Vec<TraceOp> = parse(MSR, text).unwrap().iter().map(|r| r.1).collect();
        assert_eq!(ops, [TraceOp::Read, TraceOp::Write]);
    }

    #[test]
    fn skips_header_blank_and_comment_lines() {
        let text = format!(
            "\u{feff}Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n\
             # captured on hm\r\n\
             \r\n   \n{SAMPLE}\n  # trailing comment\n"
        );
        assert_eq!(parse(MSR, &text).unwrap(), parse(MSR, SAMPLE).unwrap());
    }

    #[test]
    fn header_after_data_is_an_error() {
        let text = format!("{SAMPLE}Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
        assert_eq!(
            error_message(MSR, &text),
            "line 4: field 'Timestamp' is not an integer: \"Timestamp\""
        );
    }

    #[test]
    fn time_scale_halves_inter_arrival() {
        let arrivals: Vec<u64> = parse_with(MSR, SAMPLE, &opts(0.5, None))
            .unwrap()
            .iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(arrivals, [0, 50_000, 550_000]);
    }

    #[test]
    fn rounds_scaled_arrival_to_nearest_nanosecond() {
        // One tick is 100 ns; scaled by 1/8 it is 12.5 ns (rounds up), by 1/64 it is 1.5625 ns.
        let text = "0,hm,0,Read,0,4096,1\n1,hm,0,Read,0,4096,1\n2,hm,0,Read,0,4096,1\n";
        let arrivals = |scale| -> Vec<u64> {
            parse_with(MSR, text, &opts(scale, None))
                .unwrap()
                .iter()
                .map(|r| r.0)
                .collect()
        };
        assert_eq!(arrivals(0.125), [0, 13, 25]);
        assert_eq!(arrivals(1.0 / 64.0), [0, 2, 3]);
        assert_eq!(arrivals(f64::MIN_POSITIVE), [0, 0, 0]);
        assert_eq!(arrivals(3.0), [0, 300, 600]);
    }

    #[test]
    fn arrival_is_exact_for_large_timestamps() {
        // 2^57 ticks * 100 ns is far beyond f64's 53-bit precision but still fits in u64.
        let text = format!("0,hm,0,Read,0,4096,1\n{},hm,0,Read,0,4096,1\n", 1u64 << 57);
        let last = parse(MSR, &text).unwrap()[1].0;
        assert_eq!(last, (1u64 << 57) * 100);
    }

    #[test]
    fn rejects_arrival_overflow() {
        let text = format!("0,hm,0,Read,0,4096,1\n{},hm,0,Read,0,4096,1\n", u64::MAX);
        assert_eq!(
            error_message(MSR, &text),
            "line 2: arrival time overflows u64 nanoseconds"
        );
        let huge_scale = parse_with(
            MSR,
            "0,hm,0,Read,0,4096,1\n1,hm,0,Read,0,4096,1\n",
            &opts(1e300, None),
        );
        assert_eq!(huge_scale, Err(TraceError::ArrivalOverflow { line: 2 }));
    }

    #[test]
    fn filters_by_disk_number() {
        let text = "\
100,hm,0,Read,0,4096,1
200,hm,1,Write,8192,4096,1
300,hm,0,Write,16384,8192,1
50,hm,1,Read,4096,4096,1
";
        assert_eq!(
            parse_with(MSR, text, &opts(1.0, Some(0))).unwrap(),
            vec![
                request(0, TraceOp::Read, 0, 4096),
                request(20_000, TraceOp::Write, 16384, 8192),
            ]
        );
        // Disk 1's requests go backwards; the reorder window sorts them.
        assert_eq!(
            parse_with(MSR, text, &opts(1.0, Some(1))).unwrap(),
            vec![
                request(0, TraceOp::Read, 4096, 4096),
                request(15_000, TraceOp::Write, 8192, 4096),
            ]
        );
        assert_eq!(
            parse_with(MSR, text, &opts(1.0, Some(7)))
                .unwrap_err()
                .to_string(),
            "trace contains no requests for disk 7"
        );
        assert_eq!(
            parse_with(
                MSR,
                text,
                &ReadOptions {
                    select: Some("x".into()),
                    ..ReadOptions::default()
                }
            )
            .unwrap_err()
            .to_string(),
            "msr: cannot select \"x\": expected a non-negative integer"
        );
    }

    #[test]
    fn rejects_wrong_field_count_with_line_number() {
        assert_eq!(
            error_message(MSR, "# comment\n\n1,hm,0,Read,0\n"),
            "line 3: expected 7 comma-separated fields, found 5"
        );
        assert_eq!(
            error_message(MSR, "1,hm,0,Read,0,4096,1,extra\n"),
            "line 1: expected 7 comma-separated fields, found 8"
        );
    }

    #[test]
    fn rejects_non_integer_size() {
        let text = format!("{SAMPLE}# note\n\n\n1281663720030726290,hm,1,Read,0,abc,1\n");
        assert_eq!(
            error_message(MSR, &text),
            "line 7: field 'Size' is not an integer: \"abc\""
        );
    }

    #[test]
    fn rejects_out_of_range_and_negative_integers() {
        assert_eq!(
            error_message(MSR, "1,hm,4294967296,Read,0,4096,1\n"),
            "line 1: field 'DiskNumber' is out of range: 4294967296 (expected 0..=4294967295)"
        );
        assert_eq!(
            error_message(MSR, "1,hm,0,Read,0,-4096,1\n"),
            "line 1: field 'Size' is negative: -4096"
        );
        assert_eq!(
            error_message(MSR, "18446744073709551616,hm,0,Read,0,4096,1\n"),
            "line 1: field 'Timestamp' is out of range: 18446744073709551616 \
             (expected 0..=18446744073709551615)"
        );
    }

    #[test]
    fn rejects_unknown_type() {
        let text = "1,hm,0,Read,0,4096,1\n".repeat(8) + "9,hm,0,Flush,0,4096,1\n";
        assert_eq!(
            error_message(MSR, &text),
            "line 9: unknown request type \"Flush\" (expected Read or Write)"
        );
    }

    #[test]
    fn a_step_back_is_refused_without_a_reorder_window() {
        let text = "5,hm,0,Read,0,4096,1\n".repeat(11) + "4,hm,0,Read,0,4096,1\n";
        assert_eq!(
            parse_with(MSR, &text, &strict()).unwrap_err().to_string(),
            "line 12: timestamp 400 ns is older than the reorder window of 0 requests allows \
             (requests up to 500 ns were already released)"
        );
    }

    #[test]
    fn rejects_zero_size() {
        assert_eq!(
            error_message(MSR, "1,hm,0,Write,4096,0,1\n"),
            "line 1: request size is 0"
        );
    }

    #[test]
    fn rejects_offset_overflow() {
        let text = format!("1,hm,0,Write,{},4096,1\n", u64::MAX - 4095);
        assert_eq!(
            error_message(MSR, &text),
            format!(
                "line 1: offset {} + size 4096 overflows u64",
                u64::MAX - 4095
            )
        );
        let last_byte = format!("1,hm,0,Write,{},4096,1\n", u64::MAX - 4096);
        assert!(parse(MSR, &last_byte).is_ok());
    }

    #[test]
    fn rejects_bad_time_scale() {
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = parse_with(MSR, SAMPLE, &opts(bad, None)).unwrap_err();
            assert!(
                matches!(err, TraceError::InvalidTimeScale(_)),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            parse_with(MSR, SAMPLE, &opts(-2.0, None))
                .unwrap_err()
                .to_string(),
            "invalid time_scale -2: must be finite and > 0"
        );
    }

    #[test]
    fn rejects_empty_trace() {
        for text in [
            "",
            "\n\n",
            "# only a comment\n",
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
        ] {
            assert_eq!(parse(MSR, text), Err(TraceError::EmptyTrace), "{text:?}");
        }
        assert_eq!(error_message(MSR, ""), "trace contains no requests");
    }

    #[test]
    fn parses_sample_trace_file() {
        let text = include_str!("../../../../examples/traces/msr.csv");
        let requests: Vec<Req> = parse(MSR, text).unwrap();
        assert_eq!(requests.len(), 20);
        assert_eq!(requests[0], request(0, TraceOp::Read, 174731264, 16384));
        // 128166372012247946 - 128166372003061629 ticks of 100 ns.
        assert_eq!(requests[19].0, 918_631_700);
        let writes = requests.iter().filter(|r| r.1 == TraceOp::Write).count();
        assert_eq!(writes, 5);
        assert_eq!(parse_with(MSR, text, &opts(1.0, Some(1))).unwrap().len(), 4);
    }
}
