//! What a trace holds, in one streaming pass and bounded memory (`nearflash trace stats`):
//! counts and bytes per direction, a power-of-two size histogram, the footprint (distinct
//! 4 KiB units touched, in a sparse bitmap of at most [`FOOTPRINT_CHUNKS_MAX`] chunks — past
//! that the figure is a lower bound and says so), the duration, inter-arrival times (a
//! log-linear histogram, within 1/64 of the true values) and the offset range.

use crate::{ReadSummary, TraceError, TraceOp, TraceReader, TraceRequest};
use nearflash_sim::LatencyHistogram;
use serde::Serialize;
use std::collections::BTreeMap;

/// The footprint's unit: 4 KiB, the mapping unit of page-mapped FTLs.
pub const FOOTPRINT_UNIT_BYTES: u64 = 4096;
/// Units per bitmap chunk (a 4 KiB chunk of 512 words covers 128 MiB of the address space).
const CHUNK_UNITS: u64 = 512 * 64;
/// At most 16 Ki chunks (64 MiB of bitmap): any footprint spread over up to 2 TiB of
/// 128 MiB regions is exact.
pub const FOOTPRINT_CHUNKS_MAX: usize = 16 << 10;

/// One bucket of the size histogram: requests of `size_bytes_max / 2 < size <=
/// size_bytes_max` (the first bucket holds sizes up to 1 byte).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    pub size_bytes_max: u64,
    pub requests: u64,
}

/// Inter-arrival times between consecutive requests.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InterArrival {
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    /// Cache flushes (fio iolog `sync` / `datasync`).
    pub flushes: u64,
    /// reads / (reads + writes); 0 without either.
    pub read_ratio: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    pub size_histogram: Vec<SizeBucket>,
    /// Distinct 4 KiB units touched by any request.
    pub footprint_units: u64,
    pub footprint_bytes: u64,
    /// The bitmap reached its limit: the footprint is a lower bound.
    pub footprint_capped: bool,
    /// The last arrival (the first is at 0), after the time scale.
    pub duration_ns: u64,
    pub inter_arrival: InterArrival,
    pub offset_bytes_min: u64,
    /// The largest `offset + size`: the device capacity the trace needs unfolded.
    pub end_bytes_max: u64,
    pub read: ReadSummary,
}

impl TraceStats {
    /// Reads the whole stream.
    pub fn collect(mut reader: TraceReader<'_>) -> Result<TraceStats, TraceError> {
        let mut acc = Accumulator::default();
        for r in reader.by_ref() {
            acc.add(&r?);
        }
        Ok(acc.finish(reader.summary().clone()))
    }
}

#[derive(Default)]
struct Accumulator {
    requests: u64,
    counts: [u64; 3],
    flushes: u64,
    bytes: [u64; 3],
    sizes: BTreeMap<u32, u64>,
    footprint: Footprint,
    last_arrival_ns: u64,
    gaps: LatencyHistogram,
    offset_min: Option<u64>,
    end_max: u64,
}

impl Accumulator {
    fn add(&mut self, r: &TraceRequest) {
        let i = match r.op {
            TraceOp::Read => 0,
            TraceOp::Write => 1,
            TraceOp::Trim => 2,
            TraceOp::Flush => {
                // No data: counted, and kept in the arrival times, but no size or footprint.
                self.flushes += 1;
                self.arrive(r.arrival_ns);
                return;
            }
        };
        assert!(r.size_bytes > 0, "the reader refuses empty requests");
        self.counts[i] += 1;
        self.bytes[i] = self.bytes[i].saturating_add(r.size_bytes);
        // ceil(log2(size)): the bucket whose upper edge is the next power of two.
        let log2 = u64::BITS - (r.size_bytes - 1).leading_zeros();
        *self.sizes.entry(log2).or_default() += 1;
        self.footprint.touch(r.offset_bytes, r.size_bytes);
        self.arrive(r.arrival_ns);
        self.offset_min = Some(
            self.offset_min
                .map_or(r.offset_bytes, |m| m.min(r.offset_bytes)),
        );
        self.end_max = self.end_max.max(r.offset_bytes + r.size_bytes);
    }

    /// One more request at `arrival_ns` (arrivals come sorted).
    fn arrive(&mut self, arrival_ns: u64) {
        if self.requests > 0 {
            assert!(arrival_ns >= self.last_arrival_ns, "arrivals are sorted");
            self.gaps.record(arrival_ns - self.last_arrival_ns);
        }
        self.requests += 1;
        self.last_arrival_ns = arrival_ns;
    }

    fn finish(self, read: ReadSummary) -> TraceStats {
        let [reads, writes, trims] = self.counts;
        let [read_bytes, write_bytes, trim_bytes] = self.bytes;
        let g = &self.gaps;
        TraceStats {
            requests: self.requests,
            reads,
            writes,
            trims,
            flushes: self.flushes,
            read_ratio: if reads + writes == 0 {
                0.0
            } else {
                reads as f64 / (reads + writes) as f64
            },
            read_bytes,
            write_bytes,
            trim_bytes,
            size_histogram: self
                .sizes
                .iter()
                .map(|(&log2, &requests)| SizeBucket {
                    size_bytes_max: 1u64.checked_shl(log2).unwrap_or(u64::MAX),
                    requests,
                })
                .collect(),
            footprint_units: self.footprint.units,
            footprint_bytes: self.footprint.units.saturating_mul(FOOTPRINT_UNIT_BYTES),
            footprint_capped: self.footprint.capped,
            duration_ns: self.last_arrival_ns,
            inter_arrival: InterArrival {
                mean_ns: g.mean_ns(),
                p50_ns: g.quantile_ns(0.5),
                p90_ns: g.quantile_ns(0.9),
                p99_ns: g.quantile_ns(0.99),
                max_ns: g.max_ns(),
            },
            offset_bytes_min: self.offset_min.unwrap_or(0),
            end_bytes_max: self.end_max,
            read,
        }
    }
}

