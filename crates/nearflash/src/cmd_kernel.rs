//! `nearflash kernel`: run one workload functionally (every microblock, its screens in a
//! seeded shuffled order), verify every live-out array against the independent reference, and
//! optionally dump them as `DIR/<array>.f64` (little-endian, row-major). A wrong output is a
//! failure. `nearflash kernel --table2` prints our cost model beside FlashAbacus Table 2.

use crate::error::CliError;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use nearflash_kernels::{execute, table2, Dataset, ScreenPlan};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct KernelArgs {
    /// Workload name (atax, bicg, 2dconv, mvt, adi, fdtd-2d, gesummv, syrk, 3mm, covariance,
    /// gemm, 2mm, syr2k, correlation, nn, bfs, nw, pathfinder, wordcount).
    #[arg(required_unless_present = "table2")]
    pub name: Option<String>,
    /// mini | small | medium | large | extralarge | paper (FlashAbacus Table 2 input size).
    #[arg(long, default_value = "small")]
    pub dataset: String,
    /// Screens per parallel microblock (default 6: one per worker LWP).
    #[arg(long, default_value_t = 6)]
    pub screens: u32,
    /// Seed of the screen execution order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write each live-out array as DIR/<array>.f64.
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,
    /// Write the run's summary as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Print our instruction-count model beside FlashAbacus Table 2 (B/KI, LD/ST) instead.
    #[arg(long)]
    pub table2: bool,
}

fn kernel_err(e: nearflash_kernels::KernelError) -> CliError {
    CliError::Kernel(e.to_string())
}

pub fn run(args: &KernelArgs) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        crate::output::check_file("--json", path)?;
    }
    if args.table2 {
        let rows = table2::compare().map_err(kernel_err)?;
        print!("{}", table2::render(&rows));
        return Ok(());
    }
    let name = args
        .name
        .as_deref()
        .expect("clap requires NAME without --table2");
    let dataset: Dataset = args.dataset.parse().map_err(kernel_err)?;
    if args.screens == 0 {
        return Err(CliError::Kernel(
            "--screens must be at least 1 (a microblock needs a screen)".into(),
        ));
    }
    if let Some(dir) = &args.dump_dir {
        std::fs::create_dir_all(dir).map_err(|e| CliError::Io {
            what: format!("creating {}", dir.display()),
            source: e,
        })?;
    }
    let plan = ScreenPlan {
        screens_per_microblock: args.screens,
    };
    let report =
        execute(name, dataset, plan, args.seed, args.dump_dir.as_deref()).map_err(kernel_err)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("serialisable");
        crate::output::write_atomic(path, (text + "\n").as_bytes())?;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "live-out array",
        "elements",
        "sum",
        "sum |x|",
        "max rel. err",
    ]);
    for a in &report.arrays {
        t.add_row(vec![
            a.name.clone(),
            a.len.to_string(),
            format!("{:.6e}", a.sum),
            format!("{:.6e}", a.abs_sum),
            format!("{:.2e}", a.max_rel_err),
        ]);
    }
    println!(
        "{} ({}; {}): {} microblocks, {} screens, {} input bytes, {} instructions",
        report.kernel,
        args.dataset,
        report.dims,
        report.microblocks,
        report.screens,
        report.input_bytes,
        report.cost.instructions
    );
    println!("{t}");
    for p in &report.dumped {
        println!("wrote {}", p.display());
    }
    println!("verified against the reference: ok");
    Ok(())
}
