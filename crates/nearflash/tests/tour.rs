//! The README's tour runs as written: `scripts/tour.sh --small` runs every line of the tour
//! (read from README.md itself), in order, in one shell, in a scratch directory that looks like
//! a fresh clone, with this build's `nearflash` — the slow lines with small sizes (the table in
//! the script) — and checks that `.gitignore` covers every file the tour wrote. The live-mode
//! lines skip, saying so, only where the machine has no /dev/fuse.

use std::path::Path;
use std::process::Command;

#[test]
fn every_line_of_the_readme_tour_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("1200")
        .arg("bash")
        .arg(root.join("scripts/tour.sh"))
        .arg("--small")
        .arg("--in")
        .arg(dir.path())
        .env("NEARFLASH_BIN", env!("CARGO_BIN_EXE_nearflash"))
        .output()
        .expect("run scripts/tour.sh (needs bash and coreutils' timeout)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The per-line progress (and skips, if any) shows with --nocapture.
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "scripts/tour.sh --small failed ({}):\n{}",
        out.status,
        stderr
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        stderr.contains("tour: all "),
        "the tour did not finish:\n{stderr}"
    );
}
