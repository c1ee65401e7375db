//! Ctrl-C for a command whose work runs on worker threads (`reproduce`): while the work runs,
//! SIGINT sets a flag instead of ending the process; the work runs inside
//! `nearflash_sim::interrupt::interruptible` with that flag as its check, so the simulations
//! stop at their next poll (every worker: `parallel_map` relays the caller's check), the
//! command's own clean-up runs (no partial outputs: they are written atomically at the end,
//! and a directory the run created is removed), and the command ends with
//! `CliError::Interrupted` (exit 130, as a shell reports SIGINT). The handler resets itself
//! (`SA_RESETHAND`): a second Ctrl-C ends the process at once, whatever is running. A process
//! started with SIGINT ignored (in the background of a script, under `nohup`) keeps ignoring
//! it, as shells expect.

use crate::error::CliError;
use nearflash_sim::interrupt::interruptible;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the SIGINT handler; cleared when the work ends.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_signal: libc::c_int) {
    // An atomic store is async-signal-safe.
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Runs `work` with Ctrl-C turned into a request to stop it: its answer, or
/// `CliError::Interrupted` when SIGINT arrived before it ended with an error (a run that
/// completed is kept, whenever the signal came).
pub fn until_ctrl_c<T, E: Into<CliError>>(
    what: &'static str,
    work: impl FnOnce() -> Result<T, E>,
) -> Result<T, CliError> {
    INTERRUPTED.store(false, Ordering::Relaxed);
    // SAFETY: sigaction with a handler that only stores to an atomic; `old` is written by the
    // kernel before it is read, and restored below.
    let old = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        let rc = libc::sigaction(libc::SIGINT, &sa, &mut old);
        assert_eq!(rc, 0, "SIGINT takes a handler");
        if old.sa_sigaction == libc::SIG_IGN {
            let rc = libc::sigaction(libc::SIGINT, &old, std::ptr::null_mut());
            assert_eq!(rc, 0, "SIGINT stays ignored");
        }
        old
    };
    let r = interruptible(|| INTERRUPTED.load(Ordering::Relaxed), work);
    // SAFETY: puts back the disposition saved above.
    let rc = unsafe { libc::sigaction(libc::SIGINT, &old, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "SIGINT's disposition is restored");
    let interrupted = INTERRUPTED.swap(false, Ordering::Relaxed);
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(_)) | Err(_) if interrupted => Err(CliError::Interrupted(what)),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => unreachable!("only the SIGINT flag interrupts the work"),
    }
}
