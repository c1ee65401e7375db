//! The device thread's loop: the one thread that owns the model. It takes requests from the
//! bounded channel in arrival order (FIFO across every FUSE thread and program), submits
//! each at its simulated arrival instant (`pace::Clock::arrival`), runs the device until it
//! completes, records it, holds the answer until its simulated completion under
//! `--pace wall`, and answers. Requests are served one at a time, as the device's file system
//! serves them (one operation at a time under its file-system-wide lock): a request arriving
//! while another is in service waits for it, exactly as it would queue in the file system.
//! The loop ends when every sender is gone (the mount ended); the caller then closes the
//! device (commit) and writes the final statistics.

use crate::adapter::Envelope;
use crate::op::{Answer, Call, Errno, LiveOp};
use crate::pace::Clock;
use crate::stats::Recorder;
use nearflash_sim::SimTime;
use std::sync::mpsc::Receiver;

/// A device the loop serves: the file system (`device::FsDevice`) or the raw logical space
/// (`raw::RawDevice`).
pub trait LiveDevice {
    /// The device's clock.
    fn now(&mut self) -> SimTime;
    /// Moves the device's clock to `t` (not back), running the background work due by then.
    fn advance_to(&mut self, t: SimTime);
    /// Executes one request to completion on the device's clock.
    fn execute(&mut self, call: Call) -> Result<Answer, Errno>;
    fn recorder(&mut self) -> &mut Recorder;
}

/// Serves requests until the channel closes.
pub fn run<D: LiveDevice>(rx: &Receiver<Envelope>, dev: &mut D, clock: &Clock) {
    while let Ok(env) = rx.recv() {
        let arrived = clock.arrival(dev.now(), env.received);
        dev.advance_to(arrived);
        let kind = env.call.op.kind();
        let is_write = matches!(env.call.op, LiveOp::Write { .. });
        let result = dev.execute(env.call);
        let done = dev.now();
        assert!(done >= arrived, "the device's clock went back");
        let bytes = match &result {
            Ok(Answer::Data(d)) => d.len() as u64,
            Ok(Answer::Written(n)) if is_write => u64::from(*n),
            _ => 0,
        };
        dev.recorder()
            .record(kind, result.is_ok(), bytes, done.as_ns() - arrived.as_ns());
        clock.hold_until(done);
        (env.reply)(result);
    }
}
