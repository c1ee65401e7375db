//! The ISC unit's compute side (§3.6, §4.3) as a sans-IO component: the open virtual files'
//! credit registers, their input FIFOs, the program slots or cores that run them (`Engines`)
//! and their output FIFOs. It performs no I/O and reads no clock — the quinn-proto shape:
//! time comes in as an argument, and what the unit wants done comes out as values. Two
//! drivers use it: INSIDER's drive (`machine`, which turns an [`Issue`] into a storage read
//! through the multiplexer, schedules a slot's end as an event, and moves output over PCIe)
//! and live mode's virtual files (`nearflash-live`, which reads the real file through the
//! image's file system and holds the slot's end as its one pending deadline).
//!
//! The protocol, per open virtual file (`Stream`):
//! - [`Unit::issue`]: requests of `C` bytes, round-robin over the programs with credit — each
//!   takes a credit, until none can issue. The driver reads each and hands its data back, in
//!   issue order, with [`Unit::arrived`].
//! - [`Unit::try_slot`]: the program's slot (or a core) takes the head of the input FIFO when
//!   it is idle, armed and its output FIFO has room; the program runs over the chunk's flits
//!   and the engine's time is charged; the answer is when the slot finishes. Taking a chunk
//!   frees room in the input FIFO, so credits come back (`release_credits`): a faster
//!   program gets its credits back sooner and is issued more.
//! - [`Unit::slot_done`] at that instant: the output becomes visible (the output FIFO of a
//!   read, the write buffer of a virtual write); the driver then drains it and tries the slot
//!   again.
//!
//! Tolerates: a program that faults (its stream stops, with the typed fault kept beside the
//! message), a stream closed while its requests or its slot are in flight (late answers are
//! ignored). Bounds: credits never exceed R (asserted), so at most R × C bytes are read ahead
//! of each program; a slot starts only while its output FIFO holds less than C.

use crate::config::InsiderConfig;
use crate::engine::Engines;
use crate::stream::{Chunk, Direction, Extent, Stream};
use nearflash_sim::SimTime;
use nearflash_stream::{flits_of, Flit, FlitWriter, ProgramError, FLIT_BYTES};
use std::collections::BTreeMap;

/// A request the unit issued for a program: read `range` of the device for stream `fd`,
/// whose program runs in `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issue {
    pub fd: u32,
    pub slot: usize,
    pub range: Extent,
}

/// A slot finished its chunk (`Unit::slot_done`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotDone {
    pub dir: Direction,
    /// The program consumed its last input: its output is all produced.
    pub ended: bool,
}

/// Why a program stopped in its slot.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SlotFault {
    /// The program's own error (bad parameters, a fault; a WebAssembly trap, fuel, memory).
    #[error(transparent)]
    Program(#[from] ProgramError),
    #[error("{program} did not end its output at end of input")]
    NotEnded { program: String },
}

/// What the unit did, since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitStats {
    /// Requests issued (one credit each), and credits that came back.
    pub requests_issued: u64,
    pub credits_returned: u64,
    /// Chunks a slot (or core) started, and finished.
    pub slot_runs: u64,
    pub slot_runs_done: u64,
}

/// The ISC unit's compute side: the open streams, their credits and the engines.
pub struct Unit {
    /// C: bytes of every request, and of one credit.
    credit_request_bytes: u64,
    /// R: credits of a program, and chunks its input FIFO holds.
    credits_initial: u32,
    engines: Engines,
    streams: BTreeMap<u32, Stream>,
    /// Round-robin cursor over descriptors: the next round starts after the last served.
    rr_next: u32,
    stats: UnitStats,
}

impl Unit {
    /// The unit of `cfg`: its C and R, its slots (`app_slots` beside pass-through slot 0) or
    /// its cores.
    pub fn new(cfg: &InsiderConfig) -> Unit {
        assert!(
            cfg.credit_request_bytes > 0 && cfg.credits_initial > 0,
            "a unit issues requests (validated with the config)"
        );
        Unit {
            credit_request_bytes: cfg.credit_request_bytes,
            credits_initial: cfg.credits_initial,
            engines: Engines::new(cfg),
            streams: BTreeMap::new(),
            rr_next: 0,
            stats: UnitStats::default(),
        }
    }

