//! `nearflash fs`: the device file system on a device image. An image is one file:
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

use crate::error::CliError;
use nearflash_flash::{Backbone, BlockId, Geometry, PageId, PageState, PageStore, StoreError};
use nearflash_fs::crashtest::{self, CrashOutcome, CrashSummary, CrashTestConfig};
use nearflash_fs::host::HostEvent;
use nearflash_fs::{Caller, FileKind, FormatOptions, FsConfig, FsHost, FsOp, FsReply, OpenFlags};
use nearflash_ftl::recovery::recover;
use nearflash_ftl::Device;
use nearflash_preset::Preset;
use nearflash_sim::{Schedule, Sim};
use serde::Serialize;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct FsArgs {
    #[command(subcommand)]
    pub command: FsCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum FsCommand {
    /// Format a device image (a sparse file) with the file system.
    Mkfs {
        #[arg(long)]
        preset: String,
        #[arg(long)]
        image: PathBuf,
        #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
        overrides: Vec<String>,
    },
    /// Copy host files (or directory trees) into DEST_DIR, through the simulated device.
    Import {
        #[arg(long)]
        image: PathBuf,
        /// HOST_PATH... DEST_DIR
        #[arg(required = true, num_args = 2..)]
        paths: Vec<PathBuf>,
    },
    /// Copy a file or a directory tree out into HOST_DIR.
    Export {
        #[arg(long)]
        image: PathBuf,
        src_path: String,
        host_dir: PathBuf,
    },
    /// List a directory: names, sizes, owners, modes.
    Ls {
        #[arg(long)]
        image: PathBuf,
        #[arg(default_value = "/")]
        dir: String,
    },
    /// Check the image's consistency; non-zero exit on any problem.
    Fsck {
        #[arg(long)]
        image: PathBuf,
    },
    /// Power-cut crash test of the file system over the FTL; last line "N passed, M failed".
    Crashtest {
        #[arg(long, default_value = "test-min")]
        preset: String,
        #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
        overrides: Vec<String>,
        #[arg(long, default_value_t = 50)]
        seeds: u64,
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

const MAGIC: &[u8; 8] = b"NFIMAGE1";
const HEADER_BYTES: u64 = 1 << 20;
/// Host file bytes moved per file-system operation.
const CHUNK_BYTES: usize = 1 << 20;

/// Returns Ok(false) when the command ran and found problems (fsck, crashtest).
pub fn run(args: &FsArgs) -> Result<bool, CliError> {
    match &args.command {
        FsCommand::Mkfs {
            preset,
            image,
            overrides,
        } => mkfs(preset, image, overrides).map(|()| true),
        FsCommand::Import { image, paths } => {
            let (dest, sources) = paths.split_last().expect("clap requires two paths");
            let dest = dest
                .to_str()
                .ok_or_else(|| fs_err("DEST_DIR is not UTF-8"))?;
            import(image, sources, dest).map(|()| true)
        }
        FsCommand::Export {
            image,
            src_path,
            host_dir,
        } => export(image, src_path, host_dir).map(|()| true),
        FsCommand::Ls { image, dir } => ls(image, dir).map(|()| true),
        FsCommand::Fsck { image } => fsck(image),
        FsCommand::Crashtest {
            preset,
            overrides,
            seeds,
            json,
        } => crash(preset, overrides, *seeds, json.as_deref()),
    }
}

fn fs_err(msg: impl Into<String>) -> CliError {
    CliError::Store(msg.into())
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> CliError {
    let what = what.into();
    move |source| CliError::Io { what, source }
}

/// The image's page store: programmed pages live in slots after the header and the bitmap.
struct ImageStore {
    file: File,
    path: String,
    programmed: Vec<u8>,
    page_bytes: u64,
    oob_bytes: u64,
    error: Option<StoreError>,
}

impl ImageStore {
    fn bitmap_at() -> u64 {
        HEADER_BYTES
    }

    fn slot_at(&self, page: PageId) -> u64 {
        HEADER_BYTES + self.programmed.len() as u64 + page.0 * (self.page_bytes + self.oob_bytes)
    }

    fn note(&mut self, r: std::io::Result<()>) {
        if let (Err(source), None) = (r, &self.error) {
            self.error = Some(StoreError::Io {
                path: self.path.clone(),
                source,
            });
        }
    }

    fn is_programmed(&self, p: u64) -> bool {
        self.programmed[(p / 8) as usize] & (1 << (p % 8)) != 0
    }

    fn set_programmed(&mut self, p: u64, on: bool) {
        let i = (p / 8) as usize;
        if on {
            self.programmed[i] |= 1 << (p % 8);
        } else {
            self.programmed[i] &= !(1 << (p % 8));
        }
        let r = self
            .file
            .write_all_at(&self.programmed[i..i + 1], Self::bitmap_at() + i as u64);
        self.note(r);
    }
}

impl PageStore for ImageStore {
    fn holds_data(&self) -> bool {
        true
    }
    fn program(&mut self, page: PageId, data: &[u8], oob: &[u8]) {
        let at = self.slot_at(page);
        let r = self
            .file
            .write_all_at(data, at)
            .and_then(|()| self.file.write_all_at(oob, at + self.page_bytes));
        self.note(r);
        self.set_programmed(page.0, true);
    }
    fn read(&mut self, page: PageId, data: &mut [u8], oob: &mut [u8]) -> PageState {
        if !self.is_programmed(page.0) {
            data.fill(0xFF);
            oob.fill(0xFF);
            return PageState::Erased;
        }
        let at = self.slot_at(page);
        let r = self
            .file
            .read_exact_at(data, at)
            .and_then(|()| self.file.read_exact_at(oob, at + self.page_bytes));
        self.note(r);
        PageState::Programmed
    }
    fn erase(&mut self, block: BlockId, pages_per_block: u32) {
        let first = block.0 * u64::from(pages_per_block);
        for p in first..first + u64::from(pages_per_block) {
            self.set_programmed(p, false);
        }
    }
    fn health(&self) -> Result<(), &StoreError> {
        self.error.as_ref().map_or(Ok(()), Err)
    }
}

type Host = FsHost<Device>;

fn fs_config() -> FsConfig {
    FsConfig::default()
}

fn mkfs(preset_name: &str, image: &Path, overrides: &[String]) -> Result<(), CliError> {
    let preset = Preset::load(preset_name, overrides)?;
    let text = toml::to_string(&preset).map_err(|e| fs_err(format!("preset to TOML: {e}")))?;
    if 16 + text.len() as u64 > HEADER_BYTES {
        return Err(fs_err("the preset does not fit the image header"));
    }
    let name = image.display().to_string();
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(image)
        .map_err(io_err(format!("image {name}")))?;
    let mut header = Vec::with_capacity(16 + text.len());
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(text.len() as u64).to_le_bytes());
    header.extend_from_slice(text.as_bytes());
    file.write_all_at(&header, 0)
        .map_err(io_err(format!("image {name}")))?;
    let store = store_for(file, &name, &preset)?;
    let mut sim = Sim::new(0);
    let dev = Device::format(
        &preset.flash,
        &preset.ftl,
        Box::new(store),
        &mut sim.queue().map(HostEvent::Dev),
    )
    .map_err(|e| fs_err(e.to_string()))?;
    let mut host = new_host(sim, dev)?;
    op(&mut host, FsOp::Format(FormatOptions::default()), &name)?;
    op(&mut host, FsOp::Sync, &name)?;
    check_store(&host)?;
    println!(
        "formatted {name}: preset {}, {} bytes",
        preset.name,
        host.dev().logical_bytes()
    );
    Ok(())
}

fn store_for(file: File, name: &str, preset: &Preset) -> Result<ImageStore, CliError> {
    let pages = Geometry::from_config(&preset.flash).page_count();
    let bitmap_bytes = pages.div_ceil(8);
    let slot = u64::from(preset.flash.page_size_bytes) + u64::from(preset.flash.oob_size_bytes);
    let len = HEADER_BYTES + bitmap_bytes + pages * slot;
    if file.metadata().map_err(io_err(name))?.len() < len {
        file.set_len(len).map_err(io_err(format!("image {name}")))?;
    }
    let mut programmed = vec![0u8; bitmap_bytes as usize];
    file.read_exact_at(&mut programmed, HEADER_BYTES)
        .map_err(io_err(format!("image {name}")))?;
    Ok(ImageStore {
        file,
        path: name.to_string(),
        programmed,
        page_bytes: u64::from(preset.flash.page_size_bytes),
        oob_bytes: u64::from(preset.flash.oob_size_bytes),
        error: None,
    })
}

fn new_host(sim: Sim<HostEvent<nearflash_ftl::Event>>, dev: Device) -> Result<Host, CliError> {
    FsHost::new(sim, dev, fs_config()).map_err(|e| fs_err(e.to_string()))
}

fn check_store(host: &Host) -> Result<(), CliError> {
    host.dev()
        .backbone()
        .store()
        .health()
        .map_err(|e| fs_err(e.to_string()))
}

fn op(host: &mut Host, o: FsOp, image: &str) -> Result<FsReply, CliError> {
    let r = host
        .run(Caller::ROOT, o)
        .map_err(|e| fs_err(format!("{image}: {e}")));
    check_store(host)?;
    r
}

/// Opens an image: reads its preset, recovers the FTL from the pages, mounts.
fn open(image: &Path) -> Result<Host, CliError> {
    let name = image.display().to_string();
    let file = File::options()
        .read(true)
        .write(true)
        .open(image)
        .map_err(io_err(format!("image {name}")))?;
    let mut head = [0u8; 16];
    file.read_exact_at(&mut head, 0)
        .map_err(io_err(format!("image {name}")))?;
    if &head[0..8] != MAGIC {
        return Err(fs_err(format!(
            "{name} is not a nearflash image (bad magic)"
        )));
    }
    let len = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
    if 16 + len > HEADER_BYTES {
        return Err(fs_err(format!(
            "{name}: corrupt header (preset length {len})"
        )));
    }
    let mut text = vec![0u8; len as usize];
    file.read_exact_at(&mut text, 16)
        .map_err(io_err(format!("image {name}")))?;
    let text =
        String::from_utf8(text).map_err(|_| fs_err(format!("{name}: preset is not UTF-8")))?;
    let preset = Preset::parse(&format!("image {name}"), &text, &[])?;
    let store = store_for(file, &name, &preset)?;
    let bb = Backbone::new(&preset.flash, Box::new(store));
    let mut sim = Sim::new(0);
    let (dev, _) = recover(bb, &preset.ftl, &mut sim.queue().map(HostEvent::Dev))
        .map_err(|e| fs_err(format!("{name}: FTL recovery: {e}")))?;
    let mut host = new_host(sim, dev)?;
    op(&mut host, FsOp::Mount, &name)?;
    Ok(host)
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn import(image: &Path, sources: &[PathBuf], dest: &str) -> Result<(), CliError> {
    let mut host = open(image)?;
    let name = image.display().to_string();
    // Depth-first over host trees with an explicit stack (no recursion).
    let mut stack: Vec<(PathBuf, String)> = Vec::new();
    for s in sources {
        let base = s
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| fs_err(format!("{}: no usable file name", s.display())))?;
        stack.push((s.clone(), join(dest, base)));
    }
    let mut files = 0u64;
    while let Some((src, to)) = stack.pop() {
        let meta = std::fs::metadata(&src).map_err(io_err(src.display().to_string()))?;
        if meta.is_dir() {
            op(
                &mut host,
                FsOp::Mkdir {
                    path: to.clone(),
                    perm: 0o755,
                },
                &name,
            )?;
            for e in std::fs::read_dir(&src).map_err(io_err(src.display().to_string()))? {
                let e = e.map_err(io_err(src.display().to_string()))?;
                let n = e.file_name();
                let n = n
                    .to_str()
                    .ok_or_else(|| fs_err(format!("{}: name is not UTF-8", e.path().display())))?;
                stack.push((e.path(), join(&to, n)));
            }
            continue;
        }
        let FsReply::Opened(fh) = op(
            &mut host,
            FsOp::Open {
                path: to.clone(),
                flags: OpenFlags::CREATE_TRUNC,
                perm: 0o644,
            },
            &name,
        )?
        else {
            return Err(fs_err("open did not answer a handle"));
        };
        let mut f = File::open(&src).map_err(io_err(src.display().to_string()))?;
        let mut buf = vec![0u8; CHUNK_BYTES];
        let mut at = 0u64;
        loop {
            let n = f
                .read(&mut buf)
                .map_err(io_err(src.display().to_string()))?;
            if n == 0 {
                break;
            }
            let mut done = 0;
            while done < n {
                let FsReply::Written(w) = op(
                    &mut host,
                    FsOp::Write {
                        fh,
                        offset_bytes: at,
                        data: buf[done..n].to_vec(),
                    },
                    &name,
                )?
                else {
                    return Err(fs_err("write did not answer a count"));
                };
                done += w as usize;
                at += w;
            }
        }
        op(&mut host, FsOp::Fsync(fh), &name)?;
        op(&mut host, FsOp::Close(fh), &name)?;
        files += 1;
    }
    op(&mut host, FsOp::Sync, &name)?;
    println!("imported {files} file(s) into {dest}");
    Ok(())
}

fn export(image: &Path, src: &str, host_dir: &Path) -> Result<(), CliError> {
    let mut host = open(image)?;
    let name = image.display().to_string();
    let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let base = if base.is_empty() { "root" } else { base };
    let mut stack = vec![(src.to_string(), host_dir.join(base))];
    while let Some((from, to)) = stack.pop() {
        let FsReply::Stat(st) = op(&mut host, FsOp::Stat(from.clone()), &name)? else {
            return Err(fs_err("stat did not answer"));
        };
        if st.kind == FileKind::Dir {
            std::fs::create_dir_all(&to).map_err(io_err(to.display().to_string()))?;
            let FsReply::Entries(list) = op(&mut host, FsOp::Readdir(from.clone()), &name)? else {
                return Err(fs_err("readdir did not answer"));
            };
            for e in list.into_iter().skip(2) {
                stack.push((join(&from, &e.name), to.join(&e.name)));
            }
            continue;
        }
        let FsReply::Opened(fh) = op(
            &mut host,
            FsOp::Open {
                path: from.clone(),
                flags: OpenFlags::READ,
                perm: 0,
            },
            &name,
        )?
        else {
            return Err(fs_err("open did not answer a handle"));
        };
        let mut out = File::create(&to).map_err(io_err(to.display().to_string()))?;
        let mut at = 0u64;
        loop {
            let FsReply::Data(d) = op(
                &mut host,
                FsOp::Read {
                    fh,
                    offset_bytes: at,
                    len_bytes: CHUNK_BYTES as u64,
                },
                &name,
            )?
            else {
                return Err(fs_err("read did not answer data"));
            };
            if d.is_empty() {
                break;
            }
            out.write_all(&d)
                .map_err(io_err(to.display().to_string()))?;
            at += d.len() as u64;
        }
        op(&mut host, FsOp::Close(fh), &name)?;
    }
    Ok(())
}

fn ls(image: &Path, dir: &str) -> Result<(), CliError> {
    let mut host = open(image)?;
    let name = image.display().to_string();
    let FsReply::Entries(list) = op(&mut host, FsOp::Readdir(dir.to_string()), &name)? else {
        return Err(fs_err("readdir did not answer"));
    };
    for e in list {
        let path = if e.name == "." || e.name == ".." {
            dir.to_string()
        } else {
            join(dir, &e.name)
        };
        let FsReply::Stat(st) = op(&mut host, FsOp::Stat(path), &name)? else {
            return Err(fs_err("stat did not answer"));
        };
        let kind = if st.kind == FileKind::Dir { 'd' } else { '-' };
        println!(
            "{kind}{:03o} {:>6} {:>6} {:>12} {}",
            st.perm, st.uid, st.gid, st.size_bytes, e.name
        );
    }
    Ok(())
}

fn fsck(image: &Path) -> Result<bool, CliError> {
    let mut host = open(image)?;
    let name = image.display().to_string();
    let FsReply::Fsck(report) = op(&mut host, FsOp::Fsck, &name)? else {
        return Err(fs_err("fsck did not answer a report"));
    };
    for p in &report.problems {
        println!("{}: {}", p.code, p.detail);
    }
    println!(
        "{name}: {} file(s), {} dir(s), {} block(s) owned, {} problem(s)",
        report.files,
        report.dirs,
        report.blocks_owned,
        report.problems.len()
    );
    Ok(report.is_clean())
}

#[derive(Serialize)]
struct CrashReport<'a> {
    preset: &'a str,
    config: &'a CrashTestConfig,
    summary: &'a CrashSummary,
    failures: Vec<&'a CrashOutcome>,
    wall_s: f64,
}

fn crash(
    preset_name: &str,
    overrides: &[String],
    seeds: u64,
    json: Option<&Path>,
) -> Result<bool, CliError> {
    let preset = Preset::load(preset_name, overrides)?;
    let cfg = CrashTestConfig::default();
    let start = Instant::now();
    let outcomes: Vec<CrashOutcome> = (0..seeds)
        .map(|s| crashtest::run_seed(&preset.flash, &preset.ftl, &cfg, s))
        .collect();
    let summary = crashtest::summarize(&outcomes);
    for o in outcomes.iter().filter(|o| !o.passed()) {
        println!(
            "seed {}: {}",
            o.seed,
            o.error
                .as_deref()
                .or(o.first_violation.as_deref())
                .unwrap_or("failed")
        );
    }
    if let Some(path) = json {
        let report = CrashReport {
            preset: &preset.name,
            config: &cfg,
            summary: &summary,
            failures: outcomes.iter().filter(|o| !o.passed()).collect(),
            wall_s: start.elapsed().as_secs_f64(),
        };
        let text = serde_json::to_string_pretty(&report).map_err(|e| fs_err(e.to_string()))?;
        std::fs::write(path, text).map_err(io_err(path.display().to_string()))?;
    }
    println!("{summary}");
    Ok(summary.failed == 0)
}
