//! The machine's loop under its one watchdog.

use super::*;
use crate::backing::Emulated;
use crate::config::insider_host;
use crate::BackingKind;
use nearflash_sim::{SimDuration, StallReason, STALL_LIMIT};

fn machine() -> Machine {
    let cfg = InsiderConfig {
        backing: BackingKind::DramEmulated,
        emulated_capacity_bytes: 64 << 20,
        ..InsiderConfig::default()
    };
    let backing = |_: &mut Q| Ok(Backing::Emulated(Emulated::new(&cfg, false)));
    Machine::new(&cfg, &insider_host(), 1, backing).expect("a valid machine")
}

/// Story: the runtime waits in many short turns — a call sleeping one second at a time keeps
/// the loop turning — while the drive has lost a request (accepted, never completed). Each
/// wait ends well, so a watchdog armed per wait never fires and the run would spin until the
/// sleeper gave up; the one watchdog kept across the waits reports the lost work as the
/// loop's typed stall once nothing has completed for the stall limit.
#[test]
fn a_drive_that_lost_a_request_while_a_call_keeps_sleeping_ends_in_a_stall_not_a_spin() {
    let mut m = machine();
    // A firmware read goes through the whole path and completes: progress, and nothing left.
    let id = m.firmware(BlockOp::Read, 0, 4096, Vec::new());
    let fw_before = m.firmware_completed();
    m.wait(|st| st.fw_completed() != fw_before).unwrap();
    assert!(m.firmware_done(id).expect("done").is_ok());
    let done_before = m.st().progress().completed;
    assert_eq!(m.st().progress().outstanding, 0);
    // The drive accepts a storage request and loses it: outstanding, never completed.
    m.st_mut().backing_submitted += 1;
    let since = m.now();

    let sleep = SimDuration::from_ms(1_000);
    let turns_max = 2 * STALL_LIMIT.as_ns() / sleep.as_ns();
    let mut turns = 0;
    let stall = loop {
        assert!(
            turns < turns_max,
            "the loop kept turning for {turns} s with a request lost"
        );
        let at = m.now() + sleep;
        m.arm_timer(at, 1);
        let waited = m.wait(|st| st.wake.due);
        m.wake_mut().disarm(at, 1);
        match waited {
            Ok(()) => turns += 1,
            Err(stall) => break stall,
        }
    };
    assert_eq!(stall.reason, StallReason::NoCompletion);
    assert_eq!(stall.progress.outstanding, 1, "the lost request");
    assert_eq!(
        stall.progress.completed, done_before,
        "nothing completed since"
    );
    assert_eq!(stall.since, since, "watched from the last completion on");
    assert!(
        stall.at.since(stall.since) >= STALL_LIMIT
            && stall.at.since(stall.since) <= STALL_LIMIT + sleep,
        "reported within one turn of the limit: {stall}"
    );
    assert!(
        turns >= STALL_LIMIT.as_ns() / sleep.as_ns() - 1,
        "every wait alone ended well: {turns}"
    );
}
