//! Relief feature selection (WORKLOADS.md §4): two passes over 256-feature i32 samples
//! (hits first, then misses) with a global barrier between them.
//!
//! * Pass 1 (`ReliefNearestProgram`): the nearest hit and miss to the query → the weights
//!   w_f = [miss_f = q_f] − [hit_f = q_f], 1 KiB of output.
//! * Barrier, on the host (`pass_params(1, …)`): pass 2's parameters are the threshold
//!   followed by pass 1's weights.
//! * Pass 2 (`ReliefFilterProgram`): the data again, keeping the features with
//!   w_f ≥ threshold (−10, so with one query every feature is kept: WORKLOADS.md's caveat).
//!
//! INSIDER stores the data twice in one file and runs both passes in one program; here
//! the runtime reads the file twice, one virtual file per pass — the same bytes move.

mod filter;
mod nearest;
mod reference;

pub use filter::ReliefFilterProgram;
pub use nearest::ReliefNearestProgram;

use nearflash_stream::StreamProgram;

use crate::app::expect_outputs;
use crate::draw::Draw;
use crate::wire::{i32_at, put_i32, put_u64, u64_at};
use crate::{AppError, AppOutput, Dataset, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage};

pub const FEATURES: usize = 256;
pub const SAMPLE_BYTES: usize = FEATURES * 4;
/// Paper: 15,728,640 hit and as many miss samples.
pub const PAPER_HITS: u64 = 15_728_640;
pub const PAPER_MISSES: u64 = 15_728_640;
pub const PAPER_THRESHOLD: i32 = -10;

#[derive(Debug)]
pub struct ReliefApp {
    threshold: i32,
}

impl Default for ReliefApp {
    fn default() -> ReliefApp {
        ReliefApp {
            threshold: PAPER_THRESHOLD,
        }
    }
}

impl ReliefApp {
    /// Another threshold (e.g. 0 or 1 to drop features in tests).
    pub fn with_threshold(threshold: i32) -> ReliefApp {
        ReliefApp { threshold }
    }

    fn no_pass(&self, pass: usize) -> AppError {
        AppError::NoSuchPass {
            app: "relief",
            pass,
            pass_count: 2,
        }
    }

    fn hit_count(dataset: &Dataset) -> Result<u64, AppError> {
        match dataset.params.first() {
            Some(p) if p.len() == 8 => Ok(u64_at(p)),
            _ => Err(AppError::Config {
                app: "relief",
                reason: "the dataset's first param is not the 8-byte hit count".into(),
            }),
        }
    }
}

impl IscApp for ReliefApp {
    fn name(&self) -> &'static str {
        "relief"
    }

    fn record_bytes(&self) -> u64 {
        SAMPLE_BYTES as u64
    }

    fn paper_input_bytes(&self) -> u64 {
        (PAPER_HITS + PAPER_MISSES) * SAMPLE_BYTES as u64
    }

    /// Half hits then half misses (at least one of each), features uniform 0–9 as i32,
    /// a query uniform 0–9 (INSIDER's `rand() % 10`).
    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let n = input_bytes / self.record_bytes();
        if n < 2 {
            return Err(AppError::TooSmall {
                app: "relief",
                input_bytes,
                record_bytes: 2 * self.record_bytes(),
            });
        }
        let mut draw = Draw::new(seed);
        let mut query = Vec::with_capacity(SAMPLE_BYTES);
        for _ in 0..FEATURES {
            put_i32(&mut query, draw.below(10) as i32);
        }
        let mut input = Vec::with_capacity(n as usize * SAMPLE_BYTES);
        for _ in 0..n as usize * FEATURES {
            put_i32(&mut input, draw.below(10) as i32);
        }
        let mut hits = Vec::with_capacity(8);
        put_u64(&mut hits, n / 2);
        Ok(Dataset {
            input,
            params: vec![hits, query],
            record_count: n,
        })
    }

    fn pass_count(&self) -> usize {
        2
    }

    fn stages(&self) -> &'static [Stage] {
        &[
            Stage {
                name: "pass 1: nearest hit and miss, feature weights",
                side: Side::Drive { pass: 0 },
            },
            Stage {
                name: "barrier: threshold and weights become pass 2 params",
                side: Side::Host,
            },
            Stage {
                name: "pass 2: keep features with w >= threshold",
                side: Side::Drive { pass: 1 },
            },
        ]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        match pass {
            0 => Ok(Box::new(ReliefNearestProgram::default())),
            1 => Ok(Box::new(ReliefFilterProgram::default())),
            _ => Err(self.no_pass(pass)),
        }
    }

    /// Pass 1: hit count and query. Pass 2 (after the barrier): the threshold, then pass
    /// 1's 256 weights as they came from the drive.
    fn pass_params(
        &self,
        dataset: &Dataset,
        pass: usize,
        earlier_outputs: &[Vec<u8>],
    ) -> Result<Vec<Vec<u8>>, AppError> {
        if earlier_outputs.len() != pass {
            return Err(AppError::OutputCount {
                app: "relief",
                expected: pass,
                got: earlier_outputs.len(),
            });
        }
        match pass {
            0 => Ok(dataset.params.clone()),
            1 => {
                let weights = &earlier_outputs[0];
                if weights.len() != SAMPLE_BYTES {
                    return Err(AppError::DriveOutput {
                        app: "relief",
                        reason: format!("pass 1 gave {} bytes, not 256 weights", weights.len()),
                    });
                }
                let mut p = Vec::with_capacity(4 + SAMPLE_BYTES);
                put_i32(&mut p, self.threshold);
                p.extend_from_slice(weights);
                Ok(vec![p])
            }
            _ => Err(self.no_pass(pass)),
        }
    }

    fn host_remainder(&self, _: &Dataset, outputs: &[Vec<u8>]) -> Result<AppOutput, AppError> {
        let outputs = expect_outputs(self, outputs)?;
        let weights: Vec<i32> = outputs[0].chunks_exact(4).map(i32_at).collect();
        if weights.len() != FEATURES || outputs[0].len() != SAMPLE_BYTES {
            return Err(AppError::DriveOutput {
                app: "relief",
                reason: format!("pass 1 gave {} bytes, not 256 weights", outputs[0].len()),
            });
        }
        Ok(AppOutput::Relief {
            weights,
            selected: outputs[1].clone(),
        })
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        let hits = Self::hit_count(dataset)? as usize;
        let query: Vec<i32> = dataset.params[1].chunks_exact(4).map(i32_at).collect();
        let r = reference::relief(&dataset.input, hits, &query, self.threshold);
        Ok(AppOutput::Relief {
            weights: r.weights,
            selected: r.selected,
        })
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        match pass {
            0 => Ok(OutputRatio {
                ratio: SAMPLE_BYTES as f64 / self.paper_input_bytes() as f64,
                basis: RatioBasis::Analytic,
                derivation: "pass 1 emits only the 256 weights (1 KiB) for the whole 30 GiB",
            }),
            1 => Ok(OutputRatio {
                ratio: 1.0,
                basis: RatioBasis::Analytic,
                derivation: "pass 2 keeps features with w >= -10; one query makes every w \
                             lie in [-1, 1], so all 256 features of every sample are kept",
            }),
            _ => Err(self.no_pass(pass)),
        }
    }

    /// Measured (`crate::measure`): the remainder (the weights and the selected data taken
    /// as they are) per output byte, the host-only formulation (both passes on the host, the
    /// file read twice) per input-file byte.
    fn host_cost(&self) -> HostCost {
        crate::measure::host("relief")
    }
}
