//! Kernel names → constructors. Canonical names are PolyBench's / Rodinia's lower-case
//! names; Table 2's abbreviations are accepted as aliases.

use crate::dataset::Dataset;
use crate::error::KernelError;
use crate::kernel::Kernel;
use crate::mars::*;
use crate::partition::ScreenPlan;
use crate::polybench::*;
use crate::rodinia::*;

/// Canonical kernel names, Table 2 order first, then the §5.6 workloads.
pub const KERNELS: &[&str] = &[
    "atax",
    "bicg",
    "2dconv",
    "mvt",
    "adi",
    "fdtd-2d",
    "gesummv",
    "syrk",
    "3mm",
    "covariance",
    "gemm",
    "2mm",
    "syr2k",
    "correlation",
    "nn",
    "bfs",
    "nw",
    "pathfinder",
    "wordcount",
];

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
        "2dconv" => Box::new(conv2d::Conv2d::new(dataset, plan)?),
        "mvt" => Box::new(mvt::Mvt::new(dataset, plan)?),
        "adi" => Box::new(adi::Adi::new(dataset, plan)?),
        "fdtd-2d" => Box::new(fdtd2d::Fdtd2d::new(dataset, plan)?),
        "gesummv" => Box::new(gesummv::Gesummv::new(dataset, plan)?),
        "syrk" => Box::new(syrk::Syrk::new(dataset, plan)?),
        "3mm" => Box::new(mm3::Mm3::new(dataset, plan)?),
        "covariance" => Box::new(covariance::Covariance::new(dataset, plan)?),
        "2mm" => Box::new(mm2::Mm2::new(dataset, plan)?),
        "syr2k" => Box::new(syr2k::Syr2k::new(dataset, plan)?),
        "correlation" => Box::new(correlation::Correlation::new(dataset, plan)?),
        "nn" => Box::new(nn::Nn::new(dataset, plan)?),
        "bfs" => Box::new(bfs::Bfs::new(dataset, plan)?),
        "nw" => Box::new(nw::Nw::new(dataset, plan)?),
        "pathfinder" => Box::new(pathfinder::Pathfinder::new(dataset, plan)?),
        "wordcount" => Box::new(wordcount::Wordcount::new(dataset, plan)?),
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