/// A sparse bitmap of 4 KiB units, in chunks created on first touch up to a limit.
#[derive(Default)]
struct Footprint {
    chunks: BTreeMap<u64, Box<[u64; 512]>>,
    units: u64,
    capped: bool,
}

impl Footprint {
    fn touch(&mut self, offset_bytes: u64, size_bytes: u64) {
        let first = offset_bytes / FOOTPRINT_UNIT_BYTES;
        let last = (offset_bytes + size_bytes - 1) / FOOTPRINT_UNIT_BYTES;
        let (c_last, mut c) = (last / CHUNK_UNITS, first / CHUNK_UNITS);
        while c <= c_last {
            if !self.chunks.contains_key(&c) {
                if self.chunks.len() >= FOOTPRINT_CHUNKS_MAX {
                    self.capped = true;
                    // Only chunks that exist can still be counted: jump to the next one.
                    match self.chunks.range(c..=c_last).next() {
                        Some((&next, _)) => c = next,
                        None => break,
                    }
                    continue;
                }
                self.chunks.insert(c, Box::new([0; 512]));
            }
            let base = c * CHUNK_UNITS;
            let lo = first.max(base) - base;
            let hi = last.min(base + CHUNK_UNITS - 1) - base;
            let chunk = self.chunks.get_mut(&c).expect("inserted above");
            self.units += set_range(chunk, lo, hi);
            c += 1;
        }
        assert!(self.chunks.len() <= FOOTPRINT_CHUNKS_MAX);
    }
}

/// Sets bits `lo..=hi` of the chunk; returns how many were newly set.
fn set_range(chunk: &mut [u64; 512], lo: u64, hi: u64) -> u64 {
    assert!(lo <= hi && hi < CHUNK_UNITS);
    let mut added = 0;
    for w in lo / 64..=hi / 64 {
        let from = if w == lo / 64 { lo % 64 } else { 0 };
        let to = if w == hi / 64 { hi % 64 } else { 63 };
        let mask = (u64::MAX >> (63 - to)) & (u64::MAX << from);
        let word = &mut chunk[w as usize];
        added += u64::from((mask & !*word).count_ones());
        *word |= mask;
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReadOptions, TraceFormat, TraceLimits};

    fn stats(format: TraceFormat, text: &str) -> TraceStats {
        let reader = TraceReader::new(
            text.as_bytes(),
            format,
            &ReadOptions::default(),
            &TraceLimits::default(),
        )
        .unwrap();
        TraceStats::collect(reader).unwrap()
    }

    #[test]
    fn counts_sizes_footprint_and_gaps() {
        let text = "\
fio version 3 iolog
0 f read 0 4096
10 f read 2048 4096
30 f write 1048576 65536
70 f trim 0 512
";
        let s = stats(TraceFormat::Iolog, text);
        assert_eq!((s.requests, s.reads, s.writes, s.trims), (4, 2, 1, 1));
        assert_eq!(s.read_ratio, 2.0 / 3.0);
        assert_eq!(
            (s.read_bytes, s.write_bytes, s.trim_bytes),
            (8192, 65536, 512)
        );
        assert_eq!(
            s.size_histogram,
            vec![
                SizeBucket {
                    size_bytes_max: 512,
                    requests: 1
                },
                SizeBucket {
                    size_bytes_max: 4096,
                    requests: 2
                },
                SizeBucket {
                    size_bytes_max: 65536,
                    requests: 1
                },
            ]
        );
        // Units 0 and 1 (the read at 2048 straddles them), then 16 units at 1 MiB.
        assert_eq!(s.footprint_units, 18);
        assert!(!s.footprint_capped);
        assert_eq!(s.duration_ns, 70_000);
        assert_eq!(s.inter_arrival.max_ns, 40_000);
        assert_eq!(s.inter_arrival.mean_ns, 70_000.0 / 3.0);
        assert_eq!((s.offset_bytes_min, s.end_bytes_max), (0, 1048576 + 65536));
    }

    #[test]
    fn the_footprint_bitmap_stops_at_its_limit_and_says_so() {
        let mut f = Footprint::default();
        // A request spanning the whole u64 address space would need 2^37 chunks.
        f.touch(0, u64::MAX);
        assert!(f.capped);
        assert_eq!(f.chunks.len(), FOOTPRINT_CHUNKS_MAX);
        assert_eq!(f.units, FOOTPRINT_CHUNKS_MAX as u64 * CHUNK_UNITS);
        // Touching units already counted adds nothing; bits across word edges are exact.
        let mut g = Footprint::default();
        g.touch(60 * 4096, 10 * 4096);
        g.touch(65 * 4096, 10 * 4096);
        assert_eq!(g.units, 15);
    }
}
