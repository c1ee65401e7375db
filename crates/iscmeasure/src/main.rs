//! `nearflash-iscmeasure WASM ROOT [--check]`: measures INSIDER's applications in WASM (the
//! `nearflash-iscapps-wasm` module) and writes ROOT/crates/iscapps/src/measured.rs, or with
//! `--check` compares a fresh measurement with the committed table and exits 1 when they
//! differ. Run through scripts/measure-insider-costs.sh, which builds the module first.

use std::path::PathBuf;
use std::process::ExitCode;

use nearflash_iscapps::measure::TABLE_PATH;
use nearflash_iscmeasure::{digest, measure, render, AppFuel};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let paths: Vec<PathBuf> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    let [wasm, root] = paths.as_slice() else {
        eprintln!("usage: nearflash-iscmeasure WASM WORKSPACE_ROOT [--check]");
        return ExitCode::from(2);
    };
    let toolchain = std::env::var("NEARFLASH_RUSTC_VERSION").unwrap_or_else(|_| "rustc".into());
    let run = || -> Result<bool, Box<dyn std::error::Error>> {
        let bytes = std::fs::read(wasm)?;
        let fuel = measure(&bytes)?;
        let digest = digest(root)?;
        for f in &fuel {
            let m = f.as_measurement();
            let passes: Vec<String> = (0..f.pass_fuel.len())
                .map(|p| format!("{:.3}", m.drive_instructions_per_byte(p).unwrap_or(0.0)))
                .collect();
            println!(
                "{:<12} drive [{}] instr/B, remainder {:.3} instr/output B, host-only {:.3} instr/B",
                f.app,
                passes.join(", "),
                m.remainder_instructions_per_output_byte(),
                m.pure_cpu_instructions_per_input_byte()
            );
        }
        if check {
            let committed: Vec<AppFuel> = nearflash_iscapps::measure::table()
                .iter()
                .map(AppFuel::from)
                .collect();
            let same = committed == fuel && nearflash_iscapps::measure::table_digest() == digest;
            if !same {
                eprintln!("{TABLE_PATH} is not what the code measures now: run scripts/measure-insider-costs.sh");
            }
            return Ok(same);
        }
        std::fs::write(root.join(TABLE_PATH), render(&fuel, digest, &toolchain))?;
        println!("wrote {}", root.join(TABLE_PATH).display());
        Ok(true)
    };
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("nearflash-iscmeasure: {e}");
            ExitCode::from(1)
        }
    }
}
