//! nearflash's jobs as a library: each takes typed options (deserialisable, so a Python call's
//! keyword arguments or a sweep's parameters map onto them with unknown names refused) and
//! returns what the CLI writes as JSON. The CLI (`crates/nearflash`), the Python package
//! (`crates/python`) and the sweeps (`crates/sweep`) all call these, so a job exists once.
//!
//! Jobs: `io` (block I/O on a preset's device), `run` (FlashAbacus), `insider` (an INSIDER
//! application on one system), `insider_share` (programs side by side in the drive's slots),
//! `vfile_demo`, `reproduce`; Hayagui's `fileops`, `db_bench`, `ycsb` and `genome`;
//! Active Flash's `active_flash` (one Fig. 2 or Fig. 3 point); `placement` (a hot and a cold
//! stream: conventional, FDP, ZNS with host placement); `program` (a user's WebAssembly module next to the data); `presets`/`preset` list and
//! show presets.

pub mod active_flash;
pub mod cs;
mod error;
pub mod hayagui;
pub mod insider;
pub mod io;
pub mod output;
pub mod placement;
pub mod presets;
pub mod program;
pub mod reproduce;
pub mod run;

pub use active_flash::{active_flash, ActiveFlashOptions, ActiveFlashRun};
pub use error::JobError;
pub use hayagui::{
    db_bench, fileops, genome, ycsb, DbBenchOptions, FileopsOptions, GenomeOptions, YcsbOptions,
};
pub use insider::{
    insider, insider_share, vfile_demo, InsiderOptions, ShareOptions, VfileDemo, VfileOptions,
};
pub use io::{io, io_any, io_zoned, AnyIoReport, IoOptions};
pub use placement::{placement, PlacementOptions, PlacementRun};
pub use presets::{overrides_from, preset, presets, PresetInfo};
pub use program::{program, ProgramOptions, ProgramOutcome, ProgramReport};
pub use reproduce::{reproduce, ReproduceOptions};
pub use run::{run, RunFailure, RunOptions, RunOutcome};

/// The program version every result records (the workspace's version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Most RAM a functional job may plan to hold, MiB (the CLI's `--memory-max-mib` default).
pub const MEMORY_MIB_MAX: u64 = 4096;

/// `fidelity` as a name (`timing` | `functional`, any case) in a document.
fn de_fidelity<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<nearflash_sim::Fidelity, D::Error> {
    let name = <String as serde::Deserialize>::deserialize(d)?;
    name.parse().map_err(serde::de::Error::custom)
}

/// Options from a document (e.g. `{"pattern": "rand-read", "requests": 1000}`): unknown names
/// and mistyped values are errors naming `job` and the field (`mistyped`).
pub fn options_from<T: serde::de::DeserializeOwned>(
    job: &'static str,
    doc: serde_json::Value,
) -> Result<T, JobError> {
    serde_json::from_value(doc.clone()).map_err(|e| JobError::Options {
        job,
        reason: mistyped::<T>(&doc, e.to_string()),
    })
}

/// `message`, an error deserialising `doc` as `T`, naming the option at fault and, where it
/// takes a name, the names it takes. serde's "invalid type: integer `3`, expected string or
/// map" names neither. The option at fault is the one whose removal changes the error (serde
/// stops at the first bad entry; a missing option is reported only after every entry read);
/// the names are the ones serde lists when the option is given an empty name.
fn mistyped<T: serde::de::DeserializeOwned>(doc: &serde_json::Value, message: String) -> String {
    use serde_json::Value;
    if !(message.starts_with("invalid type") || message.starts_with("invalid value")) {
        return message;
    }
    let Some(options) = doc.as_object() else {
        return message;
    };
    let fails_as = |probe: serde_json::Map<String, Value>| {
        serde_json::from_value::<T>(Value::Object(probe))
            .err()
            .map(|e| e.to_string())
    };
    for (key, value) in options {
        let mut without = options.clone();
        without.remove(key);
        if fails_as(without).as_ref() == Some(&message) {
            continue;
        }
        let mut named = options.clone();
        named.insert(key.clone(), Value::String(String::new()));
        let names = fails_as(named).and_then(|e| {
            e.strip_prefix("unknown variant ``, expected ")
                .map(str::to_string)
        });
        return match names {
            Some(names) => format!("{key} must be {names}, not {value}"),
            None => format!("{key}: {message}"),
        };
    }
    message
}
