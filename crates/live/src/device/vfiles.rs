//! The device thread's side of INSIDER's virtual files (`crate::vfile` has the rest).
//!
//! - **Requests** (`control_write`): a complete line written to the control file runs as its
//!   writer. Registering checks the writer's read permission on the real file the way the
//!   file system checks any `open(2)` — by opening it for reading as the writer (and closing
//!   it) — as INSIDER's vopen checks every real file before anything starts; a refusal is that
//!   errno (`EACCES`, `ENOENT`, …) with the message in the answer.
//! - **Runs** (`open_vfile`): opening a virtual file runs its program to completion on
//!   INSIDER's ISC unit (`vrun`) over the real file, read through the file system as the
//!   *reader* (so the reader needs read permission on the real file: the file system refuses
//!   otherwise) in the requests the unit's credits allow, on the device's clock; the open
//!   completes when the unit's slot (or core) finishes the last chunk, so `--pace wall` holds
//!   it until then. Requests are served one at a time, so the run reads a snapshot of
//!   the file (no write can interleave) — INSIDER sets the file append-only for the same end.
//!   The output is kept for the handle (bounded); reads serve it (`direct_io`), `fstat` of
//!   the handle gives its size, and the virtual file's size otherwise is its last run's.
//! - **Persistence**: each registration is a file on the image, `/.nearflash/vfiles/NAME.json`
//!   (root's, mode 0600, in 0700 directories: hidden while served; a module travels inside
//!   it), written to `NAME.json.tmp`, synced and renamed, so a power cut leaves either the
//!   old state or the new; they are loaded when the server starts (`load_vfiles`), and one
//!   that no longer loads is skipped and counted (`load_errors`).

use super::vrun::RunOutput;
use super::FsDevice;
use crate::driver::LiveDevice;
use crate::op::{Answer, Attr, Errno, InodeNo};
use crate::vfile::control::{self, Registration, Request, Written};
use crate::vfile::program::{is_module_name, ModuleLimits, VfileProgram};
use crate::vfile::VfileError;
use nearflash_fs::{Caller, Fh, FileKind, FsOp, FsReply, OpenFlags};
use serde::{Deserialize, Serialize};

/// Where registrations are kept on the image (hidden while served).
const STORE_DIR: &str = "/.nearflash";
const STORE_VFILES_DIR: &str = "/.nearflash/vfiles";
/// The virtual files' directory as the control file's answers name it (from the mount point).
const MOUNT_VFILES_DIR: &str = ".nearflash/vfiles";
/// A stored registration is at most a request's size.
const STORED_BYTES_MAX: u64 = control::REQUEST_BYTES_MAX + 4096;
/// Bytes per write of a stored registration (the file system's `write_bytes_max`).
const STORE_WRITE_BYTES: usize = 1 << 20;
/// Bytes per read of a stored registration.
const STORE_READ_BYTES: u64 = 256 << 10;

/// A run's output, held for one open handle.
pub(super) struct Output {
    ino: InodeNo,
    bytes: Vec<u8>,
}

/// A registration as stored on the image.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    owner_uid: u32,
    owner_gid: u32,
    registered_ns: u64,
    registration: Registration,
}

fn read_only() -> OpenFlags {
    OpenFlags {
        read: true,
        write: false,
        append: false,
        truncate: false,
        create: false,
        excl: false,
    }
}

impl FsDevice {
    /// A write to control handle `fh`: the request runs once its line is complete.
    pub(super) fn control_write(
        &mut self,
        caller: Caller,
        fh: u64,
        offset_bytes: u64,
        data: &[u8],
    ) -> Result<Answer, Errno> {
        let written = u32::try_from(data.len()).map_err(|_| Errno(libc::EINVAL))?;
        let parsed = self.controls.get_mut(fh)?.write(offset_bytes, data);
        let request = match parsed {
            Ok(Written::Partial) => return Ok(Answer::Written(written)),
            Ok(Written::Complete(r)) => r,
            Err(e) => return Err(self.refuse(fh, &e)),
        };
        match self.request(caller, request) {
            Ok(answer) => {
                self.controls.get_mut(fh)?.answer(Ok(()), &answer);
                Ok(Answer::Written(written))
            }
            Err(e) => Err(self.refuse(fh, &e)),
        }
    }

