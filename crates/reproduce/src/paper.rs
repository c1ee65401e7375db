//! The one way to define a reproduction. A paper is its runs (independent simulations, run
//! `jobs` at a time, results in run order), an evaluation assembled from what they measured,
//! the claims computed from that evaluation, the runs' rows of `summary.json`, the figures of
//! `report.html` and a terminal rendering. `reproduce` drives any paper the same way.

use crate::parallel::parallel_map;
use crate::ReproduceError;
use nearflash_report::html::Page;
use nearflash_report::{Claim, Run, Summary};
use nearflash_sim::Fidelity;
use std::time::Instant;

pub trait Paper: Sync {
    /// One independent simulation: what to run.
    type Run: Sync;
    /// What one simulation measured.
    type Measured: Send;
    /// Everything the claims and figures read, assembled from every run.
    type Evaluation;

    /// The paper as `summary.json` names it.
    fn title(&self) -> &'static str;
    fn fidelity(&self) -> Fidelity;
    fn seed(&self) -> u64;
    /// The simulations, in the order their results are reported.
    fn runs(&self) -> Vec<Self::Run>;
    /// Runs one simulation (on any thread: it shares nothing with the others).
    fn simulate(&self, run: &Self::Run) -> Result<Self::Measured, ReproduceError>;
    /// Assembles the evaluation from the runs and what each measured (same order).
    fn evaluate(
        &self,
        runs: Vec<Self::Run>,
        measured: Vec<Self::Measured>,
    ) -> Result<Self::Evaluation, ReproduceError>;
    /// The headline claims, paper beside ours; every note is formatted from measured and
    /// config values.
    fn claims(&self, ev: &Self::Evaluation) -> Result<Vec<Claim>, ReproduceError>;
    /// The rows of `summary.json`'s `runs`.
    fn summary_runs(&self, ev: &Self::Evaluation) -> Vec<Run>;
    /// The page of `report.html`: the paper's figures from the runs.
    fn figures(&self, ev: &Self::Evaluation) -> Result<Page, ReproduceError>;
    /// Tables for the terminal: the runs' headline figures, the claims, what was verified.
    fn text(&self, ev: &Self::Evaluation, summary: &Summary) -> String;
}

/// What a reproduction produced: the summary, the report page and the terminal text.
pub struct Reproduced {
    pub summary: Summary,
    pub page: Page,
    pub text: String,
}

/// Runs every simulation of `paper`, `jobs` side by side, and computes its claims and
/// figures. `progress(done, total)` is called as simulations finish (from any thread). An
/// interrupt asked of the calling thread (`nearflash_sim::interrupt`) stops every simulation
/// and is the answer (`ReproduceError::Interrupted`).
pub fn reproduce<P: Paper>(
    paper: &P,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Reproduced, ReproduceError> {
    assert!(jobs > 0, "at least one simulation at a time");
    let wall = Instant::now();
    let runs = paper.runs();
    let n = runs.len();
    let results = parallel_map(
        n,
        jobs,
        |i| paper.simulate(&runs[i]),
        |done| progress(done, n),
    )?;
    // The first failure in run order, whatever the job count.
    let measured = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    assert_eq!(measured.len(), n, "one result per run");
    let ev = paper.evaluate(runs, measured)?;
    let claims = paper.claims(&ev)?;
    let summary = Summary {
        paper: paper.title().into(),
        fidelity: paper.fidelity().name().into(),
        seed: paper.seed(),
        claims,
        runs: paper.summary_runs(&ev),
        wall_s: wall.elapsed().as_secs_f64(),
    };
    let page = paper.figures(&ev)?;
    let text = paper.text(&ev, &summary);
    Ok(Reproduced {
        summary,
        page,
        text,
    })
}

/// The claims as a terminal table, values to `decimals` places, each with its verdict.
pub fn claims_table(claims: &[Claim], decimals: usize) -> String {
    let mut c = comfy_table::Table::new();
    c.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    c.set_header(vec!["claim", "paper", "ours", "unit", "verdict"]);
    for cl in claims {
        c.add_row(vec![
            cl.id.clone(),
            format!("{:.decimals$}", cl.paper),
            format!("{:.decimals$}", cl.ours),
            cl.unit.clone(),
            cl.verdict().name(),
        ]);
    }
    c.to_string()
}
