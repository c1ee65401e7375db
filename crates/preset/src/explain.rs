//! Type errors that name the key and what it takes. The TOML deserialiser reports a number, a
//! boolean or a list given where a name is expected (`gc_policy = 3`) as "invalid type: unit
//! variant, expected string only", and an empty table as "wanted exactly 1 element": neither
//! says which names would do. For those, the value is replaced by an empty name and the table
//! deserialised again, which makes serde list the accepted names; the error then reads
//! "ftl.gc_policy must be one of `round-robin`, `greedy`, `cost-benefit`, not an integer (3)".
//! Other errors already name the key and the expected type, and are kept as they are.

use crate::PresetError;

/// The messages of a value that cannot be a name, where a name (an enum's variant) is due.
fn is_not_a_name(message: &str) -> bool {
    message.starts_with("invalid type: unit variant") || message.starts_with("wanted exactly 1")
}

/// The dotted key a deserialisation error from a `toml::Value` names: toml prints it as
/// "in `a.b`" after the message (and has no accessor for it).
pub fn error_key(e: &toml::de::Error) -> Option<String> {
    let shown = e.to_string();
    let line = shown.lines().rev().find(|l| !l.trim().is_empty())?;
    Some(line.strip_prefix("in `")?.strip_suffix('`')?.to_string())
}

/// The value at dotted `key` in `table`, for changing.
fn value_at<'a>(table: &'a mut toml::Table, key: &str) -> Option<&'a mut toml::Value> {
    let (first, rest) = match key.split_once('.') {
        Some((first, rest)) => (first, Some(rest)),
        None => (key, None),
    };
    let v = table.get_mut(first)?;
    match rest {
        None => Some(v),
        Some(rest) => value_at(v.as_table_mut()?, rest),
    }
}

/// "an integer (3)", "a table ({})": what was given, for the message.
fn describe(v: &toml::Value) -> String {
    let article = match v {
        toml::Value::Integer(_) | toml::Value::Array(_) => "an",
        _ => "a",
    };
    let kind = match v {
        toml::Value::Integer(_) => "integer",
        toml::Value::Float(_) => "number",
        toml::Value::Boolean(_) => "boolean",
        toml::Value::Datetime(_) => "date",
        toml::Value::Array(_) => "array",
        toml::Value::Table(_) => "table",
        toml::Value::String(_) => "string",
    };
    let shown: String = v.to_string().chars().take(40).collect();
    format!("{article} {kind} ({shown})")
}

/// `e`, an error deserialising `table` (whose keys are named under `prefix`, e.g. `insider.`
/// for a system table), as a message naming the key and the accepted names where toml's own
/// does not; `deserialise` is the deserialisation that failed, run again on a probe.
pub(crate) fn explain(
    source_name: &str,
    prefix: &str,
    table: &toml::Table,
    e: toml::de::Error,
    deserialise: impl Fn(toml::Table) -> Result<(), toml::de::Error>,
) -> PresetError {
    let keep = |e| PresetError::Toml {
        source_name: source_name.to_string(),
        source: e,
    };
    if !is_not_a_name(e.message()) {
        return keep(e);
    }
    let Some(key) = error_key(&e) else {
        return keep(e);
    };
    let mut probe = table.clone();
    let Some(slot) = value_at(&mut probe, &key) else {
        return keep(e);
    };
    let found = describe(slot);
    *slot = toml::Value::String(String::new());
    let names = match deserialise(probe) {
        Err(p) => p
            .message()
            .strip_prefix("unknown variant ``, expected ")
            .map(str::to_string),
        Ok(()) => None,
    };
    match names {
        Some(names) => PresetError::FieldType {
            source_name: source_name.to_string(),
            key: format!("{prefix}{key}"),
            expected: names,
            found,
        },
        None => keep(e),
    }
}
