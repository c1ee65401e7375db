//! KNN (WORKLOADS.md §4): K = 10 nearest neighbours by squared Euclidean distance for 8
//! queries over labelled records, then a majority vote over 32 classes. Two microblocks:
//! the drive computes distances (MB1), the host merges the top K and votes (MB2).

mod program;
mod reference;
mod topk;

pub use program::KnnDistanceProgram;

use nearflash_stream::StreamProgram;

use crate::app::{expect_outputs, only_pass_zero, whole_records};
use crate::draw::{Draw, DIGITS};
use crate::wire::{tuples, u32_at};
use crate::{AppError, AppOutput, Dataset, HostCost, IscApp, OutputRatio, RatioBasis, Side, Stage};
use program::{FEATURES_MAX, LABEL_BYTES, QUERIES_MAX};
use topk::TopK;

/// Paper: 14,680,064 records of 4,096 features, 8 queries, K = 10, 32 classes.
pub const PAPER_RECORDS: u64 = 14_680_064;
pub const PAPER_FEATURES: usize = 4_096;
pub const QUERIES: usize = QUERIES_MAX;
pub const K: usize = 10;
pub const CLASSES: u32 = 32;

#[derive(Debug)]
pub struct KnnApp {
    features: usize,
}

impl Default for KnnApp {
    fn default() -> KnnApp {
        KnnApp {
            features: PAPER_FEATURES,
        }
    }
}

impl KnnApp {
    /// Records of `features` (1–2²⁰) features, for reduced-size runs.
    pub fn with_features(features: usize) -> Result<KnnApp, AppError> {
        if features == 0 || features > FEATURES_MAX {
            return Err(AppError::Config {
                app: "knn",
                reason: format!("{features} features; 1–{FEATURES_MAX} accepted"),
            });
        }
        Ok(KnnApp { features })
    }

    fn tuple_bytes(queries: usize) -> usize {
        4 + 4 * queries
    }
}

impl IscApp for KnnApp {
    fn name(&self) -> &'static str {
        "knn"
    }

    fn record_bytes(&self) -> u64 {
        (LABEL_BYTES + self.features) as u64
    }

    fn paper_input_bytes(&self) -> u64 {
        PAPER_RECORDS * (LABEL_BYTES + PAPER_FEATURES) as u64
    }

    /// INSIDER's generator: a uniform class 0–31 zero-padded to 64 chars, then uniform
    /// digits 0–9 per feature; queries uniform 0–9 per feature.
    fn generate(&self, seed: u64, input_bytes: u64) -> Result<Dataset, AppError> {
        let n = whole_records(self.name(), input_bytes, self.record_bytes())?;
        let mut draw = Draw::new(seed);
        let params: Vec<Vec<u8>> = (0..QUERIES)
            .map(|_| (0..self.features).map(|_| draw.below(10) as u8).collect())
            .collect();
        let mut input = vec![0u8; n as usize * self.record_bytes() as usize];
        for r in input.chunks_exact_mut(self.record_bytes() as usize) {
            let label = format!("{:0>width$}", draw.below(CLASSES), width = LABEL_BYTES);
            r[..LABEL_BYTES].copy_from_slice(label.as_bytes());
            draw.fill_from(&mut r[LABEL_BYTES..], DIGITS);
        }
        Ok(Dataset {
            input,
            params,
            record_count: n,
        })
    }

    fn stages(&self) -> &'static [Stage] {
        &[
            Stage {
                name: "MB1: distances of each record to the 8 queries",
                side: Side::Drive { pass: 0 },
            },
            Stage {
                name: "MB2: top-10 merge per query and majority vote",
                side: Side::Host,
            },
        ]
    }

    fn program(&self, pass: usize) -> Result<Box<dyn StreamProgram>, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(Box::new(KnnDistanceProgram::default()))
    }

    fn host_remainder(
        &self,
        dataset: &Dataset,
        outputs: &[Vec<u8>],
    ) -> Result<AppOutput, AppError> {
        let out = &expect_outputs(self, outputs)?[0];
        let queries = dataset.params.len();
        let mut tops: Vec<TopK> = (0..queries).map(|_| TopK::new(K)).collect();
        for (index, t) in tuples(self.name(), out, Self::tuple_bytes(queries))?.enumerate() {
            let label = u32_at(t);
            for (q, top) in tops.iter_mut().enumerate() {
                top.offer(u32_at(&t[4 + 4 * q..]), index as u64, label);
            }
        }
        let labels = tops
            .iter()
            .map(|t| t.vote())
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| AppError::DriveOutput {
                app: "knn",
                reason: "no records, so no neighbours".into(),
            })?;
        Ok(AppOutput::Labels(labels))
    }

    fn reference(&self, dataset: &Dataset) -> Result<AppOutput, AppError> {
        Ok(AppOutput::Labels(reference::predict(
            &dataset.input,
            self.features,
            &dataset.params,
            K,
        )))
    }

    fn output_ratio(&self, pass: usize) -> Result<OutputRatio, AppError> {
        only_pass_zero(self.name(), pass)?;
        Ok(OutputRatio {
            ratio: Self::tuple_bytes(QUERIES) as f64 / (LABEL_BYTES + PAPER_FEATURES) as f64,
            basis: RatioBasis::Analytic,
            derivation: "one 36-byte (label, 8 distances) tuple per 4,160-byte record",
        })
    }

    /// Measured (`crate::measure`): the top-K merge and vote per output byte, the host-only
    /// formulation (distances and merge on the host) per input byte.
    fn host_cost(&self) -> HostCost {
        crate::measure::host("knn")
    }
}
