//! One run of a virtual file's program over its real file, sans-IO: the device thread reads
//! the file through the file system chunk by chunk and hands each chunk here with the
//! simulated instant its read completed; the program consumes it as 64-byte flits and its
//! work is charged on the drive core.
//!
//! Timing, a two-stage pipeline: the reads go back to back on the device; the core starts on
//! a chunk when the chunk has arrived and the core has finished the one before
//! (start = max(arrival, core free)), for the chunk's instructions × CPI ÷ clock — a built-in
//! by its `instructions_per_byte`, a module by the instructions its fuel stands for. The run
//! completes when the core finishes the last chunk (`end`), never before the last read.
//!
//! Bounds: output beyond `output_bytes_max` ends the run with an error; the program's own
//! errors (a module's trap, fuel, memory, non-zero exit) end it too. Either is this run's
//! error only.

use crate::vfile::VfileError;
use nearflash_hw::compute::CoreSpec;
use nearflash_sim::SimTime;
use nearflash_stream::{Flit, FlitWriter, StreamProgram, FLIT_BYTES};

/// What a finished run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    pub output: Vec<u8>,
    pub bytes_in: u64,
    /// Simulated time the core spent on the program.
    pub program_ns: u64,
    /// When the core finished the last chunk.
    pub end: SimTime,
}

/// A run in progress.
pub struct VfileRun {
    program: Box<dyn StreamProgram>,
    label: String,
    core: CoreSpec,
    writer: FlitWriter,
    output: Vec<u8>,
    output_bytes_max: u64,
    /// Input bytes short of a whole flit, carried to the next chunk.
    carry: Vec<u8>,
    bytes_in: u64,
    program_ns: u64,
    core_free: SimTime,
    last_arrival: SimTime,
    ended: bool,
}

impl VfileRun {
    /// A run of `program` (parameters sent) on `core`, starting at `start`.
    pub fn new(
        program: Box<dyn StreamProgram>,
        label: &str,
        core: CoreSpec,
        start: SimTime,
        output_bytes_max: u64,
    ) -> VfileRun {
        assert!(output_bytes_max > 0, "a run may output something");
        VfileRun {
            program,
            label: label.to_string(),
            core,
            writer: FlitWriter::new(),
            output: Vec::new(),
            output_bytes_max,
            carry: Vec::with_capacity(FLIT_BYTES),
            bytes_in: 0,
            program_ns: 0,
            core_free: start,
            last_arrival: start,
            ended: false,
        }
    }

    /// One chunk of the real file, whose read completed at `arrived`; `last` on the final one
    /// (which may be empty).
    pub fn feed(&mut self, chunk: &[u8], last: bool, arrived: SimTime) -> Result<(), VfileError> {
        assert!(!self.ended, "fed after the last chunk");
        assert!(arrived >= self.last_arrival, "reads complete in order");
        self.last_arrival = arrived;
        self.program.set_now_ns(arrived.as_ns());
        let mut flits = Vec::with_capacity((self.carry.len() + chunk.len()) / FLIT_BYTES + 1);
        let mut rest = chunk;
        if !self.carry.is_empty() {
            let take = (FLIT_BYTES - self.carry.len()).min(rest.len());
            self.carry.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.carry.len() == FLIT_BYTES {
                flits.push(Flit::new(&self.carry, false));
                self.carry.clear();
            }
        }
        let whole = rest.len() / FLIT_BYTES * FLIT_BYTES;
        for c in rest[..whole].chunks_exact(FLIT_BYTES) {
            flits.push(Flit::new(c, false));
        }
        self.carry.extend_from_slice(&rest[whole..]);
        assert!(self.carry.len() < FLIT_BYTES, "whole flits go out at once");
        if last {
            flits.push(Flit::new(&self.carry, true));
            self.carry.clear();
            self.ended = true;
        }
        for f in &flits {
            self.program.on_flit(f, &mut self.writer)?;
            for o in self.writer.drain() {
                self.output.extend_from_slice(o.payload());
            }
            if self.output.len() as u64 > self.output_bytes_max {
                return Err(VfileError::OutputLimit {
                    program: self.label.clone(),
                    bytes_max: self.output_bytes_max,
                });
            }
        }
        self.bytes_in += chunk.len() as u64;
        let instructions = self
            .program
            .take_metered_instructions()
            .unwrap_or_else(|| chunk.len() as f64 * self.program.cost().instructions_per_byte);
        let work = self.core.duration(instructions);
        self.core_free = self.core_free.max(arrived) + work;
        self.program_ns += work.as_ns();
        Ok(())
    }

