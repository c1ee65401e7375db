//! fio iolog, versions 2 and 3 (fio `iolog.c`: `init_iolog_read` checks the first line for
//! `fio version 2 iolog` / `fio version 3 iolog`; `read_iolog` scans v2 lines with
//! `"%256s %256s %llu %u"` and v3 lines with `"%llu %256s %256s %llu %u"`).
//!
//! - v2: `FILE ACTION OFFSET LENGTH` for I/O, `FILE add|open|close` for files. There are no
//!   timestamps: requests arrive together, separated only by `FILE wait USEC 0` delays.
//! - v3: `TIMESTAMP FILE ACTION [OFFSET LENGTH]`, the timestamp in µs since the log started
//!   (fio's `log_io_u` writes `utime_since_now`, STANDARDS.md §4); `wait` is not allowed (fio
//!   ignores it with an error message; counted here as ignored).
//!
//! Actions `read`, `write`, `trim` are requests (offset and length in bytes); `sync` and
//! `datasync` are flushes (fio replays both as an fsync). The simulated drive is one device: a line naming a second
//! file is an error naming it (split the log per file), unless the reader redirects every
//! file onto the one device as fio's `replay_redirect` does (offsets unchanged).

use super::{LineParser, Parsed, Record};
use crate::fields::{field_count, parse_uint};
use crate::{TraceError, TraceOp};

const NS_PER_US: u128 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V2,
    V3,
}

pub struct Iolog {
    version: Option<Version>,
    /// The one file the log may name.
    file: Option<String>,
    /// Every file onto the one device (fio's `replay_redirect`).
    redirect: bool,
    /// v2: the sum of `wait` delays so far, in ns.
    waited_ns: u128,
}

impl Iolog {
    pub fn new(redirect: bool) -> Self {
        Iolog {
            version: None,
            file: None,
            redirect,
            waited_ns: 0,
        }
    }

    fn check_file(&mut self, line: u64, file: &str) -> Result<(), TraceError> {
        if self.redirect {
            return Ok(());
        }
        match &self.file {
            None => self.file = Some(file.to_string()),
            Some(first) if first != file => {
                return Err(TraceError::IologSecondFile {
                    line,
                    file: file.to_string(),
                    first: first.clone(),
                })
            }
            Some(_) => {}
        }
        Ok(())
    }
}

