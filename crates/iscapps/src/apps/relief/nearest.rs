//! Relief pass 1 on the drive: the nearest "hit" and nearest "miss" sample to the query by
//! squared L2 distance (the earliest on ties), then at the end of the stream the feature
//! weights w_f = [miss_f = q_f] − [hit_f = q_f], emitted as 256 little-endian i32.
//!
//! Samples are 256 little-endian i32. The first `hit_count` samples are hits, the rest
//! misses. Params, in order: `hit_count` (u64, 8 bytes), then the query (256 i32).

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use super::{FEATURES, SAMPLE_BYTES};
use crate::records::{EndGuard, RecordFramer};
use crate::wire::{i32_at, put_i32, u64_at};

/// The best sample so far: (distance, its features).
type Best = Option<(u128, Vec<i32>)>;

#[derive(Debug)]
pub struct ReliefNearestProgram {
    hit_count: Option<u64>,
    query: Option<Vec<i32>>,
    framer: RecordFramer,
    sample_index: u64,
    nearest_hit: Best,
    nearest_miss: Best,
    guard: EndGuard,
}

impl Default for ReliefNearestProgram {
    fn default() -> ReliefNearestProgram {
        ReliefNearestProgram {
            hit_count: None,
            query: None,
            framer: RecordFramer::new(SAMPLE_BYTES),
            sample_index: 0,
            nearest_hit: None,
            nearest_miss: None,
            guard: EndGuard::default(),
        }
    }
}

fn params_error(reason: String) -> ProgramError {
    ProgramError::Params {
        program: "relief-nearest",
        reason,
    }
}

/// Decodes a sample's features.
pub fn features_of(sample: &[u8]) -> Vec<i32> {
    sample.chunks_exact(4).map(i32_at).collect()
}

impl ReliefNearestProgram {
    fn take(&mut self, sample: &[u8], query: &[i32], hit_count: u64) {
        let x = features_of(sample);
        let d: u128 = x
            .iter()
            .zip(query)
            .map(|(&a, &b)| {
                let diff = u128::from((i64::from(a) - i64::from(b)).unsigned_abs());
                diff * diff
            })
            .sum();
        let best = if self.sample_index < hit_count {
            &mut self.nearest_hit
        } else {
            &mut self.nearest_miss
        };
        if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
            *best = Some((d, x));
        }
        self.sample_index += 1;
    }

    fn weights(&self, query: &[i32]) -> Result<Vec<u8>, ProgramError> {
        let (Some((_, hit)), Some((_, miss))) = (&self.nearest_hit, &self.nearest_miss) else {
            return Err(ProgramError::Fault {
                program: "relief-nearest",
                reason: format!(
                    "{} samples with {} hits: a hit and a miss are both needed",
                    self.sample_index,
                    self.hit_count.unwrap_or(0)
                ),
            });
        };
        let mut out = Vec::with_capacity(SAMPLE_BYTES);
        for f in 0..FEATURES {
            let w = i32::from(miss[f] == query[f]) - i32::from(hit[f] == query[f]);
            put_i32(&mut out, w);
        }
        Ok(out)
    }
}

impl StreamProgram for ReliefNearestProgram {
    fn name(&self) -> &'static str {
        "relief-nearest"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        match (self.hit_count, &self.query) {
            (None, _) if params.len() == 8 => self.hit_count = Some(u64_at(params)),
            (None, _) => {
                return Err(params_error(format!(
                    "expected the 8-byte hit count first, got {} bytes",
                    params.len()
                )))
            }
            (Some(_), None) if params.len() == SAMPLE_BYTES => {
                self.query = Some(features_of(params))
            }
            (Some(_), None) => {
                return Err(params_error(format!(
                    "expected a {SAMPLE_BYTES}-byte query, got {} bytes",
                    params.len()
                )))
            }
            (Some(_), Some(_)) => return Err(params_error("parameters already complete".into())),
        }
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let (Some(hit_count), Some(query)) = (self.hit_count, self.query.take()) else {
            return Err(params_error(
                "data arrived before the hit count and query".into(),
            ));
        };
        let mut framer = std::mem::replace(&mut self.framer, RecordFramer::new(SAMPLE_BYTES));
        framer
            .feed(input.payload(), |s| {
                self.take(s, &query, hit_count);
                Ok::<(), ProgramError>(())
            })
            .expect("taking a sample cannot fail");
        let result = if input.eop() {
            framer
                .finish()
                .and_then(|()| self.weights(&query))
                .map(|w| {
                    out.push(&w);
                    out.end();
                })
        } else {
            Ok(())
        };
        self.framer = framer;
        self.query = Some(query);
        result
    }

    /// Slot: 16 i32 lanes per flit into subtract-square units and an adder tree, II = 1;
    /// a sample (16 flits) is buffered in BRAM and kept when its distance beats the best.
    /// One 64-byte flit per cycle.
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("relief", 0),
        }
    }
}
