//! integration (WORKLOADS.md §4): a similarity join of one 32-char query against 64-byte
//! records of uniform {A–Z}. The drive emits the similar records; the host collects them.
//! The query is INSIDER's (pure_cpu `integration.cpp`), so the data reduction is the
//! paper's; records vary with the seed.

mod program;
mod ratio;
mod reference;

pub use program::IntegrationProgram;

use nearflash_stream::StreamProgram;

use crate::app::{expect_outputs, only_pass_zero, whole_records};
use crate::draw::{Draw, UPPER};
use crate::wire::tuples;
use crate::{AppError, AppOutput, Dataset, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage};
use program::{QUERY_BYTES, RECORD_BYTES};

/// Paper: 1,006,632,960 records.
pub const PAPER_RECORDS: u64 = 1_006_632_960;
/// INSIDER's query.
pub const PAPER_QUERY: &[u8; QUERY_BYTES] = b"NWLRBBMQBHCDARZOWKKYHIDDQSCDXRJM";

#[derive(Debug)]
pub struct IntegrationApp {
    query: [u8; QUERY_BYTES],
}

impl Default for IntegrationApp {
    fn default() -> IntegrationApp {
        IntegrationApp {
            query: *PAPER_QUERY,
        }
    }
}

impl IntegrationApp {
    /// Another query (32 chars), e.g. one rich in repeated letters for more matches.
    pub fn with_query(query: [u8; QUERY_BYTES]) -> IntegrationApp {
        IntegrationApp { query }
    }
}

impl IscApp for IntegrationApp {
    fn name(&self) -> &'static str {
        "integration"
    }

    fn record_bytes(&self) -> u64 {
        RECORD_BYTES as u64
    }

    fn paper_input_bytes(&self) -> u64 {
        PAPER_RECORDS * RECORD_BYTES as u64
    }

    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let n = whole_records(self.name(), input_bytes, self.record_bytes())?;
        let mut input = vec![0u8; n as usize * RECORD_BYTES];
        Draw::new(seed).fill_from(&mut input, UPPER);
        Ok(Dataset {
            input,
            params: vec![self.query.to_vec()],
            record_count: n,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[
            Stage {
                name: "prefix filter and pair-count verification",
                side: Side::Drive { pass: 0 },
            },
            Stage {
                name: "collect the similar records",
                side: Side::Host,
            },
        ]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(IntegrationProgram::default()))
    }

    fn host_remainder(&self, _: &Dataset, outputs: &[Vec<u8>]) -> Result<AppOutput, AppError> {
        let out = &expect_outputs(self, outputs)?[0];
        let records: Vec<u8> = tuples(self.name(), out, RECORD_BYTES)?
            .flatten()
            .copied()
            .collect();
        Ok(AppOutput::Bytes(records))
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        Ok(AppOutput::Bytes(reference::similar_records(
            &dataset.input,
            &dataset.params[0],
        )))
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(OutputRatio {
            ratio: ratio::match_probability(&self.query),
            basis: RatioBasis::Analytic,
            derivation: "whole records are emitted with P(prefix and pair count > 31), an exact \
                         DP over the 32 uniform letters given the query's letter counts",
        })
    }

    /// Measured (`crate::measure`): collecting the matched records per output byte, the
    /// host-only formulation per input byte.
    fn host_cost(&self) -> HostCost {
        crate::measure::host("integration")
    }
}
