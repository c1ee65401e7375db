//! The runtime's non-blocking core: a host thread *submits* a call ([`Call`]) and gets an
//! [`OpId`] back at once; the call is a state machine that moves on as the machine's events
//! (and its own deadlines: host CPU work, a sleep) come, and ends as a [`Completion`] the
//! caller takes with [`Runtime::take_completions`]. The one simulation loop drives it all:
//! the drive is a `sim::Model` on its `sim::Driver`, and the runtime waits only through
//! `Sim::run_until` (under the one watchdog) for the next turn that concerns a call; then a
//! pass resumes the calls that turn concerns. Several calls (one per simulated thread or
//! process) are in flight at once and no call owns the clock.
//!
//! The blocking entry points of `runtime` (`pread`, `vread`, …, like the POSIX calls they
//! imitate) are one layer on top: [`Runtime::run_to_completion`] submits and runs the loop
//! until *that* call ends, while every other call in flight goes on meanwhile.
//!
//! Every deadline is an event: a call waiting until `t` (a sleep, CPU time, a copy on a
//! host core) arms a timer on the drive's queue (`machine::Wake`), and so does the file
//! system's CPU timer. Waiting is exact: a call waiting for a deadline `t` resumes once
//! every drive event due by `t` has happened, and a call waiting for the drive's state
//! resumes in the pass right after the event that changed it (the drive notes the streams
//! each event touched, the host operations that ended, the firmware completions).

use super::{map_extents, FileView, HostFile, Runtime, ROOT_UID};
use crate::error::InsiderError;
use crate::machine::Machine;
use crate::stream::Direction;
use nearflash_fs::{Fh, FileExtent, FsError, FsOp, FsReply, Ino};
use nearflash_ftl::SECTOR_BYTES;
use nearflash_host::{Extent as HostExtent, FileId, OpFlags, OpId as HostOpId, PAGE_BYTES};
use nearflash_sim::{SimDuration, SimTime, StallReason};
use std::collections::{BTreeMap, BTreeSet};

mod posix_calls;
mod shared;
mod virt_calls;

/// Calls in flight at once (submitted and not yet taken as completions).
pub const CALLS_MAX: usize = 4096;

/// A submitted call's number, in submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u64);

/// What a host thread asks the runtime for, without waiting.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// `pread(fd, offset, len)`, an operation of the shared host model: cached pages are
    /// copied, the rest read through the storage stack (with read-ahead). Ends as
    /// [`Output::Read`].
    Pread { fd: u32, offset: u64, len: u64 },
    /// `pwrite` with `O_DIRECT` of `len` bytes (timing fidelity: no data), an operation of
    /// the shared host model: straight to the drive in `io_request_bytes` requests, at most
    /// `io_queue_depth` in flight, whole sectors.
    PwriteDirect { fd: u32, offset: u64, len: u64 },
    /// `vread(fd, len)` on the application thread's core: up to `len` bytes of the
    /// program's output once `len` are buffered (at most the host-side buffer) or the
    /// output has ended. Ends as [`Output::Read`] (0 bytes at the end).
    Vread { fd: u32, len: u64 },
    /// `vread` by the process owning `fd`, on that process's own core (§5.3 runs one
    /// process per program): waits as `Vread` (pipelined), then the copy occupies that
    /// core, not the application thread's.
    ProcessVread { fd: u32, len: u64 },
    /// `vwrite(fd, data)` (timing fidelity: `len` bytes, `data` empty).
    Vwrite { fd: u32, len: u64, data: Vec<u8> },
    /// `vsync(fd)`: until the drive has processed every byte written so far.
    Vsync { fd: u32 },
    /// Host compute of `instructions` spread over every host core (OpenMP, perfect
    /// scaling).
    Compute { instructions: f64 },
    /// The thread sleeps until `until` (a timer).
    Sleep { until: SimTime },
}

/// What a call produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Bytes read: `n` (short or 0 at the end); `data` is empty in timing fidelity.
    Read {
        n: u64,
        data: Vec<u8>,
    },
    /// A virtual file's stream drained at its close: the bytes the drive wrote.
    Drained {
        written_bytes: u64,
    },
    Done,
}

/// A call that ended.
#[derive(Debug)]
pub struct Completion {
    pub op: OpId,
    pub submitted: SimTime,
    pub completed: SimTime,
    pub result: Result<Output, InsiderError>,
}

