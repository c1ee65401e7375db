//! Synthetic block workloads: sequential or random reads and writes, or a random mix, of a
//! fixed request size over a span of the device, for a number of requests or bytes. The
//! generator draws every random choice from the run's one seeded RNG.

use crate::error::IoBenchError;
use nearflash_ftl::{BlockOp, SECTOR_BYTES};
use nearflash_sim::SimRng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    SeqRead,
    SeqWrite,
    RandRead,
    RandWrite,
    /// Random offsets; each request is a read with probability `--read-percent`.
    Mixed,
}

impl Pattern {
    /// Whether the pattern reads data it needs written first.
    pub fn reads(self) -> bool {
        matches!(self, Pattern::SeqRead | Pattern::RandRead | Pattern::Mixed)
    }

    fn random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead | Pattern::RandWrite | Pattern::Mixed
        )
    }
}

/// How much a synthetic run issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    Requests(u64),
    TotalBytes(u64),
}

#[derive(Clone, Debug, Serialize)]
pub struct SyntheticSpec {
    pub pattern: Pattern,
    pub request_bytes: u64,
    pub queue_depth: u32,
    pub amount: Amount,
    /// Share of reads in `mixed`, 0..=100.
    pub read_percent: u32,
    /// Requests fall in [0, span_bytes).
    pub span_bytes: u64,
}

impl SyntheticSpec {
    /// Checks the spec against a device of `capacity_bytes` logical bytes.
    pub fn validate(&self, capacity_bytes: u64) -> Result<(), IoBenchError> {
        let w = |m: String| Err(IoBenchError::Workload(m));
        if self.request_bytes == 0 || !self.request_bytes.is_multiple_of(SECTOR_BYTES) {
            return w(format!(
                "--request-kib gives {} bytes; requests must be a positive multiple of \
                 {SECTOR_BYTES} bytes",
                self.request_bytes
            ));
        }
        if self.queue_depth == 0 {
            return w("--queue-depth must be at least 1".into());
        }
        if self.read_percent > 100 {
            return w(format!(
                "--read-percent must be within 0..=100, got {}",
                self.read_percent
            ));
        }
        match self.amount {
            Amount::Requests(0) => return w("--requests must be at least 1".into()),
            Amount::TotalBytes(b) if b < self.request_bytes => {
                return w(format!(
                    "--total-gib gives {b} bytes, less than one {}-byte request",
                    self.request_bytes
                ))
            }
            _ => {}
        }
        if self.span_bytes > capacity_bytes {
            return Err(IoBenchError::PastCapacity {
                what: "the workload span".into(),
                offset_bytes: 0,
                len_bytes: self.span_bytes,
                capacity_bytes,
                hint: "; lower --span-gib",
            });
        }
        if self.request_bytes > self.span_bytes {
            return Err(IoBenchError::PastCapacity {
                what: "a request".into(),
                offset_bytes: 0,
                len_bytes: self.request_bytes,
                capacity_bytes: self.span_bytes,
                hint: " of the span; lower --request-kib",
            });
        }
        Ok(())
    }

    pub fn total_requests(&self) -> u64 {
        match self.amount {
            Amount::Requests(n) => n,
            Amount::TotalBytes(b) => b / self.request_bytes,
        }
    }
}

/// One request to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    pub op: BlockOp,
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

/// Produces the requests of a synthetic spec, in order.
pub struct Generator {
    spec: SyntheticSpec,
    issued: u64,
    total: u64,
    next_seq_offset: u64,
    slots: u64,
}

