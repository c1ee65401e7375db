//! Kernel names → constructors. Canonical names are PolyBench's / Rodinia's lower-case
//! names; Table 2's abbreviations are accepted as aliases.

use crate::dataset::Dataset;
use crate::error::KernelError;
use crate::kernel::Kernel;
use crate::partition::ScreenPlan;
use crate::polybench::*;

/// Canonical kernel names, Table 2 order first, then the §5.6 workloads.
pub const KERNELS: &[&str] = &["atax", "bicg", "gemm"];

/// Table 2 abbreviation → canonical name.
const ALIASES: &[(&str, &str)] = &[
    ("2dcon", "2dconv"),
    ("conv2d", "2dconv"),
    ("fdtd", "fdtd-2d"),
    ("fdtd2d", "fdtd-2d"),
    ("gesum", "gesummv"),
    ("covar", "covariance"),
    ("corr", "correlation"),
    ("path", "pathfinder"),
    ("wc", "wordcount"),
];

pub fn canonical_name(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let lower = ALIASES
        .iter()
        .find(|(a, _)| *a == lower)
        .map(|(_, c)| c.to_string())
        .unwrap_or(lower);
    KERNELS.iter().copied().find(|k| *k == lower)
}

/// Build kernel `name` at `dataset` with `plan` screens per microblock.
pub fn build(
    name: &str,
    dataset: Dataset,
    plan: ScreenPlan,
) -> Result<Box<dyn Kernel>, KernelError> {
    let unknown = || KernelError::UnknownKernel {
        name: name.to_string(),
        known: KERNELS.join(", "),
    };
    let k: Box<dyn Kernel> = match canonical_name(name).ok_or_else(unknown)? {
        "atax" => Box::new(atax::Atax::new(dataset, plan)?),
        "bicg" => Box::new(bicg::Bicg::new(dataset, plan)?),
        "gemm" => Box::new(gemm::Gemm::new(dataset, plan)?),
        _ => return Err(unknown()),
    };
    Ok(k)
}

/// `build` with names and datasets as strings (the CLI's entry point).
pub fn build_named(
    name: &str,
    dataset: &str,
    plan: ScreenPlan,
) -> Result<Box<dyn Kernel>, KernelError> {
    let d: Dataset = dataset.parse()?;
    build(name, d, plan)
}
