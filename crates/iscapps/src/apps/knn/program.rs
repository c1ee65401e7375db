//! KNN's drive program, microblock 1: for every training record and every query, the
//! squared Euclidean distance. Per record it emits the label and the distances, as
//! little-endian u32s: `label, d_0, …, d_{q−1}` (4 + 4q bytes). The top-K merge and the
//! vote (microblock 2) run on the host.
//!
//! Record: a 64-char zero-padded decimal label, then one ASCII digit per feature.
//! Params: one message per query (1–8), each one byte per feature with values 0–9; the
//! first query fixes the feature count, and with it the record size.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::records::{EndGuard, RecordFramer};
use crate::wire::put_u32;

pub const LABEL_BYTES: usize = 64;
pub const QUERIES_MAX: usize = 8;
/// Largest feature count accepted (a distance must fit in u32: 81 per feature).
pub const FEATURES_MAX: usize = 1 << 20;

#[derive(Debug, Default)]
pub struct KnnDistanceProgram {
    queries: Vec<Vec<u8>>,
    framer: Option<RecordFramer>,
    record_index: u64,
    guard: EndGuard,
}

fn params_error(reason: String) -> ProgramError {
    ProgramError::Params {
        program: "knn",
        reason,
    }
}

fn fault(record_index: u64, what: &str) -> ProgramError {
    ProgramError::Fault {
        program: "knn",
        reason: format!("record {record_index}: {what}"),
    }
}

/// The label's value; it must be 64 ASCII digits and fit in u32.
fn label_of(field: &[u8], record_index: u64) -> Result<u32, ProgramError> {
    let mut v: u64 = 0;
    for &c in field {
        if !c.is_ascii_digit() {
            return Err(fault(record_index, "the label is not ASCII digits"));
        }
        v = v * 10 + u64::from(c - b'0');
        if v > u64::from(u32::MAX) {
            return Err(fault(record_index, "the label exceeds u32"));
        }
    }
    Ok(v as u32)
}

impl KnnDistanceProgram {
    fn distances(&self, record: &[u8], index: u64) -> Result<Vec<u8>, ProgramError> {
        let label = label_of(&record[..LABEL_BYTES], index)?;
        let features = &record[LABEL_BYTES..];
        let mut d = vec![0u32; self.queries.len()];
        for (f, &c) in features.iter().enumerate() {
            let x = c.wrapping_sub(b'0');
            if x > 9 {
                return Err(fault(index, "a feature is not an ASCII digit"));
            }
            for (dq, q) in d.iter_mut().zip(&self.queries) {
                let diff = u32::from(x.abs_diff(q[f]));
                *dq += diff * diff;
            }
        }
        let mut tuple = Vec::with_capacity(4 + 4 * d.len());
        put_u32(&mut tuple, label);
        for v in d {
            put_u32(&mut tuple, v);
        }
        Ok(tuple)
    }
}

impl StreamProgram for KnnDistanceProgram {
    fn name(&self) -> &'static str {
        "knn"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        if self.framer.is_some() {
            return Err(params_error("a query arrived after the data".into()));
        }
        if self.queries.len() == QUERIES_MAX {
            return Err(params_error(format!("more than {QUERIES_MAX} queries")));
        }
        if params.is_empty() || params.len() > FEATURES_MAX {
            return Err(params_error(format!(
                "a query of {} features; 1–{FEATURES_MAX} accepted",
                params.len()
            )));
        }
        if let Some(first) = self.queries.first() {
            if first.len() != params.len() {
                return Err(params_error(format!(
                    "query of {} features after one of {}",
                    params.len(),
                    first.len()
                )));
            }
        }
        if params.iter().any(|&v| v > 9) {
            return Err(params_error("a query feature is above 9".into()));
        }
        self.queries.push(params.to_vec());
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let Some(features) = self.queries.first().map(Vec::len) else {
            return Err(params_error("data arrived before any query".into()));
        };
        let mut framer = self
            .framer
            .take()
            .unwrap_or_else(|| RecordFramer::new(LABEL_BYTES + features));
        let fed = framer.feed(input.payload(), |record| {
            let tuple = self.distances(record, self.record_index)?;
            out.push(&tuple);
            self.record_index += 1;
            Ok(())
        });
        let framing = if input.eop() { framer.finish() } else { Ok(()) };
        self.framer = Some(framer);
        fed?;
        framing?;
        if input.eop() {
            out.end();
        }
        Ok(())
    }

    /// Slot: per flit, 64 features × 8 queries = 512 subtract-square-accumulate units on
    /// 4-bit operands (LUT-sized), pipelined at II = 1; a 4,160-byte record is exactly 65
    /// flits, and the label is decoded from its first flit. One 64-byte flit per cycle.
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("knn", 0),
        }
    }
}
