//! blkparse's default text output (blktrace `blkparse_fmt.c`, `#define HEADER "%D %2c %8s
//! %5T.%9t %5p %2a %3d "`): `MAJ,MIN CPU SEQ SECS.NSECS PID ACTION RWBS`, then for a request
//! with data `SECTOR + NSECTORS [PROCESS]` (`[ERROR]` on a completion), e.g.
//! `8,32 7 6 0.000006775 2923 D R 272208 + 2 [direct_io_read_]` (STANDARDS.md §4). Sectors
//! are 512 bytes. Only the chosen action is replayed: `D` (issued to the driver, default) or
//! `C` (completed); every other action (Q, G, I, M, P, U, A, X...) is skipped. RWBS `D` is a
//! discard (a trim), else `W` a write and `R` a read; a preflush without data (`F`) is a
//! flush; any other entry without data (`N`) is counted as ignored. The per-CPU and `Total` summary blkparse prints at the end is
//! skipped. The selector is the device `MAJ,MIN`.

use super::{parse_major_minor, BlkparseAction, Device, LineParser, Parsed, Record};
use crate::fields::{parse_seconds_ns, parse_sectors, parse_uint};
use crate::{TraceError, TraceOp};

/// Tokens of the header: device, CPU, sequence, time, PID, action, RWBS.
const HEADER_TOKENS: usize = 7;

pub struct Blkparse {
    select: Option<Device>,
    action: BlkparseAction,
    in_summary: bool,
}

impl Blkparse {
    pub fn new(select: Option<Device>, action: BlkparseAction) -> Self {
        Blkparse {
            select,
            action,
            in_summary: false,
        }
    }
}

impl LineParser for Blkparse {
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError> {
        let text = text.trim();
        if self.in_summary || text.is_empty() || text.starts_with('#') {
            return Ok(Parsed::Nothing);
        }
        let tokens: Vec<&str> = text.split_whitespace().take(HEADER_TOKENS + 4).collect();
        // The summary opens with "CPU0 (8,32):" or "Total (8,32):".
        if tokens[0].starts_with("CPU") || tokens[0] == "Total" {
            self.in_summary = true;
            return Ok(Parsed::Nothing);
        }
        if tokens.len() < HEADER_TOKENS {
            return Err(malformed(
                line,
                format!(
                    "expected at least {HEADER_TOKENS} fields (MAJ,MIN CPU SEQ TIME PID ACTION \
                     RWBS), found {}",
                    tokens.len()
                ),
            ));
        }
        let device = parse_major_minor(tokens[0])
            .ok_or_else(|| malformed(line, format!("device {:?} is not MAJ,MIN", tokens[0])))?;
        let timestamp_ns = parse_seconds_ns(line, "time", tokens[3])?;
        if tokens[5] != self.action.code() {
            return Ok(Parsed::Nothing);
        }
        if self.select.is_some_and(|s| s != device) {
            return Ok(Parsed::Filtered);
        }
        let pid = parse_uint(line, "pid", tokens[4])?;
        let rwbs = tokens[6];
        let has_data = tokens.get(8) == Some(&"+");
        // A preflush without data (RWBS `F…` with no sectors, or 0 of them): a cache flush.
        let flush = Parsed::Request(Record {
            timestamp_ns,
            op: TraceOp::Flush,
            offset_bytes: 0,
            size_bytes: 0,
            stream: pid,
        });
        if rwbs.contains('F') && !has_data {
            return Ok(flush);
        }
        let op = if rwbs.contains('D') {
            TraceOp::Trim
        } else if rwbs.contains('W') {
            TraceOp::Write
        } else if rwbs.contains('R') {
            TraceOp::Read
        } else {
            return Ok(Parsed::Ignored("no-data"));
        };
        if !has_data {
            return Ok(Parsed::Ignored("no-data"));
        }
        let sector = tokens[7];
        let Some(nsectors) = tokens.get(9) else {
            return Err(malformed(line, "'+' without a sector count".into()));
        };
        let size_bytes = parse_sectors(line, "nsectors", nsectors)?;
        if size_bytes == 0 && rwbs.contains('F') {
            return Ok(flush);
        }
        Ok(Parsed::Request(Record {
            timestamp_ns,
            op,
            offset_bytes: parse_sectors(line, "sector", sector)?,
            size_bytes,
            stream: pid,
        }))
    }

    fn selected(&self) -> Option<String> {
        self.select
            .map(|Device(d)| format!("device {},{}", d >> 32, d & u64::from(u32::MAX)))
    }
}