/// A call in flight.
pub(super) struct InFlight {
    task: Task,
    submitted: SimTime,
    /// Resume only once this deadline has passed (every event due by it has happened).
    until: Option<SimTime>,
}

/// Which calls wait for what, for a pass to resume only the calls an event concerns.
#[derive(Default)]
pub(super) struct Waiters {
    /// Calls the next pass looks at: new ones, and ones an earlier call's move in the last
    /// pass may have let move.
    marked: BTreeSet<u64>,
    /// Virtual-file calls by stream.
    by_stream: BTreeMap<u32, BTreeSet<u64>>,
    /// Calls of the ordinary path (they wait for the file system's answers and the host's
    /// operations).
    fs: BTreeSet<u64>,
    /// `Wake::host_ended` and `DevFs::answered` when last looked at.
    host_ended_seen: u64,
    fs_answered_seen: u64,
    /// Scratch: the calls whose deadlines were reached.
    reached: Vec<u64>,
}

/// What a call waits for besides its deadlines.
#[derive(Clone, Copy)]
enum Concerns {
    Stream(u32),
    /// The file system's answers and the host's operations.
    Fs,
    /// Deadlines only.
    Deadline,
}

/// How a task answers a resume.
enum Step {
    /// Waiting: for a deadline, or (`None`) for the machine's or file system's state.
    Wait(Option<SimTime>),
    Done(Output),
}

/// A file-system operation a task waits for, and what its answer updates.
struct FsWait {
    ticket: crate::devfs::FsTicket,
    uid: u32,
    path: String,
    needed: &'static str,
    then: Then,
}

enum Then {
    Nothing,
    /// A `Stat`: refreshes the in-core view of the inode.
    Refresh,
    /// An `Extents`: fills the view's extents.
    Extents(Ino),
}

enum FsPoll {
    /// No operation was pending.
    Idle,
    Waiting,
    Reply(FsReply),
}

impl Task {
    fn concerns(&self) -> Concerns {
        match self {
            Task::Pread(_) | Task::PwriteDirect(_) => Concerns::Fs,
            Task::Vread { fd, .. } | Task::Vwrite { fd, .. } | Task::Vsync { fd, .. } => {
                Concerns::Stream(*fd)
            }
            Task::Delay { .. } => Concerns::Deadline,
        }
    }
}

enum Task {
    Pread(Box<Pread>),
    PwriteDirect(Box<PwriteDirect>),
    Vread {
        fd: u32,
        len: u64,
        process: bool,
        stage: VStage,
        /// The bytes taken, until the copy into the caller's buffer is done.
        data: Vec<u8>,
    },
    Vwrite {
        fd: u32,
        len: u64,
        data: Vec<u8>,
        at: u64,
        stage: VStage,
    },
    Vsync {
        fd: u32,
        end: bool,
        started: bool,
    },
    Delay {
        until: Option<SimTime>,
        instructions: f64,
    },
}

#[derive(Clone, Copy)]
enum VStage {
    Start,
    Wait { enough: u64, pipelined: bool },
    Copy { n: u64 },
    Chunks,
}

struct Pread {
    fd: u32,
    offset: u64,
    len: u64,
    stage: PStage,
    fs: Option<FsWait>,
    ino: Ino,
    fh: Fh,
    path: String,
    /// The host model's operation, once started.
    op: Option<HostOpId>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PStage {
    Start,
    Sync,
    Size,
    Extents,
    Host,
    End,
}

struct PwriteDirect {
    fd: u32,
    offset: u64,
    len: u64,
    stage: WStage,
    fs: Option<FsWait>,
    ino: Ino,
    fh: Fh,
    path: String,
    allocated: u64,
    extents: Vec<FileExtent>,
    op: Option<HostOpId>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum WStage {
    Start,
    View,
    Allocate,
    Refreshed,
    View2,
    Sync,
    Start2,
    Write,
}

impl Runtime {
    // ---- the core's interface --------------------------------------------------------------