    /// Records a refused request (answer, statistics); its errno. A write after the answer
    /// (the retried remainder of a refused request) is refused without counting again.
    fn refuse(&mut self, fh: u64, e: &VfileError) -> Errno {
        let errno = e.errno();
        let Ok(h) = self.controls.get_mut(fh) else {
            return errno;
        };
        if h.is_answered() {
            return errno;
        }
        // A request refused in its middle (out of order, too large) is answered too.
        h.refused(errno, &control::Answer::refused(e));
        self.vfile_figures.requests_refused += 1;
        self.vfile_figures.last_error = Some(format!("request refused: {e}"));
        errno
    }

    fn request(&mut self, caller: Caller, r: Request) -> Result<control::Answer, VfileError> {
        let message = match r {
            Request::Register(reg) => {
                let name = reg.name.clone();
                self.register(caller, reg)?;
                self.vfile_figures.registrations += 1;
                format!("registered {MOUNT_VFILES_DIR}/{name}")
            }
            Request::Unregister { name } => {
                self.vfiles.remove(&name, caller)?;
                self.vfile_figures.unregistrations += 1;
                self.unstore(&name)?;
                format!("unregistered {MOUNT_VFILES_DIR}/{name}")
            }
            Request::List => format!("{} virtual files", self.vfiles.len()),
            Request::Cs(c) => return self.run_cs(caller, c),
        };
        Ok(control::Answer {
            ok: true,
            errno: None,
            message,
            vfiles: self.vfiles.listed(MOUNT_VFILES_DIR),
            cs: None,
        })
    }

    /// Checks and adds a registration for `caller`, and stores it on the image.
    fn register(&mut self, caller: Caller, reg: Registration) -> Result<(), VfileError> {
        self.vfiles.check_free(&reg.name)?;
        if !reg.file.starts_with('/') {
            return Err(VfileError::BadRequest(format!(
                "file {:?}: an absolute path in the device's file system",
                reg.file
            )));
        }
        if reg.file == STORE_DIR || reg.file.starts_with(&format!("{STORE_DIR}/")) {
            return Err(VfileError::BadRequest(format!(
                "{STORE_DIR} is the server's own"
            )));
        }
        let program = program_of(&reg)?;
        self.check_readable(caller, &reg.file)?;
        let now_ns = self.now().as_ns();
        self.store(&reg, caller, now_ns)?;
        self.vfiles.insert(reg, program, caller, now_ns)?;
        Ok(())
    }

    /// Whether the file system lets `caller` open `path` for reading: the check of `open(2)`
    /// itself (search permission on every directory, read permission on the file).
    fn check_readable(&mut self, caller: Caller, path: &str) -> Result<(), VfileError> {
        let fh = self.open_real(caller, path)?;
        self.close_real(caller, fh)
    }

    fn open_real(&mut self, caller: Caller, path: &str) -> Result<Fh, VfileError> {
        let refused = |e: Errno| VfileError::RealFile {
            path: path.to_string(),
            uid: caller.uid,
            gid: caller.gid,
            errno: e.0,
        };
        let op = FsOp::Open {
            path: path.to_string(),
            flags: read_only(),
            perm: 0,
        };
        match self.fs(caller, op).map_err(refused)? {
            FsReply::Opened(fh) => Ok(fh),
            _ => Err(refused(Errno(libc::EIO))),
        }
    }

    fn close_real(&mut self, caller: Caller, fh: Fh) -> Result<(), VfileError> {
        self.fs(caller, FsOp::Close(fh))
            .map(drop)
            .map_err(|e| VfileError::Device {
                what: "closing the real file".into(),
                errno: e.0,
            })
    }

