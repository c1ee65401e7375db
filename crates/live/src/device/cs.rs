//! The control file's `cs` requests: NVMe Computational Programs and Subsystem Local Memory
//! commands run on the served device's computational drive.
//!
//! The commands are `nearflash cs script`'s values (`ScriptCommand`) and run through its runner
//! (`nearflash_cs::script::run_script`), so the script, the Python API and the control file
//! share one path. The drive is made from the image's preset (`[cs]`, its NVMe front end) on
//! the first `cs` request and kept for later ones (programs stay loaded, SLM keeps its bytes).
//!
//! **Its NVM namespace is the image's.** The drive's front end sits over a
//! [`nearflash_cs::port::Port`] whose reads go to the image's own FTL — the device the file
//! system writes through — as raw reads beside the file system's (`FsHost::submit_raw`). So
//! `copy_from_file` (a path resolved as the writer of the request: opened for reading, its
//! data made durable, its extents taken) copies what the file system wrote, through the same
//! FTL and flash, contending with it. Raw LBAs (`copy_from_nvm` with `lbas`) read any
//! file's blocks, so they are root's only; `write_nvm` would write under the file system and
//! is refused.
//!
//! **Its clock is the device's.** Each command runs on the drive's loop stepped together
//! with the file system's (`Session::call_served`: the image's loop runs up to the drive's
//! next event, its reads landing in the port at their instants) from the device's now, under
//! the drive's watchdog; after the request the device's clock is at the last command's end.
//! The device thread answers the control file's `write` then, so `--pace wall` holds the
//! write for the commands' simulated time, as a virtual file's open is held for its run.
//!
//! Files the commands name (programs, `memory_write` data) come from the request (hex,
//! decoded up front and bounded by `MODULE_BYTES_MAX` each); outputs go back in the answer,
//! bounded.

use super::FsDevice;
use crate::op::Errno;
use crate::vfile::control::{
    self, hex_decode, hex_encode, CsAnswer, CsRequest, CsStep, CS_COMMANDS_MAX,
    CS_OUTPUT_BYTES_MAX, MODULE_BYTES_MAX,
};
use crate::vfile::VfileError;
use nearflash_blockdev::{BlockCompletion, BlockRequest};
use nearflash_cs::device::{Command, Completion, LBA_BYTES};
use nearflash_cs::port::{Port, PortServer};
use nearflash_cs::script::{
    run_script, FileExtent, FileExtents, HostWrites, Script, ScriptDrive, ScriptError, ScriptFiles,
};
use nearflash_cs::session::{Session, SessionError};
use nearflash_cs::CsConfig;
use nearflash_fs::host::RAW_ID_BIT;
use nearflash_fs::{Caller, FileKind, FsHost, FsOp, FsReply, OpenFlags, BLOCK_BYTES};
use nearflash_ftl::Device;
use nearflash_sim::{SimTime, Stall};
use std::collections::BTreeMap;
use std::path::Path;

// A file's extents are whole LBAs of the drive's namespace.
const _: () = assert!(BLOCK_BYTES as u64 == LBA_BYTES);

/// The computational drive: its loop and the device over the image's port.
pub(super) struct CsDrive {
    session: Session<Port>,
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

/// The image's loop serving the port: raw reads of the image's FTL beside the file system.
struct ImageServer<'a>(&'a mut FsHost<Device>);

impl PortServer for ImageServer<'_> {
    fn now(&self) -> SimTime {
        self.0.now()
    }
    fn submit(&mut self, at: SimTime, mut req: BlockRequest) {
        if self.0.now() < at {
            self.0.advance_to(at);
        }
        assert!(
            req.id & RAW_ID_BIT == 0,
            "the port's ids leave the raw bit clear"
        );
        req.id |= RAW_ID_BIT;
        self.0.submit_raw(req);
    }
    fn outstanding(&self) -> u64 {
        self.0.raw_outstanding()
    }
    fn run_until_done(
        &mut self,
        limit: Option<SimTime>,
        out: &mut Vec<BlockCompletion>,
    ) -> Result<(), Stall> {
        self.0.run_until_raw_done(limit)?;
        let from = out.len();
        self.0.take_raw_completions(out);
        for c in &mut out[from..] {
            c.id &= !RAW_ID_BIT;
        }
        Ok(())
    }
}

/// One request's view of the drive: the device (its file system, its clock) and the caller.
struct LiveDrive<'a> {
    dev: &'a mut FsDevice,
    drive: &'a mut CsDrive,
    caller: Caller,
}

impl LiveDrive<'_> {
    fn refused(&self, path: &str, e: Errno) -> SessionError {
        SessionError::File {
            path: path.to_string(),
            uid: self.caller.uid,
            gid: self.caller.gid,
            errno: e.0,
        }
    }
}