    /// Submits `call` at `now`; it moves on as the loop runs ([`Runtime::step`]).
    pub fn submit(&mut self, call: Call) -> Result<OpId, InsiderError> {
        if self.ops.len() + self.completions.len() >= CALLS_MAX {
            return Err(InsiderError::TooManyCalls { max: CALLS_MAX });
        }
        let task = match call {
            Call::Pread { fd, offset, len } => Task::Pread(Box::new(Pread {
                fd,
                offset,
                len,
                stage: PStage::Start,
                fs: None,
                ino: Ino(0),
                fh: Fh(0),
                path: String::new(),
                op: None,
            })),
            Call::PwriteDirect { fd, offset, len } => Task::PwriteDirect(Box::new(PwriteDirect {
                fd,
                offset,
                len,
                stage: WStage::Start,
                fs: None,
                ino: Ino(0),
                fh: Fh(0),
                path: String::new(),
                allocated: 0,
                extents: Vec::new(),
                op: None,
            })),
            Call::Vread { fd, len } => Task::Vread {
                fd,
                len,
                process: false,
                stage: VStage::Start,
                data: Vec::new(),
            },
            Call::ProcessVread { fd, len } => Task::Vread {
                fd,
                len,
                process: true,
                stage: VStage::Start,
                data: Vec::new(),
            },
            Call::Vwrite { fd, len, data } => {
                assert!(data.is_empty() || data.len() as u64 == len);
                Task::Vwrite {
                    fd,
                    len,
                    data,
                    at: 0,
                    stage: VStage::Start,
                }
            }
            Call::Vsync { fd } => Task::Vsync {
                fd,
                end: false,
                started: false,
            },
            Call::Compute { instructions } => Task::Delay {
                until: None,
                instructions,
            },
            Call::Sleep { until } => Task::Delay {
                until: Some(until),
                instructions: 0.0,
            },
        };
        Ok(self.insert(task))
    }

    /// The stream's drain at `vclose` of a virtual write (its last bytes are pushed).
    pub(super) fn submit_drain(&mut self, fd: u32) -> OpId {
        self.insert(Task::Vsync {
            fd,
            end: true,
            started: false,
        })
    }

    fn insert(&mut self, task: Task) -> OpId {
        let id = self.next_op;
        self.next_op += 1;
        match task.concerns() {
            Concerns::Stream(fd) => {
                self.waiters.by_stream.entry(fd).or_default().insert(id);
            }
            Concerns::Fs => {
                self.waiters.fs.insert(id);
            }
            Concerns::Deadline => {}
        }
        // The next pass looks at a new call, as at every call it has not seen yet.
        self.waiters.marked.insert(id);
        self.ops.insert(
            id,
            InFlight {
                task,
                submitted: self.m.now(),
                until: None,
            },
        );
        OpId(id)
    }

    /// Calls submitted and not yet ended.
    pub fn in_flight(&self) -> usize {
        self.ops.len()
    }

    /// Moves the calls that ended since the last take into `out`, in the order they ended.
    pub fn take_completions(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completions);
    }

    /// One turn of the loop with a pass on either side: resumes the calls that can move, runs
    /// the loop to the next turn that concerns a call (an event that changed what one waits
    /// for, or a deadline reached), resumes again. When a call ended in the first pass, the
    /// turn is the very next one, so its caller looks after one turn, whatever it was. False
    /// when no call ended and nothing is left to happen; a `Stalled` error (the loop's
    /// `sim::Stall`) when calls wait and the loop ran out of events that could move them.
    pub fn turn(&mut self) -> Result<bool, InsiderError> {
        let ended = self.resume_all()?;
        let moved = if !self.m.has_events() {
            if !ended && !self.ops.is_empty() {
                // Calls wait and nothing is left to happen: the loop's own stall says so.
                self.wait_for_work()?;
            }
            false
        } else if self.completions.is_empty() {
            self.wait_for_work()?;
            true
        } else {
            match self.m.wait(|_| true) {
                Ok(()) => true,
                // Only stale ticks were left; the caller has completions to take.
                Err(s) if s.reason == StallReason::NoEventPending => false,
                Err(s) => return Err(s.into()),
            }
        };
        let ended_after = self.resume_all()?;
        Ok(ended || moved || ended_after)
    }

    /// Blocking layer: submits `call` and runs the loop until it ends (every other call
    /// goes on meanwhile; their completions wait to be taken).
    pub fn call(&mut self, call: Call) -> Result<Output, InsiderError> {
        let id = self.submit(call)?;
        self.run_to_completion(id)
    }

    /// Blocking layer: runs the loop until call `id` ends; returns its result.
    pub fn run_to_completion(&mut self, id: OpId) -> Result<Output, InsiderError> {
        let mut found = None;
        self.drive_until(|rt| {
            if let Some(i) = rt.completions.iter().position(|c| c.op == id) {
                found = Some(rt.completions.remove(i));
            }
            found.is_some()
        })?;
        found.expect("ended").result
    }

