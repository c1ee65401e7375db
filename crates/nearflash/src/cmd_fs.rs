//! `nearflash fs`: the device file system on a device image (`nearflash_image`: the image
//! format, opening with recovery, and the operations), and its crash test.

use crate::error::CliError;
use nearflash_fs::crashtest::{self, CrashOutcome, CrashSummary, CrashTestConfig};
use nearflash_fs::FileKind;
use nearflash_image::Image;
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

fn import(image: &Path, sources: &[PathBuf], dest: &str) -> Result<(), CliError> {
    let mut img = Image::open(image)?;
    let files = img.import(sources, dest)?;
    img.close()?;
    println!("imported {files} file(s) into {dest}");
    Ok(())
}

fn export(image: &Path, src: &str, host_dir: &Path) -> Result<(), CliError> {
    let mut img = Image::open(image)?;
    img.export(src, host_dir)?;
    img.close()?;
    Ok(())
}

fn ls(image: &Path, dir: &str) -> Result<(), CliError> {
    let mut img = Image::open(image)?;
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

fn fsck(image: &Path) -> Result<bool, CliError> {
    let mut img = Image::open(image)?;
    let report = img.fsck()?;
    img.close()?;
    for p in &report.problems {
        println!("{}: {}", p.code, p.detail);
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
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        std::fs::write(path, text).map_err(|source| CliError::Io {
            what: path.display().to_string(),
            source,
        })?;
    }
    println!("{summary}");
    Ok(summary.failed == 0)
}