    /// Opening virtual file `ino` as `caller`: the run, its output held for the handle.
    pub(super) fn open_vfile(
        &mut self,
        caller: Caller,
        ino: InodeNo,
        flags: i32,
    ) -> Result<Answer, Errno> {
        if flags & libc::O_ACCMODE != libc::O_RDONLY {
            return Err(Errno(libc::EACCES));
        }
        let Some(entry) = self.vfiles.by_ino(ino) else {
            return Err(Errno(libc::ENOENT));
        };
        let name = entry.request.name.clone();
        if self.outputs.len() >= crate::vfile::OPEN_OUTPUTS_MAX {
            return Err(Errno(libc::EMFILE));
        }
        let start = self.now();
        match self.run_vfile(caller, &name) {
            Ok(out) => {
                let f = &mut self.vfile_figures;
                f.runs += 1;
                f.bytes_in += out.bytes_in;
                f.bytes_out += out.output.len() as u64;
                f.program_sim_s += out.program_ns as f64 / 1e9;
                f.isc_requests += out.isc_requests;
                f.credits_returned += out.credits_returned;
                self.advance_to(out.end);
                let done = self.now();
                assert!(done >= out.end, "the open completes with its run");
                self.vfile_figures.run_sim_s += done.since(start).as_ns() as f64 / 1e9;
                self.vfiles
                    .by_ino_mut(ino)
                    .expect("runs are served one at a time")
                    .last_output_bytes = out.output.len() as u64;
                let fh = self.outputs.insert(Output {
                    ino,
                    bytes: out.output,
                })?;
                Ok(Answer::Opened {
                    fh,
                    direct_io: true,
                })
            }
            Err(e) => {
                if !matches!(e, VfileError::RealFile { .. }) {
                    self.vfile_figures.runs += 1;
                    self.vfile_figures.runs_failed += 1;
                }
                eprintln!("nearflash serve: virtual file {name}: {e}");
                self.vfile_figures.last_error = Some(format!("{name}: {e}"));
                Err(e.errno())
            }
        }
    }

    /// Runs `name`'s program over its real file, read as `caller`, on the ISC unit.
    fn run_vfile(&mut self, caller: Caller, name: &str) -> Result<RunOutput, VfileError> {
        let entry = self.vfiles.get(name).expect("looked up by the caller");
        let file = entry.request.file.clone();
        let fh = self.open_real(caller, &file)?;
        let run = self.real_size(caller, &file).and_then(|input_bytes| {
            // A module's default fuel is that of `program run` over the same input.
            let entry = self.vfiles.get(name).expect("looked up by the caller");
            let program = entry.program.start(input_bytes)?;
            let label = entry.program.label.clone();
            self.run_on_unit(caller, fh, input_bytes, program, &label)
        });
        let closed = self.close_real(caller, fh);
        let run = run?;
        closed?;
        Ok(run)
    }

    /// The size of real file `path`, open as the caller: the input of the run about to read
    /// it (requests are served one at a time, so nothing changes it meanwhile).
    fn real_size(&mut self, caller: Caller, path: &str) -> Result<u64, VfileError> {
        match self.fs(caller, FsOp::Stat(path.to_string())) {
            Ok(FsReply::Stat(st)) => Ok(st.size_bytes),
            Ok(_) => Err(device("sizing the real file", Errno(libc::EIO))),
            Err(e) => Err(device("sizing the real file", e)),
        }
    }

    /// A read of a run's output.
    pub(super) fn read_output(
        &mut self,
        fh: u64,
        offset_bytes: u64,
        len_bytes: u32,
    ) -> Result<Answer, Errno> {
        let out = self.outputs.get(fh)?;
        let from = usize::try_from(offset_bytes)
            .unwrap_or(usize::MAX)
            .min(out.bytes.len());
        let to = from.saturating_add(len_bytes as usize).min(out.bytes.len());
        let data = out.bytes[from..to].to_vec();
        self.vfile_figures.reads += 1;
        Ok(Answer::Data(data))
    }

