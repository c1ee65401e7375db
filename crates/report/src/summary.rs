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
    /// A stable identifier, e.g. `intra_o3_vs_simd_throughput`; `<id>.<variant>` is the
    /// same claim under a variant of the model (FlashAbacus's `.table2`), counted apart.
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
    /// The value at which the compared systems tie — `NO_CHANGE_PCT` for a percent change or
    /// saving, `TIE_RATIO` for a ratio such as a speedup — so that a value's side of it is
    /// the claim's direction; `None` for a level (a share, a rate, a count), which has no
    /// direction. See `verdict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<f64>,
}

/// `Claim::baseline` of a percent change or saving: 0% means no change.
pub const NO_CHANGE_PCT: Option<f64> = Some(0.0);
/// `Claim::baseline` of a ratio of two systems' figures: 1 means a tie.
pub const TIE_RATIO: Option<f64> = Some(1.0);
/// A claim whose value is within this fraction of the paper's (relative) is `Within`.
pub const WITHIN_FRACTION: f64 = 0.25;
/// A value this close to its claim's baseline (in the claim's unit) lies on it, on neither
/// side: the rounding noise of a computation such as (1 − a/b)·100 with a = b.
const ON_BASELINE: f64 = 1e-6;

/// Whether a claim holds, judged from its two numbers (`Claim::verdict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// |ours − paper| ≤ `WITHIN_FRACTION` × |paper|.
    Within,
    /// Not within, but ours lies on the same side of the claim's baseline as the paper's
    /// value (both speedups, both savings, both losses).
    DirectionHolds,
    /// Neither: the claim does not hold in our runs.
    Off,
    /// The claim's `paper` value is a bound of our own (`Reference::OwnBound`), not the
    /// paper's: there is nothing of the paper's to judge it against.
    OwnBound,
}

impl Verdict {
    /// The words the report prints.
    pub fn name(self) -> String {
        match self {
            Verdict::Within => format!("within {:.0}%", WITHIN_FRACTION * 100.0),
            Verdict::DirectionHolds => "direction holds".into(),
            Verdict::Off => "off".into(),
            Verdict::OwnBound => "our bound".into(),
        }
    }
}

impl Claim {
    /// The model variant the claim was measured under (`""` for the default).
    pub fn variant(&self) -> &str {
        self.id.split_once('.').map_or("", |(_, v)| v)
    }

    /// `ours / paper` when both are non-zero, for sorting and colouring gaps.
    pub fn ratio(&self) -> Option<f64> {
        (self.paper != 0.0 && self.ours.is_finite()).then(|| self.ours / self.paper)
    }

