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
//! image whose process was killed opens as the durability promise says. Host files are
//! streamed in and out in bounded chunks. (Wear counts and bad-block marks of the NAND are not
//! kept in the image: a reopened image starts with fresh erase counts.)
//!
//! `Image` is the one way in: `create` (mkfs) or `open`, then `run` for any file-system
//! operation or the host-facing `import`, `export`, `ls` and `fsck`, then `close`, which makes
//! everything durable. An image dropped without `close` is left as a killed process leaves it:
//! what was committed survives, the rest is lost.

#![warn(missing_docs)]

mod error;
mod store;

pub use error::ImageError;

use nearflash_flash::Backbone;
use nearflash_fs::host::HostEvent;
use nearflash_fs::{
    Caller, FileKind, FormatOptions, FsConfig, FsHost, FsOp, FsReply, FsckReport, OpenFlags, Stat,
};
use nearflash_ftl::recovery::recover;
use nearflash_ftl::Device;
use nearflash_preset::Preset;
use nearflash_sim::{Schedule, Sim};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use store::ImageStore;

/// Host file bytes moved per file-system operation.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Creates (or overwrites) an image file of `preset` at `path` and formats the FTL device on
/// it, its events on `q` — for a machine that puts its own file system on the device (mkfs
/// is the caller's; [`Image::create`] does both).
pub fn create_device(
    preset: &Preset,
    path: &Path,
    q: &mut impl Schedule<nearflash_ftl::Event>,
) -> Result<Device, ImageError> {
    let name = path.display().to_string();
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(ImageError::io(format!("image {name}")))?;
    store::write_header(&file, &name, preset)?;
    let store = ImageStore::create(file, &name, preset)?;
    Device::format(&preset.flash, &preset.ftl, Box::new(store), q).map_err(ImageError::Format)
}

/// Opens an image file's device: reads its preset and recovers the FTL from the pages, its
/// events on `q` (mounting the file system is the caller's; [`Image::open`] does both).
pub fn open_device(
    path: &Path,
    q: &mut impl Schedule<nearflash_ftl::Event>,
) -> Result<(Preset, Device), ImageError> {
    let name = path.display().to_string();
    let file = File::options()
        .read(true)
        .write(true)
        .open(path)
        .map_err(ImageError::io(format!("image {name}")))?;
    let preset = store::read_header(&file, &name)?;
    let store = ImageStore::open(file, &name, &preset)?;
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
    /// The preset the image was made with (after its overrides).
    preset: Preset,
    /// The image's path, as messages name it.
    name: String,
}

