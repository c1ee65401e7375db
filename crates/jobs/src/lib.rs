//! nearflash's jobs as a library: each takes typed options (deserialisable, so a Python call's
//! keyword arguments or a sweep's parameters map onto them with unknown names refused) and
//! returns what the CLI writes as JSON. The CLI (`crates/nearflash`), the Python package
//! (`crates/python`) and the sweeps (`crates/sweep`) all call these, so a job exists once.
//!
//! Jobs: `io` (block I/O on a preset's device), `run` (FlashAbacus), `insider` (an INSIDER
//! application on one system), `insider_share` (programs side by side in the drive's slots),
//! `vfile_demo`, `reproduce`; `presets`/`preset` list and show presets.

mod error;
pub mod insider;
pub mod io;
pub mod output;
pub mod presets;
pub mod reproduce;
pub mod run;

pub use error::JobError;
pub use insider::{
    insider, insider_share, vfile_demo, InsiderOptions, ShareOptions, VfileDemo, VfileOptions,
};
pub use io::{io, IoOptions};
pub use presets::{overrides_from, preset, presets, PresetInfo};
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
/// and mistyped values are errors naming `job` and the field.
pub fn options_from<T: serde::de::DeserializeOwned>(
    job: &'static str,
    doc: serde_json::Value,
) -> Result<T, JobError> {
    serde_json::from_value(doc).map_err(|e| JobError::Options {
        job,
        reason: e.to_string(),
    })
}
