//! The MSR Cambridge CSV parser: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`
//! lines with Windows-filetime timestamps (100 ns ticks), turned into arrival times relative
//! to the first kept request and scaled exactly by the replay time scale.

use crate::{MsrLimits, MsrOptions, TraceError, TraceOp, TraceRequest};
use std::io::{BufRead, Read};

const FIELD_COUNT: usize = 7;
const NS_PER_TICK: u128 = 100;

/// Parses an MSR Cambridge trace. Blank lines, `#` comments and a header line (first field
/// `Timestamp`, before any data) are skipped. Every data line is validated, including those
/// of disks filtered out by `opts.disk_number`; timestamps must not decrease among kept lines.
pub fn parse_msr(text: &str, opts: &MsrOptions) -> Result<Vec<TraceRequest>, TraceError> {
    let scale = TimeScale::new(opts.time_scale)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut p = Parser::new(opts, scale);
    for (index, raw) in text.lines().enumerate() {
        p.line(index + 1, raw)?;
    }
    p.finish(opts)
}

/// Reads an MSR Cambridge trace as a stream, in bounded memory: a line longer than
/// `limits.line_bytes_max` or more than `limits.requests_max` kept requests is an error, so a
/// source that never ends (`/dev/zero`, an endless generator) fails instead of exhausting
/// memory. Otherwise exactly [`parse_msr`].
pub fn read_msr(
    mut reader: impl BufRead,
    opts: &MsrOptions,
    limits: &MsrLimits,
) -> Result<Vec<TraceRequest>, TraceError> {
    let mut p = Parser::new(opts, TimeScale::new(opts.time_scale)?);
    let mut buf = Vec::new();
    let mut line = 0usize;
    loop {
        line += 1;
        buf.clear();
        // At most one byte past the limit is read: enough to know the line is too long.
        let cap = limits.line_bytes_max as u64 + 1;
        let n = reader
            .by_ref()
            .take(cap)
            .read_until(b'\n', &mut buf)
            .map_err(|e| TraceError::Read(e.to_string()))?;
        if n == 0 {
            break;
        }
        let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
        if body.len() > limits.line_bytes_max {
            return Err(TraceError::LineTooLong {
                line,
                max: limits.line_bytes_max,
            });
        }
        let text = std::str::from_utf8(body).map_err(|_| TraceError::NotText { line })?;
        let text = if line == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        p.line(line, text)?;
        if p.requests.len() as u64 > limits.requests_max {
            return Err(TraceError::TooManyRequests {
                max: limits.requests_max,
            });
        }
    }
    p.finish(opts)
}

/// The state of a parse, line by line.
struct Parser<'a> {
    opts: &'a MsrOptions,
    scale: TimeScale,
    requests: Vec<TraceRequest>,
    timeline: Option<Timeline>,
    seen_data: bool,
}

impl<'a> Parser<'a> {
    fn new(opts: &'a MsrOptions, scale: TimeScale) -> Self {
        Parser {
            opts,
            scale,
            requests: Vec::new(),
            timeline: None,
            seen_data: false,
        }
    }

    fn line(&mut self, line: usize, raw: &str) -> Result<(), TraceError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(());
        }
        if !self.seen_data && is_header(trimmed) {
            return Ok(());
        }
        self.seen_data = true;
        let record = parse_record(line, &split_fields(line, trimmed)?)?;
        if self
            .opts
            .disk_number
            .is_some_and(|disk| disk != record.disk)
        {
            return Ok(());
        }
        let arrival_ns = match &mut self.timeline {
            None => {
                self.timeline = Some(Timeline {
                    first: record.timestamp,
                    previous: record.timestamp,
                });
                0
            }
            Some(timeline) => timeline.arrival_ns(line, record.timestamp, &self.scale)?,
        };
        self.requests.push(TraceRequest {
            arrival_ns,
            op: record.op,
            offset_bytes: record.offset,
            size_bytes: record.size,
        });
        Ok(())
    }

    fn finish(self, opts: &MsrOptions) -> Result<Vec<TraceRequest>, TraceError> {
        let requests = self.requests;
        if requests.is_empty() {
            return Err(match opts.disk_number {
                Some(disk) => TraceError::NoRequestsForDisk { disk },
                None => TraceError::EmptyTrace,
            });
        }
        Ok(requests)
    }
}

/// One validated data line, before the disk filter and the timeline are applied.
struct Record {
    timestamp: u64,
    disk: u32,
    op: TraceOp,
    offset: u64,
    size: u64,
}

/// The first and latest kept timestamps, in 100 ns ticks.
struct Timeline {
    first: u64,
    previous: u64,
}

