//! A block trace as a benchmark plan: MSR Cambridge records turned into sector-aligned
//! requests with their arrival times, checked against the device's capacity (or folded into
//! it on request) and against the simulated clock's range.

use crate::error::IoBenchError;
use crate::workload::Draw;
use nearflash_ftl::{BlockOp, SECTOR_BYTES};
use nearflash_iotrace::{read_msr, MsrLimits, MsrOptions, TraceOp};

/// Latest trace arrival accepted (ns after the first request): 2^62 ns, 146 years, leaving
/// three quarters of the u64-ns clock for preconditioning before and service after.
const ARRIVAL_NS_MAX: u64 = 1 << 62;

/// How to read a trace.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// Multiplies the inter-arrival times (0.5 replays twice as fast).
    pub time_scale: f64,
    /// Replay only this disk of the trace.
    pub disk: Option<u32>,
    /// Fold offsets past the capacity back into it instead of failing.
    pub fold_offsets: bool,
    /// Most requests read; a longer trace is refused.
    pub requests_max: u64,
}

/// A trace's requests, ready to replay open-loop.
pub struct TracePlan {
    pub path: String,
    pub requests: Vec<Draw>,
    pub arrivals_ns: Vec<u64>,
    /// Requests whose offsets were folded into the device.
    pub folded: u64,
    pub time_scale: f64,
}

impl TracePlan {
    /// Reads `msr:PATH` for a device of `capacity_bytes` logical bytes.
    pub fn load(
        spec: &str,
        opts: &TraceOptions,
        capacity_bytes: u64,
    ) -> Result<TracePlan, IoBenchError> {
        let path = spec.strip_prefix("msr:").ok_or_else(|| {
            IoBenchError::Workload(format!(
                "--trace {spec}: expected msr:PATH (the only trace format supported)"
            ))
        })?;
        let file = std::fs::File::open(path).map_err(|e| IoBenchError::TraceOpen {
            path: path.to_string(),
            source: e,
        })?;
        let parsed = read_msr(
            std::io::BufReader::new(file),
            &MsrOptions {
                time_scale: opts.time_scale,
                disk_number: opts.disk,
            },
            &MsrLimits {
                line_bytes_max: nearflash_iotrace::LINE_BYTES_MAX,
                requests_max: opts.requests_max,
            },
        )
        .map_err(|e| IoBenchError::Trace {
            path: path.to_string(),
            source: e,
        })?;
        let capacity = capacity_bytes;
        let mut requests = Vec::with_capacity(parsed.len());
        let mut arrivals_ns = Vec::with_capacity(parsed.len());
        let mut folded = 0;
        for (i, r) in parsed.iter().enumerate() {
            let what = || format!("trace {path}: request #{} ", i + 1);
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
                    "{}arrives {:.0} years after the first: past the simulated clock's range \
                     (lower --time-scale)",
                    what(),
                    r.arrival_ns as f64 / 3.156e16
                )));
            }
            requests.push(Draw {
                op: match r.op {
                    TraceOp::Read => BlockOp::Read,
                    TraceOp::Write => BlockOp::Write,
                },
                offset_bytes: offset,
                len_bytes: len,
            });
            arrivals_ns.push(r.arrival_ns);
        }
        Ok(TracePlan {
            path: path.to_string(),
            requests,
            arrivals_ns,
            folded,
            time_scale: opts.time_scale,
        })
    }

    /// The plan as the report's `workload` object.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "trace": self.path,
            "format": "msr",
            "requests": self.requests.len(),
            "time_scale": self.time_scale,
            "folded_offsets": self.folded,
            "span_ns": self.arrivals_ns.last().copied().unwrap_or(0),
        })
    }
}
