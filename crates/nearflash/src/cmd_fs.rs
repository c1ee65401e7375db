//! `nearflash fs`: the device file system on a device image (`nearflash_image`: the image
//! format, opening with recovery, and the operations), and its crash test. Commands that
//! write an image (mkfs, import, mkdir, rm, rmdir) hold its exclusive lock; those that only
//! read it (ls, fsck, export) open it read-only under a shared lock and never change it.

use crate::error::CliError;
use nearflash_fs::crashtest::{self, CrashOutcome, CrashSummary, CrashTestConfig};
use nearflash_fs::FileKind;
use nearflash_image::{Image, Overwrite};
use nearflash_preset::Preset;
use serde::Serialize;
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
    /// Copy a file or a directory tree out into HOST_DIR (an existing host file is refused
    /// unless --force).
    Export {
        #[arg(long)]
        image: PathBuf,
        src_path: String,
        host_dir: PathBuf,
        /// Replace existing host files.
        #[arg(long)]
        force: bool,
    },
    /// Create a directory (with -p, its missing parents too; existing ones are kept).
    Mkdir {
        #[arg(long)]
        image: PathBuf,
        #[arg(short = 'p', long)]
        parents: bool,
        path: String,
    },
    /// Remove a file (with -r, a directory and everything under it).
    Rm {
        #[arg(long)]
        image: PathBuf,
        #[arg(short = 'r', long)]
        recursive: bool,
        path: String,
    },
    /// Remove an empty directory.
    Rmdir {
        #[arg(long)]
        image: PathBuf,
        path: String,
    },
    /// List a directory: names, sizes, owners, modes.
    Ls {
        #[arg(long)]
        image: PathBuf,
        #[arg(default_value = "/")]
        dir: String,
    },
    /// Check the image's consistency (read-only: nothing is written); non-zero exit on any
    /// problem.
    Fsck {
        #[arg(long)]
        image: PathBuf,
        /// Also read every block of every file back through the file system, each page
        /// checked against its spare-area CRC, and report every range that does not read
        /// back (`data-unreadable`). Without it only metadata is checked.
        #[arg(long)]
        data: bool,
    },
    /// Power-cut crash test of the file system over the FTL (behind the drive's DRAM write
    /// buffer when the preset's `[write_cache]` is enabled, or with --write-cache); last line
    /// "N passed, M failed".
    Crashtest {
        #[arg(long, default_value = "test-min")]
        preset: String,
        #[arg(long = "set", value_name = "TABLE.FIELD=VALUE")]
        overrides: Vec<String>,
        #[arg(long, default_value_t = 50)]
        seeds: u64,
        /// Put the drive's DRAM write buffer in front of the FTL: the preset's `[write_cache]`
        /// table, enabled (the cited defaults of crates/wcache/src/config.rs where the preset
        /// has none). Without `write_cache.plp=true` a cut loses what the buffer holds, and
        /// the FS keeps its promise through FLUSH and FUA.
        #[arg(long)]
        write_cache: bool,
        /// Run the file system without FLUSH and FUA (ext4's `barrier=0`): over a buffer
        /// without PLP, cuts then lose committed files — what the barriers buy.
        #[arg(long)]
        no_barriers: bool,
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

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
                .ok_or_else(|| CliError::Store("DEST_DIR is not UTF-8".into()))?;
            import(image, sources, dest).map(|()| true)
        }
        FsCommand::Export {
            image,
            src_path,
            host_dir,
            force,
        } => export(image, src_path, host_dir, *force).map(|()| true),
        FsCommand::Mkdir {
            image,
            parents,
            path,
        } => writing(image, |img| img.mkdir(path, *parents)),
        FsCommand::Rm {
            image,
            recursive,
            path,
        } => writing(image, |img| {
            let n = img.rm(path, *recursive)?;
            println!("removed {n} entr{}", if n == 1 { "y" } else { "ies" });
            Ok(())
        }),
        FsCommand::Rmdir { image, path } => writing(image, |img| img.rmdir(path)),
        FsCommand::Ls { image, dir } => ls(image, dir).map(|()| true),
        FsCommand::Fsck { image, data } => fsck(image, *data),
        FsCommand::Crashtest {
            preset,
            overrides,
            seeds,
            write_cache,
            no_barriers,
            json,
        } => crash(
            preset,
            overrides,
            *seeds,
            *write_cache,
            !*no_barriers,
            json.as_deref(),
        ),
    }
}

