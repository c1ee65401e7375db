//! The control file's `cs` requests: NVMe Computational Programs and Subsystem Local Memory
//! commands run on a computational drive the live device owns.
//!
//! The commands are `nearflash cs script`'s values (`ScriptCommand`) and run through its runner
//! (`nearflash_cs::script::run_script`), so the script, the Python API and the control file
//! share one path. The drive is made from the image's preset on the first `cs` request and
//! kept for later ones (programs stay loaded, SLM keeps its bytes, its clock goes on). It is
//! its own drive: Memory Copy reads what the request's `write_nvm` commands wrote, not the
//! files of the image's file system (docs/cs.md, "Live mode", says what sharing the image's
//! FTL would take). Files the commands name come from the request (hex, decoded up front and
//! bounded by `MODULE_BYTES_MAX` each); outputs go back in the answer, bounded.

use super::FsDevice;
use crate::vfile::control::{
    self, hex_decode, hex_encode, CsAnswer, CsRequest, CsStep, CS_COMMANDS_MAX,
    CS_OUTPUT_BYTES_MAX, MODULE_BYTES_MAX,
};
use crate::vfile::VfileError;
use nearflash_cs::script::{run_script, HostWrites, Script, ScriptError, ScriptFiles};
use nearflash_cs::session::{DriveConfig, Session};
use nearflash_cs::CsConfig;
use std::collections::BTreeMap;
use std::path::Path;

/// The computational drive: its session and the host's block writes (`write_nvm`).
pub(super) struct CsDrive {
    session: Session,
    writes: HostWrites,
}

/// Seed of the computational drive (the CLI's `nearflash cs` default seed).
const CS_SEED: u64 = 1;

/// Files a request carries, by name.
struct RequestFiles(BTreeMap<String, Vec<u8>>);

impl ScriptFiles for RequestFiles {
    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>> {
        let name = path.to_string_lossy();
        self.0.get(name.as_ref()).cloned().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{name:?} is not among the request's files"),
            )
        })
    }
}

impl FsDevice {
    /// Runs a `cs` request: every command, stopping at the first that fails (refused with
    /// the command's index, its status and why).
    pub(super) fn run_cs(&mut self, r: CsRequest) -> Result<control::Answer, VfileError> {
        if r.commands.is_empty() || r.commands.len() > CS_COMMANDS_MAX {
            return Err(VfileError::BadRequest(format!(
                "{} commands: a cs request holds 1 to {CS_COMMANDS_MAX}",
                r.commands.len()
            )));
        }
        let mut files = BTreeMap::new();
        for (name, hex) in &r.files {
            let bytes = hex_decode(hex)
                .map_err(|e| VfileError::BadRequest(format!("file {name:?}: {e}")))?;
            if bytes.len() as u64 > MODULE_BYTES_MAX {
                return Err(VfileError::BadRequest(format!(
                    "file {name:?}: {} bytes, over the {MODULE_BYTES_MAX} a file may have",
                    bytes.len()
                )));
            }
            files.insert(name.clone(), bytes);
        }
        let drive = self.cs_drive()?;
        let script = Script {
            commands: r.commands,
        };
        let out = run_script(
            &mut drive.session,
            &script,
            "control",
            &mut RequestFiles(files),
            drive.writes,
        )
        .map_err(|e| match e {
            ScriptError::Command {
                index,
                step,
                status,
                source,
                ..
            } => VfileError::BadRequest(format!(
                "cs command {index} ({step}) failed with {status}: {source}"
            )),
            other => VfileError::BadRequest(format!("cs: {other}")),
        })?;
        let mut outputs = BTreeMap::new();
        let mut output_bytes = 0u64;
        for (name, data) in &out.outputs {
            output_bytes += data.len() as u64;
            if output_bytes > CS_OUTPUT_BYTES_MAX {
                return Err(VfileError::BadRequest(format!(
                    "the memory_read outputs exceed the {CS_OUTPUT_BYTES_MAX} bytes an answer carries"
                )));
            }
            outputs.insert(name.to_string_lossy().into_owned(), hex_encode(data));
        }
        let steps = out
            .steps
            .iter()
            .map(|s| CsStep {
                command: s.name.to_string(),
                detail: s.detail.clone(),
                latency_us: s.latency.as_ns() as f64 / 1e3,
                status: s.status.name().to_string(),
            })
            .collect::<Vec<_>>();
        Ok(control::Answer {
            ok: true,
            errno: None,
            message: format!("{} cs commands", steps.len()),
            vfiles: Vec::new(),
            cs: Some(CsAnswer {
                steps,
                outputs,
                last_result: out.last_result,
                now_us: drive.session.now().as_ns() as f64 / 1e3,
            }),
        })
    }

    /// The computational drive, made from the image's preset on first use.
    fn cs_drive(&mut self) -> Result<&mut CsDrive, VfileError> {
        if self.cs.is_none() {
            let preset = self.image.preset();
            let drive = DriveConfig {
                flash: preset.flash.clone(),
                ftl: preset.ftl.clone(),
                write_cache: preset.write_cache.clone(),
                nvme: preset.nvme.clone(),
            };
            let cs: CsConfig = preset.system().unwrap_or_default();
            let host = preset.host.clone().unwrap_or_default();
            let session = Session::new(&drive, cs, CS_SEED).map_err(|e| {
                VfileError::BadRequest(format!("the computational drive does not start: {e}"))
            })?;
            self.cs = Some(Box::new(CsDrive {
                session,
                writes: HostWrites {
                    request_bytes: host.io_request_bytes,
                    depth: host.io_queue_depth,
                },
            }));
        }
        Ok(self.cs.as_mut().expect("made above"))
    }
}
