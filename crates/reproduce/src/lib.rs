//! Reproductions of the papers' evaluations, as a library (`nearflash reproduce <paper>` is
//! its front end; other front ends call `run` the same way). Each paper is a module that
//! implements `Paper`: its runs, the claims computed from them and its figures; `reproduce`
//! runs any of them, and the result is a `summary.json` (schema in `nearflash-report`), a
//! `report.html` page and a terminal rendering. Paper crates never depend on each other;
//! this crate is where they meet.

pub mod active_flash;
mod error;
pub mod flashabacus;
pub mod hayagui;
pub mod insider;
mod options;
mod paper;
mod parallel;
mod prose;

pub use error::ReproduceError;
pub use nearflash_sim::Fidelity;
pub use options::Options;
pub use paper::{claims_table, reproduce, Paper, Reproduced};
pub use parallel::parallel_map;

/// The reproducible papers.
pub const PAPERS: &[&str] = &["flashabacus", "insider", "active-flash", "hayagui"];

/// Checks, before any work, that `paper` is known and every option applies to it.
pub fn check(paper: &str, opts: &Options, jobs: usize) -> Result<(), ReproduceError> {
    if !PAPERS.contains(&paper) {
        return Err(ReproduceError::Invalid(format!(
            "unknown paper '{paper}' (known: {})",
            PAPERS.join(", ")
        )));
    }
    if jobs == 0 {
        return Err(ReproduceError::Invalid("--jobs must be at least 1".into()));
    }
    opts.check_for(paper)
}

/// Reproduces `paper` with `opts`, `jobs` simulations side by side; `progress(done, total)`
/// is called as simulations finish.
pub fn run(
    paper: &str,
    opts: &Options,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Reproduced, ReproduceError> {
    check(paper, opts, jobs)?;
    match (paper, opts.fidelity) {
        ("flashabacus", _) => reproduce(&flashabacus::FlashAbacus::new(opts)?, jobs, progress),
        ("insider", Fidelity::Timing) => reproduce(&insider::Timing::new(opts)?, jobs, progress),
        ("insider", Fidelity::Functional) => {
            reproduce(&insider::Functional::new(opts)?, jobs, progress)
        }
        ("active-flash", _) => reproduce(&active_flash::ActiveFlash::new(opts)?, jobs, progress),
        ("hayagui", _) => reproduce(&hayagui::Hayagui::new(opts)?, jobs, progress),
        _ => unreachable!("PAPERS lists every paper matched here"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_papers_and_zero_jobs_are_refused_before_any_work() {
        let o = Options::new(Fidelity::Timing);
        let e = check("hayagui20", &o, 1).unwrap_err().to_string();
        assert!(e.contains("unknown paper 'hayagui20'"), "{e}");
        let e = check("insider", &o, 0).unwrap_err().to_string();
        assert!(e.contains("--jobs"), "{e}");
    }
}
