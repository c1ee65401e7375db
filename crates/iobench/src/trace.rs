//! A block trace as a benchmark plan: any supported format (`FORMAT:PATH`, read as a bounded
//! stream by `nearflash-iotrace`) turned into sector-aligned requests with their arrival
//! times, checked against the device's capacity (or folded into it on request) and against
//! the simulated clock's range. Trims are replayed as trims (over NVMe, a Dataset Management
//! deallocate: the path `nearflash fio`'s trims take), fio iolog syncs as flushes (an NVMe
//! Flush). A plan replays open-loop at the
//! arrival times, or — fio's `replay_no_stall` — in trace order as fast as a queue depth
//! allows.

use crate::error::IoBenchError;
use crate::workload::Draw;
use nearflash_ftl::{BlockOp, SECTOR_BYTES};
use nearflash_iotrace::{
    ReadOptions, ReadSummary, TraceLimits, TraceOp, TraceReader, TraceRequest, TraceSpec,
};

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
    /// Ignore the arrival times: replay in trace order, closed-loop at this queue depth
    /// (fio's `replay_no_stall`).
    pub no_stall_depth: Option<u32>,
}

/// A trace's requests, ready to replay open-loop.
pub struct TracePlan {
    pub path: String,
    pub format: &'static str,
    pub requests: Vec<Draw>,
    pub arrivals_ns: Vec<u64>,
    /// Each request's trace stream (`TraceRequest::stream`).
    pub streams: Vec<u64>,
    /// The region requests must lie in, from 0: the device's capacity, or a smaller span.
    pub span_bytes: u64,
    /// Requests whose offsets were folded into the span.
    pub folded: u64,
    /// Trims among the requests.
    pub trims: u64,
    /// Flushes among the requests (fio iolog `sync` / `datasync`).
    pub flushes: u64,
    pub time_scale: f64,
    /// Closed-loop at this depth instead of at the arrival times.
    pub no_stall_depth: Option<u32>,
    /// What reading the trace saw (bad lines skipped, entries ignored, requests reordered).
    pub summary: ReadSummary,
}

impl TracePlan {
    /// Reads `FORMAT:PATH` for requests within the first `span_bytes` of a device of
    /// `capacity_bytes` logical bytes.
    pub fn load(
        spec: &str,
        opts: &TraceOptions,
        span_bytes: u64,
        capacity_bytes: u64,
    ) -> Result<TracePlan, IoBenchError> {
        assert!(
            span_bytes <= capacity_bytes,
            "a span lies within the device"
        );
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
        let region = Region {
            span_bytes,
            capacity_bytes,
            fold: opts.fold_offsets,
        };
        let mut requests = Vec::new();
        let mut arrivals_ns = Vec::new();
        let mut streams = Vec::new();
        let (mut folded, mut trims, mut flushes) = (0, 0, 0);
        for r in reader.by_ref() {
            let r = r.map_err(trace_error(&path))?;
            let (draw, was_folded) =
                region.draw(&r, || format!("trace {path}: line {}", r.line))?;
            folded += u64::from(was_folded);
            trims += u64::from(draw.op == BlockOp::Trim);
            flushes += u64::from(draw.op == BlockOp::Flush);
            requests.push(draw);
            arrivals_ns.push(r.arrival_ns);
            streams.push(r.stream);
        }
        assert_eq!(requests.len(), arrivals_ns.len());
        Ok(TracePlan {
            path,
            format: format.name(),
            requests,
            arrivals_ns,
            streams,
            span_bytes,
            folded,
            trims,
            flushes,
            time_scale: opts.read.time_scale,
            no_stall_depth: opts.no_stall_depth,
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
            "span_bytes": self.span_bytes,
            "folded_offsets": self.folded,
            "trims": self.trims,
            "flushes": self.flushes,
            "replay": match self.no_stall_depth {
                Some(depth) => serde_json::json!({"no_stall": true, "queue_depth": depth}),
                None => serde_json::json!({"no_stall": false}),
            },
            "span_ns": self.arrivals_ns.last().copied().unwrap_or(0),
            "read": self.summary,
        })
    }
}

