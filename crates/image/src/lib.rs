//! nearflash-image: a simulated device kept in a file — the image format, opening it with
//! recovery, and the file-system operations on it. An image is one file:
//!
//! ```text
//! 0..8                  magic "NFIMAGE1"
//! 8..16                 length of the preset TOML (u64 LE)
//! 16..HEADER_BYTES      the preset (after --set overrides) as TOML, zero-padded (1 MiB region)
//! HEADER_BYTES..+B      programmed-page bitmap, one bit per flash page (persisted on every
//!                       program and erase, so a killed process leaves it consistent with
//!                       the pages it describes)
//! then                  one slot of page + spare bytes per flash page (a sparse file)
//! ```
//!
//! Opening an image runs the FTL's power-cut recovery and then mounts (journal replay), so an
//! image whose process was killed opens as the durability promise says. An image opened to
//! write it is locked exclusively (one writer), one opened to read it (ls, fsck, export) is
//! opened read-only with a shared lock, and its recovery and replay stay in memory: inspecting
//! an image never changes a byte of it (see `lock` and `store`). A new image (mkfs) is built
//! under a temporary name beside its path and renamed over it only once it is complete and
//! synced, so a refused or failed mkfs leaves the old image as it was. Host files are
//! streamed in and out in bounded chunks. (Wear counts and bad-block marks of the NAND are not
//! kept in the image: a reopened image starts with fresh erase counts.)
//!
//! `Image` is the one way in: `create` (mkfs), `open` or `open_read_only`, then `run` for any
//! file-system operation or the host-facing `import`, `export`, `ls`, `fsck` (and
//! `scan_data`, which reads every file's data back), `mkdir`, `rm`,
//! then `close`, which makes everything durable. An import writes each file under a temporary
//! name and renames it over its destination after its fsync, so a killed import never leaves
//! a partial file under a real name; an export does the same on the host. An image dropped without `close` is left as a killed process leaves it:
//! what was committed survives, the rest is lost.

#![warn(missing_docs)]

mod error;
mod lock;
mod scan;
mod store;

pub use error::ImageError;
pub use lock::{LockKind, LOCK_WAIT};
pub use nearflash_outfile::Overwrite;
pub use scan::{DataScan, DATA_UNREADABLE};

use nearflash_flash::Backbone;
use nearflash_fs::host::HostEvent;
use nearflash_fs::{
    Caller, Fh, FileKind, FormatOptions, FsConfig, FsError, FsHost, FsOp, FsReply, FsckReport,
    HostError, OpenFlags, Stat, BLOCK_BYTES,
};
use nearflash_ftl::recovery::recover;
use nearflash_ftl::Device;
use nearflash_preset::Preset;
use nearflash_sim::{Schedule, Sim};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use store::ImageStore;

/// Host file bytes moved per file-system operation.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Whether a command writes the image (exclusive lock, file opened read-write) or only reads
/// it (shared lock, file opened read-only, every write kept in memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Writes the image: one at a time.
    ReadWrite,
    /// Reads it: never writes a byte of it.
    ReadOnly,
}

/// A new image being built under a temporary name beside its path (locked exclusively, as
/// is the old image at the path, if any), renamed over the path by `commit`; removed if
/// dropped before that.
struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    /// The new image's file (a handle sharing the store's lock), for the fsync.
    file: File,
    /// The old image at the path, locked exclusively until it is replaced.
    _old: Option<File>,
    committed: bool,
}

impl Staged {
    /// Locks the old image at `path` (if any) and creates the temporary new one, returning
    /// the file the store writes.
    fn begin(path: &Path) -> Result<(Staged, File), ImageError> {
        let target = nearflash_outfile::resolve(path);
        let name = path.display().to_string();
        let old = match File::open(&target) {
            Ok(f) => {
                lock::lock(&f, &name, LockKind::Exclusive, LOCK_WAIT)?;
                Some(f)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ImageError::io(format!("image {name}"))(e)),
        };
        let tmp = nearflash_outfile::temp_beside(&target);
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(ImageError::io(format!(
                "image {name}: creating {}",
                tmp.display()
            )))?;
        let staged = Staged {
            tmp,
            target,
            file: file
                .try_clone()
                .map_err(ImageError::io(format!("image {name}")))?,
            _old: old,
            committed: false,
        };
        lock::lock(&file, &name, LockKind::Exclusive, LOCK_WAIT)?;
        Ok((staged, file))
    }

