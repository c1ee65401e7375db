//! One functional run of a kernel, as `nearflash kernel NAME --dataset D --dump-dir DIR`
//! will do it: build, generate, run every microblock (screens in a seeded shuffled order),
//! verify against the reference, optionally dump the live-out arrays, and summarise each
//! live-out array the way WORKLOADS.md §1 suggests (Σx, Σ|x|, max relative error).

use crate::cost::Cost;
use crate::dataset::Dataset;
use crate::dump::dump_live_out;
use crate::error::KernelError;
use crate::kernel::total_cost;
use crate::partition::ScreenPlan;
use crate::registry::build;
use crate::run::run_shuffled;
use crate::verify::verify;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArraySummary {
    pub name: String,
    pub len: usize,
    pub sum: f64,
    pub abs_sum: f64,
    /// max |x − r| / max(1, |r|) over the array.
    pub max_rel_err: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelReport {
    pub kernel: String,
    pub dataset: Dataset,
    pub dims: String,
    pub microblocks: usize,
    pub screens: u64,
    pub input_bytes: u64,
    pub cost: Cost,
    pub arrays: Vec<ArraySummary>,
    pub dumped: Vec<PathBuf>,
}

/// Run `name` at `dataset`; a wrong output is an `Err(Mismatch)`, not a warning.
pub fn execute(
    name: &str,
    dataset: Dataset,
    plan: ScreenPlan,
    shuffle_seed: u64,
    dump_dir: Option<&Path>,
) -> Result<KernelReport, KernelError> {
    let k = build(name, dataset, plan)?;
    let input = k.init();
    let mut state = input.clone();
    run_shuffled(k.as_ref(), &mut state, shuffle_seed)?;
    let reference = k.reference(&input);
    verify(k.desc(), &state, &reference)?;
    let d = k.desc();
    let arrays = d
        .live_out
        .iter()
        .map(|n| {
            let g = &state.get(n).expect("verified").data;
            let r = &reference.get(n).expect("verified").data;
            let mut s = ArraySummary {
                name: n.to_string(),
                len: g.len(),
                sum: 0.0,
                abs_sum: 0.0,
                max_rel_err: 0.0,
            };
            for i in 0..g.len() {
                let (x, e) = (g.get_f64(i), r.get_f64(i));
                s.sum += x;
                s.abs_sum += x.abs();
                s.max_rel_err = s.max_rel_err.max((x - e).abs() / e.abs().max(1.0));
            }
            s
        })
        .collect();
    let dumped = match dump_dir {
        Some(dir) => dump_live_out(d, &state, dir)?,
        None => Vec::new(),
    };
    Ok(KernelReport {
        kernel: d.name.to_string(),
        dataset,
        dims: d.dims.clone(),
        microblocks: d.microblocks.len(),
        screens: d.total_screens(),
        input_bytes: d.input_bytes(),
        cost: total_cost(k.as_ref()),
        arrays,
        dumped,
    })
}
