//! A block trace as a benchmark plan: any supported format (`FORMAT:PATH`, read as a bounded
//! stream by `nearflash-iotrace`) turned into sector-aligned requests with their arrival
//! times, checked against the device's capacity (or folded into it on request) and against
//! the simulated clock's range. Trims are counted and skipped: the driver issues reads and
//! writes only.

use crate::error::IoBenchError;
use crate::workload::Draw;
use nearflash_ftl::{BlockOp, SECTOR_BYTES};
use nearflash_iotrace::{ReadOptions, ReadSummary, TraceLimits, TraceOp, TraceReader, TraceSpec};

/// Latest trace arrival accepted (ns after the first request): 2^62 ns, 146 years, leaving
/// three quarters of the u64-ns clock for preconditioning before and service after.
const ARRIVAL_NS_MAX: u64 = 1 << 62;

/// How to read a trace.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// The format-independent reading options: time scale, device selector, bad lines,
    /// reorder window, blkparse action.
    pub read: ReadOptions,
    /// Fold offsets past the capacity back into it instead of failing.
    pub fold_offsets: bool,
    /// Most requests read; a longer trace is refused.
    pub requests_max: u64,
}

/// A trace's requests, ready to replay open-loop.
pub struct TracePlan {
    pub path: String,
    pub format: &'static str,
    pub requests: Vec<Draw>,
    pub arrivals_ns: Vec<u64>,
    /// Requests whose offsets were folded into the device.
    pub folded: u64,
    /// Trims read and not replayed.
    pub trims_skipped: u64,
    pub time_scale: f64,
    /// What reading the trace saw (bad lines skipped, entries ignored, requests reordered).
    pub summary: ReadSummary,
}

impl TracePlan {
    /// Reads `FORMAT:PATH` for a device of `capacity_bytes` logical bytes.
    pub fn load(
        spec: &str,
        opts: &TraceOptions,
        capacity_bytes: u64,
    ) -> Result<TracePlan, IoBenchError> {
        let trace_error = |path: &str| {
            let path = path.to_string();
            move |source| IoBenchError::Trace {
                path,
                source: Box::new(source),
            }
        };
        let TraceSpec { format, path } = TraceSpec::parse(spec).map_err(trace_error(spec))?;
        let file = std::fs::File::open(&path).map_err(|e| IoBenchError::TraceOpen {
            path: path.clone(),
            source: e,
        })?;
        let limits = TraceLimits {
            line_bytes_max: nearflash_iotrace::LINE_BYTES_MAX,
            requests_max: opts.requests_max,
        };
        let mut reader =
            TraceReader::new(std::io::BufReader::new(file), format, &opts.read, &limits)
                .map_err(trace_error(&path))?;
        let capacity = capacity_bytes;
        let mut requests = Vec::new();
        let mut arrivals_ns = Vec::new();
        let (mut folded, mut trims_skipped) = (0, 0);
        for r in reader.by_ref() {
            let r = r.map_err(trace_error(&path))?;
            let what = || format!("trace {path}: line {}", r.line);
            // A block trace records sector-aligned I/O; widen anything else to whole sectors.
            let first = r.offset_bytes / SECTOR_BYTES * SECTOR_BYTES;
            let end = (r.offset_bytes + r.size_bytes).div_ceil(SECTOR_BYTES) * SECTOR_BYTES;
            let len = end - first;
            let offset = if end <= capacity {
                first
            } else if opts.fold_offsets && len <= capacity {
                folded += 1;
                (first % (capacity - len + SECTOR_BYTES)) / SECTOR_BYTES * SECTOR_BYTES
            } else {
                return Err(IoBenchError::PastCapacity {
                    what: what(),
                    offset_bytes: r.offset_bytes,
                    len_bytes: r.size_bytes,
                    capacity_bytes: capacity,
                    hint: "; pass --fold-offsets to fold it into the device",
                });
            };
            assert!(
                offset + len <= capacity,
                "a replayed request fits the device"
            );
            if r.arrival_ns > ARRIVAL_NS_MAX {
                return Err(IoBenchError::Workload(format!(
                    "{} arrives {:.0} years after the first: past the simulated clock's range \
                     (lower --time-scale)",
                    what(),
                    r.arrival_ns as f64 / 3.156e16
                )));
            }
            let op = match r.op {
                TraceOp::Read => BlockOp::Read,
                TraceOp::Write => BlockOp::Write,
                TraceOp::Trim => {
                    trims_skipped += 1;
                    continue;
                }
            };
            requests.push(Draw {
                op,
                offset_bytes: offset,
                len_bytes: len,
            });
            arrivals_ns.push(r.arrival_ns);
        }
        if requests.is_empty() {
            return Err(IoBenchError::Workload(format!(
                "trace {path}: its {trims_skipped} requests are all trims, which the replay skips"
            )));
        }
        assert_eq!(requests.len(), arrivals_ns.len());
        Ok(TracePlan {
            path,
            format: format.name(),
            requests,
            arrivals_ns,
            folded,
            trims_skipped,
            time_scale: opts.read.time_scale,
            summary: reader.summary().clone(),
        })
    }

    /// The plan as the report's `workload` object.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "trace": self.path,
            "format": self.format,
            "requests": self.requests.len(),
            "time_scale": self.time_scale,
            "folded_offsets": self.folded,
            "trims_skipped": self.trims_skipped,
            "span_ns": self.arrivals_ns.last().copied().unwrap_or(0),
            "read": self.summary,
        })
    }
}
