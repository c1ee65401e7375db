//! Integration's drive program (a similarity join of one query against every record, as
//! INSIDER's pure_cpu `prefix_filter` + `verify`): a record passes the prefix filter when
//! the query's first char equals one of the record's first 3 chars; it is then verified by
//! counting the pairs (i, j) with q_i = x_j over the first 32 chars of each, and emitted
//! whole (64 bytes) when that count exceeds 31.
//!
//! Params: one message, the 32-byte query.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use crate::records::{EndGuard, RecordFramer};

pub const RECORD_BYTES: usize = 64;
pub const QUERY_BYTES: usize = 32;
/// Record chars the query's first char is looked for in.
pub const RECORD_PREFIX_BYTES: usize = 3;
/// A record is similar when its pair count exceeds this.
pub const OVERLAP_MIN_EXCLUSIVE: u32 = 31;

#[derive(Debug)]
pub struct IntegrationProgram {
    query: Option<[u8; QUERY_BYTES]>,
    framer: RecordFramer,
    guard: EndGuard,
}

impl Default for IntegrationProgram {
    fn default() -> IntegrationProgram {
        IntegrationProgram {
            query: None,
            framer: RecordFramer::new(RECORD_BYTES),
            guard: EndGuard::default(),
        }
    }
}

fn params_error(reason: String) -> ProgramError {
    ProgramError::Params {
        program: "integration",
        reason,
    }
}

/// The prefix filter, then the pairwise verification.
fn similar(query: &[u8; QUERY_BYTES], record: &[u8]) -> bool {
    let mut prefix = false;
    for &x in &record[..RECORD_PREFIX_BYTES] {
        prefix |= x == query[0];
    }
    if !prefix {
        return false;
    }
    let mut overlap = 0u32;
    for &q in query {
        for &x in &record[..QUERY_BYTES] {
            overlap += u32::from(q == x);
        }
    }
    overlap > OVERLAP_MIN_EXCLUSIVE
}

impl StreamProgram for IntegrationProgram {
    fn name(&self) -> &'static str {
        "integration"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        if self.query.is_some() {
            return Err(params_error("query already set".into()));
        }
        let query: [u8; QUERY_BYTES] = params.try_into().map_err(|_| {
            params_error(format!(
                "expected a {QUERY_BYTES}-byte query, got {} bytes",
                params.len()
            ))
        })?;
        self.query = Some(query);
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let Some(query) = self.query else {
            return Err(params_error("data arrived before the query".into()));
        };
        self.framer.feed(input.payload(), |record| {
            if similar(&query, record) {
                out.push(record);
            }
            Ok::<(), ProgramError>(())
        })?;
        if input.eop() {
            self.framer.finish()?;
            out.end();
        }
        Ok(())
    }

    /// Slot: one 64-byte record per flit; 3 prefix comparators and a 32 × 32 array of
    /// 8-bit comparators feeding a popcount adder tree, pipelined at II = 1: one flit per
    /// cycle (INSIDER counts integration among its resource-light programs, §5.4).
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("integration", 0),
        }
    }
}
