//! Block I/O trace input for nearflash: the public block-trace formats researchers use (MSR
//! Cambridge, blkparse text, fio iolog v2/v3, SNIA SYSTOR'17, Alibaba 2020, Tencent CBS, FIU,
//! UMass/SPC, MQSim/DiskSim ASCII), each parsed line by line into the same timed
//! [`TraceRequest`]s, with arrival times relative to the first request.
//!
//! Every trace is read as a bounded stream ([`TraceReader`]): lines longer than
//! [`TraceLimits::line_bytes_max`] and more than [`TraceLimits::requests_max`] requests are
//! refused, gzip input is inflated on the fly (detected by its magic bytes), and memory stays
//! bounded whatever the input — `/dev/zero` or an endless generator fails instead of
//! exhausting memory. Every per-line error names the 1-based line number and the reason.
//! Timestamps that go backwards are sorted within a bounded window
//! ([`ReadOptions::reorder_window`]); a request older than the window allows is an error.

mod error;
mod fields;
mod format;
mod lines;
mod stats;
mod stream;
#[cfg(test)]
mod testing;
mod time;

pub use error::TraceError;
pub use format::{BlkparseAction, Selector, TraceFormat, TraceSpec};
pub use stats::{InterArrival, SizeBucket, TraceStats, FOOTPRINT_UNIT_BYTES};
pub use stream::{parse_trace, read_trace, ReadSummary, Trace, TraceReader};

/// The direction of a trace request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TraceOp {
    Read,
    Write,
    /// A discard / TRIM (blkparse `D` in RWBS, fio iolog `trim`).
    Trim,
    /// A cache flush (fio iolog `sync` and `datasync`, which fio replays as an fsync):
    /// offset and size 0.
    Flush,
}

impl TraceOp {
    pub fn name(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Trim => "trim",
            TraceOp::Flush => "flush",
        }
    }
}

/// One request from a trace, in arrival order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceRequest {
    /// Arrival time in nanoseconds after the first kept request (which arrives at 0).
    pub arrival_ns: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    /// Never 0 but for a flush (whose offset and size are 0); `offset_bytes + size_bytes`
    /// never overflows `u64`.
    pub size_bytes: u64,
    /// The 1-based line of the trace it came from (for errors found later, e.g. an offset
    /// past the device).
    pub line: u64,
    /// The stream the trace says the request came from: the issuing process (FIU's and
    /// blkparse's PID), else the device column (MSR's disk, SYSTOR's LUN, Alibaba's
    /// device_id, Tencent's VolumeID, SPC's ASU, MQSim's devno); 0 for a fio iolog (one file
    /// per log). `nearflash io --placement-by stream` places writes by it.
    pub stream: u64,
}

/// How to read a trace (every format).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadOptions {
    /// Multiplies inter-arrival times (0.5 replays twice as fast); must be finite and > 0.
    pub time_scale: f64,
    /// Keep only the requests of one device of a multi-device trace, written as the format
    /// names it ([`TraceFormat::selector`]): an MSR disk number, a SYSTOR LUN, an Alibaba
    /// device id, a Tencent volume id, an SPC ASU, an MQSim device number, or a blkparse /
    /// FIU `MAJOR,MINOR`. `None` keeps every device.
    pub select: Option<String>,
    /// blkparse only: replay the issue (`D`, default) or the completion (`C`) events.
    pub blkparse_action: BlkparseAction,
    /// Skip malformed lines (counted in [`ReadSummary::bad_lines`]) instead of failing.
    pub skip_bad_lines: bool,
    /// Requests held back to sort timestamps that go backwards (0 refuses any step back).
    pub reorder_window: usize,
    /// fio iolog only: replay the requests of every file the log names onto the one
    /// simulated device, offsets unchanged — fio's `replay_redirect` ("all I/O in the
    /// blktrace or iolog [is] replayed onto [the one device] ... multiple devices will be
    /// replayed onto a single device", fio HOWTO). Without it a second file is an error
    /// naming its line.
    pub iolog_redirect: bool,
}

/// The default reorder window: 1024 requests. Multi-queue traces (blkparse per-CPU buffers,
/// Alibaba's per-server collection) interleave requests a few queue depths apart; 1024 is
/// the deepest NVMe submission queue the simulator models (`nvme` crate) and keeps the
/// window's memory at 48 KiB.
pub const REORDER_WINDOW: usize = 1024;

impl Default for ReadOptions {
    /// Real-time replay of every device, strict about malformed lines.
    fn default() -> Self {
        ReadOptions {
            time_scale: 1.0,
            select: None,
            blkparse_action: BlkparseAction::Issue,
            skip_bad_lines: false,
            reorder_window: REORDER_WINDOW,
            iolog_redirect: false,
        }
    }
}

/// Bounds on a trace read as a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLimits {
    /// Longest line accepted, in bytes.
    pub line_bytes_max: usize,
    /// Most requests kept (after the device filter).
    pub requests_max: u64,
}

/// The longest line of any supported format is a blkparse line with a long process name or
/// an FIU line with its MD5 (under 200 bytes); 4 KiB leaves room for long host and file
/// names (fio itself reads iolog lines with a 4096-byte `fgets`, `iolog.c`).
pub const LINE_BYTES_MAX: usize = 4096;

/// The default request limit: 16 Mi requests, 40 bytes each once loaded (640 MiB) — the
/// largest single volume of the MSR Cambridge set (src1_0, ~45 M lines over all its disks
/// together) needs `--trace-requests-max` raised, deliberately.
pub const REQUESTS_MAX: u64 = 16 << 20;

impl Default for TraceLimits {
    fn default() -> Self {
        TraceLimits {
            line_bytes_max: LINE_BYTES_MAX,
            requests_max: REQUESTS_MAX,
        }
    }
}

/// Reads a fio iolog (version 2 or 3, from its header line) as a stream: fio's `read_iolog`
/// input. v3 timestamps are µs since the log started; v2 requests arrive together except
/// for `wait <usec>` delays. `sync`/`datasync` entries are counted in
/// [`ReadSummary::ignored`]; a log naming more than one file is refused (naming the file and
/// line) unless [`ReadOptions::iolog_redirect`] replays every file onto the one device.
pub fn read_iolog(
    reader: impl std::io::BufRead,
    opts: &ReadOptions,
    limits: &TraceLimits,
) -> Result<Trace, TraceError> {
    read_trace(reader, TraceFormat::Iolog, opts, limits)
}
