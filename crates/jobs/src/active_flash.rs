//! The Active Flash job (seed 004) beyond the analytic model: one point of the simulated
//! drive whose controller compresses data in the background — Fig. 2's setting (a foreground
//! of 4 KiB random writes at a rate, compressed by the controller between its FTL work), or
//! Fig. 3's (a job split between host and controller at a share). In functional fidelity
//! every compressed extent is read back from flash and decompressed against the written pages.

use crate::error::JobError;
use nearflash_activeflash::{
    run_background, run_split, ActiveFlashConfig, BackgroundParams, BackgroundPoint, Rig,
    SplitPoint,
};
use nearflash_preset::Preset;
use nearflash_sim::Fidelity;
use serde::{Deserialize, Serialize};

/// Which experiment a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Experiment {
    /// Fig. 2: a foreground of random writes, compressed in the background.
    Background,
    /// Fig. 3: a compression job split between host and controller.
    Split,
}

/// The options of an Active Flash run.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActiveFlashOptions {
    pub preset: String,
    pub overrides: Vec<String>,
    pub experiment: Experiment,
    /// Background: the foreground's rate of 4 KiB random writes, MB/s.
    pub foreground_mb_s: f64,
    /// Background: run the compression task at all (false: the baseline without it).
    pub compress: bool,
    /// Background: charge the compression's compute on the controller (false: free).
    pub charge_compute: bool,
    /// Split: the controller's share of the job, in [0, 1].
    pub controller_share: f64,
    /// Data written (background) or compressed (split), MiB.
    pub volume_mib: u64,
    /// timing | functional.
    pub fidelity: String,
    pub seed: u64,
}

impl Default for ActiveFlashOptions {
    fn default() -> Self {
        ActiveFlashOptions {
            preset: "active-flash".into(),
            overrides: Vec::new(),
            experiment: Experiment::Background,
            foreground_mb_s: 50.0,
            compress: true,
            charge_compute: true,
            controller_share: 0.5,
            // `reproduce active-flash`'s timing default (its module docs say why, against
            // the paper's 6 GB).
            volume_mib: 256,
            fidelity: "timing".into(),
            seed: 1,
        }
    }
}

/// One Active Flash run: the experiment's point, and what functional fidelity verified.
#[derive(Clone, Debug, Serialize)]
pub struct ActiveFlashRun {
    pub experiment: Experiment,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundPoint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitPoint>,
    /// Extents and pages read back and checked (0 in timing fidelity, which keeps no data).
    pub verified_extents: u64,
    pub verified_pages: u64,
}

/// Runs one point of `o.experiment` on the preset's drive.
pub fn active_flash(o: &ActiveFlashOptions) -> Result<ActiveFlashRun, JobError> {
    let fidelity: Fidelity = o.fidelity.parse()?;
    if o.volume_mib == 0 {
        return Err(JobError::Workload("volume_mib must be at least 1".into()));
    }
    let volume_bytes = o
        .volume_mib
        .checked_mul(1 << 20)
        .ok_or_else(|| JobError::Workload(format!("volume_mib {} is too large", o.volume_mib)))?;
    let preset = Preset::load(&o.preset, &o.overrides)?;
    let cfg: ActiveFlashConfig = preset.require()?;
    let verify = |rig: &mut Rig| -> Result<(u64, u64), JobError> {
        Ok(if fidelity.is_functional() {
            rig.verify()?
        } else {
            (0, 0)
        })
    };
    let (background, split, (verified_extents, verified_pages)) = match o.experiment {
        Experiment::Background => {
            let params = BackgroundParams {
                foreground_mb_s: o.foreground_mb_s,
                volume_bytes,
                compress: o.compress,
                charge_compute: o.charge_compute,
            };
            let (p, mut rig) =
                run_background(&preset.flash, &preset.ftl, &cfg, params, fidelity, o.seed)?;
            let v = verify(&mut rig)?;
            (Some(p), None, v)
        }
        Experiment::Split => {
            let (p, mut rig) = run_split(
                &preset.flash,
                &preset.ftl,
                &cfg,
                o.controller_share,
                volume_bytes,
                fidelity,
                o.seed,
            )?;
            let v = verify(&mut rig)?;
            (None, Some(p), v)
        }
    };
    Ok(ActiveFlashRun {
        experiment: o.experiment,
        background,
        split,
        verified_extents,
        verified_pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both experiments run from the job; functional fidelity reads every extent back; the
    /// analytic model's knobs are refused out of range, naming them.
    #[test]
    fn both_experiments_run_and_functional_runs_verify_their_extents() {
        let b = active_flash(&ActiveFlashOptions {
            volume_mib: 4,
            fidelity: "functional".into(),
            ..ActiveFlashOptions::default()
        })
        .unwrap();
        let p = b.background.as_ref().unwrap();
        assert!(
            p.achieved_mb_s > 0.0 && p.fraction_compressed > 0.0,
            "{p:?}"
        );
        assert!(b.verified_extents > 0 && b.verified_pages > 0, "{b:?}");
        let s = active_flash(&ActiveFlashOptions {
            experiment: Experiment::Split,
            volume_mib: 4,
            ..ActiveFlashOptions::default()
        })
        .unwrap();
        let sp = s.split.as_ref().unwrap();
        assert!(sp.host_pages > 0 && sp.controller_pages > 0, "{sp:?}");
        let e = active_flash(&ActiveFlashOptions {
            experiment: Experiment::Split,
            controller_share: 1.5,
            volume_mib: 4,
            ..ActiveFlashOptions::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("split"), "{e}");
    }
}
