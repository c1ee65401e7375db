//! One run of a virtual file on INSIDER's ISC unit (`nearflash_insider::isc::Unit`), the
//! device thread being the unit's storage and clock. The unit is sans-IO: it says which
//! requests its credits allow (`issue`), takes their data back in issue order (`arrived`),
//! starts the program's slot or core on a chunk and answers when it finishes (`try_slot`),
//! and makes the output visible then (`slot_done`). This file does the rest:
//!
//! - **Storage.** Each request the unit issues (C bytes of the real file, at most R ahead of
//!   the program) is submitted to the image's file system at once, as the reader, through the
//!   open handle. The file system runs one operation at a time, so the reads go back to back
//!   through it, its FTL and flash (INSIDER's drive overlaps them on its chips; here the
//!   credits bound how far the reads run ahead of the program, not how many the flash
//!   serves at once). Their data go back to the unit in issue order (INSIDER's Slots Index
//!   FIFO), each at the instant its read finished (or, behind an earlier one, when that one
//!   did).
//! - **Time.** The unit's one deadline (the slot's end) and the reads' completions are
//!   handled in time order: before the slot's end at `t`, the file system runs to `t`
//!   (`FsHost::advance_to`, the driver's own wait) and every read finished by then arrives
//!   first. With the slot idle, the device thread waits for the oldest read
//!   (`FsHost::wait`). A request the unit issues at an instant the file system's clock has
//!   passed goes in at once (the file system serves its caller's requests in order).
//! - **Output.** Taken from the unit's output FIFO when each chunk finishes (no DMA stage:
//!   the output stays on the device thread for the handle), bounded by `OUTPUT_BYTES_MAX`.
//!
//! The run ends when the slot finishes the last chunk; the open completes then. Every read
//! submitted is waited for before the real file is closed, whatever ended the run.

use super::FsDevice;
use crate::driver::LiveDevice;
use crate::op::Errno;
use crate::vfile::{VfileError, OUTPUT_BYTES_MAX};
use nearflash_fs::{Caller, Fh, FsCompletion, FsOp, FsReply, OpId};
use nearflash_insider::isc::SlotFault;
use nearflash_insider::stream::{Direction, Extent, ProgramRun, Stream};
use nearflash_sim::SimTime;
use nearflash_stream::StreamProgram;
use std::collections::VecDeque;

/// The descriptor of the run's stream in the unit: runs are served one at a time, so one
/// descriptor serves them all (3: after stdin, stdout and stderr, as INSIDER's runtime).
const RUN_FD: u32 = 3;
/// The application slot a virtual file's program runs in (slot 0 is pass-through).
const RUN_SLOT: usize = 1;

/// What a finished run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RunOutput {
    pub output: Vec<u8>,
    pub bytes_in: u64,
    /// Simulated time the unit's engines spent on the program.
    pub program_ns: u64,
    /// Requests the unit issued, and credits that came back.
    pub isc_requests: u64,
    pub credits_returned: u64,
    /// When the slot finished the last chunk.
    pub end: SimTime,
}

/// A read in flight: the file system's operation and the bytes the unit asked for.
struct Pending {
    id: OpId,
    len_bytes: u64,
}

impl FsDevice {
    /// Runs `program` (`label`) over the real file open as `fh` (`size_bytes` long) for
    /// `caller` on the ISC unit.
    pub(super) fn run_on_unit(
        &mut self,
        caller: Caller,
        fh: Fh,
        size_bytes: u64,
        program: Box<dyn StreamProgram>,
        label: &str,
    ) -> Result<RunOutput, VfileError> {
        let start = self.now();
        let run = ProgramRun {
            name: label.to_string(),
            cost: program.cost(),
            program: Some(program),
            output_per_input: 0.0,
            throttle_mb_s: None,
        };
        let credits = self.isc.credits_initial();
        let mut s = Stream::new(RUN_FD, RUN_SLOT, Direction::Read, run, credits);
        // The registration's parameters went in when the program started: it reads at once.
        s.armed = true;
        s.opened_at = start;
        s.total_in_bytes = size_bytes;
        if size_bytes > 0 {
            s.extents = vec![Extent {
                device_offset_bytes: 0,
                len_bytes: size_bytes,
            }];
        }
        let busy_before: u64 = self.isc.engines().busy_ns().iter().sum();
        let stats_before = self.isc.stats();
        self.isc.open(s);
        let mut pending = VecDeque::new();
        let ran = self.drive_run(caller, fh, start, &mut pending);
        for p in pending {
            // Late data of a run that failed: dropped, but never left on the file system.
            if let Err(e) = self.image.host_mut().wait(p.id) {
                self.note_device_error(e.to_string());
            }
        }
        self.isc.check_invariants();
        let stream = self.isc.close(RUN_FD).expect("the run's stream is open");
        let end = ran?;
        assert!(stream.program_ended && !stream.slot_busy, "the run ended");
        let busy_after: u64 = self.isc.engines().busy_ns().iter().sum();
        let stats = self.isc.stats();
        Ok(RunOutput {
            output: stream.host_buf.into_iter().collect(),
            bytes_in: stream.consumed_in_bytes,
            program_ns: busy_after - busy_before,
            isc_requests: stats.requests_issued - stats_before.requests_issued,
            credits_returned: stats.credits_returned - stats_before.credits_returned,
            end,
        })
    }

