//! One FlashAbacus machine from a preset: the accelerator under one of its four schedulers
//! (`[accel]` over the preset's flash), or the conventional SIMD baseline (the same
//! accelerator fed by the host, `[host]`, from its discrete SSD, `[ssd_flash]`/`[ssd_ftl]`),
//! in timing fidelity (`run_system`) or functional fidelity (`run_system_functional`: real
//! data, every instance verified).

use nearflash_accel::{
    precondition, run_simd, run_simd_functional, run_workload, run_workload_from,
    run_workload_functional, AccelConfig, FunctionalRun, Preconditioned, RunReport, RunSpec,
    SchedulerKind, SimdSpec,
};
use nearflash_kernels::Dataset;
use nearflash_preset::Preset;

use crate::ReproduceError;

/// What the SIMD baseline needs of a preset beyond `[accel]`.
const SIMD_NEEDS: &str = "`run --system simd` (the host and its SSD)";

fn is_simd(system: &str) -> bool {
    system.eq_ignore_ascii_case("simd")
}

/// Runs `workload` on `system` (simd or one of the four schedulers) of `preset` with its
/// `[accel]` table.
pub fn run_system(
    preset: &Preset,
    accel: &AccelConfig,
    system: &str,
    workload: &str,
    dataset: Dataset,
    seed: u64,
) -> Result<RunReport, ReproduceError> {
    if is_simd(system) {
        Ok(run_simd(
            &simd_spec(preset, accel, dataset, seed)?,
            workload,
        )?)
    } else {
        let spec = accel_spec(preset, accel, system, dataset, seed)?;
        Ok(run_workload(&spec, workload)?)
    }
}

/// The accelerator's device after `workload`'s untimed preconditioning: the same for all
/// four schedulers and both cost models (`run_accel_from` starts each from a copy).
pub fn precondition_accel(
    preset: &Preset,
    accel: &AccelConfig,
    workload: &str,
    dataset: Dataset,
    seed: u64,
) -> Result<Preconditioned, ReproduceError> {
    // The scheduler does not change the preconditioning; any will do.
    let spec = accel_spec(preset, accel, "inter-st", dataset, seed)?;
    Ok(precondition(&spec, workload)?)
}

/// `run_system` of accelerator `system` (one of the four schedulers), started from a copy
/// of `start` (`precondition_accel` of the same workload): the same report.
pub fn run_accel_from(
    preset: &Preset,
    accel: &AccelConfig,
    system: &str,
    workload: &str,
    (dataset, seed): (Dataset, u64),
    start: &Preconditioned,
) -> Result<RunReport, ReproduceError> {
    assert!(
        !is_simd(system),
        "SIMD's SSD is not the accelerator's device"
    );
    let spec = accel_spec(preset, accel, system, dataset, seed)?;
    Ok(run_workload_from(&spec, workload, start)?)
}

/// `run_system` in functional fidelity: the kernels compute real data — through the
/// accelerator's flash, or the host's SSD, PCIe and DDR3L for SIMD — and every instance is
/// verified. A run needing more than `max_bytes` of memory is refused before it starts; a
/// wrong output is `AccelError::Verification` (inside `ReproduceError::Accel`) carrying
/// every instance's verdict.
pub fn run_system_functional(
    preset: &Preset,
    accel: &AccelConfig,
    system: &str,
    workload: &str,
    (dataset, seed): (Dataset, u64),
    max_bytes: u64,
) -> Result<FunctionalRun, ReproduceError> {
    if is_simd(system) {
        let spec = simd_spec(preset, accel, dataset, seed)?;
        Ok(run_simd_functional(&spec, workload, max_bytes)?)
    } else {
        let spec = accel_spec(preset, accel, system, dataset, seed)?;
        Ok(run_workload_functional(&spec, workload, max_bytes)?)
    }
}

/// The SIMD baseline of `preset`: its `[accel]` table, host and SSD.
fn simd_spec<'a>(
    preset: &'a Preset,
    accel: &'a AccelConfig,
    dataset: Dataset,
    seed: u64,
) -> Result<SimdSpec<'a>, ReproduceError> {
    let host = preset.require_host(SIMD_NEEDS)?;
    let (ssd_flash, ssd_ftl) = preset.require_ssd(SIMD_NEEDS)?;
    Ok(SimdSpec {
        accel,
        host,
        // The SSD's NVMe front end: `[ssd_nvme]`, or the NVMe crate's cited defaults (the
        // Intel 750 is a PCIe 3.0 x4 NVMe drive, the link's default).
        ssd_nvme: &preset.ssd_nvme,
        ssd_flash,
        ssd_ftl,
        dataset,
        seed,
    })
}

/// The accelerator run of `system` (one of the four FlashAbacus schedulers) of `preset`
/// with its `[accel]` table.
fn accel_spec<'a>(
    preset: &'a Preset,
    accel: &'a AccelConfig,
    system: &str,
    dataset: Dataset,
    seed: u64,
) -> Result<RunSpec<'a>, ReproduceError> {
    Ok(RunSpec {
        accel,
        flash: &preset.flash,
        ftl: &preset.ftl,
        scheduler: system.parse::<SchedulerKind>()?,
        dataset,
        seed,
    })
}
