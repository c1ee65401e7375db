//! Presets as documents: the built-in names with what each can run, and one preset (after
//! overrides) as the JSON of its TOML document.

use crate::error::JobError;
use nearflash_preset::Preset;

/// One line of `nearflash presets`: a built-in preset, its tables beyond `[flash]`/`[ftl]`
/// and its description.
pub struct PresetInfo {
    pub name: &'static str,
    pub tables: Vec<&'static str>,
    pub description: String,
}

/// Every built-in preset, in `nearflash presets` order.
pub fn presets() -> Result<Vec<PresetInfo>, JobError> {
    nearflash_preset::BUILTIN
        .iter()
        .map(|(name, _)| {
            let p = Preset::load(name, &[])?;
            Ok(PresetInfo {
                name,
                tables: p.tables(),
                description: p.description,
            })
        })
        .collect()
}

/// A built-in preset by name (or a TOML file by path) with `overrides` applied, as a document.
pub fn preset(name: &str, overrides: &[String]) -> Result<serde_json::Value, JobError> {
    let p = Preset::load(name, overrides)?;
    Ok(serde_json::to_value(&p).expect("a preset serialises"))
}

/// `table.field=value` overrides from (key, TOML value) pairs: strings are quoted, so a
/// string field gets a string whatever it spells.
pub fn overrides_from<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a toml::Value)>,
) -> Vec<String> {
    pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_from_pairs_apply_like_the_command_line() {
        let pairs = [
            ("flash.channels", toml::Value::Integer(2)),
            ("ftl.gc_policy", toml::Value::String("greedy".into())),
        ];
        let o = overrides_from(pairs.iter().map(|(k, v)| (*k, v)));
        assert_eq!(o, ["flash.channels=2", "ftl.gc_policy=\"greedy\""]);
        let p = preset("test-min", &o).unwrap();
        assert_eq!(p["flash"]["channels"], 2);
        assert_eq!(p["ftl"]["gc_policy"], "greedy");
    }

    #[test]
    fn every_builtin_preset_is_listed() {
        assert_eq!(presets().unwrap().len(), nearflash_preset::BUILTIN.len());
    }
}
