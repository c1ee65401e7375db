//! The INSIDER drive whose ISC unit runs the virtual files: the image's preset's `[insider]`
//! table (`nearflash_insider::InsiderConfig`, validated by INSIDER's own rules when the
//! preset loads) when it has one, else the built-in `insider` preset's — four FPGA-like
//! application slots at 250 MHz, C = 256 KiB, R = 8 credits (configs/insider.toml gives the
//! sources of each figure). The unit itself is INSIDER's (`nearflash_insider::isc::Unit`);
//! this file only chooses its configuration and names where it came from.

use nearflash_insider::{EngineKind, InsiderConfig};
use nearflash_preset::{Preset, PresetError};

/// The preset whose `[insider]` table is used when the image's preset has none.
pub const FALLBACK_PRESET: &str = "insider";

/// The ISC unit's configuration and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveIsc {
    pub cfg: InsiderConfig,
    /// E.g. `INSIDER's ISC unit: preset insider [insider] engine = slots, 4 application
    /// slots at 250 MHz, C = 262144 bytes, R = 8 credits`.
    pub source: String,
}

impl DriveIsc {
    /// The unit of `preset`'s `[insider]` table, or of the built-in `insider` preset's.
    pub fn of_preset(preset: &Preset) -> Result<DriveIsc, PresetError> {
        let (name, cfg) = match preset.system::<InsiderConfig>() {
            Some(cfg) => (preset.name.clone(), cfg),
            None => {
                let fallback = Preset::load(FALLBACK_PRESET, &[])?;
                let cfg = fallback.require::<InsiderConfig>()?;
                (fallback.name, cfg)
            }
        };
        let engine = match cfg.engine {
            EngineKind::Slots => format!(
                "engine = slots, {} application slots at {} MHz (a module on a soft core, CPI 1)",
                cfg.app_slots, cfg.slot_clock_mhz
            ),
            EngineKind::Cores => format!(
                "engine = cores, {} cores at {} MHz, CPI {:.3}",
                cfg.core_count, cfg.core_clock_mhz, cfg.core_cpi
            ),
        };
        let source = format!(
            "INSIDER's ISC unit (nearflash_insider::isc::Unit): preset {name} [insider] \
             {engine}, C = {} bytes, R = {} credits",
            cfg.credit_request_bytes, cfg.credits_initial
        );
        assert!(cfg.credits_initial > 0 && cfg.credit_request_bytes > 0);
        Ok(DriveIsc { cfg, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_without_insider_takes_the_insider_presets_slots() {
        let tm = Preset::load("test-min", &[]).unwrap();
        let d = DriveIsc::of_preset(&tm).unwrap();
        assert_eq!(d.cfg, InsiderConfig::default());
        assert!(d.source.contains("preset insider"), "{}", d.source);
        assert!(d.source.contains("slots at 250 MHz"), "{}", d.source);
        let cores = Preset::load("insider", &["insider.engine=\"cores\"".into()]).unwrap();
        let d = DriveIsc::of_preset(&cores).unwrap();
        assert_eq!(d.cfg.engine, EngineKind::Cores);
        assert!(d.source.contains("4 cores at 2000 MHz"), "{}", d.source);
    }
}