    /// A virtual file's attributes: its output's size through an open handle (`fstat`), its
    /// last run's otherwise; owned by whoever registered it; readable by anyone the file
    /// system lets read the real file (checked at open).
    pub(super) fn vfile_attr(&mut self, ino: InodeNo, fh: Option<u64>) -> Option<Attr> {
        let e = self.vfiles.by_ino(ino)?;
        let held = fh
            .filter(|&f| self.outputs.owns(f))
            .and_then(|f| self.outputs.get(f).ok())
            .filter(|o| o.ino == ino)
            .map(|o| o.bytes.len() as u64);
        let size_bytes = held.unwrap_or(e.last_output_bytes);
        Some(Attr {
            ino,
            kind: FileKind::File,
            perm: 0o444,
            uid: e.owner.uid,
            gid: e.owner.gid,
            size_bytes,
            blocks_512: size_bytes.div_ceil(512),
            link_count: 1,
            mtime_ns: e.registered_ns,
            ctime_ns: e.registered_ns,
        })
    }

    /// Stores `reg` on the image: `NAME.json.tmp`, synced, renamed over `NAME.json`.
    fn store(&mut self, reg: &Registration, owner: Caller, now_ns: u64) -> Result<(), VfileError> {
        let stored = Stored {
            owner_uid: owner.uid,
            owner_gid: owner.gid,
            registered_ns: now_ns,
            registration: reg.clone(),
        };
        let text = serde_json::to_vec(&stored).expect("a registration serializes");
        assert!(
            text.len() as u64 <= STORED_BYTES_MAX,
            "bounded by the request"
        );
        let root = Caller::ROOT;
        let failed = |what: &str| {
            let what = format!("storing {} on the image: {what}", reg.name);
            move |e: Errno| VfileError::Device { what, errno: e.0 }
        };
        for dir in [STORE_DIR, STORE_VFILES_DIR] {
            let op = FsOp::Mkdir {
                path: dir.to_string(),
                perm: 0o700,
            };
            match self.fs(root, op) {
                Ok(_) | Err(Errno(libc::EEXIST)) => {}
                Err(e) => return Err(failed("mkdir")(e)),
            }
        }
        let path = stored_path(&reg.name);
        let tmp = format!("{path}.tmp");
        let op = FsOp::Open {
            path: tmp.clone(),
            flags: OpenFlags {
                read: false,
                write: true,
                append: false,
                truncate: true,
                create: true,
                excl: false,
            },
            perm: 0o600,
        };
        let FsReply::Opened(fh) = self.fs(root, op).map_err(failed("create"))? else {
            return Err(failed("create")(Errno(libc::EIO)));
        };
        let mut wrote = Ok(());
        for (i, chunk) in text.chunks(STORE_WRITE_BYTES).enumerate() {
            let op = FsOp::Write {
                fh,
                offset_bytes: (i * STORE_WRITE_BYTES) as u64,
                data: chunk.to_vec(),
            };
            match self.fs(root, op) {
                Ok(FsReply::Written(n)) if n == chunk.len() as u64 => {}
                Ok(_) => wrote = Err(Errno(libc::EIO)),
                Err(e) => wrote = Err(e),
            }
            if wrote.is_err() {
                break;
            }
        }
        let closed = self.fs(root, FsOp::Close(fh));
        wrote.map_err(failed("write"))?;
        closed.map_err(failed("close"))?;
        let op = FsOp::Rename {
            from: tmp,
            to: path,
        };
        self.fs(root, op).map_err(failed("rename"))?;
        self.fs(root, FsOp::Sync).map_err(failed("sync"))?;
        Ok(())
    }

    /// Removes `name`'s stored registration (and commits it).
    fn unstore(&mut self, name: &str) -> Result<(), VfileError> {
        let failed = |e: Errno| VfileError::Device {
            what: format!("removing {name} from the image"),
            errno: e.0,
        };
        match self.fs(Caller::ROOT, FsOp::Unlink(stored_path(name))) {
            Ok(_) | Err(Errno(libc::ENOENT)) => {}
            Err(e) => return Err(failed(e)),
        }
        self.fs(Caller::ROOT, FsOp::Sync).map_err(failed)?;
        Ok(())
    }

