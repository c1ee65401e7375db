//! How a caller drives the benchmarks: the clock they read (`BenchClock`) and the hook called
//! around every database operation (`OpHook`), so a simulator can charge the application's
//! compute and stamp time with its own clock. The crate itself reads no clock.
//!
//! Contract: for every operation the runners call `hook.before(op)`, perform the operation
//! (which may call into the `Env`, i.e. into simulated storage), then `hook.after(op, bytes)`
//! with the user bytes the operation moved (key + value for puts and reads, 0 for a miss).
//! Clock readings happen outside before/after pairs, at the points db_bench and YCSB read theirs.

use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// A source of time in microseconds (db_bench's `Env::NowMicros`, YCSB's `System.nanoTime`).
/// The simulator returns simulated time; readings must never go back.
pub trait BenchClock {
    /// The current time in microseconds.
    fn now_us(&self) -> f64;
}

/// A clock for tests: every reading advances it by a fixed step.
#[derive(Debug)]
pub struct CounterClock {
    now_us: Cell<f64>,
    step_us: f64,
}

impl CounterClock {
    /// A clock starting at 0 that advances `step_us` per reading (`step_us` > 0).
    pub fn new(step_us: f64) -> Self {
        assert!(
            step_us > 0.0 && step_us.is_finite(),
            "clock step must be positive"
        );
        Self {
            now_us: Cell::new(0.0),
            step_us,
        }
    }
}

impl BenchClock for CounterClock {
    fn now_us(&self) -> f64 {
        let now = self.now_us.get() + self.step_us;
        self.now_us.set(now);
        now
    }
}

/// A database (or compute) operation a runner is about to perform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DbOp {
    /// `DB::open`.
    Open,
    /// Closing the database and deleting its files (db_bench's `DestroyDB`).
    Destroy,
    /// A write of `entries` puts in one batch; `sync` flushes the log.
    Write {
        /// Entries in the batch.
        entries: u32,
        /// Whether the write is synchronous.
        sync: bool,
    },
    /// A write of `entries` deletes in one batch.
    Delete {
        /// Entries in the batch.
        entries: u32,
    },
    /// A point read.
    Get,
    /// Creating an iterator.
    NewIterator,
    /// Positioning an iterator at the first entry.
    SeekToFirst,
    /// Positioning an iterator at a key (also used to emulate `SeekToLast`).
    Seek,
    /// Moving an iterator forward one entry.
    Next,
    /// Moving an iterator back one entry.
    Prev,
    /// `CompactRange` over the whole key space.
    CompactRange,
    /// One CRC32C of a 4 KiB block (db_bench `crc32c`).
    Crc32c,
    /// One Snappy compression of a block (db_bench `snappycomp`).
    SnappyCompress,
    /// One Snappy decompression of a block (db_bench `snappyuncomp`).
    SnappyUncompress,
}

/// Called around every operation; the default methods do nothing.
pub trait OpHook {
    /// Before `op` is performed.
    fn before(&mut self, op: DbOp) {
        let _ = op;
    }
    /// After `op` completed, with the user bytes it moved.
    fn after(&mut self, op: DbOp, bytes: u64) {
        let _ = (op, bytes);
    }
}

/// A hook that does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHook;

impl OpHook for NoHook {}

/// A hook that counts operations and bytes per kind (for tests and reports).
#[derive(Debug, Default, Clone)]
pub struct CountingHook {
    /// `(op, count, bytes)` in order of first appearance.
    pub counts: Vec<(DbOp, u64, u64)>,
    in_flight: Option<DbOp>,
}

impl OpHook for CountingHook {
    fn before(&mut self, op: DbOp) {
        assert!(self.in_flight.is_none(), "operations do not nest");
        self.in_flight = Some(op);
    }
    fn after(&mut self, op: DbOp, bytes: u64) {
        assert_eq!(self.in_flight.take(), Some(op), "after() matches before()");
        match self.counts.iter_mut().find(|(o, _, _)| *o == op) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 += bytes;
            }
            None => self.counts.push((op, 1, bytes)),
        }
    }
}
