//! Presets: a device's hardware and firmware parameters as one TOML document with a
//! `[flash]` and an `[ftl]` table, and optionally an `[accel]` table (the FlashAbacus
//! compute side: LWPs, DDR3L, PCIe, hardware queues). Built-in presets are compiled in from `configs/`; any other
//! TOML file can be named by path. `--set table.field=value` overrides apply to the parsed
//! document before it is checked, so an override is validated exactly like the file.

use crate::error::CliError;
use nearflash_accel::{AccelConfig, HostConfig};
use nearflash_activeflash::ActiveFlashConfig;
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_insider::InsiderConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Built-in presets: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "flashabacus",
        include_str!("../../../configs/flashabacus.toml"),
    ),
    ("test-min", include_str!("../../../configs/test-min.toml")),
    ("insider", include_str!("../../../configs/insider.toml")),
    (
        "active-flash",
        include_str!("../../../configs/active-flash.toml"),
    ),
];

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub flash: FlashConfig,
    pub ftl: FtlConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<AccelConfig>,
    /// The SIMD baseline's host (storage stack, host and SSD powers) and its discrete SSD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssd_flash: Option<FlashConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssd_ftl: Option<FtlConfig>,
    /// INSIDER's drive around the flash: backing, PCIe, ISC unit, engines, host (seed 001).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insider: Option<InsiderConfig>,
    /// Active Flash (seed 004): the SSD controller and host CPU as compute engines and the
    /// cost of the offloaded compression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_flash: Option<ActiveFlashConfig>,
}

impl Preset {
    /// Loads a built-in preset by name or a TOML file by path (see `read_text`), then applies
    /// `overrides` (`table.field=value`).
    pub fn load(name_or_path: &str, overrides: &[String]) -> Result<Preset, CliError> {
        let (source, text) = read_text(name_or_path)?;
        Self::parse(&source, &text, overrides)
    }

    /// Parses preset text; `source` names it in errors.
    pub fn parse(source: &str, text: &str, overrides: &[String]) -> Result<Preset, CliError> {
        let mut doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| CliError::Config {
                source_name: source.to_string(),
                reason: e.to_string(),
            })?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let preset: Preset = toml::Value::Table(doc)
            .try_into()
            .map_err(|e: toml::de::Error| CliError::Config {
                source_name: source.to_string(),
                reason: e.to_string(),
            })?;
        preset
            .flash
            .validate()
            .and_then(|()| preset.ftl.validate(&preset.flash))
            .map_err(|e| CliError::Config {
                source_name: source.to_string(),
                reason: e.to_string(),
            })?;
        let bad = |reason: String| CliError::Config {
            source_name: source.to_string(),
            reason,
        };
        if let Some(h) = &preset.host {
            h.validate().map_err(|e| bad(e.to_string()))?;
        }
        match (&preset.ssd_flash, &preset.ssd_ftl) {
            (Some(f), Some(t)) => f
                .validate()
                .and_then(|()| t.validate(f))
                .map_err(|e| bad(format!("ssd: {e}")))?,
            (None, None) => {}
            _ => return Err(bad("[ssd_flash] and [ssd_ftl] come together".into())),
        }
        if let Some(i) = &preset.insider {
            i.validate().map_err(|e| bad(e.to_string()))?;
        }
        if let Some(a) = &preset.active_flash {
            a.validate().map_err(|e| bad(e.to_string()))?;
        }
        if let Some(a) = &preset.accel {
            a.validate().map_err(|e| CliError::Config {
                source_name: source.to_string(),
                reason: e.to_string(),
            })?;
        }
        Ok(preset)
    }
}