impl Timeline {
    fn arrival_ns(
        &mut self,
        line: usize,
        timestamp: u64,
        scale: &TimeScale,
    ) -> Result<u64, TraceError> {
        if timestamp < self.previous {
            return Err(TraceError::BackwardsTimestamp {
                line,
                timestamp,
                previous: self.previous,
            });
        }
        self.previous = timestamp;
        scale
            .scaled_ns(timestamp - self.first)
            .ok_or(TraceError::ArrivalOverflow { line })
    }
}

/// The time scale as the exact value `mantissa * 2^exponent` of its `f64`, so scaling is
/// integer arithmetic with one rounding at the end.
struct TimeScale {
    mantissa: u128,
    exponent: i32,
}

impl TimeScale {
    fn new(value: f64) -> Result<Self, TraceError> {
        if !(value.is_finite() && value > 0.0) {
            return Err(TraceError::InvalidTimeScale(value));
        }
        let bits = value.to_bits();
        let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
        let fraction = u128::from(bits & ((1 << 52) - 1));
        Ok(if biased_exponent == 0 {
            TimeScale {
                mantissa: fraction,
                exponent: -1074,
            }
        } else {
            TimeScale {
                mantissa: fraction | (1 << 52),
                exponent: biased_exponent - 1075,
            }
        })
    }

    /// `ticks * 100 ns * scale`, rounded to the nearest nanosecond (halves round up), or
    /// `None` if that does not fit in `u64`.
    fn scaled_ns(&self, ticks: u64) -> Option<u64> {
        // < 2^64 * 2^7 * 2^53 = 2^124: cannot overflow.
        let product = u128::from(ticks) * NS_PER_TICK * self.mantissa;
        if product == 0 {
            return Some(0);
        }
        if self.exponent >= 0 {
            let shift = self.exponent.unsigned_abs();
            let fits = shift < 64 && product <= u128::from(u64::MAX) >> shift;
            fits.then(|| (product << shift) as u64)
        } else {
            let shift = self.exponent.unsigned_abs();
            if shift > 124 {
                // product < 2^124 <= 2^(shift - 1): less than half a nanosecond.
                return Some(0);
            }
            let half = 1u128 << (shift - 1);
            u64::try_from((product + half) >> shift).ok()
        }
    }
}

fn is_header(line: &str) -> bool {
    line.split(',')
        .next()
        .is_some_and(|first| first.trim().eq_ignore_ascii_case("Timestamp"))
}

fn split_fields(line: usize, text: &str) -> Result<[&str; FIELD_COUNT], TraceError> {
    let mut fields = [""; FIELD_COUNT];
    let mut found = 0;
    for field in text.split(',') {
        if let Some(slot) = fields.get_mut(found) {
            *slot = field.trim();
        }
        found += 1;
    }
    if found != FIELD_COUNT {
        return Err(TraceError::FieldCount {
            line,
            expected: FIELD_COUNT,
            found,
        });
    }
    Ok(fields)
}

fn parse_record(line: usize, fields: &[&str; FIELD_COUNT]) -> Result<Record, TraceError> {
    let [timestamp, _hostname, disk, op, offset, size, response_time] = *fields;
    let timestamp = parse_uint(line, "Timestamp", timestamp)?;
    let disk_value = parse_uint(line, "DiskNumber", disk)?;
    let disk = u32::try_from(disk_value).map_err(|_| TraceError::OutOfRange {
        line,
        field: "DiskNumber",
        value: disk.to_string(),
        max: u32::MAX.into(),
    })?;
    let op = parse_op(line, op)?;
    let offset = parse_uint(line, "Offset", offset)?;
    let size = parse_uint(line, "Size", size)?;
    parse_uint(line, "ResponseTime", response_time)?;
    if size == 0 {
        return Err(TraceError::ZeroSize { line });
    }
    if offset.checked_add(size).is_none() {
        return Err(TraceError::OffsetOverflow { line, offset, size });
    }
    Ok(Record {
        timestamp,
        disk,
        op,
        offset,
        size,
    })
}

fn parse_op(line: usize, value: &str) -> Result<TraceOp, TraceError> {
    if value.eq_ignore_ascii_case("Read") {
        Ok(TraceOp::Read)
    } else if value.eq_ignore_ascii_case("Write") {
        Ok(TraceOp::Write)
    } else {
        Err(TraceError::UnknownType {
            line,
            value: value.to_string(),
        })
    }
}

