//! Helpers shared by the CLI scenario tests: run the real binary, and check that a bad
//! command fails with an error naming the problem (never a panic).

use std::process::{Command, Output};

pub fn nearflash(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(args)
        .output()
        .expect("runs the binary")
}

/// Asserts the command exits non-zero with `needle` in its error and no panic.
pub fn fails_naming(args: &[&str], needle: &str) {
    let out = nearflash(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(
        err.contains(needle),
        "{args:?}: stderr {err:?} lacks {needle:?}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}
