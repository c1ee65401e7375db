//! The engine a virtual file's program runs on: one INSIDER drive core, charged through the
//! shared compute model (`nearflash_hw::compute::CoreSpec`: instructions × CPI ÷ clock).
//!
//! Why a core and not a slot: a core charges both kinds of program the same way — a built-in
//! by its derived `instructions_per_byte` (`StreamProgram::cost`), a WebAssembly module by the
//! instructions its fuel stands for (`nearflash_wasm::cost`) — while a slot's
//! bytes-per-cycle figure exists only for built-ins. One core, because the device thread runs
//! one virtual file at a time.
//!
//! Where the figures come from: the image's preset's `[insider]` table (`core_clock_mhz`,
//! `core_cpi`) when it has one, else the built-in `insider` preset's: §5.5's Cortex-A72, run
//! "optimistically by assuming that it has perfect IPC" (CPI 1/3, three-way superscalar) at
//! 2.0 GHz (configs/insider.toml gives the reasoning). The table is read through a view of
//! just those two fields, so this crate needs no paper crate.

use nearflash_hw::compute::CoreSpec;
use nearflash_preset::{Preset, PresetError, SystemTable, ValidationError};
use serde::Deserialize;

/// The preset whose `[insider]` table is used when the image's preset has none.
pub const FALLBACK_PRESET: &str = "insider";

/// The two fields of `[insider]` a virtual file's engine reads (the rest of the table is the
/// INSIDER model's, validated by it when the preset loads).
#[derive(Clone, Copy, Debug, Deserialize)]
struct InsiderCoreView {
    core_clock_mhz: f64,
    core_cpi: f64,
}

impl SystemTable for InsiderCoreView {
    const TABLE: &'static str = "insider";
    const NEEDED_BY: &'static str = "live mode's virtual files (the drive core's clock and CPI)";
    fn validate_table(&self) -> Result<(), ValidationError> {
        for (field, v) in [
            ("insider.core_clock_mhz", self.core_clock_mhz),
            ("insider.core_cpi", self.core_cpi),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{field}: must be a positive number").into());
            }
        }
        Ok(())
    }
}

/// The drive core and where its figures come from.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveCore {
    pub core: CoreSpec,
    /// E.g. `preset insider [insider] core_clock_mhz = 2000, core_cpi = 0.333`.
    pub source: String,
}

impl DriveCore {
    /// The core of `preset`'s `[insider]` table, or of the built-in `insider` preset's.
    pub fn of_preset(preset: &Preset) -> Result<DriveCore, PresetError> {
        let (name, view) = match preset.system::<InsiderCoreView>() {
            Some(v) => (preset.name.clone(), v),
            None => {
                let fallback = Preset::load(FALLBACK_PRESET, &[])?;
                let v = fallback.require::<InsiderCoreView>()?;
                (fallback.name, v)
            }
        };
        view.validate_table()
            .map_err(|source| PresetError::Invalid {
                source_name: format!("preset {name}"),
                prefix: "",
                source,
            })?;
        Ok(DriveCore {
            core: CoreSpec::new(view.core_clock_mhz, view.core_cpi),
            source: format!(
                "one INSIDER drive core: preset {name} [insider] core_clock_mhz = {}, \
                 core_cpi = {:.3} (instructions x CPI / clock, nearflash_hw::compute)",
                view.core_clock_mhz, view.core_cpi
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_without_insider_takes_the_insider_presets_cortex_a72() {
        let tm = Preset::load("test-min", &[]).unwrap();
        let d = DriveCore::of_preset(&tm).unwrap();
        assert_eq!(d.core.clock_mhz, 2000.0);
        assert!((d.core.cpi - 1.0 / 3.0).abs() < 1e-12);
        assert!(d.source.contains("preset insider"), "{}", d.source);
        let slow = Preset::load("insider", &["insider.core_clock_mhz=500".into()]).unwrap();
        assert_eq!(DriveCore::of_preset(&slow).unwrap().core.clock_mhz, 500.0);
    }
}
