//! `nearflash soak`: seeds print, a seed replays its case exactly, bad arguments are
//! refused, and a short soak reports seeds and power cuts per minute.

mod common;
use common::{fails_naming, nearflash};

/// A soak either runs to its time limit with a summary, or stops at its first failing case
/// with the command that replays it — and that command reproduces the failure exactly.
#[test]
fn a_short_soak_prints_each_seed_and_its_summary_or_a_replayable_failure() {
    let out = nearflash(&["soak", "--seconds", "2", "--seed", "3"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("seed ") && l.contains(": ok")),
        "{stdout}"
    );
    if out.status.success() {
        assert!(
            stdout.contains("seeds/min") && stdout.contains("cuts/min"),
            "{stdout}"
        );
        assert!(stdout.contains("0 lost, 0 wrong"), "{stdout}");
        return;
    }
    let replay = stdout
        .lines()
        .find_map(|l| l.strip_prefix("replay: nearflash soak --replay "))
        .unwrap_or_else(|| panic!("a failing soak names its replay: {stdout}"));
    let failed = stdout
        .lines()
        .find(|l| l.starts_with("FAILED seed"))
        .unwrap();
    let again = nearflash(&["soak", "--replay", replay]);
    assert!(!again.status.success());
    let again = String::from_utf8_lossy(&again.stdout);
    let prefix = format!("FAILED seed {replay}: ");
    let why = again
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("the replay fails too: {again}"));
    // The same case fails the same way.
    assert!(failed.ends_with(why), "{failed} vs {why}");
}

#[test]
fn a_seed_replays_its_case_exactly() {
    let first = nearflash(&["soak", "--seconds", "1", "--seed", "9", "--quiet"]);
    assert!(first.status.success());
    let a = nearflash(&["soak", "--replay", "12345"]);
    let b = nearflash(&["soak", "--replay", "12345"]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stdout));
    assert_eq!(a.stdout, b.stdout);
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(text.contains("seed 12345: ok"), "{text}");
}

#[test]
fn soak_arguments_are_checked() {
    fails_naming(&["soak"], "--seconds");
    fails_naming(&["soak", "--seconds", "0"], "--seconds must be within");
    fails_naming(
        &["soak", "--replay", "1", "--seed", "2"],
        "cannot be used with",
    );
}