    /// The run's result, once the last chunk was fed.
    pub fn finish(self) -> Result<RunOutput, VfileError> {
        assert!(self.ended, "finished before the last chunk");
        if !self.writer.ended() {
            return Err(VfileError::NotEnded(self.label));
        }
        assert!(
            self.core_free >= self.last_arrival,
            "the core ends after the last read"
        );
        Ok(RunOutput {
            output: self.output,
            bytes_in: self.bytes_in,
            program_ns: self.program_ns,
            end: self.core_free,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfile::program::VfileProgram;
    use nearflash_sim::SimDuration;

    fn grep() -> Box<dyn StreamProgram> {
        VfileProgram::builtin("grep", vec!["AB".into()])
            .unwrap()
            .start(0)
            .unwrap()
    }

    #[test]
    fn chunks_cut_anywhere_give_the_same_output_as_one_whole_run() {
        let text: Vec<u8> = (0..5000u32)
            .flat_map(|i| {
                format!("line {i} {}\n", if i % 7 == 0 { "xABx" } else { "no" }).into_bytes()
            })
            .collect();
        let want = nearflash_iscapps::run_program(
            grep().as_mut(),
            &[],
            &nearflash_stream::flits_of(&text),
        )
        .unwrap();
        assert!(!want.is_empty());
        let core = CoreSpec::new(2000.0, 1.0 / 3.0);
        for cut in [1usize, 63, 64, 100, 4096, text.len()] {
            let mut run = VfileRun::new(grep(), "grep", core, SimTime(0), 1 << 20);
            let chunks: Vec<&[u8]> = text.chunks(cut).collect();
            for (i, c) in chunks.iter().enumerate() {
                run.feed(c, false, SimTime(i as u64)).unwrap();
            }
            run.feed(&[], true, SimTime(chunks.len() as u64)).unwrap();
            let out = run.finish().unwrap();
            assert_eq!(out.output, want, "cut {cut}");
            assert_eq!(out.bytes_in, text.len() as u64);
        }
    }

    #[test]
    fn the_core_works_each_chunk_after_it_arrives_and_after_the_chunk_before() {
        // passthrough costs 1/8 instruction per byte on a core: 1 MiB at 1000 MHz, CPI 1 is
        // 131,072 ns per chunk.
        let core = CoreSpec::new(1000.0, 1.0);
        let p = VfileProgram::builtin("passthrough", vec![]).unwrap();
        let per_chunk =
            core.duration((1u64 << 20) as f64 * p.start(0).unwrap().cost().instructions_per_byte);
        let mut run = VfileRun::new(
            p.start(0).unwrap(),
            "passthrough",
            core,
            SimTime(0),
            4 << 20,
        );
        let chunk = vec![7u8; 1 << 20];
        // Reads arrive faster than the core works: the core is the bottleneck.
        run.feed(&chunk, false, SimTime(1_000)).unwrap();
        run.feed(&chunk, true, SimTime(2_000)).unwrap();
        let out = run.finish().unwrap();
        assert_eq!(out.end, SimTime(1_000) + per_chunk + per_chunk);
        assert_eq!(out.program_ns, 2 * per_chunk.as_ns());
        assert_eq!(out.output.len(), 2 << 20);
        // Reads slower than the core: the run ends one chunk's work after the last read.
        let mut run = VfileRun::new(
            p.start(0).unwrap(),
            "passthrough",
            core,
            SimTime(0),
            4 << 20,
        );
        let late = SimTime(0) + SimDuration::from_ns(per_chunk.as_ns() * 10);
        run.feed(&chunk, false, SimTime(1)).unwrap();
        run.feed(&chunk, true, late).unwrap();
        assert_eq!(run.finish().unwrap().end, late + per_chunk);
    }

    #[test]
    fn output_over_the_limit_ends_the_run_with_efbig() {
        let p = VfileProgram::builtin("passthrough", vec![]).unwrap();
        let core = CoreSpec::new(1000.0, 1.0);
        let mut run = VfileRun::new(p.start(0).unwrap(), "passthrough", core, SimTime(0), 100);
        let e = run.feed(&[1u8; 1000], true, SimTime(0)).unwrap_err();
        assert_eq!(e.errno(), crate::op::Errno(libc::EFBIG));
    }
}