    /// The run's loop: issue, read, hand the data over, finish chunks, until the last chunk
    /// is done (its instant) or the run fails. The output gathers in the stream's host-side
    /// buffer.
    fn drive_run(
        &mut self,
        caller: Caller,
        fh: Fh,
        start: SimTime,
        pending: &mut VecDeque<Pending>,
    ) -> Result<SimTime, VfileError> {
        let fd = RUN_FD;
        // The unit's clock: the last instant handed to it (never back).
        let mut unit_now = start;
        let mut slot_end = self.isc.try_slot(fd, unit_now);
        // Reads finished but not handed over yet (their instants may lie past the slot's end).
        let mut ready: VecDeque<(u64, FsCompletion)> = VecDeque::new();
        loop {
            for i in self.isc.issue() {
                assert_eq!(i.fd, fd, "one run at a time");
                let op = FsOp::Read {
                    fh,
                    offset_bytes: i.range.device_offset_bytes,
                    len_bytes: i.range.len_bytes,
                };
                let id = self
                    .fs_submit(caller, op)
                    .map_err(|e| device("reading the real file", e))?;
                pending.push_back(Pending {
                    id,
                    len_bytes: i.range.len_bytes,
                });
                assert!(
                    pending.len() + ready.len() <= self.isc.credits_initial() as usize,
                    "reads in flight are bounded by the credits"
                );
            }
            let s = self.isc.stream(fd).expect("open for the run");
            if let Some(f) = &s.slot_fault {
                return Err(match f.clone() {
                    SlotFault::Program(e) => VfileError::Program(e),
                    SlotFault::NotEnded { program } => VfileError::NotEnded(program),
                });
            }
            if s.program_ended && !s.slot_busy {
                assert!(pending.is_empty() && ready.is_empty(), "all input consumed");
                return Ok(unit_now);
            }
            match slot_end {
                Some(t) => {
                    // Everything the file system finishes by the slot's end arrives first.
                    if self.image.host_mut().now() < t {
                        self.image.host_mut().advance_to(t);
                    }
                    while let Some(p) = pending.front() {
                        let Some(c) = self.image.host_mut().take_completion(p.id) else {
                            break;
                        };
                        ready.push_back((p.len_bytes, c));
                        pending.pop_front();
                    }
                    while ready.front().is_some_and(|(_, c)| c.finished <= t) {
                        let (len, c) = ready.pop_front().expect("looked at");
                        unit_now = unit_now.max(c.finished);
                        self.arrive(fd, len, c)?;
                    }
                    unit_now = t;
                    self.isc.slot_done(fd, t).expect("open for the run");
                    self.take_output(fd)?;
                    slot_end = self.isc.try_slot(fd, t);
                }
                None => {
                    if ready.is_empty() {
                        let p = pending
                            .pop_front()
                            .expect("an idle slot with no chunk waits for a read");
                        let c = self.image.host_mut().wait(p.id).map_err(|e| {
                            device("reading the real file", crate::errno::of_host(&e))
                        })?;
                        ready.push_back((p.len_bytes, c));
                    }
                    let (len, c) = ready.pop_front().expect("a read is back");
                    unit_now = unit_now.max(c.finished);
                    self.arrive(fd, len, c)?;
                    slot_end = self.isc.try_slot(fd, unit_now);
                }
            }
        }
    }

    /// Hands a finished read's data to the unit (`len_bytes` asked for).
    fn arrive(&mut self, fd: u32, len_bytes: u64, c: FsCompletion) -> Result<(), VfileError> {
        let data = match self.fs_answer(c) {
            Ok(FsReply::Data(d)) => d,
            Ok(_) => return Err(device("reading the real file", Errno(libc::EIO))),
            Err(e) => return Err(device("reading the real file", e)),
        };
        if data.len() as u64 != len_bytes {
            // The file is a snapshot for the run (requests are served one at a time).
            return Err(device("reading the real file", Errno(libc::EIO)));
        }
        let took = self.isc.arrived(fd, len_bytes, Ok(data));
        assert!(took, "the run's stream takes its data");
        Ok(())
    }

    /// Moves the unit's output into the stream's host-side buffer, bounded.
    fn take_output(&mut self, fd: u32) -> Result<(), VfileError> {
        let (n, data) = self.isc.take_output(fd);
        let s = self.isc.stream_mut(fd).expect("open for the run");
        assert_eq!(n, data.len() as u64, "a functional run moves bytes");
        s.host_buf.extend(data);
        s.host_buf_bytes += n;
        if s.host_buf_bytes > OUTPUT_BYTES_MAX {
            return Err(VfileError::OutputLimit {
                program: s.run.name.clone(),
                bytes_max: OUTPUT_BYTES_MAX,
            });
        }
        Ok(())
    }
}

fn device(what: &str, e: Errno) -> VfileError {
    VfileError::Device {
        what: what.to_string(),
        errno: e.0,
    }
}