impl LineParser for Iolog {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        let Some(version) = self.version else {
            self.version = Some(match text {
                "fio version 2 iolog" => Version::V2,
                "fio version 3 iolog" => Version::V3,
                _ => {
                    return Err(TraceError::IologHeader {
                        found: text.chars().take(64).collect(),
                    })
                }
            });
            return Ok(Parsed::Nothing);
        };
        if text.is_empty() || text.starts_with('#') {
            return Ok(Parsed::Nothing);
        }
        let tokens: Vec<&str> = text.split_whitespace().take(6).collect();
        let (timestamp_us, rest) = match version {
            Version::V2 => (None, &tokens[..]),
            Version::V3 => (
                Some(parse_uint(line, "timestamp", tokens[0])?),
                &tokens[1..],
            ),
        };
        let shape = |expected| field_count(line, expected, tokens.len(), ' ');
        let (io, file_action) = match version {
            Version::V2 => (4, 2),
            Version::V3 => (5, 3),
        };
        if tokens.len() != io && tokens.len() != file_action {
            return Err(shape(io));
        }
        let (file, action) = (rest[0], rest[1]);
        self.check_file(line, file)?;
        if tokens.len() == file_action {
            return match action {
                "add" | "open" | "close" => Ok(Parsed::Nothing),
                _ => Err(TraceError::UnknownType {
                    line,
                    value: action.to_string(),
                    expected: "add, open or close for a file action",
                }),
            };
        }
        let offset = parse_uint(line, "offset", rest[2])?;
        let length = parse_uint(line, "length", rest[3])?;
        let op = match action {
            "read" => TraceOp::Read,
            "write" => TraceOp::Write,
            "trim" => TraceOp::Trim,
            // fio replays both as an fsync of the file; their offset and length are 0.
            "sync" | "datasync" => TraceOp::Flush,
            "wait" if version == Version::V2 => {
                self.waited_ns += u128::from(offset) * NS_PER_US;
                return Ok(Parsed::Nothing);
            }
            "wait" => return Ok(Parsed::Ignored("wait (not allowed in v3)")),
            _ => {
                return Err(TraceError::UnknownType {
                    line,
                    value: action.to_string(),
                    expected: "read, write, trim, sync, datasync or wait",
                })
            }
        };
        let timestamp_ns = match timestamp_us {
            Some(us) => u128::from(us) * NS_PER_US,
            None => self.waited_ns,
        };
        // A flush covers the whole device whatever the line says (fio writes `0 0`).
        let (offset, length) = if op == TraceOp::Flush {
            (0, 0)
        } else {
            (offset, length)
        };
        Ok(Parsed::Request(Record {
            timestamp_ns,
            op,
            offset_bytes: offset,
            size_bytes: length,
            stream: 0,
        }))
    }

    fn selected(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_full, request};
    use crate::{read_iolog, ReadOptions, TraceError, TraceFormat, TraceLimits, TraceOp};

    const IOLOG: TraceFormat = TraceFormat::Iolog;

    const V3: &str = "\
fio version 3 iolog
0 /dev/nvme0n1 add
0 /dev/nvme0n1 open
15 /dev/nvme0n1 write 0 4096
27 /dev/nvme0n1 read 8192 16384
31 /dev/nvme0n1 sync 0 0
40 /dev/nvme0n1 trim 1048576 65536
52 /dev/nvme0n1 close
";

    #[test]
    fn v3_timestamps_are_microseconds() {
        let t = read_iolog(
            V3.as_bytes(),
            &ReadOptions::default(),
            &TraceLimits::default(),
        )
        .unwrap();
        let got: Vec<_> = t
            .requests
            .iter()
            .map(|r| (r.arrival_ns, r.op, r.offset_bytes, r.size_bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                request(0, TraceOp::Write, 0, 4096),
                request(12_000, TraceOp::Read, 8192, 16384),
                request(16_000, TraceOp::Flush, 0, 0),
                request(25_000, TraceOp::Trim, 1 << 20, 65536),
            ]
        );
        assert_eq!(t.summary.ignored.get("sync"), None);
    }

    #[test]
    fn v2_requests_arrive_together_except_for_waits() {
        let text = "\
fio version 2 iolog
/dev/sdb add
/dev/sdb open
/dev/sdb read 0 4096
/dev/sdb write 4096 4096
/dev/sdb wait 250 0
/dev/sdb read 8192 4096
/dev/sdb close
";
        assert_eq!(
            parse(IOLOG, text).unwrap(),
            vec![
                request(0, TraceOp::Read, 0, 4096),
                request(0, TraceOp::Write, 4096, 4096),
                request(250_000, TraceOp::Read, 8192, 4096),
            ]
        );
    }

    #[test]
    fn the_header_decides_the_version() {
        assert_eq!(
            error_message(IOLOG, "fio version 1 iolog\n"),
            "line 1: not a fio iolog header \"fio version 1 iolog\" (expected \"fio version 2 \
             iolog\" or \"fio version 3 iolog\")"
        );
        // A v2 line in a v3 log has too few fields for an I/O and too many for a file action.
        assert_eq!(
            error_message(IOLOG, "fio version 3 iolog\n/dev/sdb read 0 4096\n"),
            "line 2: field 'timestamp' is not an integer: \"/dev/sdb\""
        );
        assert_eq!(
            error_message(IOLOG, "fio version 2 iolog\n/dev/sdb read 0\n"),
            "line 2: expected 4 space-separated fields, found 3"
        );
        assert_eq!(
            error_message(IOLOG, "fio version 2 iolog\n/dev/sdb erase 0 4096\n"),
            "line 2: unknown request type \"erase\" (expected read, write, trim, sync, datasync \
             or wait)"
        );
    }

    #[test]
    fn a_second_file_is_refused_by_name() {
        let text = "fio version 3 iolog\n0 a add\n0 b add\n1 a read 0 4096\n";
        assert_eq!(
            parse(IOLOG, text),
            Err(TraceError::IologSecondFile {
                line: 3,
                file: "b".into(),
                first: "a".into()
            })
        );
    }

    #[test]
    fn a_redirected_log_replays_every_file_onto_the_one_device() {
        let text = "fio version 3 iolog\n0 a add\n0 b add\n1 a read 0 4096\n2 b write 8192 4096\n";
        let opts = ReadOptions {
            iolog_redirect: true,
            ..ReadOptions::default()
        };
        let t = parse_full(IOLOG, text, &opts).unwrap();
        assert_eq!(
            t.requests
                .iter()
                .map(|r| (r.arrival_ns, r.op, r.offset_bytes, r.size_bytes))
                .collect::<Vec<_>>(),
            vec![
                request(0, TraceOp::Read, 0, 4096),
                request(1000, TraceOp::Write, 8192, 4096),
            ]
        );
    }

    #[test]
    fn skipped_bad_lines_are_counted() {
        let text = format!("{V3}60 /dev/nvme0n1 read x 4096\n70 /dev/nvme0n1 read 0 4096\n");
        let opts = ReadOptions {
            skip_bad_lines: true,
            ..ReadOptions::default()
        };
        let t = parse_full(IOLOG, &text, &opts).unwrap();
        // V3's write, read, sync (a flush) and trim, and the good line after the bad one.
        assert_eq!(t.requests.len(), 5);
        assert_eq!(t.summary.bad_lines, 1);
        assert_eq!(
            t.summary.bad_line_errors,
            ["line 9: field 'offset' is not an integer: \"x\""]
        );
    }
}
