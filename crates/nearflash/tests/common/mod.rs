//! Helpers shared by the CLI scenario tests: run the real binary, and check that a bad
//! command fails with an error naming the problem (never a panic).

use std::process::{Command, Output};

pub fn nearflash(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(args)
        .output()
        .expect("runs the binary")
}

/// Runs the CLI like [`nearflash`] and also returns the CPU time it used (user + system, from
/// `wait4`'s resource usage of that one child). Tests of how long a run costs measure this,
/// not wall time, which grows with whatever else the machine runs.
#[allow(dead_code)] // each test file compiles this module; not every one uses it
pub fn nearflash_cpu(args: &[&str]) -> (Output, std::time::Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    // Reaped below by `wait4`, which also gives its resource usage (`Child::wait` does not).
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(args)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("runs the binary");
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: all-zero bytes are a valid `rusage` (integers and timevals only).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped (`child` is never waited on).
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let tv = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    let output = Output {
        status: std::os::unix::process::ExitStatusExt::from_raw(status),
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read(&err_path).unwrap(),
    };
    (output, cpu)
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
