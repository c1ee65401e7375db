//! The Active Flash reproduction (`nearflash reproduce active-flash`): seed 004's three
//! figures and its claims.
//!
//! - Fig. 1: the analytic model at the preset's parameters (`nearflash_activeflash::model`);
//! - Fig. 2: a foreground of 4 KiB random writes at a swept throughput with compression in
//!   the background on the controller — once as the paper ran it (I/O only: compression
//!   takes no controller time) and once with the controller's compression time charged;
//! - Fig. 3: compression after the foreground, split between host and controller, swept over
//!   the controller's share.
//!
//! Every run is on the full 64 GB device, each an independent deterministic simulation (run
//! `--jobs` at a time). In timing fidelity (default) no data is kept and each extent's
//! compressed size comes from real DEFLATE of generated data, plus one background and one
//! split run in functional fidelity whose every extent is read back and decompressed; with
//! `--fidelity functional` every run stores real bytes and is verified. The foreground volume
//! defaults to 256 MiB (16 MiB functional) instead of the paper's 6 GB: the fraction
//! compressed is a rate balance that settles within the first extents (`--volume-mib 6144`
//! runs the paper's volume; the figures agree to 0.3 points).

mod claims;
mod figures;

use claims::claims;
pub use figures::fig1;
use figures::{background_run, page, split_run, tables};

use crate::prose::count_word;
use crate::{Options, Paper, ReproduceError};
use nearflash_activeflash::{
    run_background, run_split, write_ceiling_mb_s, ActiveFlashConfig, ActiveFlashError,
    BackgroundParams, BackgroundPoint, Model, ModelPoint, SplitPoint,
};
use nearflash_flash::Geometry;
use nearflash_preset::Preset;
use nearflash_report::html::{Page, Section};
use nearflash_report::svg::{LineChart, Series};
use nearflash_report::{Claim, LatencyMs, Reference, Run, Summary, NO_CHANGE_PCT, TIE_RATIO};
use nearflash_sim::Fidelity;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Foreground throughputs of the Fig. 2 sweep (MB/s): dense around the paper's 24 MB/s.
const FOREGROUND_MB_S: &[f64] = &[
    4.0, 8.0, 12.0, 16.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0, 35.0, 40.0, 50.0, 60.0, 80.0, 100.0,
    120.0,
];

/// Controller shares of the Fig. 3 sweep: dense around the paper's 20%.
const SPLITS: &[f64] = &[0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0];

/// A foreground is "fully compressed" when at most this fraction of it is not (the extent
/// still filling when the foreground stops).
const FULLY_COMPRESSED: f64 = 0.99;

/// Default foreground volumes: timing fidelity keeps no data, functional stores every page.
const VOLUME_MIB_TIMING: u64 = 256;
const VOLUME_MIB_FUNCTIONAL: u64 = 16;

/// Timing fidelity's functional check on the same device: volume, rate and split share.
const CHECK_VOLUME_BYTES: u64 = 16 << 20;
const CHECK_FOREGROUND_MB_S: f64 = 8.0;
const CHECK_SPLIT: f64 = 0.2;

/// What was read back through the FTL and decompressed.
#[derive(Default)]
pub struct Verified {
    pub extents: u64,
    pub pages: u64,
}

/// Everything one reproduction measured.
pub struct Measured {
    cfg: ActiveFlashConfig,
    fidelity: Fidelity,
    verified: Verified,
    model: Model,
    io_only: Vec<BackgroundPoint>,
    compute: Vec<BackgroundPoint>,
    split: Vec<SplitPoint>,
}

/// One independent simulation of the reproduction.
#[derive(Clone, Copy, Debug)]
pub enum Task {
    Background {
        mb_s: f64,
        charge_compute: bool,
    },
    Split {
        share: f64,
    },
    /// Timing fidelity's round-trip check: one background and one split run, functional.
    Check,
}

pub enum Outcome {
    Background(BackgroundPoint, Verified),
    Split(SplitPoint, Verified),
    Check(Verified),
}

/// The Active Flash reproduction at a preset, sweeps, volume and fidelity.
pub struct ActiveFlash {
    preset: Preset,
    cfg: ActiveFlashConfig,
    model: Model,
    foreground_mb_s: Vec<f64>,
    splits: Vec<f64>,
    volume_bytes: u64,
    fidelity: Fidelity,
    seed: u64,
}

