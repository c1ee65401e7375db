//! Computational storage the standard way (crates/cs, docs/cs.md) as a drive the caller
//! drives one command at a time: `nearflash cs` and Python's `nearflash.cs.Device` open it
//! here from a preset, so both get the same drive, the same host block writes and the same
//! engines.

use crate::error::JobError;
use nearflash_cs::script::HostWrites;
use nearflash_cs::session::{DriveConfig, Session};
use nearflash_cs::CsConfig;
use nearflash_host::HostConfig;
use nearflash_preset::Preset;

/// The drive's layers as the preset gives them.
pub fn drive_config(preset: &Preset) -> DriveConfig {
    DriveConfig {
        flash: preset.flash.clone(),
        ftl: preset.ftl.clone(),
        write_cache: preset.write_cache.clone(),
        nvme: preset.nvme.clone(),
    }
}

/// A freshly formatted computational drive and how its host writes blocks.
pub struct CsDrive {
    pub session: Session,
    /// The preset's host (`[host]`, or the default host): its block requests write the
    /// input, and the host-only comparison runs on it.
    pub host: HostConfig,
    pub preset: String,
    /// The compute engines' names, in namespace order (engine `i` is compute namespace
    /// `NSID_COMPUTE_FIRST + i`).
    pub engines: Vec<String>,
}

/// Opens `preset` (with `overrides`, as `--set`) as a computational drive seeded `seed`.
pub fn open(preset: &str, overrides: &[String], seed: u64) -> Result<CsDrive, JobError> {
    let preset = Preset::load(preset, overrides)?;
    let cs: CsConfig = preset.system().unwrap_or_default();
    let engines = cs.engines.iter().map(|e| e.name.clone()).collect();
    let host = preset.host.clone().unwrap_or_default();
    let session =
        Session::new(&drive_config(&preset), cs, seed).map_err(|e| JobError::Cs(Box::new(e)))?;
    Ok(CsDrive {
        session,
        host,
        preset: preset.name,
        engines,
    })
}

impl CsDrive {
    /// The host's block writes (`write_nvm`): its request size and requests in flight.
    pub fn writes(&self) -> HostWrites {
        HostWrites {
            request_bytes: self.host.io_request_bytes,
            depth: self.host.io_queue_depth,
        }
    }

    /// The engine named `name`'s index.
    pub fn engine(&self, name: &str) -> Option<usize> {
        self.engines.iter().position(|e| e == name)
    }
}
