//! `nearflash soak`: a seeded soak in the spirit of TigerBeetle's VOPR. From one seed it
//! keeps drawing cases — a configuration (geometry, page size, timing, over-provisioning,
//! GC, checkpoints), a workload and a fault schedule (power cuts, program/erase failures) —
//! runs each against the reference model (`nearflash_ftl::testing::run_case`), prints each
//! case's seed, and stops at the first failure with the one-line command that replays it.
//! The wall clock decides only when to stop drawing; every case is deterministic.

use crate::error::CliError;
use nearflash_ftl::testing::{draw_case, run_case, SoakCase};
use nearflash_sim::SimRng;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct SoakArgs {
    /// Keep drawing cases for this many wall-clock seconds.
    #[arg(long, conflicts_with = "replay")]
    pub seconds: Option<u64>,
    /// The seed the case seeds are drawn from [default: 1].
    #[arg(long, conflicts_with = "replay")]
    pub seed: Option<u64>,
    /// Run the one case this seed draws (the command a failure prints).
    #[arg(long)]
    pub replay: Option<u64>,
    /// Print only failures and the summary.
    #[arg(long)]
    pub quiet: bool,
}

/// Longest soak accepted: one week.
const SECONDS_MAX: u64 = 7 * 24 * 3600;

fn describe(c: &SoakCase) -> String {
    let f = &c.flash;
    format!(
        "{}ch x {}pk x {}die x {}pl x {}blk x {}pg x {} B, op {:.1}%, {:?}, ckpt {:.0} us, qd {}, \
         program/erase fail {:.4}/{:.4}, media {}",
        f.channels,
        f.packages_per_channel,
        f.dies_per_package,
        f.planes_per_die,
        f.blocks_per_plane,
        f.pages_per_block,
        f.page_size_bytes,
        c.ftl.over_provisioning_percent,
        c.ftl.gc_policy,
        c.ftl.checkpoint_interval_us,
        c.io.queue_depth,
        c.faults.program_fail_probability,
        c.faults.erase_fail_probability,
        c.faults
            .media
            .as_ref()
            .map_or("off".to_string(), |m| format!(
                "{} P/E, {:.0} days",
                m.initial_pe_cycles, m.retention_offset_days
            ))
    )
}

/// Runs the soak; `Ok(false)` at the first failing case.
pub fn run(args: &SoakArgs) -> Result<bool, CliError> {
    if let Some(seed) = args.replay {
        let case = draw_case(seed);
        println!("seed {seed}: {}", describe(&case));
        let o = run_case(&case);
        return Ok(match o.failure {
            Some(f) => {
                println!("FAILED seed {seed}: {f}");
                false
            }
            None => {
                println!(
                    "seed {seed}: ok ({} power cuts, {} requests)",
                    o.power_cuts, o.requests
                );
                true
            }
        });
    }
    let seconds = args.seconds.ok_or_else(|| {
        CliError::Workload("give --seconds N (or --replay SEED to rerun one case)".into())
    })?;
    if seconds == 0 || seconds > SECONDS_MAX {
        return Err(CliError::Workload(format!(
            "--seconds must be within 1..={SECONDS_MAX}, got {seconds}"
        )));
    }
    let master = args.seed.unwrap_or(1);
    let mut seeds = SimRng::seed_from_u64(master);
    let wall = Instant::now();
    let (mut cases, mut cuts, mut requests) = (0u64, 0u64, 0u64);
    let (mut media_cases, mut uncorrectable) = (0u64, 0u64);
    println!("soak: seed {master}, {seconds} s");
    while wall.elapsed().as_secs() < seconds {
        let seed = seeds.next_u64();
        let case = draw_case(seed);
        let o = run_case(&case);
        cases += 1;
        cuts += o.power_cuts;
        requests += o.requests;
        media_cases += u64::from(case.faults.media.is_some());
        uncorrectable += o.uncorrectable_errors;
        if let Some(f) = o.failure {
            println!("FAILED seed {seed}: {}: {f}", describe(&case));
            println!("replay: nearflash soak --replay {seed}");
            return Ok(false);
        }
        if !args.quiet {
            println!("seed {seed}: ok ({})", describe(&case));
        }
    }
    let minutes = wall.elapsed().as_secs_f64() / 60.0;
    println!(
        "soak: {media_cases} cases with media bit errors: {uncorrectable} reads reported \
         uncorrectable (a typed error, never wrong data)"
    );
    println!(
        "soak: {cases} cases, {cuts} power cuts, {requests} requests in {:.1} min: \
         {:.1} seeds/min, {:.1} cuts/min, 0 lost, 0 wrong",
        minutes,
        cases as f64 / minutes,
        cuts as f64 / minutes
    );
    Ok(true)
}
