//! The `run` job: a workload on the FlashAbacus accelerator of a preset under one of its four
//! schedulers, or on the conventional SIMD baseline, in timing or functional fidelity. Returns
//! the report and, in functional fidelity, each instance's verdict; `RunOutcome::json` is the
//! document `nearflash run --json` writes.

use crate::error::JobError;
use nearflash_accel::{AccelConfig, AccelError, Fidelity, InstanceCheck, RunReport};
use nearflash_kernels::Dataset;
use nearflash_preset::Preset;
use nearflash_reproduce::flashabacus::system::{run_system, run_system_functional};
use nearflash_reproduce::ReproduceError;
use serde::Deserialize;
use std::time::Instant;

/// The options of `nearflash run`, by the same names; defaults are the CLI's.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    /// simd | inter-st | inter-dy | intra-io | intra-o3.
    pub system: String,
    /// A kernel name (6 instances) or mx1..mx14.
    pub workload: String,
    pub dataset: String,
    pub seed: u64,
    /// timing | functional.
    pub fidelity: String,
    pub max_functional_mib: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            preset: "flashabacus".into(),
            overrides: Vec::new(),
            system: String::new(),
            workload: String::new(),
            dataset: "paper".into(),
            seed: 1,
            fidelity: "timing".into(),
            max_functional_mib: 2048,
        }
    }
}

/// A finished run.
pub struct RunOutcome {
    pub preset: String,
    pub dataset: Dataset,
    pub fidelity: Fidelity,
    pub report: RunReport,
    /// Functional fidelity: one verdict per instance (all passed, or the run is an error).
    pub checks: Option<Vec<InstanceCheck>>,
    pub wall_s: f64,
}

/// A run that stopped on wrong data: the error, and every instance's verdict to show.
pub struct RunFailure {
    pub error: JobError,
    pub checks: Option<Vec<InstanceCheck>>,
}

impl<E: Into<JobError>> From<E> for Box<RunFailure> {
    fn from(e: E) -> Self {
        Box::new(RunFailure {
            error: e.into(),
            checks: None,
        })
    }
}

impl RunOutcome {
    /// The JSON document of `nearflash run --json`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "preset": self.preset,
            "dataset": self.dataset.name(),
            "fidelity": self.fidelity.name(),
            "verification": self.checks.as_ref().map(|cs| cs
                .iter()
                .map(|c| serde_json::json!({
                    "instance": c.instance,
                    "kernel": c.kernel,
                    "app": c.app,
                    "live_out": c.live_out,
                    "ok": c.result.is_ok(),
                }))
                .collect::<Vec<_>>()),
            "version": crate::VERSION,
            "wall_s": self.wall_s,
            "report": self.report,
        })
    }
}

/// Runs the job (a failure is boxed: it carries every instance's verdict).
pub fn run(opts: &RunOptions) -> Result<RunOutcome, Box<RunFailure>> {
    if opts.system.is_empty() || opts.workload.is_empty() {
        return Err(JobError::Workload("give a system and a workload".into()).into());
    }
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    let dataset: Dataset = opts
        .dataset
        .parse()
        .map_err(|e: nearflash_kernels::KernelError| JobError::Kernel(e.to_string()))?;
    let fidelity: Fidelity = opts.fidelity.parse().map_err(AccelError::from)?;
    let accel: AccelConfig = preset.require()?;
    let wall = Instant::now();
    let (report, checks) = match fidelity {
        Fidelity::Timing => (
            run_system(
                &preset,
                &accel,
                &opts.system,
                &opts.workload,
                dataset,
                opts.seed,
            )?,
            None,
        ),
        Fidelity::Functional => {
            let max_bytes = opts.max_functional_mib.saturating_mul(1 << 20);
            match run_system_functional(
                &preset,
                &accel,
                &opts.system,
                &opts.workload,
                (dataset, opts.seed),
                max_bytes,
            ) {
                Ok(run) => (run.report, Some(run.checks)),
                Err(e) => {
                    let checks = match &e {
                        ReproduceError::Accel(AccelError::Verification { checks, .. }) => {
                            Some(checks.clone())
                        }
                        _ => None,
                    };
                    return Err(Box::new(RunFailure {
                        error: e.into(),
                        checks,
                    }));
                }
            }
        }
    };
    Ok(RunOutcome {
        preset: preset.name,
        dataset,
        fidelity,
        report,
        checks,
        wall_s: wall.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_reports_its_scheduler_and_the_cli_document() {
        let o = RunOptions {
            system: "intra-o3".into(),
            workload: "atax".into(),
            dataset: "mini".into(),
            ..RunOptions::default()
        };
        let out = run(&o).ok().expect("runs");
        assert_eq!(out.report.scheduler, "intra-o3");
        let doc = out.json();
        assert_eq!(doc["dataset"], "mini");
        assert!(doc["report"]["throughput_mb_s"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn an_unknown_system_is_an_error_naming_it() {
        let o = RunOptions {
            system: "inter-xx".into(),
            workload: "atax".into(),
            dataset: "mini".into(),
            ..RunOptions::default()
        };
        let e = run(&o).err().expect("refused").error.to_string();
        assert!(e.contains("inter-xx"), "{e}");
    }
}