fn parse_uint(line: usize, field: &'static str, value: &str) -> Result<u64, TraceError> {
    value.parse().map_err(|_| {
        let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            TraceError::OutOfRange {
                line,
                field,
                value: value.to_string(),
                max: u64::MAX,
            }
        } else {
            TraceError::NotInteger {
                line,
                field,
                value: value.to_string(),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
128166372003061629,hm,1,Read,3154152960,32768,1472
128166372003062629,hm,1,Write,3154186240,4096,2210
128166372003072629,hm,1,Read,3154190336,65536,1875
";

    fn opts(time_scale: f64, disk_number: Option<u32>) -> MsrOptions {
        MsrOptions {
            time_scale,
            disk_number,
        }
    }

    fn parse(text: &str) -> Result<Vec<TraceRequest>, TraceError> {
        parse_msr(text, &MsrOptions::default())
    }

    fn error_message(text: &str) -> String {
        parse(text)
            .expect_err("trace should be rejected")
            .to_string()
    }

    fn request(arrival_ns: u64, op: TraceOp, offset_bytes: u64, size_bytes: u64) -> TraceRequest {
        TraceRequest {
            arrival_ns,
            op,
            offset_bytes,
            size_bytes,
        }
    }

    #[test]
    fn parses_msr_sample_lines() {
        assert_eq!(
            parse(SAMPLE).unwrap(),
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
        let ops: Vec<TraceOp> = parse(text).unwrap().iter().map(|r| r.op).collect();
        assert_eq!(ops, [TraceOp::Read, TraceOp::Write]);
    }

    #[test]
    fn skips_header_blank_and_comment_lines() {
        let text = format!(
            "\u{feff}Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n\
             # captured on hm\r\n\
             \r\n   \n{SAMPLE}\n  # trailing comment\n"
        );
        assert_eq!(parse(&text).unwrap(), parse(SAMPLE).unwrap());
    }

    #[test]
    fn header_after_data_is_an_error() {
        let text = format!("{SAMPLE}Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
        assert_eq!(
            error_message(&text),
            "line 4: field 'Timestamp' is not an integer: \"Timestamp\""
        );
    }

    #[test]
    fn time_scale_halves_inter_arrival() {
        let arrivals: Vec<u64> = parse_msr(SAMPLE, &opts(0.5, None))
            .unwrap()
            .iter()
            .map(|r| r.arrival_ns)
            .collect();
        assert_eq!(arrivals, [0, 50_000, 550_000]);
    }

    #[test]
    fn rounds_scaled_arrival_to_nearest_nanosecond() {
        // One tick is 100 ns; scaled by 1/8 it is 12.5 ns (rounds up), by 1/64 it is 1.5625 ns.
        let text = "0,hm,0,Read,0,4096,1\n1,hm,0,Read,0,4096,1\n2,hm,0,Read,0,4096,1\n";
        let arrivals = |scale| -> Vec<u64> {
            parse_msr(text, &opts(scale, None))
                .unwrap()
                .iter()
                .map(|r| r.arrival_ns)
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
        let last = parse(&text).unwrap()[1].arrival_ns;
        assert_eq!(last, (1u64 << 57) * 100);
    }

    #[test]
    fn rejects_arrival_overflow() {
        let text = format!("0,hm,0,Read,0,4096,1\n{},hm,0,Read,0,4096,1\n", u64::MAX);
        assert_eq!(
            error_message(&text),
            "line 2: arrival time overflows u64 nanoseconds"
        );
        let huge_scale = parse_msr(
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
            parse_msr(text, &opts(1.0, Some(0))).unwrap(),
            vec![
                request(0, TraceOp::Read, 0, 4096),
                request(20_000, TraceOp::Write, 16384, 8192),
            ]
        );
        assert_eq!(
            parse_msr(text, &opts(1.0, Some(1))),
            Err(TraceError::BackwardsTimestamp {
                line: 4,
                timestamp: 50,
                previous: 200
            })
        );
        assert_eq!(
            parse_msr(text, &opts(1.0, Some(7)))
                .unwrap_err()
                .to_string(),
            "trace contains no requests for disk 7"
        );
    }

    #[test]
    fn rejects_wrong_field_count_with_line_number() {
        assert_eq!(
            error_message("# comment\n\n1,hm,0,Read,0\n"),
            "line 3: expected 7 comma-separated fields, found 5"
        );
        assert_eq!(
            error_message("1,hm,0,Read,0,4096,1,extra\n"),
            "line 1: expected 7 comma-separated fields, found 8"
        );
    }

    #[test]
    fn rejects_non_integer_size() {
        let text = format!("{SAMPLE}# note\n\n\n1281663720030726290,hm,1,Read,0,abc,1\n");
        assert_eq!(
            error_message(&text),
            "line 7: field 'Size' is not an integer: \"abc\""
        );
    }

    #[test]
    fn rejects_out_of_range_integers() {
        assert_eq!(
            error_message("1,hm,4294967296,Read,0,4096,1\n"),
            "line 1: field 'DiskNumber' is out of range: 4294967296 (expected 0..=4294967295)"
        );
        assert_eq!(
            error_message("1,hm,0,Read,0,4096,-5\n"),
            "line 1: field 'ResponseTime' is out of range: -5 (expected 0..=18446744073709551615)"
        );
        assert_eq!(
            error_message("18446744073709551616,hm,0,Read,0,4096,1\n"),
            "line 1: field 'Timestamp' is out of range: 18446744073709551616 \
             (expected 0..=18446744073709551615)"
        );
    }

    #[test]
    fn rejects_unknown_type() {
        let text = "1,hm,0,Read,0,4096,1\n".repeat(8) + "9,hm,0,Flush,0,4096,1\n";
        assert_eq!(
            error_message(&text),
            "line 9: unknown request type \"Flush\" (expected Read or Write)"
        );
    }

    #[test]
    fn rejects_backwards_timestamp() {
        let text = "5,hm,0,Read,0,4096,1\n".repeat(11) + "4,hm,0,Read,0,4096,1\n";
        assert_eq!(
            error_message(&text),
            "line 12: timestamp goes backwards (4 is before the previous 5)"
        );
    }

    #[test]
    fn rejects_zero_size() {
        assert_eq!(
            error_message("1,hm,0,Write,4096,0,1\n"),
            "line 1: request size is 0"
        );
    }

    #[test]
    fn rejects_offset_overflow() {
        let text = format!("1,hm,0,Write,{},4096,1\n", u64::MAX - 4095);
        assert_eq!(
            error_message(&text),
            format!(
                "line 1: offset {} + size 4096 overflows u64",
                u64::MAX - 4095
            )
        );
        let last_byte = format!("1,hm,0,Write,{},4096,1\n", u64::MAX - 4096);
        assert!(parse(&last_byte).is_ok());
    }

    #[test]
    fn rejects_bad_time_scale() {
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = parse_msr(SAMPLE, &opts(bad, None)).unwrap_err();
            assert!(
                matches!(err, TraceError::InvalidTimeScale(_)),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            parse_msr(SAMPLE, &opts(-2.0, None))
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
            assert_eq!(parse(text), Err(TraceError::EmptyTrace), "{text:?}");
        }
        assert_eq!(error_message(""), "trace contains no requests");
    }

    #[test]
    fn parses_sample_trace_file() {
        let text = include_str!("../testdata/msr_sample.csv");
        let requests = parse(text).unwrap();
        assert_eq!(requests.len(), 20);
        assert_eq!(requests[0], request(0, TraceOp::Read, 174731264, 16384));
        // 128166372012247946 - 128166372003061629 ticks of 100 ns.
        assert_eq!(requests[19].arrival_ns, 918_631_700);
        let writes = requests.iter().filter(|r| r.op == TraceOp::Write).count();
        assert_eq!(writes, 5);
        assert!(requests
            .windows(2)
            .all(|w| w[0].arrival_ns <= w[1].arrival_ns));
        for r in &requests {
            assert_eq!(r.offset_bytes % 4096, 0);
            assert!((4096..=65536).contains(&r.size_bytes));
            assert!(r.offset_bytes + r.size_bytes <= 256 << 20);
        }
        assert_eq!(parse_msr(text, &opts(1.0, Some(1))).unwrap().len(), 4);
    }
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    const LINE: &str = "128166372003061629,hm,1,Read,3154152960,32768,1472\n";

    /// A reader that never ends: `LINE` forever (an endless generated trace).
    struct Endless(usize);

    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let src = LINE.as_bytes();
            for b in buf.iter_mut() {
                *b = src[self.0 % src.len()];
                self.0 += 1;
            }
            Ok(buf.len())
        }
    }

    #[test]
    fn an_endless_trace_stops_at_the_request_limit() {
        let limits = MsrLimits {
            line_bytes_max: 4096,
            requests_max: 1000,
        };
        let r = std::io::BufReader::new(Endless(0));
        let e = read_msr(r, &MsrOptions::default(), &limits).unwrap_err();
        assert_eq!(e, TraceError::TooManyRequests { max: 1000 });
    }

    #[test]
    fn an_endless_line_stops_at_the_line_limit() {
        // /dev/zero: one line of NUL bytes that never ends.
        let r = std::io::BufReader::new(std::io::repeat(0));
        let e = read_msr(r, &MsrOptions::default(), &MsrLimits::default()).unwrap_err();
        assert_eq!(
            e,
            TraceError::LineTooLong {
                line: 1,
                max: crate::LINE_BYTES_MAX
            }
        );
    }

    #[test]
    fn streaming_and_in_memory_parses_agree() {
        let text = format!("Timestamp,h,d,t,o,s,r\n{LINE}{LINE}# note\n\n{LINE}");
        let a = parse_msr(&text, &MsrOptions::default()).unwrap();
        let b = read_msr(
            text.as_bytes(),
            &MsrOptions::default(),
            &MsrLimits::default(),
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
    }
}