impl Image {
    /// Creates (or overwrites) an image of `preset` at `path` and formats the file system on
    /// it (mkfs); the new file system is committed and left mounted.
    pub fn create(preset: &Preset, path: &Path) -> Result<Image, ImageError> {
        let name = path.display().to_string();
        let mut sim = Sim::new(0);
        let dev = create_device(preset, path, &mut sim.queue().map(HostEvent::Dev))?;
        let mut image = Image::new(sim, dev, name, preset.clone())?;
        image.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))?;
        image.run(Caller::ROOT, FsOp::Sync)?;
        Ok(image)
    }

    /// Opens an image: reads its preset, recovers the FTL from the pages, mounts (replaying
    /// the journal).
    pub fn open(path: &Path) -> Result<Image, ImageError> {
        let name = path.display().to_string();
        let mut sim = Sim::new(0);
        let (preset, dev) = open_device(path, &mut sim.queue().map(HostEvent::Dev))?;
        let mut image = Image::new(sim, dev, name, preset)?;
        image.run(Caller::ROOT, FsOp::Mount)?;
        Ok(image)
    }

    fn new(
        sim: Sim<HostEvent<nearflash_ftl::Event>>,
        dev: Device,
        name: String,
        preset: Preset,
    ) -> Result<Image, ImageError> {
        let host = FsHost::new(sim, dev, FsConfig::default()).map_err(ImageError::FsConfig)?;
        Ok(Image { host, preset, name })
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

    /// Commits everything (a `sync`) and closes the image.
    pub fn close(mut self) -> Result<(), ImageError> {
        self.root(FsOp::Sync).map(drop)
    }

    /// Copies host files or directory trees into `dest_dir` (each source under its own
    /// name), in chunks of `CHUNK_BYTES`; every file is fsynced. Returns the files copied.
    pub fn import(&mut self, sources: &[PathBuf], dest_dir: &str) -> Result<u64, ImageError> {
        // Depth-first over host trees with an explicit stack (no recursion).
        let mut stack: Vec<(PathBuf, String)> = Vec::new();
        for s in sources {
            let base =
                s.file_name()
                    .and_then(|n| n.to_str())
                    .ok_or_else(|| ImageError::NoFileName {
                        path: s.display().to_string(),
                    })?;
            stack.push((s.clone(), join(dest_dir, base)));
        }
        let mut files = 0u64;
        while let Some((src, to)) = stack.pop() {
            let host_io = || ImageError::io(src.display().to_string());
            let meta = std::fs::metadata(&src).map_err(host_io())?;
            if meta.is_dir() {
                self.root(FsOp::Mkdir {
                    path: to.clone(),
                    perm: 0o755,
                })?;
                for e in std::fs::read_dir(&src).map_err(host_io())? {
                    let e = e.map_err(host_io())?;
                    let n = e.file_name();
                    let n = n.to_str().ok_or_else(|| ImageError::NameNotUtf8 {
                        path: e.path().display().to_string(),
                    })?;
                    stack.push((e.path(), join(&to, n)));
                }
                continue;
            }
            let FsReply::Opened(fh) = self.root(FsOp::Open {
                path: to.clone(),
                flags: OpenFlags::CREATE_TRUNC,
                perm: 0o644,
            })?
            else {
                return Err(ImageError::UnexpectedReply("open did not answer a handle"));
            };
            let mut f = File::open(&src).map_err(host_io())?;
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
                    done += w as usize;
                    at += w;
                }
            }
            self.root(FsOp::Fsync(fh))?;
            self.root(FsOp::Close(fh))?;
            files += 1;
        }
        Ok(files)
    }

    /// Copies the file or directory tree `src` out into `host_dir` (under its own name;
    /// `root` for `/`), in chunks of `CHUNK_BYTES`.
    pub fn export(&mut self, src: &str, host_dir: &Path) -> Result<(), ImageError> {
        let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let base = if base.is_empty() { "root" } else { base };
        let mut stack = vec![(src.to_string(), host_dir.join(base))];
        while let Some((from, to)) = stack.pop() {
            let host_io = || ImageError::io(to.display().to_string());
            let FsReply::Stat(st) = self.root(FsOp::Stat(from.clone()))? else {
                return Err(ImageError::UnexpectedReply("stat did not answer"));
            };
            if st.kind == FileKind::Dir {
                std::fs::create_dir_all(&to).map_err(host_io())?;
                let FsReply::Entries(list) = self.root(FsOp::Readdir(from.clone()))? else {
                    return Err(ImageError::UnexpectedReply("readdir did not answer"));
                };
                for e in list.into_iter().skip(2) {
                    stack.push((join(&from, &e.name), to.join(&e.name)));
                }
                continue;
            }
            let FsReply::Opened(fh) = self.root(FsOp::Open {
                path: from.clone(),
                flags: OpenFlags::READ,
                perm: 0,
            })?
            else {
                return Err(ImageError::UnexpectedReply("open did not answer a handle"));
            };
            let mut out = File::create(&to).map_err(host_io())?;
            let mut at = 0u64;
            loop {
                let FsReply::Data(d) = self.root(FsOp::Read {
                    fh,
                    offset_bytes: at,
                    len_bytes: CHUNK_BYTES as u64,
                })?
                else {
                    return Err(ImageError::UnexpectedReply("read did not answer data"));
                };
                if d.is_empty() {
                    break;
                }
                out.write_all(&d).map_err(host_io())?;
                at += d.len() as u64;
            }
            self.root(FsOp::Close(fh))?;
        }
        Ok(())
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
