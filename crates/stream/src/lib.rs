//! Stream programs for in-storage computing (seed 001, INSIDER §3.4).
//!
//! A drive program sees its input as a sequence of 64-byte *flits* arriving on an input FIFO,
//! writes flits to an output FIFO, and reads parameters from a parameter FIFO. A flit carries
//! `len` valid bytes and an `eop` bit marking the last flit of the data: 130 bytes are three
//! flits, the last with `eop` set and `len` 2. Programs keep state across flits and may be
//! chained by FIFOs into a dataflow pipeline (`Chain`).
//!
//! This crate is the *functional* interface: what a program computes. How long it takes is a
//! property of the engine it runs on (an FPGA-like slot or a time-shared core); each program
//! states its work in engine-neutral terms through `WorkCost`, and the runtime turns that into
//! time. Nothing here knows about time, so the same program runs unchanged in every place.

mod chain;
mod cost;
mod flit;
mod program;

pub use chain::Chain;
pub use cost::WorkCost;
pub use flit::{flits_of, Flit, FlitWriter, Reassembler, FLIT_BYTES};
pub use program::{ProgramError, StreamProgram};