    /// `Within` when ours is within `WITHIN_FRACTION` of the paper's value (relative to the
    /// paper's); else `DirectionHolds` when the claim has a baseline and ours and the
    /// paper's lie on the same side of it (farther than `ON_BASELINE` from it); else `Off`. A claim against a bound of
    /// our own is `OwnBound`: it is not the paper's figure.
    pub fn verdict(&self) -> Verdict {
        if self.reference == Reference::OwnBound {
            return Verdict::OwnBound;
        }
        if !self.ours.is_finite() {
            return Verdict::Off;
        }
        if (self.ours - self.paper).abs() <= WITHIN_FRACTION * self.paper.abs() {
            return Verdict::Within;
        }
        let side = |v: f64, b: f64| {
            if (v - b).abs() <= ON_BASELINE {
                0
            } else if v > b {
                1
            } else {
                -1
            }
        };
        match self.baseline {
            Some(b) if side(self.paper, b) != 0 && side(self.paper, b) == side(self.ours, b) => {
                Verdict::DirectionHolds
            }
            _ => Verdict::Off,
        }
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
    /// Data moved per simulated second; absent when the run's figure is not a data rate
    /// (operations per second, a phase breakdown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_mb_s: Option<f64>,
    pub latency_ms: Option<LatencyMs>,
    /// Energy by component or category, joules (empty when the run models no energy); a
    /// `total` entry, where present, is the sum of the others.
    pub energy_j: BTreeMap<String, f64>,
    /// Mean utilization of the run's compute engines, 0..1 (what that is, per paper, is
    /// documented by the reproduction); absent when the run does not measure one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization: Option<f64>,
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

impl Run {
    /// The run's energy, joules: its `total` entry, or the sum of its entries; `None` when
    /// the run models no energy (not 0, which would read as a measurement).
    pub fn energy_total_j(&self) -> Option<f64> {
        if self.energy_j.is_empty() {
            return None;
        }
        Some(
            self.energy_j
                .get("total")
                .copied()
                .unwrap_or_else(|| self.energy_j.values().sum()),
        )
    }
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
                baseline: None,
            }],
            runs: vec![Run {
                system: "s".into(),
                workload: "w".into(),
                throughput_mb_s: Some(3.0),
                latency_ms: Some(LatencyMs {
                    min: 1.0,
                    avg: 2.0,
                    max: 3.0,
                }),
                energy_j: BTreeMap::from([("lwp".to_string(), 1.5)]),
                utilization: Some(0.5),
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
        assert!(
            !text.contains("\"baseline\""),
            "no baseline, no field: {text}"
        );
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(s.claims[0].ratio(), Some(0.5));
        assert!(s.run("s", "w").is_some());
    }

    fn claim(paper: f64, ours: f64, baseline: Option<f64>) -> Claim {
        Claim {
            id: "c".into(),
            description: "d".into(),
            paper,
            ours,
            unit: "%".into(),
            note: String::new(),
            reference: Reference::PaperFigure,
            baseline,
        }
    }

    #[test]
    fn a_claim_within_a_quarter_of_the_paper_is_within_whatever_its_baseline() {
        assert_eq!(claim(98.6, 99.0, None).verdict(), Verdict::Within);
        assert_eq!(
            claim(24.0, 30.0, None).verdict(),
            Verdict::Within,
            "the edge"
        );
        assert_eq!(
            claim(-78.4, -83.0, NO_CHANGE_PCT).verdict(),
            Verdict::Within
        );
        assert_eq!(claim(1.0, 1.0, TIE_RATIO).verdict(), Verdict::Within);
        assert_eq!(claim(0.0, 0.0, None).verdict(), Verdict::Within);
        assert_eq!(claim(24.0, 30.01, None).verdict(), Verdict::Off);
    }

    #[test]
    fn beyond_a_quarter_the_direction_holds_only_on_the_papers_side_of_the_baseline() {
        // IntraO3 +85% against the paper's +127%: both gains.
        assert_eq!(
            claim(127.0, 85.0, NO_CHANGE_PCT).verdict(),
            Verdict::DirectionHolds
        );
        // A 90.7× speedup against the paper's 58×: both above a tie.
        assert_eq!(
            claim(58.0, 90.7, TIE_RATIO).verdict(),
            Verdict::DirectionHolds
        );
        // 1.9× against 7×: still a speedup.
        assert_eq!(
            claim(7.0, 1.9, TIE_RATIO).verdict(),
            Verdict::DirectionHolds
        );
        // A YCSB loss of 4% against the paper's gain of 12%: the other side.
        assert_eq!(claim(12.0, -4.0, NO_CHANGE_PCT).verdict(), Verdict::Off);
        // No change at all is on neither side — rounding noise included (Hayagui's
        // readreverse took the same time on both paths: a reduction of 5.6e-12%).
        assert_eq!(claim(33.0, 0.0, NO_CHANGE_PCT).verdict(), Verdict::Off);
        assert_eq!(
            claim(33.0, 5.584e-12, NO_CHANGE_PCT).verdict(),
            Verdict::Off
        );
        // A share has no direction: 16% against 90% is off.
        assert_eq!(claim(89.7, 16.5, None).verdict(), Verdict::Off);
        assert_eq!(claim(5.0, f64::NAN, TIE_RATIO).verdict(), Verdict::Off);
    }

    #[test]
    fn a_bound_of_our_own_is_not_judged_against_the_paper() {
        let mut c = claim(10.0, 0.2, None);
        c.reference = Reference::OwnBound;
        assert_eq!(c.verdict(), Verdict::OwnBound);
        assert_eq!(Verdict::Within.name(), "within 25%");
    }

    /// Story: every INSIDER, Active Flash and Hayagui run printed energy "-0.00": an empty
    /// map summed to −0.0; FlashAbacus's runs summed their `total` with its parts.
    #[test]
    fn a_run_without_an_energy_model_has_no_energy_and_a_total_is_not_counted_twice() {
        let mut r = Run {
            system: "s".into(),
            workload: "w".into(),
            throughput_mb_s: Some(1.0),
            latency_ms: None,
            energy_j: BTreeMap::new(),
            utilization: None,
            sim_s: 1.0,
            extra: BTreeMap::new(),
        };
        assert_eq!(r.energy_total_j(), None);
        r.energy_j.insert("computation".into(), 1.0);
        r.energy_j.insert("data_movement".into(), 2.0);
        assert_eq!(r.energy_total_j(), Some(3.0));
        r.energy_j.insert("total".into(), 3.0);
        assert_eq!(r.energy_total_j(), Some(3.0));
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("utilization"), "unmeasured, absent: {text}");
    }
}