    /// Runs the loop (every call in flight moving) until `done` holds; `done` is asked after
    /// every pass, and only a pass (or the file system's pump in one) changes what it reads.
    pub(super) fn drive_until(
        &mut self,
        mut done: impl FnMut(&mut Runtime) -> bool,
    ) -> Result<(), InsiderError> {
        loop {
            self.resume_all()?;
            if done(self) {
                return Ok(());
            }
            self.wait_for_work()?;
        }
    }

    /// Runs the loop (`Sim::run_until`, under the watchdog) to the next turn after which a
    /// pass may move something: a call marked by the last pass, a stream that changed, a
    /// host operation that ended, a firmware completion (the file system's block requests),
    /// a deadline reached (a call's, or the file system's timer).
    fn wait_for_work(&mut self) -> Result<(), InsiderError> {
        let marked = !self.waiters.marked.is_empty();
        let host = self.waiters.host_ended_seen;
        let fw = self.fs.fw_completed_seen();
        self.m.wait(|st| {
            marked
                || st.wake.due
                || !st.wake.touched.is_empty()
                || st.wake.host_ended != host
                || st.fw_completed() != fw
        })?;
        Ok(())
    }

    /// What the drive and the file system noted since the last look, onto the calls it
    /// concerns: those after `cur` (all, without one) to this pass, the others to the next.
    fn signalled(&mut self, cur: Option<u64>, this: &mut BTreeSet<u64>, next: &mut BTreeSet<u64>) {
        let mut put = |id: u64| {
            if cur.is_some_and(|c| id <= c) {
                next.insert(id);
            } else {
                this.insert(id);
            }
        };
        let touched = std::mem::take(&mut self.m.wake_mut().touched);
        for fd in touched {
            for &id in self.waiters.by_stream.get(&fd).into_iter().flatten() {
                put(id);
            }
        }
        let host = self.m.wake().host_ended;
        let answered = self.fs.answered();
        if host != self.waiters.host_ended_seen || answered != self.waiters.fs_answered_seen {
            self.waiters.host_ended_seen = host;
            self.waiters.fs_answered_seen = answered;
            for &id in &self.waiters.fs {
                put(id);
            }
        }
        self.m.reached_calls(&mut self.waiters.reached);
        for id in self.waiters.reached.drain(..) {
            put(id);
        }
    }

    /// A pass: resumes, in submission order, the calls something concerned (a new call, a
    /// change it waits for, its deadline reached) and not waiting for a deadline still to
    /// come; again while one ends (a call that ended may let an earlier one move); whether
    /// any ended. A call that could move only after an earlier call's move that ended
    /// nothing waits for the next pass. The calls nothing concerned would not move if
    /// resumed: a call's resume acts only when what it waits for has come.
    fn resume_all(&mut self) -> Result<bool, InsiderError> {
        let mut any = false;
        let mut this = std::mem::take(&mut self.waiters.marked);
        loop {
            self.fs.pump(&mut self.m);
            let mut next = BTreeSet::new();
            self.signalled(None, &mut this, &mut next);
            let mut ended = false;
            while let Some(id) = this.pop_first() {
                let Some(op) = self.ops.get_mut(&id) else {
                    continue; // ended in this pass
                };
                if let Some(t) = op.until {
                    if !self.m.reached(t) {
                        continue;
                    }
                    op.until = None;
                    self.m.wake_mut().disarm(t, id);
                }
                // The task leaves its call's entry while it runs (resuming needs the whole
                // runtime), a plain delay standing in: the entry stays where it is instead of
                // being removed and inserted again at every resume (nothing a task does
                // while it runs reads the calls in flight).
                let placeholder = Task::Delay {
                    until: None,
                    instructions: 0.0,
                };
                let mut task = std::mem::replace(&mut op.task, placeholder);
                let step = self.resume(&mut task);
                self.fs.pump(&mut self.m);
                let result = match step {
                    Ok(Step::Wait(until)) => {
                        let op = self.ops.get_mut(&id).expect("still in flight");
                        op.task = task;
                        op.until = until;
                        if let Some(t) = until {
                            self.m.arm_timer(t, id);
                        }
                        self.signalled(Some(id), &mut this, &mut next);
                        continue;
                    }
                    Ok(Step::Done(out)) => Ok(out),
                    Err(e) => Err(e),
                };
                self.end(id, task.concerns(), result);
                self.signalled(Some(id), &mut this, &mut next);
                ended = true;
            }
            if !ended {
                self.waiters.marked = next;
                return Ok(any);
            }
            any = true;
            this = next;
        }
    }