/// The TOML text of a built-in preset by name, or of a file by path (anything containing a
/// path separator or ending in `.toml`), with a name for it to use in errors.
pub fn read_text(name_or_path: &str) -> Result<(String, String), CliError> {
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let text = std::fs::read_to_string(Path::new(name_or_path)).map_err(|e| CliError::Io {
            what: format!("preset file {name_or_path}"),
            source: e,
        })?;
        return Ok((name_or_path.to_string(), text));
    }
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name_or_path)
        .map(|(_, t)| (format!("preset {name_or_path}"), t.to_string()))
        .ok_or_else(|| CliError::UnknownPreset {
            name: name_or_path.to_string(),
            known: BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Applies one `table.field=value` override; the value is parsed as a TOML value, falling
/// back to a string (so `ftl.gc_policy=greedy` works unquoted).
fn apply_override(doc: &mut toml::Table, spec: &str) -> Result<(), CliError> {
    let bad = |reason: &str| CliError::Override {
        spec: spec.to_string(),
        reason: reason.to_string(),
    };
    let (key, raw) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected table.field=value"))?;
    let (table, field) = key
        .trim()
        .split_once('.')
        .ok_or_else(|| bad("the key must name a table and a field, e.g. flash.channels"))?;
    let raw = raw.trim();
    let value = format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let mut t = doc
        .get_mut(table)
        .and_then(toml::Value::as_table_mut)
        .ok_or_else(|| bad(&format!("the preset has no [{table}] table")))?;
    // A nested table (`flash.media.enabled`) is created when the preset leaves it out: its
    // fields have defaults.
    let mut field = field.trim();
    while let Some((sub, rest)) = field.split_once('.') {
        t = t
            .entry(sub.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| bad(&format!("{table}.{sub} is not a table")))?;
        field = rest;
    }
    match t.get(field) {
        Some(old) if old.type_str() != value.type_str() && !numeric_pair(old, &value) => {
            return Err(bad(&format!(
                "{table}.{field} is a {}, got a {}",
                old.type_str(),
                value.type_str()
            )))
        }
        _ => {}
    }
    let value = match (t.get(field), value) {
        // `--set flash.read_latency_us=50` must stay a float field.
        (Some(toml::Value::Float(_)), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
        (_, v) => v,
    };
    t.insert(field.to_string(), value);
    Ok(())
}

fn numeric_pair(a: &toml::Value, b: &toml::Value) -> bool {
    matches!(
        (a, b),
        (toml::Value::Float(_), toml::Value::Integer(_))
            | (toml::Value::Integer(_), toml::Value::Float(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_preset_parses_and_validates() {
        for (name, _) in BUILTIN {
            let p = Preset::load(name, &[]).expect(name);
            assert_eq!(&p.name, name);
        }
    }

    #[test]
    fn media_errors_are_off_in_every_preset_and_settable_as_a_nested_table() {
        for (name, _) in BUILTIN {
            assert!(
                !Preset::load(name, &[]).unwrap().flash.media.enabled,
                "{name}"
            );
        }
        let p = Preset::load(
            "test-min",
            &[
                "flash.media.enabled=true".into(),
                "flash.media.correctable_bits=72".into(),
            ],
        )
        .unwrap();
        assert!(p.flash.media.enabled);
        assert_eq!(p.flash.media.correctable_bits, 72);
        let e = Preset::load("test-min", &["flash.media.codeword_bytes=8".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.media.codeword_bytes"), "{e}");
    }

    #[test]
    fn flashabacus_preset_matches_table_1() {
        let p = Preset::load("flashabacus", &[]).unwrap();
        let f = &p.flash;
        assert_eq!(f.channels, 4);
        assert_eq!(f.channels * f.packages_per_channel, 16);
        assert_eq!(f.dies_per_package, 2);
        assert_eq!(f.page_size_bytes, 8192);
        let raw = u64::from(f.channels * f.packages_per_channel * f.dies_per_package)
            * u64::from(f.planes_per_die * f.blocks_per_plane * f.pages_per_block)
            * u64::from(f.page_size_bytes);
        assert_eq!(raw, 32 << 30);
        assert_eq!(f.planes_per_die * f.channels * f.page_size_bytes, 64 << 10);
    }

    #[test]
    fn flashabacus_accel_table_matches_table_1() {
        let p = Preset::load("flashabacus", &[]).unwrap();
        let a = p.accel.expect("flashabacus has an [accel] table");
        assert_eq!(a, AccelConfig::default());
        let e = Preset::load("flashabacus", &["accel.lwp_cpi=0".into()]).unwrap_err();
        assert!(e.to_string().contains("accel.lwp_cpi"), "{e}");
    }

    #[test]
    fn insider_preset_is_the_documented_drive() {
        let p = Preset::load("insider", &[]).unwrap();
        assert_eq!(p.insider, Some(InsiderConfig::default()));
        assert_eq!(p.host, Some(nearflash_insider::config::insider_host()));
        let e = Preset::load("insider", &["insider.credits_initial=0".into()]).unwrap_err();
        assert!(e.to_string().contains("insider.credits_initial"), "{e}");
        let e = Preset::load("insider", &["insider.pcie_lanes=3".into()]).unwrap_err();
        assert!(e.to_string().contains("insider.pcie_lanes"), "{e}");
    }

    #[test]
    fn active_flash_preset_has_its_engines_and_names_a_zero_clock() {
        let p = Preset::load("active-flash", &[]).unwrap();
        let a = p
            .active_flash
            .expect("active-flash has an [active_flash] table");
        assert_eq!(a.controller_clock_mhz, 800.0);
        assert_eq!(p.flash.channels * p.flash.planes_per_die, 1);
        let e = Preset::load(
            "active-flash",
            &["active_flash.controller_clock_mhz=0".into()],
        )
        .unwrap_err();
        assert!(e.to_string().contains("controller_clock_mhz"), "{e}");
    }

    #[test]
    fn unknown_field_is_named() {
        let e = Preset::load("test-min", &["flash.chanels=4".into()]).unwrap_err();
        assert!(e.to_string().contains("chanels"), "{e}");
    }

    #[test]
    fn zero_rate_is_named() {
        let e = Preset::load("test-min", &["flash.channel_rate_mb_s=0".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.channel_rate_mb_s"), "{e}");
    }

    #[test]
    fn impossible_geometry_is_named() {
        let e = Preset::load("test-min", &["flash.planes_per_die=9".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.planes_per_die"), "{e}");
        let e = Preset::load("test-min", &["flash.blocks_per_plane=3".into()]).unwrap_err();
        assert!(e.to_string().contains("blocks_per_plane"), "{e}");
    }

    #[test]
    fn overrides_change_values_and_keep_types() {
        let p = Preset::load(
            "test-min",
            &[
                "flash.read_latency_us=50".into(),
                "ftl.gc_policy=cost-benefit".into(),
            ],
        )
        .unwrap();
        assert_eq!(p.flash.read_latency_us, 50.0);
        assert_eq!(p.ftl.gc_policy, nearflash_ftl::GcPolicy::CostBenefit);
        let e = Preset::load("test-min", &["flash.channels=two".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.channels"), "{e}");
        let e = Preset::load("test-min", &["nochannels".into()]).unwrap_err();
        assert!(e.to_string().contains("table.field=value"), "{e}");
    }

    #[test]
    fn malformed_toml_is_an_error_naming_the_source() {
        let e = Preset::parse("my.toml", "name = \"x\"\n[flash\n", &[]).unwrap_err();
        assert!(e.to_string().contains("my.toml"), "{e}");
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = Preset::load("nosuch", &[]).unwrap_err();
        assert!(e.to_string().contains("flashabacus"), "{e}");
    }
}