impl ScriptDrive for LiveDrive<'_> {
    fn now(&self) -> SimTime {
        self.drive.session.now()
    }

    fn call(&mut self, cmd: Command) -> Result<Completion, SessionError> {
        let host = self.dev.image.host_mut();
        let start = host.now().max(self.drive.session.now());
        host.advance_to(start);
        self.drive.session.advance_to(start);
        let done = self
            .drive
            .session
            .call_served(cmd, &mut ImageServer(host))?;
        // The device's clock follows the drive's to the command's end.
        let end = self.drive.session.now();
        if host.now() < end {
            host.advance_to(end);
        }
        debug_assert!(
            done.completed <= end,
            "a command completes by the drive's now"
        );
        Ok(done)
    }

    fn write_nvm(
        &mut self,
        _offset_bytes: u64,
        _data: &[u8],
        _request_bytes: u64,
        _depth: u32,
    ) -> Result<(), SessionError> {
        Err(SessionError::ImageBlocks { what: "write_nvm" })
    }

    fn check_raw_copy(&self) -> Result<(), SessionError> {
        if self.caller.uid == 0 {
            return Ok(());
        }
        Err(SessionError::ImageBlocks {
            what: "copy_from_nvm with raw LBAs by a caller other than root",
        })
    }

    fn file_extents(&mut self, path: &str) -> Result<FileExtents, SessionError> {
        let caller = self.caller;
        let op = FsOp::Open {
            path: path.to_string(),
            flags: OpenFlags {
                read: true,
                ..OpenFlags::default()
            },
            perm: 0,
        };
        let fh = match self.dev.fs(caller, op) {
            Ok(FsReply::Opened(fh)) => fh,
            Ok(_) => return Err(self.refused(path, Errno(libc::EIO))),
            Err(e) => return Err(self.refused(path, e)),
        };
        let got = self.extents_of_open(path, fh);
        let closed = self.dev.fs(caller, FsOp::Close(fh));
        let file = got?;
        closed.map_err(|e| self.refused(path, e))?;
        Ok(file)
    }
}

impl LiveDrive<'_> {
    /// The open file's size and extents, its data made durable first (a file written
    /// through the mount may still be in the buffer cache; the flash must hold it).
    fn extents_of_open(
        &mut self,
        path: &str,
        fh: nearflash_fs::Fh,
    ) -> Result<FileExtents, SessionError> {
        let caller = self.caller;
        let stat = match self.dev.fs(caller, FsOp::Stat(path.to_string())) {
            Ok(FsReply::Stat(s)) => s,
            Ok(_) => return Err(self.refused(path, Errno(libc::EIO))),
            Err(e) => return Err(self.refused(path, e)),
        };
        if stat.kind != FileKind::File {
            return Err(self.refused(path, Errno(libc::EISDIR)));
        }
        self.dev
            .fs(caller, FsOp::Fsync(fh))
            .map_err(|e| self.refused(path, e))?;
        let extents = match self.dev.fs(caller, FsOp::Extents(fh)) {
            Ok(FsReply::Extents(e)) => e,
            Ok(_) => return Err(self.refused(path, Errno(libc::EIO))),
            Err(e) => return Err(self.refused(path, e)),
        };
        Ok(FileExtents {
            size_bytes: stat.size_bytes,
            extents: extents
                .into_iter()
                .map(|e| FileExtent {
                    file_offset_bytes: e.file_offset_bytes,
                    device_offset_bytes: e.device_offset_bytes,
                    len_bytes: e.len_bytes,
                })
                .collect(),
        })
    }
}

impl FsDevice {
    /// Runs a `cs` request as `caller`: every command, stopping at the first that fails
    /// (refused with the command's index, its status and why).
    pub(super) fn run_cs(
        &mut self,
        caller: Caller,
        r: CsRequest,
    ) -> Result<control::Answer, VfileError> {
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
        let mut drive = match self.cs.take() {
            Some(d) => d,
            None => self.new_cs_drive()?,
        };
        let script = Script {
            commands: r.commands,
        };
        let host = self.image.preset().host.clone().unwrap_or_default();
        let ran = run_script(
            &mut LiveDrive {
                dev: self,
                drive: &mut drive,
                caller,
            },
            &script,
            "control",
            &mut RequestFiles(files),
            HostWrites {
                request_bytes: host.io_request_bytes,
                depth: host.io_queue_depth,
            },
        );
        let now_us = drive.session.now().as_ns() as f64 / 1e3;
        self.cs = Some(drive);
        let out = ran.map_err(refusal)?;
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
                now_us,
            }),
        })
    }

    /// The computational drive, made from the image's preset: its NVMe front end and `[cs]`
    /// over the image's logical space, its clock at the device's now.
    fn new_cs_drive(&mut self) -> Result<Box<CsDrive>, VfileError> {
        let preset = self.image.preset();
        let nvme = preset.nvme.clone();
        let cs: CsConfig = preset.system().unwrap_or_default();
        let capacity_bytes = self.image.capacity_bytes();
        let now = self.image.host_mut().now();
        let session = Session::over_port(nvme, cs, capacity_bytes, CS_SEED, now).map_err(|e| {
            VfileError::BadRequest(format!("the computational drive does not start: {e}"))
        })?;
        Ok(Box::new(CsDrive { session }))
    }
}

/// Why a request was refused: a file the file system refused the caller keeps its errno.
fn refusal(e: ScriptError) -> VfileError {
    match e {
        ScriptError::Session(SessionError::File {
            path,
            uid,
            gid,
            errno,
        }) => VfileError::RealFile {
            path,
            uid,
            gid,
            errno,
        },
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
    }
}