/// Where a trace's requests may land: within the first `span_bytes` of the device, folded
/// into them on request. Shared by `nearflash io --trace` and fio's `read_iolog`.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub span_bytes: u64,
    pub capacity_bytes: u64,
    /// Fold offsets past the span back into it instead of failing.
    pub fold: bool,
}

impl Region {
    /// The request `r` as the driver issues it (sector-aligned), and whether its offset was
    /// folded; `what()` names the request in errors.
    pub fn draw(
        &self,
        r: &TraceRequest,
        what: impl Fn() -> String,
    ) -> Result<(Draw, bool), IoBenchError> {
        let op = match r.op {
            TraceOp::Read => BlockOp::Read,
            TraceOp::Write => BlockOp::Write,
            TraceOp::Trim => BlockOp::Trim,
            TraceOp::Flush => {
                // A flush names no range: it reaches the whole device wherever the region is.
                let flush = Draw {
                    op: BlockOp::Flush,
                    offset_bytes: 0,
                    len_bytes: 0,
                };
                return Ok((flush, false));
            }
        };
        let span = self.span_bytes;
        // A block trace records sector-aligned I/O; widen anything else to whole sectors.
        let first = r.offset_bytes / SECTOR_BYTES * SECTOR_BYTES;
        let end = (r.offset_bytes + r.size_bytes).div_ceil(SECTOR_BYTES) * SECTOR_BYTES;
        let len = end - first;
        let (offset, folded) = if end <= span {
            (first, false)
        } else if self.fold && len <= span {
            let slots = span - len + SECTOR_BYTES;
            ((first % slots) / SECTOR_BYTES * SECTOR_BYTES, true)
        } else {
            return Err(IoBenchError::PastCapacity {
                what: what(),
                offset_bytes: r.offset_bytes,
                len_bytes: r.size_bytes,
                capacity_bytes: span,
                hint: match (self.fold, span < self.capacity_bytes) {
                    (false, false) => "; pass --fold-offsets to fold it into the device",
                    (false, true) => {
                        " the replay may touch (--span-gib); pass --fold-offsets to fold it in"
                    }
                    (true, _) => " (longer than the region it would be folded into)",
                },
            });
        };
        assert!(offset + len <= span, "a replayed request fits its region");
        if r.arrival_ns > ARRIVAL_NS_MAX {
            return Err(IoBenchError::Workload(format!(
                "{} arrives {:.0} years after the first: past the simulated clock's range \
                 (lower --time-scale)",
                what(),
                r.arrival_ns as f64 / 3.156e16
            )));
        }
        Ok((
            Draw {
                op,
                offset_bytes: offset,
                len_bytes: len,
            },
            folded,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: TraceOp, offset_bytes: u64, size_bytes: u64) -> TraceRequest {
        TraceRequest {
            arrival_ns: 0,
            op,
            offset_bytes,
            size_bytes,
            line: 7,
            stream: 0,
        }
    }

    #[test]
    fn a_request_is_widened_to_sectors_and_a_trim_stays_a_trim() {
        let r = Region {
            span_bytes: 1 << 20,
            capacity_bytes: 1 << 20,
            fold: false,
        };
        let (d, folded) = r.draw(&req(TraceOp::Trim, 1000, 100), String::new).unwrap();
        assert_eq!(
            (d.op, d.offset_bytes, d.len_bytes, folded),
            (BlockOp::Trim, 512, 1024, false)
        );
    }

    #[test]
    fn past_the_span_is_an_error_naming_the_line_or_folded_into_it() {
        let r = Region {
            span_bytes: 8192,
            capacity_bytes: 1 << 20,
            fold: false,
        };
        let e = r
            .draw(&req(TraceOp::Read, 8192, 4096), || "trace t: line 7".into())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("trace t: line 7 (offset 8192") && e.contains("--span-gib"),
            "{e}"
        );
        let folding = Region { fold: true, ..r };
        let (d, folded) = folding
            .draw(&req(TraceOp::Read, 8192, 4096), String::new)
            .unwrap();
        assert!(folded && d.offset_bytes + d.len_bytes <= 8192, "{d:?}");
    }
}