fn mkfs(preset_name: &str, image: &Path, overrides: &[String]) -> Result<(), CliError> {
    let preset = Preset::load(preset_name, overrides)?;
    let img = Image::create(&preset, image)?;
    let capacity_bytes = img.capacity_bytes();
    img.close()?;
    println!(
        "formatted {}: preset {}, {capacity_bytes} bytes",
        image.display(),
        preset.name
    );
    Ok(())
}

/// Runs `op` on the image opened to write it, then commits.
fn writing(
    image: &Path,
    op: impl FnOnce(&mut Image) -> Result<(), nearflash_image::ImageError>,
) -> Result<bool, CliError> {
    let mut img = Image::open(image)?;
    op(&mut img)?;
    img.close()?;
    Ok(true)
}

fn import(image: &Path, sources: &[PathBuf], dest: &str) -> Result<(), CliError> {
    let mut img = Image::open(image)?;
    let report = img.import(sources, dest)?;
    img.close()?;
    for s in &report.skipped {
        eprintln!(
            "warning: skipped {} ({}): not a regular file",
            s.path, s.kind
        );
    }
    println!("imported {} file(s) into {dest}", report.files);
    Ok(())
}

fn export(image: &Path, src: &str, host_dir: &Path, force: bool) -> Result<(), CliError> {
    let mut img = Image::open_read_only(image)?;
    let overwrite = if force {
        Overwrite::Replace
    } else {
        Overwrite::Refuse
    };
    img.export(src, host_dir, overwrite)?;
    img.close()?;
    Ok(())
}

fn ls(image: &Path, dir: &str) -> Result<(), CliError> {
    let mut img = Image::open_read_only(image)?;
    let listing = img.ls(dir)?;
    img.close()?;
    for e in listing {
        let st = &e.stat;
        let kind = if st.kind == FileKind::Dir { 'd' } else { '-' };
        println!(
            "{kind}{:03o} {:>6} {:>6} {:>12} {}",
            st.perm, st.uid, st.gid, st.size_bytes, e.name
        );
    }
    Ok(())
}

fn fsck(image: &Path, data: bool) -> Result<bool, CliError> {
    let mut img = Image::open_read_only(image)?;
    let mut report = img.fsck()?;
    let scan = data.then(|| img.scan_data()).transpose()?;
    img.close()?;
    if let Some(scan) = &scan {
        report.problems.extend(scan.problems.iter().cloned());
    }
    for p in &report.problems {
        println!("{}: {}", p.code, p.detail);
    }
    if let Some(scan) = &scan {
        println!(
            "data: {} file(s) read, {} byte(s) read back intact, {} damaged range(s)",
            scan.files,
            scan.bytes_read,
            scan.problems.len()
        );
    }
    println!(
        "{}: {} file(s), {} dir(s), {} block(s) owned, {} problem(s)",
        image.display(),
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
    write_cache: bool,
    barriers: bool,
    json: Option<&Path>,
) -> Result<bool, CliError> {
    let preset = Preset::load(preset_name, overrides)?;
    let mut cfg = CrashTestConfig {
        write_cache: preset.write_cache.clone(),
        ..CrashTestConfig::default()
    };
    cfg.fs.barriers = barriers;
    // The table was validated when the preset loaded (whether it is enabled or not).
    cfg.write_cache.enabled |= write_cache;
    let wc = &cfg.write_cache;
    if wc.enabled {
        println!(
            "drive: a {} KiB DRAM write buffer in front of the FTL, {}",
            wc.capacity_bytes >> 10,
            if wc.plp {
                format!(
                    "power-loss protection ({} us hold-up): no FLUSH needed",
                    wc.plp_holdup_us
                )
            } else if barriers {
                "no power-loss protection: a cut loses what it holds; the FS sends FLUSH and FUA"
                    .to_string()
            } else {
                "no power-loss protection: a cut loses what it holds; the FS sends no FLUSH \
                 or FUA (--no-barriers), so committed files may be lost"
                    .to_string()
            }
        );
    }
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
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    println!("{summary}");
    Ok(summary.failed == 0)
}