impl ActiveFlash {
    pub fn new(opts: &Options) -> Result<Self, ReproduceError> {
        if !opts.only.is_empty() {
            return Err(ReproduceError::Invalid(
                "reproduce active-flash has no workloads to pick with --only: choose the \
                 sweeps with --foreground-mb-s and --splits"
                    .into(),
            ));
        }
        let preset = Preset::load(
            opts.preset.as_deref().unwrap_or("active-flash"),
            &opts.overrides,
        )?;
        let cfg: ActiveFlashConfig = preset.require()?;
        let model = Model::from_config(&cfg)?;
        let foreground_mb_s = if opts.foreground_mb_s.is_empty() {
            FOREGROUND_MB_S.to_vec()
        } else {
            opts.foreground_mb_s.clone()
        };
        let splits = if opts.splits.is_empty() {
            SPLITS.to_vec()
        } else {
            opts.splits.clone()
        };
        // Refuse bad sweep values before spending time on the good ones.
        for &s in &splits {
            model.split_speedup(s)?;
        }
        let volume_mib = opts.volume_mib.unwrap_or(match opts.fidelity {
            Fidelity::Timing => VOLUME_MIB_TIMING,
            Fidelity::Functional => VOLUME_MIB_FUNCTIONAL,
        });
        if volume_mib == 0 {
            return Err(ReproduceError::Invalid(
                "--volume-mib must be positive".into(),
            ));
        }
        Ok(ActiveFlash {
            preset,
            cfg,
            model,
            foreground_mb_s,
            splits,
            volume_bytes: volume_mib << 20,
            fidelity: opts.fidelity,
            seed: opts.seed,
        })
    }
}

impl Paper for ActiveFlash {
    type Run = Task;
    type Measured = Outcome;
    type Evaluation = Measured;

    fn title(&self) -> &'static str {
        "Active Flash (seed 004)"
    }

    fn fidelity(&self) -> Fidelity {
        self.fidelity
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn runs(&self) -> Vec<Task> {
        let mut tasks: Vec<Task> = Vec::new();
        for &mb_s in &self.foreground_mb_s {
            for charge_compute in [false, true] {
                tasks.push(Task::Background {
                    mb_s,
                    charge_compute,
                });
            }
        }
        tasks.extend(self.splits.iter().map(|&share| Task::Split { share }));
        if self.fidelity == Fidelity::Timing {
            tasks.push(Task::Check);
        }
        tasks
    }

    fn simulate(&self, task: &Task) -> Result<Outcome, ReproduceError> {
        Ok(run_task(
            &self.preset,
            &self.cfg,
            *task,
            self.volume_bytes,
            self.fidelity,
            self.seed,
        )?)
    }

    fn evaluate(
        &self,
        tasks: Vec<Task>,
        outcomes: Vec<Outcome>,
    ) -> Result<Measured, ReproduceError> {
        let mut m = Measured {
            cfg: self.cfg.clone(),
            fidelity: self.fidelity,
            verified: Verified::default(),
            model: self.model,
            io_only: Vec::new(),
            compute: Vec::new(),
            split: Vec::new(),
        };
        for (task, outcome) in tasks.iter().zip(outcomes) {
            let v = match (task, outcome) {
                (Task::Background { charge_compute, .. }, Outcome::Background(p, v)) => {
                    if *charge_compute {
                        m.compute.push(p);
                    } else {
                        m.io_only.push(p);
                    }
                    v
                }
                (Task::Split { .. }, Outcome::Split(p, v)) => {
                    m.split.push(p);
                    v
                }
                (Task::Check, Outcome::Check(v)) => v,
                _ => unreachable!("each task yields its own kind of outcome"),
            };
            m.verified.extents += v.extents;
            m.verified.pages += v.pages;
        }
        Ok(m)
    }

    fn claims(&self, m: &Measured) -> Result<Vec<Claim>, ReproduceError> {
        claims(m, &self.preset, &self.foreground_mb_s)
    }

    fn summary_runs(&self, m: &Measured) -> Vec<Run> {
        let mut runs = Vec::new();
        for (system, points) in [
            ("background-io-only", &m.io_only),
            ("background-compute", &m.compute),
        ] {
            for p in points {
                runs.push(background_run(system, p));
            }
        }
        for p in &m.split {
            runs.push(split_run(p));
        }
        runs
    }

    fn figures(&self, m: &Measured) -> Result<Page, ReproduceError> {
        page(m, &self.preset)
    }

    fn text(&self, m: &Measured, summary: &Summary) -> String {
        let mut out = tables(m, summary);
        writeln!(
            out,
            "functional check: {} extents read back and decompressed; {} live pages match the \
             bytes written",
            m.verified.extents, m.verified.pages
        )
        .expect("writing to a String");
        out
    }
}

