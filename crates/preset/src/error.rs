//! Why a preset could not be loaded or lacks what a command needs. Every message names the
//! preset (or file) and, where there is one, the table and field.

use thiserror::Error;

/// A lower layer's validation error, kept whole (typed) rather than stringified.
pub type ValidationError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Error)]
pub enum PresetError {
    #[error("unknown preset '{name}' (built-in presets: {known}; or give a path to a .toml file)")]
    Unknown { name: String, known: String },

    #[error("preset file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{source_name}: {source}")]
    Toml {
        source_name: String,
        #[source]
        source: toml::de::Error,
    },

    /// A value of the wrong kind where a name from a list is due (`gc_policy = 3`).
    #[error("{source_name}: {key} must be {expected}, not {found}")]
    FieldType {
        source_name: String,
        key: String,
        /// The accepted names, as serde lists them: "one of `a`, `b`, `c`", "`a` or `b`".
        expected: String,
        found: String,
    },

    #[error("override '{spec}': {reason}")]
    Override { spec: String, reason: String },

    /// A table parsed but its values are impossible (a zero rate, a geometry that does not
    /// fit); the lower layer's error names the field.
    #[error("{source_name}: {prefix}{source}")]
    Invalid {
        source_name: String,
        /// `ssd: ` for the baseline's SSD tables, whose errors would otherwise read like the
        /// device's own; empty elsewhere.
        prefix: &'static str,
        #[source]
        source: ValidationError,
    },

    #[error("{source_name}: [ssd_flash] and [ssd_ftl] come together ([ssd_nvme] only with them)")]
    SsdHalf { source_name: String },

    #[error("preset {preset} has no [{table}] table: {needed_by} needs it")]
    Missing {
        preset: String,
        table: &'static str,
        needed_by: &'static str,
    },
}