    /// Call `id` ended with `result`.
    fn end(&mut self, id: u64, concerns: Concerns, result: Result<Output, InsiderError>) {
        let op = self.ops.remove(&id).expect("still in flight");
        assert!(
            op.until.is_none(),
            "a call ends once resumed past its deadline"
        );
        match concerns {
            Concerns::Stream(fd) => {
                let calls = self.waiters.by_stream.get_mut(&fd).expect("registered");
                assert!(calls.remove(&id), "call {id} waited on stream {fd}");
                if calls.is_empty() {
                    self.waiters.by_stream.remove(&fd);
                }
            }
            Concerns::Fs => assert!(self.waiters.fs.remove(&id), "call {id} was listed"),
            Concerns::Deadline => {}
        }
        self.completions.push(Completion {
            op: OpId(id),
            submitted: op.submitted,
            completed: self.m.now(),
            result,
        });
    }

    fn resume(&mut self, task: &mut Task) -> Result<Step, InsiderError> {
        match task {
            Task::Pread(t) => self.resume_pread(t),
            Task::PwriteDirect(t) => self.resume_pwrite_direct(t),
            Task::Vread {
                fd,
                len,
                process,
                stage,
                data,
            } => self.resume_vread(*fd, *len, *process, stage, data),
            Task::Vwrite {
                fd,
                len,
                data,
                at,
                stage,
            } => self.resume_vwrite(*fd, *len, data, at, stage),
            Task::Vsync { fd, end, started } => {
                if !*started {
                    self.virt(*fd)?;
                    *started = true;
                }
                if !Self::write_idle(&self.m, *fd, *end) {
                    return Ok(Step::Wait(None));
                }
                self.fault(*fd)?;
                Ok(Step::Done(if *end {
                    Output::Drained {
                        written_bytes: self.m.stream(*fd).expect("open").written_bytes,
                    }
                } else {
                    Output::Done
                }))
            }
            Task::Delay {
                until,
                instructions,
            } => match until {
                Some(t) if self.m.reached(*t) => Ok(Step::Done(Output::Done)),
                Some(t) => Ok(Step::Wait(Some(*t))),
                None => {
                    let per_core = *instructions / f64::from(self.cfg.host_cores);
                    let t = self.m.now() + self.cfg.host_core().duration(per_core);
                    *until = Some(t);
                    Ok(Step::Wait(Some(t)))
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{insider_host, Backing, InsiderConfig};
    use crate::runtime::MachineSpec;
    use nearflash_sim::{StallReason, STALL_LIMIT};

    /// A `pread` whose host operation will never end (one the host never started), with
    /// nothing left on the queue: the loop reports it as its one typed stall — no event
    /// pending, no storage request lost — not as a spin nor an error of the runtime's own.
    #[test]
    fn a_call_nothing_can_move_is_reported_as_the_loops_typed_stall() {
        let cfg = InsiderConfig {
            backing: Backing::DramEmulated,
            emulated_capacity_bytes: 64 << 20,
            ..InsiderConfig::default()
        };
        let mut rt = Runtime::new(&MachineSpec {
            insider: &cfg,
            host: &insider_host(),
            flash: None,
            functional: false,
            seed: 1,
        })
        .unwrap();
        let id = rt.insert(Task::Pread(Box::new(Pread {
            fd: 3,
            offset: 0,
            len: 4096,
            stage: PStage::Host,
            fs: None,
            ino: Ino(0),
            fh: Fh(0),
            path: "/lost".into(),
            op: Some(HostOpId(u64::MAX)),
        })));
        let err = loop {
            match rt.turn() {
                Ok(true) => continue,
                Ok(false) => panic!("the loop ran dry without a word"),
                Err(e) => break e,
            }
        };
        let InsiderError::Stalled(stall) = err else {
            panic!("expected the loop's stall, got {err}");
        };
        assert_eq!(stall.reason, StallReason::NoEventPending);
        assert_eq!(stall.progress.outstanding, 0, "no storage request is lost");
        assert!(stall.at.since(stall.since) <= STALL_LIMIT);
        assert_eq!(rt.in_flight(), 1, "call {id:?} still waits");
    }
}
