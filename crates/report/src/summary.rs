//! The `summary.json` schema shared by every reproduction.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a claim's `paper` value is.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// A figure the paper prints (or reads off one of its plots).
    #[default]
    PaperFigure,
    /// A bound we set ourselves (an acceptance bound or an analytic limit of our own
    /// model): the paper prints no number to compare with.
    OwnBound,
    /// The paper states only a direction ("converges to 1", "more on the controller");
    /// `paper` encodes that direction, not a measurement.
    Direction,
}

/// One headline claim of a paper next to what the simulator measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Claim {
    /// A stable identifier, e.g. `intra_o3_vs_simd_throughput`.
    pub id: String,
    pub description: String,
    /// The paper's value, in `unit`.
    pub paper: f64,
    /// Ours, in `unit`.
    pub ours: f64,
    /// e.g. `%`, `x`, `MB/s`.
    pub unit: String,
    /// Why ours differs, or what the comparison rests on — written from the measured runs,
    /// so it cannot go stale.
    pub note: String,
    /// Whether `paper` is a paper figure, our own bound, or a direction.
    #[serde(default)]
    pub reference: Reference,
}

impl Claim {
    /// `ours / paper` when both are non-zero, for sorting and colouring gaps.
    pub fn ratio(&self) -> Option<f64> {
        (self.paper != 0.0 && self.ours.is_finite()).then(|| self.ours / self.paper)
    }
}

/// Per-instance (or per-request) latency summary.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencyMs {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

/// One measured run: a system (scheduler, baseline, placement) on a workload.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Run {
    pub system: String,
    pub workload: String,
    pub throughput_mb_s: f64,
    pub latency_ms: Option<LatencyMs>,
    /// Energy by component or category, joules (empty when the run models no energy).
    pub energy_j: BTreeMap<String, f64>,
    /// Mean utilization of the run's compute engines, 0..1 (what that is, per paper, is
    /// documented by the reproduction).
    pub utilization: f64,
    /// Simulated time of the run, seconds.
    pub sim_s: f64,
    /// Anything else a reproduction reports per run (trace hash, WAF, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// The whole `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// `flashabacus`, `insider`, `active-flash`.
    pub paper: String,
    /// `timing` or `functional`.
    pub fidelity: String,
    pub seed: u64,
    pub claims: Vec<Claim>,
    pub runs: Vec<Run>,
    /// Wall-clock seconds the reproduction took (the only non-deterministic field).
    pub wall_s: f64,
}

impl Summary {
    /// The run of `system` on `workload`, if measured.
    pub fn run(&self, system: &str, workload: &str) -> Option<&Run> {
        self.runs
            .iter()
            .find(|r| r.system == system && r.workload == workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_round_trips_through_json_with_the_issue_field_names() {
        let s = Summary {
            paper: "p".into(),
            fidelity: "timing".into(),
            seed: 1,
            claims: vec![Claim {
                id: "a".into(),
                description: "d".into(),
                paper: 2.0,
                ours: 1.0,
                unit: "x".into(),
                note: "n".into(),
                reference: Reference::OwnBound,
            }],
            runs: vec![Run {
                system: "s".into(),
                workload: "w".into(),
                throughput_mb_s: 3.0,
                latency_ms: Some(LatencyMs {
                    min: 1.0,
                    avg: 2.0,
                    max: 3.0,
                }),
                energy_j: BTreeMap::from([("lwp".to_string(), 1.5)]),
                utilization: 0.5,
                sim_s: 1.0,
                extra: BTreeMap::new(),
            }],
            wall_s: 0.1,
        };
        let text = serde_json::to_string(&s).unwrap();
        for key in [
            "\"claims\"",
            "\"runs\"",
            "\"wall_s\"",
            "\"throughput_mb_s\"",
            "\"latency_ms\"",
            "\"energy_j\"",
            "\"utilization\"",
            "\"paper\"",
            "\"ours\"",
            "\"unit\"",
            "\"note\"",
        ] {
            assert!(text.contains(key), "{key} missing from {text}");
        }
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(s.claims[0].ratio(), Some(0.5));
        assert!(s.run("s", "w").is_some());
    }
}