fn malformed(line: u64, reason: String) -> TraceError {
    TraceError::Malformed { line, reason }
}

#[cfg(test)]
mod tests {
    use crate::testing::{error_message, parse, parse_full, parse_with, request};
    use crate::{BlkparseAction, ReadOptions, TraceFormat, TraceOp};

    const BLK: TraceFormat = TraceFormat::Blkparse;

    const SAMPLE: &str = "\
  8,32   7        1     0.000000000  2923  Q   R 272208 + 8 [fio]
  8,32   7        2     0.000001500  2923  G   R 272208 + 8 [fio]
  8,32   7        3     0.000002000  2923  D   R 272208 + 8 [fio]
  8,16   1        1     0.000002500  2924  D   W 1024 + 16 [kworker/1:1]
  8,32   7        4     0.000105000     0  C   R 272208 + 8 [0]
  8,32   2        5     0.000200000  2925  D  WS 4096 + 8 [fio]
  8,32   2        6     0.000300000  2925  D  FN [fio]
  8,32   2        7     0.000400000  2925  D   D 8192 + 2048 [fstrim]
  8,32   2        8     0.000500000  2925  C  WS 4096 + 8 [0]
CPU2 (8,32):
 Reads Queued:           1,        4KiB  Writes Queued:           1,        4KiB
Total (8,32):
";

    #[test]
    fn parses_issue_events_and_counts_the_rest() {
        let t = parse_full(BLK, SAMPLE, &ReadOptions::default()).unwrap();
        let got: Vec<_> = t
            .requests
            .iter()
            .map(|r| (r.arrival_ns, r.op, r.offset_bytes, r.size_bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                request(0, TraceOp::Read, 272208 * 512, 4096),
                request(500, TraceOp::Write, 1024 * 512, 8192),
                request(198_000, TraceOp::Write, 4096 * 512, 4096),
                request(298_000, TraceOp::Flush, 0, 0),
                request(398_000, TraceOp::Trim, 8192 * 512, 1 << 20),
            ]
        );
        assert_eq!(t.summary.ignored.get("flush"), None);
        assert_eq!(t.requests[1].line, 4);
    }

    #[test]
    fn completions_are_chosen_with_the_action_option() {
        let opts = ReadOptions {
            blkparse_action: BlkparseAction::Complete,
            ..ReadOptions::default()
        };
        let got = parse_with(BLK, SAMPLE, &opts).unwrap();
        assert_eq!(
            got,
            vec![
                request(0, TraceOp::Read, 272208 * 512, 4096),
                request(395_000, TraceOp::Write, 4096 * 512, 4096),
            ]
        );
    }

    #[test]
    fn the_device_selector_keeps_one_major_minor() {
        let opts = ReadOptions {
            select: Some("8,16".into()),
            ..ReadOptions::default()
        };
        let t = parse_full(BLK, SAMPLE, &opts).unwrap();
        assert_eq!(t.requests.len(), 1);
        assert_eq!(t.summary.filtered_out, 4);
        let none = ReadOptions {
            select: Some("9,0".into()),
            ..ReadOptions::default()
        };
        assert_eq!(
            parse_with(BLK, SAMPLE, &none).unwrap_err().to_string(),
            "trace contains no requests for device 9,0"
        );
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let text = "8,0 0 1 0.000000001 1 D R 0 + 8 [a]\n8,0 0 2 0.0000x 1 D R 8 + 8 [a]\n";
        assert_eq!(
            error_message(BLK, text),
            "line 2: field 'time' is not a decimal number of seconds: \"0.0000x\""
        );
        assert_eq!(
            error_message(BLK, "8,0 0 1 0.1 1 D R 0 + [a]\n"),
            "line 1: field 'nsectors' is not an integer: \"[a]\""
        );
        assert_eq!(
            error_message(BLK, "8,0 0 1 0.1\n"),
            "line 1: expected at least 7 fields (MAJ,MIN CPU SEQ TIME PID ACTION RWBS), found 4"
        );
        assert_eq!(
            error_message(BLK, "8,0 0 1 0.1 1 D W 0 + 0 [a]\n"),
            "line 1: request size is 0"
        );
        assert_eq!(
            parse(BLK, "sda 0 1 0.1 1 D W 0 + 8 [a]\n")
                .unwrap_err()
                .to_string(),
            "line 1: device \"sda\" is not MAJ,MIN"
        );
    }
}