    /// Loads every registration stored on the image (at start). One that does not load is
    /// named on stderr and in the statistics and left on the image; leftovers of a
    /// registration cut short (`.tmp`) are removed.
    pub(super) fn load_vfiles(&mut self) {
        let root = Caller::ROOT;
        let Ok(FsReply::Entries(list)) = self.fs(root, FsOp::Readdir(STORE_VFILES_DIR.into()))
        else {
            return;
        };
        for e in list {
            let path = format!("{STORE_VFILES_DIR}/{}", e.name);
            if e.name.ends_with(".json.tmp") {
                let _ = self.fs(root, FsOp::Unlink(path));
                continue;
            }
            let Some(name) = e.name.strip_suffix(".json") else {
                continue;
            };
            match self.load_one(&path, name) {
                Ok(()) => self.vfile_figures.loaded_at_start += 1,
                Err(why) => {
                    eprintln!("nearflash serve: virtual file {path} not loaded: {why}");
                    self.vfile_figures.load_errors += 1;
                    self.vfile_figures.last_error = Some(format!("{path} not loaded: {why}"));
                }
            }
        }
    }

    fn load_one(&mut self, path: &str, name: &str) -> Result<(), String> {
        let text = self.read_stored(path)?;
        let s: Stored = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
        if s.registration.name != name {
            return Err(format!("it names {:?}", s.registration.name));
        }
        let program = program_of(&s.registration).map_err(|e| e.to_string())?;
        let owner = Caller {
            uid: s.owner_uid,
            gid: s.owner_gid,
        };
        self.vfiles
            .insert(s.registration, program, owner, s.registered_ns)
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// A stored registration's bytes (bounded).
    fn read_stored(&mut self, path: &str) -> Result<Vec<u8>, String> {
        let root = Caller::ROOT;
        let fh = self.open_real(root, path).map_err(|e| e.to_string())?;
        let mut text = Vec::new();
        let read = loop {
            let op = FsOp::Read {
                fh,
                offset_bytes: text.len() as u64,
                len_bytes: STORE_READ_BYTES,
            };
            match self.fs(root, op) {
                Ok(FsReply::Data(d)) if d.is_empty() => break Ok(()),
                Ok(FsReply::Data(d)) => text.extend_from_slice(&d),
                Ok(_) => break Err(Errno(libc::EIO)),
                Err(e) => break Err(e),
            }
            if text.len() as u64 > STORED_BYTES_MAX {
                break Err(Errno(libc::EFBIG));
            }
        };
        let closed = self.close_real(root, fh);
        read.map_err(|e| device("reading", e).to_string())?;
        closed.map_err(|e| e.to_string())?;
        Ok(text)
    }
}

fn device(what: &str, e: Errno) -> VfileError {
    VfileError::Device {
        what: what.to_string(),
        errno: e.0,
    }
}

fn stored_path(name: &str) -> String {
    format!("{STORE_VFILES_DIR}/{name}.json")
}

/// The program a registration names, checked.
fn program_of(reg: &Registration) -> Result<VfileProgram, VfileError> {
    match &reg.module_hex {
        None if is_module_name(&reg.program) => Err(VfileError::BadRequest(format!(
            "{}: a module's bytes travel in module_hex (nearflash vfile register sends them)",
            reg.program
        ))),
        None => {
            if reg.fuel_max.is_some() || reg.memory_max_mib.is_some() {
                return Err(VfileError::BadRequest(
                    "fuel_max and memory_max_mib apply to modules only".into(),
                ));
            }
            VfileProgram::builtin(&reg.program, reg.args.clone())
        }
        Some(hex) => {
            if !is_module_name(&reg.program) {
                return Err(VfileError::BadRequest(format!(
                    "program {:?} with a module: name it by its file (NAME.wasm or NAME.wat)",
                    reg.program
                )));
            }
            if hex.len() as u64 > 2 * control::MODULE_BYTES_MAX {
                return Err(VfileError::Limit {
                    what: "module bytes",
                    value: hex.len() as u64 / 2,
                    max: control::MODULE_BYTES_MAX,
                });
            }
            let module = control::hex_decode(hex).map_err(VfileError::BadRequest)?;
            let limits = ModuleLimits::asked(reg.fuel_max, reg.memory_max_mib)?;
            VfileProgram::wasm(&reg.program, &module, reg.args.clone(), limits)
        }
    }
}
