//! `--set table.field=value`: one override applied to the parsed TOML document before it is
//! deserialised and validated, so an override is checked exactly like the file (and an error
//! names `table.field`).

use crate::PresetError;

/// Applies one `table.field=value` override; the value is parsed as a TOML value, falling
/// back to a string (so `ftl.gc_policy=greedy` works unquoted).
pub fn apply(doc: &mut toml::Table, spec: &str) -> Result<(), PresetError> {
    let bad = |reason: &str| PresetError::Override {
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
        // A string field is often a name from a list (`ftl.gc_policy`): the preset's own
        // deserialisation names the accepted names (`explain`).
        Some(toml::Value::String(_)) => {}
        Some(old) if old.type_str() != value.type_str() && !numeric_pair(old, &value) => {
            return Err(bad(&format!(
                "{table}.{field} is {}, got {}",
                a(old.type_str()),
                a(value.type_str())
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

/// "an integer", "a string": a TOML type's name with its article.
fn a(type_name: &str) -> String {
    match type_name.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {type_name}"),
        _ => format!("a {type_name}"),
    }
}

fn numeric_pair(a: &toml::Value, b: &toml::Value) -> bool {
    matches!(
        (a, b),
        (toml::Value::Float(_), toml::Value::Integer(_))
            | (toml::Value::Integer(_), toml::Value::Float(_))
    )
}