    pub fn credit_request_bytes(&self) -> u64 {
        self.credit_request_bytes
    }

    pub fn credits_initial(&self) -> u32 {
        self.credits_initial
    }

    pub fn stats(&self) -> UnitStats {
        self.stats
    }

    pub fn engines(&self) -> &Engines {
        &self.engines
    }

    /// Passes `bytes` of an ordinary firmware read through slot 0; when done.
    pub fn pass_through(&mut self, bytes: u64, now: SimTime) -> SimTime {
        self.engines.pass_through(bytes, now)
    }

    // ---- streams ---------------------------------------------------------------------------

    /// Opens stream `s` (its descriptor not open). A read of nothing gets its one, empty,
    /// last chunk at once: the program still runs (and ends its output).
    pub fn open(&mut self, mut s: Stream) {
        let fd = s.fd;
        assert!(
            s.credits <= self.credits_initial,
            "stream {fd} opens with at most R credits"
        );
        if s.dir == Direction::Read && s.total_in_bytes == 0 {
            s.fifo.push_back(Chunk {
                bytes: 0,
                data: Vec::new(),
                last: true,
            });
        }
        let prev = self.streams.insert(fd, s);
        assert!(prev.is_none(), "descriptor {fd} is already open");
    }

    /// Closes stream `fd`; whatever is in flight for it is dropped when it comes back.
    pub fn close(&mut self, fd: u32) -> Option<Stream> {
        self.streams.remove(&fd)
    }

    pub fn stream(&self, fd: u32) -> Option<&Stream> {
        self.streams.get(&fd)
    }

    pub fn stream_mut(&mut self, fd: u32) -> Option<&mut Stream> {
        self.streams.get_mut(&fd)
    }

    pub fn streams(&self) -> impl Iterator<Item = (&u32, &Stream)> {
        self.streams.iter()
    }

    // ---- credits and requests --------------------------------------------------------------

    /// Issues requests round-robin over programs with credit until none can issue, in the
    /// order the driver must forward them.
    pub fn issue(&mut self) -> Vec<Issue> {
        let c = self.credit_request_bytes;
        let mut out = Vec::new();
        loop {
            let fds: Vec<u32> = self
                .streams
                .values()
                .filter(|s| s.wants_issue())
                .map(|s| s.fd)
                .collect();
            if fds.is_empty() {
                return out;
            }
            for fd in self.round_robin(fds) {
                let s = self.streams.get_mut(&fd).expect("listed");
                // Issuing for one program changes no other's wish within a round.
                assert!(s.wants_issue(), "stream {fd} listed without a wish");
                let range = s.next_range(c).expect("bytes left to issue");
                assert!(range.len_bytes > 0 && range.len_bytes <= c);
                s.credits -= 1;
                s.inflight_chunks += 1;
                s.issued_in_bytes += range.len_bytes;
                assert!(
                    s.issued_in_bytes <= s.total_in_bytes,
                    "stream {fd} issued past its files' end"
                );
                out.push(Issue {
                    fd,
                    slot: s.slot,
                    range,
                });
                self.stats.requests_issued += 1;
                self.rr_next = fd + 1;
            }
        }
    }

    /// Descriptors in round-robin order starting after the last one served.
    fn round_robin(&self, mut fds: Vec<u32>) -> Vec<u32> {
        fds.sort_unstable();
        let at = fds.iter().position(|&f| f >= self.rr_next).unwrap_or(0);
        fds.rotate_left(at);
        fds
    }

