//! The SSD controller's core and the host CPU as compute engines: `nearflash-hw`'s
//! preemptive core on the shared cost model (instructions × CPI ÷ clock, the CPI from
//! Dhrystone MIPS — `config`). FTL work (one command item per host command: parse, translate,
//! queue) is the foreground and preempts offloaded work (compression, a user's program), as
//! an interrupt-driven firmware's command path preempts its background task; the preempted
//! job resumes where it stopped. Busy time is kept per kind of work (energy is Δpower × busy
//! time, the paper's accounting).

use nearflash_hw::compute::PreemptiveCore;

/// Offloaded work, the background of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offload {
    /// The compression of an extent (its index).
    Extent(u64),
    /// A chunk of the controller's program task (its index in the file).
    Chunk(u64),
}

/// Foreground items are host commands (request ids to hand to the FTL once processed);
/// background jobs are offloaded work.
pub(crate) type Engine = PreemptiveCore<u64, Offload>;

pub(crate) use nearflash_hw::compute::Finished;
