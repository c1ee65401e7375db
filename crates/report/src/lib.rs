//! What a reproduction (`nearflash reproduce <paper>`) writes: `summary.json` (claims, runs,
//! wall time) and `report.html` (the claims table, figures as inline SVG, notes).
//!
//! Every reproduction uses the same schema, so results of different papers can be read by
//! the same scripts:
//!
//! ```json
//! {"paper": "...", "fidelity": "timing", "claims": [{"id", "description", "paper", "ours",
//!  "unit", "note", "reference", "baseline"?}], "runs": [{"system", "workload",
//!  "throughput_mb_s", "latency_ms": {"min", "avg", "max"}, "energy_j": {...},
//!  "utilization"?, ...}], "wall_s"}
//! ```
//!
//! (`?`: absent when the claim has no direction, or the run measures no utilization.) A
//! claim's verdict — within 25% of the paper's value, direction holds, or off — is computed
//! from its numbers (`Claim::verdict`), not stored.
//!
//! The SVG charts are written by hand (`svg`) rather than with a plotting crate: text in
//! plotters' SVG backend needs a font file at run time for layout, and a report meant to be
//! byte-identical across machines must not depend on the fonts a machine has.

pub mod html;
mod summary;
pub mod svg;

pub use summary::{
    Claim, LatencyMs, Reference, Run, Summary, Verdict, NO_CHANGE_PCT, TIE_RATIO, WITHIN_FRACTION,
};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot serialise the summary: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes `dir/summary.json` and `dir/report.html`, creating `dir`.
pub fn write_dir(
    dir: &std::path::Path,
    summary: &Summary,
    page: &html::Page,
) -> Result<(), ReportError> {
    let io = |path: &std::path::Path| {
        let path = path.display().to_string();
        move |source| ReportError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let json = serde_json::to_string_pretty(summary)?;
    let sj = dir.join("summary.json");
    nearflash_outfile::write(&sj, (json + "\n").as_bytes()).map_err(io(&sj))?;
    let rh = dir.join("report.html");
    nearflash_outfile::write(&rh, page.render(summary).as_bytes()).map_err(io(&rh))?;
    Ok(())
}