    /// The data of one of `fd`'s requests came back, in issue order: `bytes` long (`data`
    /// holds them in functional fidelity), or the storage's error. Whether the stream took it
    /// into its input FIFO (false: closed, or the read failed and the stream stopped); the
    /// driver then tries the slot.
    pub fn arrived(&mut self, fd: u32, bytes: u64, read: Result<Vec<u8>, String>) -> bool {
        let Some(s) = self.streams.get_mut(&fd) else {
            return false; // closed while the request was in flight
        };
        assert!(s.inflight_chunks > 0, "stream {fd}: a chunk in flight");
        s.inflight_chunks -= 1;
        let data = match read {
            Ok(d) => d,
            Err(err) => {
                s.fault.get_or_insert(format!("storage read failed: {err}"));
                return false;
            }
        };
        assert!(
            data.is_empty() || data.len() as u64 == bytes,
            "stream {fd}: {} bytes of data for {bytes} counted",
            data.len()
        );
        let last = s.issued_in_bytes == s.total_in_bytes && s.inflight_chunks == 0;
        s.fifo.push_back(Chunk { bytes, data, last });
        assert!(
            s.fifo.len() as u32 + s.inflight_chunks + s.credits <= self.credits_initial,
            "stream {fd}'s input FIFO holds only what its credits promised"
        );
        true
    }

    /// Gives credits back for room in the input FIFO not already promised.
    fn release_credits(&mut self, fd: u32) {
        let r = self.credits_initial;
        let s = self.streams.get_mut(&fd).expect("open");
        let promised = s.credits + s.inflight_chunks + s.fifo.len() as u32;
        if promised < r {
            s.credits += r - promised;
            self.stats.credits_returned += u64::from(r - promised);
        }
        assert!(
            s.credits + s.inflight_chunks + s.fifo.len() as u32 <= r,
            "stream {fd} holds more credits than the input FIFO has room for"
        );
    }

    // ---- slots -----------------------------------------------------------------------------

    /// Starts `fd`'s slot on the head of its input FIFO if it can (idle, armed, not faulted,
    /// room in the output FIFO): the program runs over the chunk now and its engine time is
    /// charged. When the slot finishes (the driver calls `slot_done` then); `None` if it did
    /// not start. A read's credits come back for the room taken out of the FIFO, so the
    /// driver issues next.
    pub fn try_slot(&mut self, fd: u32, now: SimTime) -> Option<SimTime> {
        let c = self.credit_request_bytes;
        let s = self.streams.get_mut(&fd)?;
        if !s.armed || s.slot_busy || s.fault.is_some() || s.out_fifo_bytes >= c {
            return None;
        }
        let chunk = s.fifo.pop_front()?;
        let out = match run_program(s, &chunk, now) {
            Ok(out) => out,
            Err(fault) => {
                s.fault = Some(fault.to_string());
                s.slot_fault = Some(fault);
                s.fifo.clear();
                return None;
            }
        };
        s.consumed_in_bytes += chunk.bytes;
        s.produced_out_bytes += out.0;
        assert!(
            s.dir == Direction::Write || s.consumed_in_bytes <= s.issued_in_bytes,
            "stream {fd}'s program consumed input never read"
        );
        assert!(!s.slot_busy, "stream {fd}'s slot started twice");
        s.slot_out = out;
        s.slot_chunk_last = chunk.last;
        s.slot_busy = true;
        let metered = s
            .run
            .program
            .as_mut()
            .and_then(|p| p.take_metered_instructions());
        let (slot, cost, throttle, dir) = (s.slot, s.run.cost, s.run.throttle_mb_s, s.dir);
        let at = match metered {
            Some(instructions) => self.engines.run_metered(slot, instructions, now),
            None => self.engines.run(slot, chunk.bytes, cost, throttle, now),
        };
        assert!(at >= now, "a slot finishes after it starts");
        self.stats.slot_runs += 1;
        if dir == Direction::Read {
            self.release_credits(fd);
        }
        Some(at)
    }

