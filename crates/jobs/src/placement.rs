//! The `placement` job: the hot/cold write workload of `nearflash-placement` on a preset's
//! drive, run conventional, with FDP (a placement handle per stream) and on zones placed by
//! the host (`mode` = `conventional`, `fdp`, `zns` or `all`). Returns every mode's figures.

use crate::error::JobError;
use nearflash_placement::Drive;
pub use nearflash_placement::{Mode, ModeReport, Params};
use nearflash_preset::Preset;
use serde::{Deserialize, Serialize};

/// The options of `nearflash placement`, by the same names (without dashes); defaults are
/// the workload's (`nearflash_placement::Params`, each cited there) on test-min.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlacementOptions {
    pub preset: String,
    /// `table.field=value` overrides.
    pub overrides: Vec<String>,
    /// `conventional`, `fdp`, `zns` or `all`.
    pub mode: String,
    pub hot_fraction_percent: f64,
    pub hot_write_percent: u64,
    pub hot_request_kib: u64,
    pub cold_request_kib: u64,
    pub passes: u64,
    pub queue_depth: u32,
    pub seed: u64,
}

impl Default for PlacementOptions {
    fn default() -> Self {
        let p = Params::default();
        PlacementOptions {
            preset: "test-min".into(),
            overrides: Vec::new(),
            mode: "all".into(),
            hot_fraction_percent: p.hot_fraction_percent,
            hot_write_percent: p.hot_write_percent,
            hot_request_kib: p.hot_request_kib,
            cold_request_kib: p.cold_request_kib,
            passes: p.passes,
            queue_depth: p.queue_depth,
            seed: p.seed,
        }
    }
}

/// What the job answers (the JSON of `nearflash placement --json`).
#[derive(Clone, Debug, Serialize)]
pub struct PlacementRun {
    pub preset: String,
    pub params: Params,
    /// The logical span both streams share, bytes.
    pub span_bytes: u64,
    pub hot_bytes: u64,
    /// One report per mode, in the order asked (`all`: conventional, fdp, zns).
    pub modes: Vec<ModeReport>,
}

pub fn placement(opts: &PlacementOptions) -> Result<PlacementRun, JobError> {
    let modes = Mode::parse_list(&opts.mode)?;
    let preset = Preset::load(&opts.preset, &opts.overrides)?;
    let drive = Drive {
        flash: preset.flash.clone(),
        ftl: preset.ftl.clone(),
        zns: preset.zns.clone(),
    };
    let params = Params {
        hot_fraction_percent: opts.hot_fraction_percent,
        hot_write_percent: opts.hot_write_percent,
        hot_request_kib: opts.hot_request_kib,
        cold_request_kib: opts.cold_request_kib,
        passes: opts.passes,
        queue_depth: opts.queue_depth,
        seed: opts.seed,
    };
    let shape = params.shape(&drive)?;
    let modes = nearflash_placement::run(&drive, &params, &modes)?;
    Ok(PlacementRun {
        preset: preset.name.clone(),
        params,
        span_bytes: shape.span_units * nearflash_placement::UNIT_BYTES,
        hot_bytes: shape.hot_units * nearflash_placement::UNIT_BYTES,
        modes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_mode_or_option_is_refused_by_name() {
        let e = placement(&PlacementOptions {
            mode: "zoned".into(),
            ..PlacementOptions::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("zoned"), "{e}");
        let doc = serde_json::json!({"mode": "fdp", "hot_percent": 10});
        let e = crate::options_from::<PlacementOptions>("placement", doc).unwrap_err();
        assert!(e.to_string().contains("hot_percent"), "{e}");
    }

    #[test]
    fn one_mode_on_test_min_reports_that_mode() {
        let run = placement(&PlacementOptions {
            mode: "fdp".into(),
            passes: 1,
            ..PlacementOptions::default()
        })
        .unwrap();
        assert_eq!(run.modes.len(), 1);
        assert_eq!(run.modes[0].mode, Mode::Fdp);
        assert!(run.hot_bytes < run.span_bytes);
    }
}