/// Runs one simulation; functional runs are verified before they return.
fn run_task(
    preset: &Preset,
    cfg: &ActiveFlashConfig,
    task: Task,
    volume_bytes: u64,
    fidelity: Fidelity,
    seed: u64,
) -> Result<Outcome, ActiveFlashError> {
    let verify = |rig: &mut nearflash_activeflash::Rig| -> Result<Verified, ActiveFlashError> {
        if fidelity == Fidelity::Functional {
            let (extents, pages) = rig.verify()?;
            Ok(Verified { extents, pages })
        } else {
            Ok(Verified::default())
        }
    };
    let background = |mb_s, charge_compute| {
        run_background(
            &preset.flash,
            &preset.ftl,
            cfg,
            BackgroundParams {
                foreground_mb_s: mb_s,
                volume_bytes,
                compress: true,
                charge_compute,
            },
            fidelity,
            seed,
        )
    };
    match task {
        Task::Background {
            mb_s,
            charge_compute,
        } => {
            let (p, mut rig) = background(mb_s, charge_compute)?;
            Ok(Outcome::Background(p, verify(&mut rig)?))
        }
        Task::Split { share } => {
            let (p, mut rig) = run_split(
                &preset.flash,
                &preset.ftl,
                cfg,
                share,
                volume_bytes,
                fidelity,
                seed,
            )?;
            Ok(Outcome::Split(p, verify(&mut rig)?))
        }
        Task::Check => check_task(preset, cfg, seed),
    }
}

/// Timing fidelity's round-trip check: a background and a split run with real bytes, every
/// extent read back through the FTL and decompressed.
fn check_task(
    preset: &Preset,
    cfg: &ActiveFlashConfig,
    seed: u64,
) -> Result<Outcome, ActiveFlashError> {
    let (_, mut rig) = run_background(
        &preset.flash,
        &preset.ftl,
        cfg,
        BackgroundParams {
            foreground_mb_s: CHECK_FOREGROUND_MB_S,
            volume_bytes: CHECK_VOLUME_BYTES,
            compress: true,
            charge_compute: true,
        },
        Fidelity::Functional,
        seed,
    )?;
    let (e1, p1) = rig.verify()?;
    let (_, mut rig) = run_split(
        &preset.flash,
        &preset.ftl,
        cfg,
        CHECK_SPLIT,
        CHECK_VOLUME_BYTES,
        Fidelity::Functional,
        seed,
    )?;
    let (e2, p2) = rig.verify()?;
    Ok(Outcome::Check(Verified {
        extents: e1 + e2,
        pages: p1 + p2,
    }))
}

/// The largest swept foreground throughput at which (and below which) the foreground was
/// fully compressed.
fn full_compression_limit(points: &[BackgroundPoint]) -> f64 {
    let mut limit = 0.0;
    for p in points {
        if p.fraction_compressed < FULLY_COMPRESSED {
            break;
        }
        limit = p.foreground_mb_s;
    }
    limit
}

/// The controller's foreground limit the model predicts: the rate the controller compresses
/// at (x = 1/s for a host that would compress on the fly).
fn model_limit_mb_s(cfg: &ActiveFlashConfig) -> f64 {
    cfg.controller()
        .rate_bytes_per_s(cfg.compress_instructions_per_byte())
        / 1e6
}

/// The rate the host compresses at.
fn host_rate_mb_s(cfg: &ActiveFlashConfig) -> f64 {
    cfg.host()
        .rate_bytes_per_s(cfg.compress_instructions_per_byte())
        / 1e6
}

fn argmax_by(points: &[SplitPoint], key: impl Fn(&SplitPoint) -> f64) -> &SplitPoint {
    points
        .iter()
        .max_by(|a, b| key(a).total_cmp(&key(b)))
        .expect("a non-empty sweep")
}

/// The paper's Fig. 2 limit: the largest foreground throughput fully compressed, MB/s.
const PAPER_FIG2_LIMIT_MB_S: f64 = 24.0;

/// The spacing of the swept foreground rates at the paper's limit: the step from the largest
/// swept rate at or below it to the next (0 when the sweep does not straddle it).
fn sweep_resolution_mb_s(foreground_mb_s: &[f64], at_mb_s: f64) -> f64 {
    let mut rates = foreground_mb_s.to_vec();
    rates.sort_by(f64::total_cmp);
    rates
        .windows(2)
        .find(|w| w[0] <= at_mb_s && at_mb_s < w[1])
        .map_or(0.0, |w| w[1] - w[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_resolution_is_the_step_that_straddles_the_paper_value() {
        assert_eq!(
            sweep_resolution_mb_s(FOREGROUND_MB_S, PAPER_FIG2_LIMIT_MB_S),
            2.0
        );
        assert_eq!(sweep_resolution_mb_s(&[40.0, 10.0, 20.0], 24.0), 20.0);
        assert_eq!(sweep_resolution_mb_s(&[30.0, 40.0], 24.0), 0.0);
    }
}
