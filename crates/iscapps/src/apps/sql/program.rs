//! SQL's drive program: the WHERE clause. Emits every 32-byte record whose year lies in
//! [lower, upper]; grouping and averaging stay on the host (INSIDER §5.2: SQL is bound by
//! that host-side part).
//!
//! Params: one 2-byte message `[lower_year, upper_year]`, each 0–99, lower ≤ upper.

use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

use super::record::{two_digits, RECORD_BYTES, YEAR_AT};
use crate::records::{EndGuard, RecordFramer};

#[derive(Debug)]
pub struct SqlFilterProgram {
    years: Option<(u8, u8)>,
    framer: RecordFramer,
    record_index: u64,
    guard: EndGuard,
}

impl Default for SqlFilterProgram {
    fn default() -> SqlFilterProgram {
        SqlFilterProgram {
            years: None,
            framer: RecordFramer::new(RECORD_BYTES),
            record_index: 0,
            guard: EndGuard::default(),
        }
    }
}

fn params_error(reason: String) -> ProgramError {
    ProgramError::Params {
        program: "sql",
        reason,
    }
}

impl StreamProgram for SqlFilterProgram {
    fn name(&self) -> &'static str {
        "sql"
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        if self.years.is_some() {
            return Err(params_error("year bounds already set".into()));
        }
        let &[lower, upper] = params else {
            return Err(params_error(format!(
                "expected [lower_year, upper_year], got {} bytes",
                params.len()
            )));
        };
        if lower > upper || upper > 99 {
            return Err(params_error(format!(
                "year bounds {lower}..={upper} are not within 0..=99 in order"
            )));
        }
        self.years = Some((lower, upper));
        Ok(())
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.guard.accept(input)?;
        let Some((lower, upper)) = self.years else {
            return Err(params_error("data arrived before the year bounds".into()));
        };
        let index = &mut self.record_index;
        self.framer.feed(input.payload(), |record| {
            let year = two_digits(record, YEAR_AT).ok_or_else(|| ProgramError::Fault {
                program: "sql",
                reason: format!("record {index}: the year is not two ASCII digits"),
            })?;
            if (lower..=upper).contains(&year) {
                out.push(record);
            }
            *index += 1;
            Ok(())
        })?;
        if input.eop() {
            self.framer.finish()?;
            out.end();
        }
        Ok(())
    }

    /// Slot: a flit holds two aligned 32-byte records; each gets a 2-digit decode and two
    /// comparators, and the output packs the survivors: II = 1, one 64-byte flit per cycle
    /// (INSIDER's sample program, Fig. 6, is this filter).
    ///
    /// Core: instructions per byte measured by running this program (`crate::measure`,
    /// the table crates/iscapps/src/measured.rs).
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: crate::measure::drive("sql", 0),
        }
    }
}