    /// `fd`'s slot finished its chunk at `now`: the output becomes visible — a read's in its
    /// output FIFO, a virtual write's in its write buffer. `None` when `fd` was closed.
    pub fn slot_done(&mut self, fd: u32, now: SimTime) -> Option<SlotDone> {
        let s = self.streams.get_mut(&fd)?;
        assert!(s.slot_busy, "stream {fd}'s slot finished without starting");
        s.slot_busy = false;
        self.stats.slot_runs_done += 1;
        assert!(self.stats.slot_runs_done <= self.stats.slot_runs);
        if let Some(probe) = &mut s.consumed_probe {
            probe.sample(now, s.consumed_in_bytes);
        }
        let out = std::mem::take(&mut s.slot_out);
        if s.slot_chunk_last {
            s.program_ended = true;
        }
        match s.dir {
            Direction::Read => {
                if out.0 > 0 {
                    s.out_fifo_bytes += out.0;
                    s.out_fifo.push_back(out);
                }
            }
            Direction::Write => {
                s.wbuf_bytes += out.0;
                s.wbuf.extend_from_slice(&out.1);
            }
        }
        Some(SlotDone {
            dir: s.dir,
            ended: s.program_ended,
        })
    }

    /// The unit's counts agree with what they count: every read stream's credits, requests
    /// in flight and input FIFO stay within R; output FIFOs hold what they count; a slot busy
    /// only for a started chunk.
    pub fn check_invariants(&self) {
        assert!(self.stats.slot_runs_done <= self.stats.slot_runs);
        let busy = self.streams.values().filter(|s| s.slot_busy).count() as u64;
        assert!(
            busy <= self.stats.slot_runs - self.stats.slot_runs_done,
            "a busy slot has a chunk started and not finished"
        );
        for (fd, s) in &self.streams {
            assert_eq!(*fd, s.fd, "stream {fd} filed under its descriptor");
            assert_eq!(
                s.out_fifo_bytes,
                s.out_fifo.iter().map(|(b, _)| b).sum::<u64>(),
                "stream {fd}'s output FIFO count"
            );
            if s.dir == Direction::Read {
                assert!(
                    s.credits + s.inflight_chunks + s.fifo.len() as u32 <= self.credits_initial,
                    "stream {fd} holds more than R credits' worth"
                );
                assert!(s.consumed_in_bytes <= s.issued_in_bytes);
            }
        }
    }

    /// Takes everything in `fd`'s output FIFO (a driver without a DMA stage: live mode).
    pub fn take_output(&mut self, fd: u32) -> (u64, Vec<u8>) {
        let Some(s) = self.streams.get_mut(&fd) else {
            return (0, Vec::new());
        };
        let mut data = Vec::new();
        for (_, d) in s.out_fifo.drain(..) {
            data.extend_from_slice(&d);
        }
        let n = std::mem::take(&mut s.out_fifo_bytes);
        assert!(
            data.is_empty() || data.len() as u64 == n,
            "stream {fd}'s output FIFO: {} bytes of data for {n} counted",
            data.len()
        );
        (n, data)
    }
}

