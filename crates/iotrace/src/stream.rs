//! The shared trace stream: lines from [`LineReader`] through a format's [`LineParser`],
//! then what every format needs the same way — sizes checked (zero → error, end past u64 →
//! error), malformed lines skipped and counted when asked, the device filter counted,
//! timestamps sorted within a bounded reorder window (a request older than the window
//! allows is an error), arrivals made relative to the first request and scaled exactly, and
//! the request limit enforced.

use crate::format::{LineParser, Parsed, Record};
use crate::lines::LineReader;
use crate::time::TimeScale;
use crate::{ReadOptions, TraceError, TraceFormat, TraceLimits, TraceOp, TraceRequest};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::io::BufRead;

/// Bad lines whose messages a summary keeps (the rest are counted).
const BAD_LINES_NAMED: usize = 8;

/// What reading a trace saw besides its requests.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReadSummary {
    pub format: &'static str,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
    /// Lines read.
    pub lines: u64,
    /// Requests kept.
    pub requests: u64,
    /// Requests of other devices than the selected one.
    pub filtered_out: u64,
    /// Malformed lines skipped (`skip_bad_lines`).
    pub bad_lines: u64,
    /// The first skipped lines' errors.
    pub bad_line_errors: Vec<String>,
    /// Entries read but not replayable, by kind (`flush`, `untyped`, `no-data`...).
    pub ignored: BTreeMap<&'static str, u64>,
    /// Requests that arrived earlier than one before them and were sorted by the window.
    pub reordered: u64,
}

/// A whole trace in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub requests: Vec<TraceRequest>,
    pub summary: ReadSummary,
}

/// A request waiting in the reorder window, ordered by timestamp then by line (lines are
/// unique, so equal timestamps keep the trace's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    timestamp_ns: u128,
    line: u64,
    op: TraceOp,
    offset_bytes: u64,
    size_bytes: u64,
    stream: u64,
}

/// A trace as an iterator of requests in arrival order, in bounded memory.
pub struct TraceReader<'a> {
    lines: LineReader<'a>,
    parser: Box<dyn LineParser>,
    scale: TimeScale,
    skip_bad_lines: bool,
    window: usize,
    requests_max: u64,
    /// The reorder window, in two parts: requests that arrived in order (not earlier than
    /// the one read before them) queue in `in_order`, sorted by construction, so an ordered
    /// trace — the common case — costs O(1) a request; only requests that step back go
    /// into the heap. The earliest of both fronts leaves first.
    in_order: VecDeque<Pending>,
    pending: BinaryHeap<Reverse<Pending>>,
    /// The timestamp of the first request released (arrival 0) and of the latest.
    first_ns: Option<u128>,
    released_ns: u128,
    /// The latest timestamp read, to count requests that came out of order.
    latest_read_ns: u128,
    summary: ReadSummary,
    at_end: bool,
    /// An error or the end was returned: the iterator is done.
    finished: bool,
}

