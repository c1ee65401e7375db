//! One FlashAbacus machine from a preset: the accelerator under one of its four schedulers
//! (`[accel]` over the preset's flash), or the conventional SIMD baseline (the same
//! accelerator fed by the host, `[host]`, from its discrete SSD, `[ssd_flash]`/`[ssd_ftl]`).

use nearflash_accel::{
    run_simd, run_workload, AccelConfig, AccelError, RunReport, RunSpec, SchedulerKind, SimdSpec,
};
use nearflash_kernels::Dataset;
use nearflash_preset::Preset;

use crate::ReproduceError;

/// What the SIMD baseline needs of a preset beyond `[accel]`.
const SIMD_NEEDS: &str = "`run --system simd` (the host and its SSD)";

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
    if system.eq_ignore_ascii_case("simd") {
        let host = preset.require_host(SIMD_NEEDS)?;
        let (ssd_flash, ssd_ftl) = preset.require_ssd(SIMD_NEEDS)?;
        let spec = SimdSpec {
            accel,
            host,
            // The SSD's NVMe front end: `[ssd_nvme]`, or the NVMe crate's cited defaults (the
            // Intel 750 is a PCIe 3.0 x4 NVMe drive, the link's default).
            ssd_nvme: &preset.ssd_nvme,
            ssd_flash,
            ssd_ftl,
            dataset,
            seed,
        };
        Ok(run_simd(&spec, workload)?)
    } else {
        let spec = accel_spec(preset, accel, system, dataset, seed)?;
        Ok(run_workload(&spec, workload)?)
    }
}

/// The accelerator run of `system` (one of the four FlashAbacus schedulers) of `preset`
/// with its `[accel]` table, for `run_workload` or `run_workload_functional`; `simd` has no
/// functional fidelity and is refused.
pub fn accel_spec<'a>(
    preset: &'a Preset,
    accel: &'a AccelConfig,
    system: &str,
    dataset: Dataset,
    seed: u64,
) -> Result<RunSpec<'a>, ReproduceError> {
    if system.eq_ignore_ascii_case("simd") {
        return Err(AccelError::SimdFunctional.into());
    }
    Ok(RunSpec {
        accel,
        flash: &preset.flash,
        ftl: &preset.ftl,
        scheduler: system.parse::<SchedulerKind>()?,
        dataset,
        seed,
    })
}