impl Generator {
    pub fn new(spec: SyntheticSpec) -> Self {
        Generator {
            total: spec.total_requests(),
            slots: spec.span_bytes / spec.request_bytes,
            spec,
            issued: 0,
            next_seq_offset: 0,
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn next(&mut self, rng: &mut SimRng) -> Option<Draw> {
        if self.issued == self.total {
            return None;
        }
        self.issued += 1;
        let len = self.spec.request_bytes;
        let offset = if self.spec.pattern.random() {
            rng.below(self.slots) * len
        } else {
            let at = self.next_seq_offset;
            // Wrap to the start when the next request would run past the span.
            self.next_seq_offset = if at + 2 * len > self.slots * len {
                0
            } else {
                at + len
            };
            at
        };
        let op = match self.spec.pattern {
            Pattern::SeqRead | Pattern::RandRead => BlockOp::Read,
            Pattern::SeqWrite | Pattern::RandWrite => BlockOp::Write,
            Pattern::Mixed => {
                if rng.below(100) < u64::from(self.spec.read_percent) {
                    BlockOp::Read
                } else {
                    BlockOp::Write
                }
            }
        };
        Some(Draw {
            op,
            offset_bytes: offset,
            len_bytes: len,
        })
    }
}

/// Sequential writes that cover [0, span) once, in `request_bytes` pieces (the last one may be
/// shorter): the preconditioning pass.
pub fn fill_requests(span_bytes: u64, request_bytes: u64) -> impl Iterator<Item = Draw> {
    (0..span_bytes.div_ceil(request_bytes)).map(move |i| {
        let offset = i * request_bytes;
        Draw {
            op: BlockOp::Write,
            offset_bytes: offset,
            len_bytes: request_bytes.min(span_bytes - offset),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: Pattern, n: u64) -> SyntheticSpec {
        SyntheticSpec {
            pattern,
            request_bytes: 8192,
            queue_depth: 4,
            amount: Amount::Requests(n),
            read_percent: 70,
            span_bytes: 10 * 8192,
        }
    }

    #[test]
    fn sequential_requests_walk_the_span_and_wrap() {
        let mut g = Generator::new(spec(Pattern::SeqRead, 12));
        let mut rng = SimRng::seed_from_u64(1);
        let offs: Vec<u64> = std::iter::from_fn(|| g.next(&mut rng))
            .map(|d| d.offset_bytes / 8192)
            .collect();
        assert_eq!(offs, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
    }

    #[test]
    fn random_requests_stay_aligned_inside_the_span() {
        let mut g = Generator::new(spec(Pattern::RandWrite, 1000));
        let mut rng = SimRng::seed_from_u64(2);
        let mut seen = std::collections::BTreeSet::new();
        while let Some(d) = g.next(&mut rng) {
            assert_eq!(d.op, BlockOp::Write);
            assert_eq!(d.offset_bytes % 8192, 0);
            assert!(d.offset_bytes + d.len_bytes <= 10 * 8192);
            seen.insert(d.offset_bytes);
        }
        assert_eq!(seen.len(), 10, "every slot is drawn over 1000 requests");
    }

    #[test]
    fn mixed_respects_the_read_share() {
        let mut g = Generator::new(spec(Pattern::Mixed, 10_000));
        let mut rng = SimRng::seed_from_u64(3);
        let reads = std::iter::from_fn(|| g.next(&mut rng))
            .filter(|d| d.op == BlockOp::Read)
            .count();
        assert!((6500..7500).contains(&reads), "{reads}");
    }

    #[test]
    fn fill_covers_the_span_exactly_once() {
        let d: Vec<Draw> = fill_requests(10_000 * 512, 4096 * 512).collect();
        assert_eq!(d.len(), 3);
        assert_eq!(d.iter().map(|d| d.len_bytes).sum::<u64>(), 10_000 * 512);
    }

    #[test]
    fn bad_specs_are_rejected_with_the_flag_named() {
        let mut s = spec(Pattern::RandRead, 10);
        s.queue_depth = 0;
        assert!(s
            .validate(1 << 30)
            .unwrap_err()
            .to_string()
            .contains("--queue-depth"));
        let mut s = spec(Pattern::RandRead, 10);
        s.request_bytes = 1000;
        assert!(s
            .validate(1 << 30)
            .unwrap_err()
            .to_string()
            .contains("--request-kib"));
        let s = spec(Pattern::RandRead, 10);
        assert!(s.validate(8192).unwrap_err().to_string().contains("beyond"));
        let mut s = spec(Pattern::Mixed, 10);
        s.read_percent = 101;
        assert!(s
            .validate(1 << 30)
            .unwrap_err()
            .to_string()
            .contains("--read-percent"));
    }
}
