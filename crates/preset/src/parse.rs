//! A preset's text read and checked: the TOML parsed, the tables every preset has added,
//! `--set` overrides applied, each system table checked by its system's type, then the
//! shared layers validated, each against those it rests on.

use crate::explain;
use crate::overrides;
use crate::system::{CheckError, SYSTEMS};
use crate::{Layers, Preset, PresetError, ValidationError};
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_nvme::NvmeConfig;
use nearflash_wcache::DestageBound;
use std::collections::BTreeMap;

impl Preset {
    /// Parses preset text; `source` names it in errors.
    pub fn parse(source: &str, text: &str, overrides: &[String]) -> Result<Preset, PresetError> {
        let mut doc = document(source, text, overrides)?;
        let systems = take_systems(source, &mut doc)?;
        let layers: Layers = toml::Value::Table(doc.clone()).try_into().map_err(|e| {
            explain::explain(source, "", &doc, e, |probe| {
                toml::Value::Table(probe).try_into::<Layers>().map(drop)
            })
        })?;
        Self::of_layers(source, layers, systems)
    }

    /// Validates the shared layers, each against those it rests on, and assembles the
    /// preset.
    fn of_layers(
        source: &str,
        layers: Layers,
        systems: BTreeMap<&'static str, toml::Value>,
    ) -> Result<Preset, PresetError> {
        layers
            .flash
            .validate()
            .map_err(|e| invalid(source, "", e.into()))?;
        let mut ftl = layers.ftl;
        ftl.fdp = layers.fdp;
        ftl.validate(&layers.flash)
            .map_err(|e| invalid(source, "", e.into()))?;
        let write_cache = layers.write_cache.unwrap_or_default();
        write_cache
            .validate_for(&DestageBound::of_ftl(&layers.flash, &ftl))
            .map_err(|e| invalid(source, "", e.into()))?;
        layers
            .nvme
            .validate()
            .map_err(|e| invalid(source, "", e.into()))?;
        if let Some(h) = &layers.host {
            h.validate().map_err(|e| invalid(source, "", e.into()))?;
        }
        let (ssd, ssd_nvme) =
            baseline_ssd(source, layers.ssd_flash, layers.ssd_ftl, layers.ssd_nvme)?;
        layers
            .zns
            .validate(&layers.flash)
            .map_err(|e| invalid(source, "", e.into()))?;
        if layers.zns.enabled && ftl.fdp.enabled {
            return Err(invalid(
                source,
                "",
                nearflash_flash::ConfigError::Invalid {
                    field: "fdp.enabled".into(),
                    reason: "a zoned namespace places data by zones (zns.enabled = true); \
                             Flexible Data Placement is for a conventional namespace"
                        .into(),
                }
                .into(),
            ));
        }
        Ok(Preset {
            name: layers.name,
            description: layers.description,
            flash: layers.flash,
            ftl,
            write_cache,
            nvme: layers.nvme,
            host: layers.host,
            ssd,
            ssd_nvme,
            zns: layers.zns,
            systems,
        })
    }
}

/// The error of a layer that parsed but is invalid; `prefix` names a baseline SSD's tables.
fn invalid(source: &str, prefix: &'static str, e: ValidationError) -> PresetError {
    PresetError::Invalid {
        source_name: source.to_string(),
        prefix,
        source: e,
    }
}

/// The preset's TOML document with the tables every preset has (`[nvme]`, `[zns]`,
/// `[fdp]`) and the system tables an override names, created empty where absent, and then
/// `overrides` applied.
fn document(source: &str, text: &str, overrides: &[String]) -> Result<toml::Table, PresetError> {
    let mut doc: toml::Table = text.parse().map_err(|e| PresetError::Toml {
        source_name: source.to_string(),
        source: e,
    })?;
    // Every device has a front end: a preset silent about it takes the NVMe crate's
    // defaults, and `--set nvme.link.lanes=8` works on any preset.
    doc.entry("nvme")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    // Likewise zoned mode and Flexible Data Placement: `--set zns.enabled=true` and
    // `--set fdp.enabled=true` work on any preset.
    for table in ["zns", "fdp"] {
        doc.entry(table)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    }
    // A system table whose absence means its defaults is created empty for an override
    // (`--set cs.slm_bytes=…` on any preset), and only then.
    for entry in SYSTEMS.iter().filter(|e| e.default_when_absent) {
        let prefix = format!("{}.", entry.table);
        if overrides
            .iter()
            .any(|o| o.trim_start().starts_with(&prefix))
        {
            doc.entry(entry.table)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        }
    }
    for o in overrides {
        overrides::apply(&mut doc, o)?;
    }
    Ok(doc)
}

/// Takes the system tables out of `doc`, each checked by its system's type (an error names
/// the field), leaving the shared layers.
fn take_systems(
    source: &str,
    doc: &mut toml::Table,
) -> Result<BTreeMap<&'static str, toml::Value>, PresetError> {
    let mut systems = BTreeMap::new();
    for entry in SYSTEMS {
        let Some(value) = doc.remove(entry.table) else {
            continue;
        };
        (entry.check)(value.clone()).map_err(|e| match e {
            CheckError::Toml(e) => match &value {
                toml::Value::Table(t) => explain::explain(
                    &format!("{source} [{}]", entry.table),
                    &format!("{}.", entry.table),
                    t,
                    e,
                    |probe| match (entry.check)(toml::Value::Table(probe)) {
                        Err(CheckError::Toml(e)) => Err(e),
                        _ => Ok(()),
                    },
                ),
                _ => PresetError::Toml {
                    source_name: format!("{source} [{}]", entry.table),
                    source: e,
                },
            },
            CheckError::Invalid(e) => invalid(source, "", e),
        })?;
        systems.insert(entry.table, value);
    }
    Ok(systems)
}

/// A baseline's discrete SSD, validated: its flash and FTL (both or neither) and its NVMe
/// front end (which needs the SSD; defaults when absent).
fn baseline_ssd(
    source: &str,
    flash: Option<FlashConfig>,
    ftl: Option<FtlConfig>,
    nvme: Option<NvmeConfig>,
) -> Result<(Option<(FlashConfig, FtlConfig)>, NvmeConfig), PresetError> {
    let ssd = match (flash, ftl) {
        (Some(f), Some(t)) => {
            f.validate()
                .map_err(|e| invalid(source, "ssd: ", e.into()))?;
            t.validate(&f)
                .map_err(|e| invalid(source, "ssd: ", e.into()))?;
            Some((f, t))
        }
        (None, None) => None,
        _ => {
            return Err(PresetError::SsdHalf {
                source_name: source.to_string(),
            })
        }
    };
    if ssd.is_none() && nvme.is_some() {
        return Err(PresetError::SsdHalf {
            source_name: source.to_string(),
        });
    }
    let ssd_nvme = nvme.unwrap_or_default();
    ssd_nvme
        .validate()
        .map_err(|e| invalid(source, "ssd_", e.into()))?;
    Ok((ssd, ssd_nvme))
}