/// Runs the program over one chunk: functional fidelity feeds its flits to the real program;
/// timing fidelity produces `output_per_input` of the input. Returns the output (bytes, data).
fn run_program(s: &mut Stream, chunk: &Chunk, now: SimTime) -> Result<(u64, Vec<u8>), SlotFault> {
    let Some(p) = s.run.program.as_mut() else {
        let before = (s.consumed_in_bytes as f64 * s.run.output_per_input) as u64;
        let after = ((s.consumed_in_bytes + chunk.bytes) as f64 * s.run.output_per_input) as u64;
        return Ok((after - before, Vec::new()));
    };
    let mut bytes = std::mem::take(&mut s.partial_flit);
    bytes.extend_from_slice(&chunk.data);
    let flits: Vec<Flit> = if chunk.last {
        flits_of(&bytes)
    } else {
        s.partial_flit = bytes.split_off(bytes.len() / FLIT_BYTES * FLIT_BYTES);
        bytes
            .chunks_exact(FLIT_BYTES)
            .map(|c| Flit::new(c, false))
            .collect()
    };
    debug_assert!(s.partial_flit.len() < FLIT_BYTES);
    let w: &mut FlitWriter = &mut s.writer;
    p.set_now_ns(now.as_ns());
    for f in &flits {
        p.on_flit(f, w)?;
    }
    if chunk.last && !w.ended() {
        return Err(SlotFault::NotEnded {
            program: p.name().to_string(),
        });
    }
    let mut out = Vec::new();
    for f in w.drain() {
        out.extend_from_slice(f.payload());
    }
    Ok((out.len() as u64, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineKind;
    use crate::stream::ProgramRun;
    use nearflash_stream::WorkCost;

    const COST: WorkCost = WorkCost {
        slot_bytes_per_cycle: 64.0,
        instructions_per_byte: 1.0,
    };

    fn read_stream(fd: u32, slot: usize, bytes: u64, credits: u32) -> Stream {
        let run = ProgramRun {
            name: "timing".into(),
            program: None,
            cost: COST,
            output_per_input: 0.5,
            throttle_mb_s: None,
        };
        let mut s = Stream::new(fd, slot, Direction::Read, run, credits);
        s.armed = true;
        s.extents = vec![Extent {
            device_offset_bytes: 0,
            len_bytes: bytes,
        }];
        s.total_in_bytes = bytes;
        s
    }

    #[test]
    fn credits_bound_the_reads_ahead_of_a_program_and_come_back_as_its_slot_takes_chunks() {
        let cfg = InsiderConfig::default();
        let c = cfg.credit_request_bytes;
        let mut u = Unit::new(&cfg);
        u.open(read_stream(3, 1, 20 * c, cfg.credits_initial));
        let first = u.issue();
        assert_eq!(
            first.len(),
            cfg.credits_initial as usize,
            "R requests, no more"
        );
        assert!(u.issue().is_empty(), "no credit left");
        assert!(u.arrived(3, c, Ok(Vec::new())));
        let done = u.try_slot(3, SimTime::ZERO).expect("the slot is idle");
        // 16 GB/s per slot (250 MHz × 64 B): 256 KiB in 16.384 µs.
        assert_eq!(done.as_ns(), 16_384);
        assert_eq!(u.stats().credits_returned, 1, "one chunk left the FIFO");
        assert_eq!(u.issue().len(), 1);
        assert_eq!(u.try_slot(3, SimTime::ZERO), None, "busy until it is done");
        u.check_invariants();
        let d = u.slot_done(3, done).unwrap();
        assert!(!d.ended);
        u.check_invariants();
        assert_eq!(u.take_output(3).0, c / 2);
    }

    #[test]
    fn slots_run_two_programs_side_by_side_one_core_runs_them_in_turn() {
        let mut cfg = InsiderConfig::default();
        let c = cfg.credit_request_bytes;
        for (kind, second_ends_ns) in [(EngineKind::Slots, 16_384), (EngineKind::Cores, 87_382)] {
            cfg.engine = kind;
            cfg.core_count = 1;
            let mut u = Unit::new(&cfg);
            u.open(read_stream(3, 1, c, 1));
            u.open(read_stream(4, 2, c, 1));
            let issued: Vec<u32> = u.issue().iter().map(|i| i.fd).collect();
            assert_eq!(issued, [3, 4], "round-robin over both");
            assert!(u.arrived(3, c, Ok(Vec::new())) && u.arrived(4, c, Ok(Vec::new())));
            let a = u.try_slot(3, SimTime::ZERO).unwrap();
            let b = u.try_slot(4, SimTime::ZERO).unwrap();
            assert_eq!(b.as_ns(), second_ends_ns, "{kind:?} (first at {a:?})");
            assert!(u.slot_done(3, a).unwrap().ended && u.slot_done(4, b).unwrap().ended);
        }
    }

    #[test]
    fn a_failed_read_stops_only_its_stream_and_a_closed_streams_answers_are_dropped() {
        let cfg = InsiderConfig::default();
        let c = cfg.credit_request_bytes;
        let mut u = Unit::new(&cfg);
        u.open(read_stream(3, 1, 2 * c, 2));
        u.open(read_stream(4, 2, c, 1));
        assert_eq!(u.issue().len(), 3);
        assert!(!u.arrived(3, c, Err("media error".into())));
        assert!(u
            .stream(3)
            .unwrap()
            .fault
            .as_ref()
            .unwrap()
            .contains("media"));
        assert!(u.issue().is_empty(), "a faulted stream issues nothing");
        u.close(4);
        assert!(!u.arrived(4, c, Ok(Vec::new())));
        assert_eq!(u.try_slot(4, SimTime::ZERO), None);
    }
}