    /// Makes the new image durable and gives it the path: fsync, rename, fsync of the
    /// directory.
    fn commit(mut self) -> Result<(), ImageError> {
        let name = self.target.display().to_string();
        self.file
            .sync_all()
            .map_err(ImageError::io(format!("image {name}: fsync")))?;
        std::fs::rename(&self.tmp, &self.target).map_err(ImageError::io(format!(
            "image {name}: renaming the new image"
        )))?;
        self.committed = true;
        if let Ok(dir) = File::open(nearflash_outfile::parent_of(&self.target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Builds an image file of `preset` beside `path` and formats the FTL device on it, its
/// events on `q`; the caller commits it over `path`.
fn stage_device(
    preset: &Preset,
    path: &Path,
    q: &mut impl Schedule<nearflash_ftl::Event>,
) -> Result<(Staged, Device), ImageError> {
    let name = path.display().to_string();
    store::check_header_fits(preset)?;
    let (staged, file) = Staged::begin(path)?;
    store::write_header(&file, &name, preset)?;
    let store = ImageStore::create(file, &name, preset)?;
    let dev = Device::format(&preset.flash, &preset.ftl, Box::new(store), q)
        .map_err(ImageError::Format)?;
    Ok((staged, dev))
}

/// Creates (or replaces) an image file of `preset` at `path` and formats the FTL device on
/// it, its events on `q` — for a machine that puts its own file system on the device (mkfs
/// is the caller's; [`Image::create`] does both). The image is built beside `path` and
/// renamed over it once formatted: a refusal leaves the old image untouched. The device
/// holds the image's exclusive lock.
pub fn create_device(
    preset: &Preset,
    path: &Path,
    q: &mut impl Schedule<nearflash_ftl::Event>,
) -> Result<Device, ImageError> {
    let (staged, dev) = stage_device(preset, path, q)?;
    store_health(&dev)?;
    staged.commit()?;
    Ok(dev)
}

/// Opens an image file's device to write it (exclusive lock): reads its preset and recovers
/// the FTL from the pages, its events on `q` (mounting the file system is the caller's;
/// [`Image::open`] does both).
pub fn open_device(
    path: &Path,
    q: &mut impl Schedule<nearflash_ftl::Event>,
) -> Result<(Preset, Device), ImageError> {
    open_device_as(path, Access::ReadWrite, q)
}

/// Opens an image file's device for `access`: read-write under an exclusive lock, or
/// read-only under a shared one (recovery's writes then stay in memory).
pub fn open_device_as(
    path: &Path,
    access: Access,
    q: &mut impl Schedule<nearflash_ftl::Event>,
) -> Result<(Preset, Device), ImageError> {
    let name = path.display().to_string();
    let file = File::options()
        .read(true)
        .write(access == Access::ReadWrite)
        .open(path)
        .map_err(ImageError::io(format!("image {name}")))?;
    let kind = match access {
        Access::ReadWrite => LockKind::Exclusive,
        Access::ReadOnly => LockKind::Shared,
    };
    lock::lock(&file, &name, kind, LOCK_WAIT)?;
    let preset = store::read_header(&file, &name)?;
    let store = ImageStore::open(file, &name, &preset, access == Access::ReadOnly)?;
    let bb = Backbone::new(&preset.flash, Box::new(store));
    let (dev, _) = recover(bb, &preset.ftl, q).map_err(|source| ImageError::Recovery {
        image: name.clone(),
        source,
    })?;
    Ok((preset, dev))
}

/// Whether the device's page store took every write (an image file that failed to take a
/// page write is an error naming it).
pub fn store_health(dev: &Device) -> Result<(), ImageError> {
    dev.backbone().store().health().map_err(ImageError::store)
}

/// One entry of a directory listing: its name (`.` and `..` first) and what `stat` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The entry's name in its directory.
    pub name: String,
    /// The entry's attributes (for `.` and `..`: the listed directory's).
    pub stat: Stat,
}

/// An open image: the FTL device over the image's pages, with the file system mounted.
pub struct Image {
    host: FsHost<Device>,
    access: Access,
    /// The preset the image was made with (after its overrides).
    preset: Preset,
    /// The image's path, as messages name it.
    name: String,
}

impl Image {
    /// Creates (or replaces) an image of `preset` at `path` and formats the file system on
    /// it (mkfs); the new file system is committed and left mounted. Everything is checked and
    /// built beside `path` first: a refused preset, a geometry too small for a file system or
    /// a failed write leaves the old image at `path` as it was.
    pub fn create(preset: &Preset, path: &Path) -> Result<Image, ImageError> {
        let name = path.display().to_string();
        let mut sim = Sim::new(0);
        let (staged, dev) = stage_device(preset, path, &mut sim.queue().map(HostEvent::Dev))?;
        let mut image = Image::new(sim, dev, name, preset.clone(), Access::ReadWrite)?;
        image.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))?;
        image.run(Caller::ROOT, FsOp::Sync)?;
        staged.commit()?;
        Ok(image)
    }

    /// Opens an image to write it (exclusive lock): reads its preset, recovers the FTL from
    /// the pages, mounts (replaying the journal).
    pub fn open(path: &Path) -> Result<Image, ImageError> {
        Image::open_as(path, Access::ReadWrite)
    }

    /// Opens an image to read it (shared lock; the file is opened read-only): recovery and
    /// journal replay run in memory, and nothing is ever written to the file.
    pub fn open_read_only(path: &Path) -> Result<Image, ImageError> {
        Image::open_as(path, Access::ReadOnly)
    }

    fn open_as(path: &Path, access: Access) -> Result<Image, ImageError> {
        let name = path.display().to_string();
        let mut sim = Sim::new(0);
        let (preset, dev) = open_device_as(path, access, &mut sim.queue().map(HostEvent::Dev))?;
        let mut image = Image::new(sim, dev, name, preset, access)?;
        image.run(Caller::ROOT, FsOp::Mount)?;
        Ok(image)
    }

    fn new(
        sim: Sim<HostEvent<nearflash_ftl::Event>>,
        dev: Device,
        name: String,
        preset: Preset,
        access: Access,
    ) -> Result<Image, ImageError> {
        let host = FsHost::new(sim, dev, FsConfig::default()).map_err(ImageError::FsConfig)?;
        Ok(Image {
            host,
            access,
            preset,
            name,
        })
    }

    /// The preset the image was made with.
    pub fn preset(&self) -> &Preset {
        &self.preset
    }

    /// The device's logical capacity.
    pub fn capacity_bytes(&self) -> u64 {
        self.host.dev().logical_bytes()
    }

    /// Runs one file-system operation as `caller`, to completion; then checks that the
    /// image file took every page write.
    pub fn run(&mut self, caller: Caller, op: FsOp) -> Result<FsReply, ImageError> {
        let reply = self.host.run(caller, op).map_err(|source| ImageError::Op {
            image: self.name.clone(),
            source,
        });
        self.check_store()?;
        reply
    }

    /// Whether the image file took every page write so far.
    pub fn check_store(&self) -> Result<(), ImageError> {
        store_health(self.host.dev())
    }

    /// The driver of the device and its file system, for a front end that submits
    /// operations itself and keeps their times (live mode); [`Image::check_store`] after each.
    pub fn host_mut(&mut self) -> &mut FsHost<Device> {
        &mut self.host
    }

    /// The image's path, as messages name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `op` as root.
    fn root(&mut self, op: FsOp) -> Result<FsReply, ImageError> {
        self.run(Caller::ROOT, op)
    }

    /// Commits everything (a `sync`) and closes the image (an image opened read-only has
    /// nothing to commit: it is dropped).
    pub fn close(mut self) -> Result<(), ImageError> {
        if self.access == Access::ReadOnly {
            return Ok(());
        }
        self.root(FsOp::Sync).map(drop)
    }

    /// Whether this image was opened to write it.
    pub fn access(&self) -> Access {
        self.access
    }

    /// Copies host files or directory trees into `dest_dir` (each source under its own
    /// name; missing directories of `dest_dir` are created, as existing ones are reused, so a
    /// killed tree import can be run again), in chunks of `CHUNK_BYTES`. Each file is written
    /// under a temporary name, fsynced, and only then renamed over its destination: a killed
    /// import leaves the old copy (or none), never a partial one under the real name. Special
    /// host files (FIFOs, sockets, devices) and links to directories are skipped, each named
    /// in the report.
    pub fn import(
        &mut self,
        sources: &[PathBuf],
        dest_dir: &str,
    ) -> Result<ImportReport, ImageError> {
        self.mkdir(dest_dir, true)?;
        // Depth-first over host trees with an explicit stack (no recursion).
        let mut stack: Vec<(PathBuf, String, bool)> = Vec::new();
        for s in sources {
            let base =
                s.file_name()
                    .and_then(|n| n.to_str())
                    .ok_or_else(|| ImageError::NoFileName {
                        path: s.display().to_string(),
                    })?;
            stack.push((s.clone(), join(dest_dir, base), true));
        }
        let mut report = ImportReport::default();
        while let Some((src, to, top)) = stack.pop() {
            let host_io = || ImageError::io(format!("host file {}", src.display()));
            let link = std::fs::symlink_metadata(&src).map_err(host_io())?;
            let meta = std::fs::metadata(&src).map_err(host_io())?;
            if meta.is_dir() && link.file_type().is_symlink() && !top {
                // A link inside a tree may lead back up it: not followed.
                report.skipped.push(Skipped {
                    path: src.display().to_string(),
                    kind: "symbolic link to a directory",
                });
                continue;
            }
            if meta.is_dir() {
                self.mkdir_one(&to, true)?;
                for e in std::fs::read_dir(&src).map_err(host_io())? {
                    let e = e.map_err(host_io())?;
                    let n = e.file_name();
                    let n = n.to_str().ok_or_else(|| ImageError::NameNotUtf8 {
                        path: e.path().display().to_string(),
                    })?;
                    stack.push((e.path(), join(&to, n), false));
                }
                continue;
            }
            if let Some(kind) = special_kind(&meta.file_type()) {
                report.skipped.push(Skipped {
                    path: src.display().to_string(),
                    kind,
                });
                continue;
            }
            self.import_file(&src, &to)?;
            report.files += 1;
        }
        Ok(report)
    }

    /// Copies one host file to `to`: written under a temporary name in `to`'s directory,
    /// fsynced, then renamed over `to`.
    fn import_file(&mut self, src: &Path, to: &str) -> Result<(), ImageError> {
        let host_io = || ImageError::io(format!("host file {}", src.display()));
        // Opened first: a host file that cannot be read leaves the image as it was.
        let mut f = File::open(src).map_err(host_io())?;
        let tmp = join(parent_dir(to), IMPORT_TMP_NAME);
        let FsReply::Opened(fh) = self.root(FsOp::Open {
            path: tmp.clone(),
            flags: OpenFlags::CREATE_TRUNC,
            perm: 0o644,
        })?
        else {
            return Err(ImageError::UnexpectedReply("open did not answer a handle"));
        };
        let copied = self.copy_in(&mut f, src, fh);
        let closed = self.root(FsOp::Close(fh));
        if let Err(e) = copied.and(closed) {
            // The temporary is not left to hold space (a full device is a likely cause);
            // the destination was never touched.
            let _ = self.root(FsOp::Unlink(tmp));
            return Err(e);
        }
        self.root(FsOp::Rename {
            from: tmp,
            to: to.to_string(),
        })?;
        Ok(())
    }

    /// Copies the host file `f` (`src`) into the open image file `fh`, then fsyncs it.
    fn copy_in(&mut self, f: &mut File, src: &Path, fh: Fh) -> Result<(), ImageError> {
        let host_io = || ImageError::io(format!("host file {}", src.display()));
        let mut buf = vec![0u8; CHUNK_BYTES];
        let mut at = 0u64;
        loop {
            let n = f.read(&mut buf).map_err(host_io())?;
            if n == 0 {
                break;
            }
            let mut done = 0;
            while done < n {
                let FsReply::Written(w) = self.root(FsOp::Write {
                    fh,
                    offset_bytes: at,
                    data: buf[done..n].to_vec(),
                })?
                else {
                    return Err(ImageError::UnexpectedReply("write did not answer a count"));
                };
                assert!(w > 0, "a write of a non-empty buffer made progress");
                done += w as usize;
                at += w;
            }
        }
        self.root(FsOp::Fsync(fh)).map(drop)
    }

    /// Creates directory `path` (mode 755); with `parents` (`mkdir -p`), every missing
    /// directory above it too, and existing ones are reused.
    pub fn mkdir(&mut self, path: &str, parents: bool) -> Result<(), ImageError> {
        let mut todo: Vec<String> = vec![path.to_string()];
        if parents {
            todo.clear();
            let mut prefix = String::new();
            for part in path.split('/').filter(|p| !p.is_empty()) {
                prefix = join(if prefix.is_empty() { "/" } else { &prefix }, part);
                todo.push(prefix.clone());
            }
        }
        for dir in todo {
            self.mkdir_one(&dir, parents)?;
        }
        Ok(())
    }

    /// Creates directory `dir`; with `reuse`, an existing directory is no error.
    fn mkdir_one(&mut self, dir: &str, reuse: bool) -> Result<(), ImageError> {
        match self.root(FsOp::Mkdir {
            path: dir.to_string(),
            perm: 0o755,
        }) {
            Ok(_) => Ok(()),
            Err(ImageError::Op {
                source: HostError::Fs(FsError::Exists(_)),
                ..
            }) if reuse && self.kind(dir)? == FileKind::Dir => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes `path`: a file, or (with `recursive`) a directory and everything under it.
    /// Returns the files and directories removed.
    pub fn rm(&mut self, path: &str, recursive: bool) -> Result<u64, ImageError> {
        if self.kind(path)? == FileKind::Dir && !recursive {
            return Err(ImageError::IsDirectory {
                image: self.name.clone(),
                path: path.to_string(),
            });
        }
        // Post-order with an explicit stack: a directory is removed after its entries.
        let mut stack = vec![(path.to_string(), false)];
        let mut removed = 0u64;
        while let Some((p, emptied)) = stack.pop() {
            if self.kind(&p)? != FileKind::Dir {
                self.root(FsOp::Unlink(p))?;
                removed += 1;
            } else if emptied {
                if p.trim_end_matches('/').is_empty() {
                    continue; // the root stays (emptied)
                }
                self.root(FsOp::Rmdir(p))?;
                removed += 1;
            } else {
                let FsReply::Entries(list) = self.root(FsOp::Readdir(p.clone()))? else {
                    return Err(ImageError::UnexpectedReply("readdir did not answer"));
                };
                stack.push((p.clone(), true));
                for e in list.into_iter().skip(2) {
                    stack.push((join(&p, &e.name), false));
                }
            }
        }
        Ok(removed)
    }

    /// Removes the empty directory `path`.
    pub fn rmdir(&mut self, path: &str) -> Result<(), ImageError> {
        self.root(FsOp::Rmdir(path.to_string())).map(drop)
    }

    /// What `path` is.
    fn kind(&mut self, path: &str) -> Result<FileKind, ImageError> {
        let FsReply::Stat(st) = self.root(FsOp::Stat(path.to_string()))? else {
            return Err(ImageError::UnexpectedReply("stat did not answer"));
        };
        Ok(st.kind)
    }

    /// Copies the file or directory tree `src` out into `host_dir` (under its own name;
    /// `root` for `/`), in chunks of `CHUNK_BYTES`. Each host file is written under a
    /// temporary name and renamed when complete (a failed export leaves no partial file under
    /// the target's name); an existing host file is refused unless `overwrite` says replace.
    pub fn export(
        &mut self,
        src: &str,
        host_dir: &Path,
        overwrite: Overwrite,
    ) -> Result<(), ImageError> {
        let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let base = if base.is_empty() { "root" } else { base };
        let mut stack = vec![(src.to_string(), host_dir.join(base))];
        while let Some((from, to)) = stack.pop() {
            let host_io = || ImageError::io(format!("host file {}", to.display()));
            if self.kind(&from)? == FileKind::Dir {
                std::fs::create_dir_all(&to).map_err(host_io())?;
                let FsReply::Entries(list) = self.root(FsOp::Readdir(from.clone()))? else {
                    return Err(ImageError::UnexpectedReply("readdir did not answer"));
                };
                for e in list.into_iter().skip(2) {
                    stack.push((join(&from, &e.name), to.join(&e.name)));
                }
                continue;
            }
            let mut out = nearflash_outfile::OutFile::create(&to, overwrite).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    ImageError::HostExists {
                        path: to.display().to_string(),
                    }
                } else {
                    host_io()(e)
                }
            })?;
            let FsReply::Opened(fh) = self.root(FsOp::Open {
                path: from.clone(),
                flags: OpenFlags::READ,
                perm: 0,
            })?
            else {
                return Err(ImageError::UnexpectedReply("open did not answer a handle"));
            };
            let mut at = 0u64;
            loop {
                let FsReply::Data(d) = self.read_chunk(&from, fh, at)? else {
                    return Err(ImageError::UnexpectedReply("read did not answer data"));
                };
                if d.is_empty() {
                    break;
                }
                out.write_all(&d).map_err(host_io())?;
                at += d.len() as u64;
            }
            self.root(FsOp::Close(fh))?;
            out.commit().map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    ImageError::HostExists {
                        path: to.display().to_string(),
                    }
                } else {
                    host_io()(e)
                }
            })?;
        }
        Ok(())
    }

    /// Reads up to `CHUNK_BYTES` of open file `path` at `at`. A failed read is retried block
    /// by block to name the first unreadable 4 KiB of the file.
    fn read_chunk(&mut self, path: &str, fh: Fh, at: u64) -> Result<FsReply, ImageError> {
        let read = |img: &mut Image, offset_bytes: u64, len_bytes: u64| {
            img.host.run(
                Caller::ROOT,
                FsOp::Read {
                    fh,
                    offset_bytes,
                    len_bytes,
                },
            )
        };
        let first = read(self, at, CHUNK_BYTES as u64);
        self.check_store()?;
        let Err(chunk_err) = first else {
            return Ok(first.expect("checked"));
        };
        let block = BLOCK_BYTES as u64;
        let mut off = at;
        while off < at + CHUNK_BYTES as u64 {
            match read(self, off, block) {
                Ok(FsReply::Data(d)) if d.is_empty() => break,
                Ok(_) => off += block,
                Err(source) => {
                    return Err(ImageError::ReadFile {
                        image: self.name.clone(),
                        path: path.to_string(),
                        offset_bytes: off,
                        source,
                    })
                }
            }
        }
        Err(ImageError::ReadFile {
            image: self.name.clone(),
            path: path.to_string(),
            offset_bytes: at,
            source: chunk_err,
        })
    }

    /// Lists directory `dir`: every entry (`.` and `..` first) with its `stat`.
    pub fn ls(&mut self, dir: &str) -> Result<Vec<Listing>, ImageError> {
        let FsReply::Entries(list) = self.root(FsOp::Readdir(dir.to_string()))? else {
            return Err(ImageError::UnexpectedReply("readdir did not answer"));
        };
        list.into_iter()
            .map(|e| {
                let path = if e.name == "." || e.name == ".." {
                    dir.to_string()
                } else {
                    join(dir, &e.name)
                };
                let FsReply::Stat(stat) = self.root(FsOp::Stat(path))? else {
                    return Err(ImageError::UnexpectedReply("stat did not answer"));
                };
                Ok(Listing { name: e.name, stat })
            })
            .collect()
    }

    /// Checks the file system's consistency (after committing).
    pub fn fsck(&mut self) -> Result<FsckReport, ImageError> {
        let FsReply::Fsck(report) = self.root(FsOp::Fsck)? else {
            return Err(ImageError::UnexpectedReply("fsck did not answer a report"));
        };
        Ok(report)
    }
}

/// The temporary name, in the destination's directory, a file is imported under.
pub const IMPORT_TMP_NAME: &str = ".nearflash-import.tmp";

/// What an import copied and what it skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Regular files copied.
    pub files: u64,
    /// Host paths not copied, and why.
    pub skipped: Vec<Skipped>,
}

/// A host path an import skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The host path.
    pub path: String,
    /// What it is ("FIFO", "socket", …).
    pub kind: &'static str,
}

/// What a special (neither regular nor directory) host file is; `None` for a regular file.
fn special_kind(ft: &std::fs::FileType) -> Option<&'static str> {
    if ft.is_file() {
        None
    } else if ft.is_fifo() {
        Some("FIFO")
    } else if ft.is_socket() {
        Some("socket")
    } else if ft.is_char_device() {
        Some("character device")
    } else if ft.is_block_device() {
        Some("block device")
    } else {
        Some("special file")
    }
}

/// The directory holding `path` (`/` for a top-level name).
fn parent_dir(path: &str) -> &str {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((dir, _)) => dir,
    }
}

/// `dir/name`, with one slash.
fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_corruption;
#[cfg(test)]
mod tests_safety;