impl<'a> TraceReader<'a> {
    pub fn new(
        reader: impl BufRead + 'a,
        format: TraceFormat,
        opts: &ReadOptions,
        limits: &TraceLimits,
    ) -> Result<TraceReader<'a>, TraceError> {
        let scale = TimeScale::new(opts.time_scale)?;
        let parser = format.parser(opts)?;
        let lines = LineReader::new(reader, limits.line_bytes_max)?;
        let summary = ReadSummary {
            format: format.name(),
            gzip: lines.gzip(),
            ..ReadSummary::default()
        };
        Ok(TraceReader {
            lines,
            parser,
            scale,
            skip_bad_lines: opts.skip_bad_lines,
            window: opts.reorder_window,
            requests_max: limits.requests_max,
            in_order: VecDeque::with_capacity(opts.reorder_window.min(1 << 16) + 1),
            pending: BinaryHeap::new(),
            first_ns: None,
            released_ns: 0,
            latest_read_ns: 0,
            summary,
            at_end: false,
            finished: false,
        })
    }

    /// What was read so far (complete once the iterator has ended).
    pub fn summary(&self) -> &ReadSummary {
        &self.summary
    }

    /// Reads lines until a request can be released or the input ends.
    fn fill(&mut self) -> Result<(), TraceError> {
        while !self.at_end && self.held() <= self.window {
            let Some((line, text)) = self.lines.next_line()? else {
                self.at_end = true;
                break;
            };
            self.summary.lines = line;
            match self.parser.parse(line, text).and_then(|p| checked(line, p)) {
                Ok(Parsed::Nothing) => {}
                Ok(Parsed::Filtered) => self.summary.filtered_out += 1,
                Ok(Parsed::Ignored(kind)) => *self.summary.ignored.entry(kind).or_default() += 1,
                Ok(Parsed::Request(record)) => self.admit(line, record)?,
                Err(e) if self.skip_bad_lines && e.is_bad_line() => {
                    self.summary.bad_lines += 1;
                    if self.summary.bad_line_errors.len() < BAD_LINES_NAMED {
                        self.summary.bad_line_errors.push(e.to_string());
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn admit(&mut self, line: u64, record: Record) -> Result<(), TraceError> {
        if record.timestamp_ns < self.released_ns {
            return Err(TraceError::BackwardsTimestamp {
                line,
                timestamp_ns: record.timestamp_ns,
                previous_ns: self.released_ns,
                window: self.window,
            });
        }
        if record.timestamp_ns < self.latest_read_ns {
            self.summary.reordered += 1;
        }
        self.latest_read_ns = self.latest_read_ns.max(record.timestamp_ns);
        self.summary.requests += 1;
        if self.summary.requests > self.requests_max {
            return Err(TraceError::TooManyRequests {
                max: self.requests_max,
            });
        }
        let p = Pending {
            timestamp_ns: record.timestamp_ns,
            line,
            op: record.op,
            offset_bytes: record.offset_bytes,
            size_bytes: record.size_bytes,
            stream: record.stream,
        };
        if self.in_order.back().is_none_or(|last| p > *last) {
            self.in_order.push_back(p);
        } else {
            self.pending.push(Reverse(p));
        }
        assert!(self.held() <= self.window + 1, "the window is bounded");
        Ok(())
    }

    /// Requests held in the reorder window.
    fn held(&self) -> usize {
        self.in_order.len() + self.pending.len()
    }

    fn release(&mut self) -> Option<Result<TraceRequest, TraceError>> {
        let from_heap = match (self.in_order.front(), self.pending.peek()) {
            (Some(a), Some(Reverse(b))) => b < a,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => return None,
        };
        let p = if from_heap {
            self.pending.pop().expect("peeked").0
        } else {
            self.in_order.pop_front().expect("peeked")
        };
        let first = *self.first_ns.get_or_insert(p.timestamp_ns);
        assert!(
            p.timestamp_ns >= self.released_ns && p.timestamp_ns >= first,
            "requests leave in time order"
        );
        self.released_ns = p.timestamp_ns;
        Some(
            self.scale
                .scaled_ns(p.timestamp_ns - first)
                .ok_or(TraceError::ArrivalOverflow { line: p.line })
                .map(|arrival_ns| TraceRequest {
                    arrival_ns,
                    op: p.op,
                    offset_bytes: p.offset_bytes,
                    size_bytes: p.size_bytes,
                    line: p.line,
                    stream: p.stream,
                }),
        )
    }
}

impl Iterator for TraceReader<'_> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        if let Err(e) = self.fill() {
            self.finished = true;
            return Some(Err(e));
        }
        match self.release() {
            Some(r) => {
                self.finished = r.is_err();
                Some(r)
            }
            None => {
                self.finished = true;
                (self.summary.requests == 0).then(|| {
                    Err(match self.parser.selected() {
                        Some(what) => TraceError::NoRequestsSelected { what },
                        None => TraceError::EmptyTrace,
                    })
                })
            }
        }
    }
}

/// The size checks every format shares.
fn checked(line: u64, parsed: Parsed) -> Result<Parsed, TraceError> {
    if let Parsed::Request(r) = parsed {
        if r.size_bytes == 0 && r.op != TraceOp::Flush {
            return Err(TraceError::ZeroSize { line });
        }
        if r.offset_bytes.checked_add(r.size_bytes).is_none() {
            return Err(TraceError::OffsetOverflow {
                line,
                offset: r.offset_bytes,
                size: r.size_bytes,
            });
        }
    }
    Ok(parsed)
}

/// Reads a whole trace as a stream into memory (see [`TraceReader`] for the bounds).
pub fn read_trace(
    reader: impl BufRead,
    format: TraceFormat,
    opts: &ReadOptions,
    limits: &TraceLimits,
) -> Result<Trace, TraceError> {
    let mut stream = TraceReader::new(reader, format, opts, limits)?;
    let mut requests = Vec::new();
    for r in stream.by_ref() {
        requests.push(r?);
    }
    Ok(Trace {
        requests,
        summary: stream.summary.clone(),
    })
}

/// Parses a trace held in memory, with the default limits.
pub fn parse_trace(
    text: &str,
    format: TraceFormat,
    opts: &ReadOptions,
) -> Result<Trace, TraceError> {
    read_trace(text.as_bytes(), format, opts, &TraceLimits::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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

    fn read_msr(reader: impl BufRead, limits: &TraceLimits) -> Result<Trace, TraceError> {
        read_trace(reader, TraceFormat::Msr, &ReadOptions::default(), limits)
    }

    #[test]
    fn an_endless_trace_stops_at_the_request_limit() {
        let limits = TraceLimits {
            line_bytes_max: 4096,
            requests_max: 1000,
        };
        let r = std::io::BufReader::new(Endless(0));
        let e = read_msr(r, &limits).unwrap_err();
        assert_eq!(e, TraceError::TooManyRequests { max: 1000 });
    }

    #[test]
    fn an_endless_line_stops_at_the_line_limit() {
        // /dev/zero: one line of NUL bytes that never ends.
        let r = std::io::BufReader::new(std::io::repeat(0));
        let e = read_msr(r, &TraceLimits::default()).unwrap_err();
        assert_eq!(
            e,
            TraceError::LineTooLong {
                line: 1,
                max: crate::LINE_BYTES_MAX
            }
        );
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_input_is_inflated_transparently_member_after_member() {
        let text = format!("{LINE}{LINE}");
        let plain = read_msr(text.as_bytes(), &TraceLimits::default()).unwrap();
        assert!(!plain.summary.gzip);
        // Two gzip members back to back (`cat a.gz b.gz`) are one stream.
        let mut packed = gzip(LINE.as_bytes());
        packed.extend(gzip(LINE.as_bytes()));
        let inflated = read_msr(&packed[..], &TraceLimits::default()).unwrap();
        assert!(inflated.summary.gzip);
        assert_eq!(inflated.requests, plain.requests);
        // A gzip stream cut short is a read error, not a silently shorter trace.
        let cut = &packed[..packed.len() / 2 - 4];
        assert!(matches!(
            read_msr(cut, &TraceLimits::default()),
            Err(TraceError::Read(_))
        ));
    }

    #[test]
    fn a_tar_archive_is_refused_as_binary() {
        // A tar header: the member's name, NUL-padded (Tencent ships `YYYY-MM-DD-HH.tgz`).
        let mut tar = b"2018-10-01-00.csv".to_vec();
        tar.resize(512, 0);
        let e = read_msr(&gzip(&tar)[..], &TraceLimits::default()).unwrap_err();
        assert_eq!(e, TraceError::Binary { line: 1 });
    }

    #[test]
    fn skipped_bad_lines_are_counted_and_the_first_named() {
        let text = format!("{LINE}garbage\n{LINE}1,hm,0,Read,0,0,1\n");
        let opts = ReadOptions {
            skip_bad_lines: true,
            ..ReadOptions::default()
        };
        let t = parse_trace(&text, TraceFormat::Msr, &opts).unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.summary.bad_lines, 2);
        assert_eq!(
            t.summary.bad_line_errors,
            [
                "line 2: expected 7 comma-separated fields, found 1",
                "line 4: request size is 0"
            ]
        );
        // Limits stay fatal.
        let long = format!("{}\n{LINE}", "x".repeat(5000));
        assert!(matches!(
            parse_trace(&long, TraceFormat::Msr, &opts),
            Err(TraceError::LineTooLong { line: 1, .. })
        ));
    }

    proptest::proptest! {
        /// The two-part window (an ordered queue plus a heap for steps back) releases what a
        /// stable sort by timestamp releases: equal timestamps keep the trace's order.
        #[test]
        fn the_window_releases_a_stable_sort_by_timestamp(
            stamps in proptest::collection::vec(0u64..8, 1..80),
        ) {
            let csv: String = stamps
                .iter()
                .enumerate()
                .map(|(i, t)| format!("{t},h,0,Read,{},512,0\n", i * 512))
                .collect();
            let opts = ReadOptions {
                reorder_window: stamps.len(),
                ..ReadOptions::default()
            };
            let got: Vec<u64> = parse_trace(&csv, TraceFormat::Msr, &opts)
                .unwrap()
                .requests
                .iter()
                .map(|r| r.offset_bytes / 512)
                .collect();
            let mut want: Vec<(u64, u64)> =
                stamps.iter().enumerate().map(|(i, &t)| (t, i as u64)).collect();
            want.sort_by_key(|&(t, _)| t);
            proptest::prop_assert_eq!(got, want.iter().map(|&(_, i)| i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_step_back_beyond_the_window_is_refused_and_within_it_sorted() {
        let text = "30,h,0,Read,0,4096,0\n10,h,0,Read,4096,4096,0\n20,h,0,Read,8192,4096,0\n\
                    40,h,0,Read,0,4096,0\n5,h,0,Read,0,4096,0\n";
        let window = |w| ReadOptions {
            reorder_window: w,
            ..ReadOptions::default()
        };
        let t = parse_trace(text, TraceFormat::Msr, &window(4)).unwrap();
        let arrivals: Vec<u64> = t.requests.iter().map(|r| r.arrival_ns).collect();
        assert_eq!(arrivals, [0, 500, 1500, 2500, 3500]);
        assert_eq!(t.summary.reordered, 3);
        assert_eq!(
            parse_trace(text, TraceFormat::Msr, &window(2)),
            Err(TraceError::BackwardsTimestamp {
                line: 5,
                timestamp_ns: 500,
                previous_ns: 2000,
                window: 2
            })
        );
    }
}
