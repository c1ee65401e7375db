//! Stories of the controller's program task (issue 14) on the tiny device: a user's program
//! over a file written onto flash, its pages read back through the FTL, its chunks charged on
//! the controller's preemptive core, its output written to flash and read back.

mod common;

use nearflash_activeflash::*;
use nearflash_stream::{flits_of, Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};
use nearflash_wasm::stream::{Meter, WasmStreamProgram};
use nearflash_wasm::{run_chunks, Limits, Program};
use std::cell::RefCell;
use std::rc::Rc;

/// Upper-cases its input and writes it `copies` times; costs `instructions_per_byte`, which
/// it reports per chunk when `metered` (as a WebAssembly program reports its fuel) or leaves
/// to `cost()`.
struct Upper {
    instructions_per_byte: f64,
    metered: bool,
    copies: usize,
    unreported: f64,
}

fn upper(instructions_per_byte: f64, metered: bool, copies: usize) -> Box<dyn StreamProgram> {
    Box::new(Upper {
        instructions_per_byte,
        metered,
        copies,
        unreported: 0.0,
    })
}

impl StreamProgram for Upper {
    fn name(&self) -> &'static str {
        "upper"
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        let up = input.payload().to_ascii_uppercase();
        for _ in 0..self.copies {
            out.push(&up);
        }
        self.unreported += self.instructions_per_byte * input.len() as f64;
        if input.eop() {
            out.end();
        }
        Ok(())
    }

    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 1.0,
            instructions_per_byte: self.instructions_per_byte,
        }
    }

    fn take_metered_instructions(&mut self) -> Option<f64> {
        let n = std::mem::take(&mut self.unreported);
        self.metered.then_some(n)
    }
}

/// The program run directly over the whole input, in one go.
fn direct(mut p: Box<dyn StreamProgram>, input: &[u8]) -> Vec<u8> {
    let mut w = FlitWriter::new();
    for f in flits_of(input) {
        p.on_flit(&f, &mut w).unwrap();
    }
    w.drain()
        .iter()
        .flat_map(|f| f.payload().to_vec())
        .collect()
}

/// Lines of {A-D}, about `bytes` long, with an odd tail.
fn lines(bytes: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(bytes + 512);
    let mut i = 0u32;
    while text.len() < bytes {
        for j in 0..(200 + i % 300) {
            text.push(b"ABCD"[((i * 7 + j * 13 + (j * j) % 11) % 4) as usize]);
        }
        text.push(b'\n');
        i += 1;
    }
    text.extend_from_slice(b"ABDA");
    text
}

fn alone(output_bytes_max: u64) -> ProgramParams {
    ProgramParams {
        foreground_mb_s: None,
        output_bytes_max,
    }
}

fn example(name: &str) -> String {
    let path = format!(
        "{}/../../examples/programs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn wasm_grep_on_the_controller_writes_what_the_program_writes_run_directly() {
    let (flash, ftl, af) = common::tiny();
    let input = lines(1 << 20);
    let limits = Limits::default();
    let grep = Program::load("grep.wat", example("grep.wat").as_bytes(), limits).unwrap();
    let args = vec!["DA".to_string()];
    let want = run_chunks(&grep, &args, 1, &input, 256 << 10).unwrap();
    assert!(want.output.len() > 1000, "the pattern matches often");
    let meter = Rc::new(RefCell::new(Meter::default()));
    let program = WasmStreamProgram::new(grep.start(&args, 1)).with_meter(meter.clone());
    let run = run_program(
        &flash,
        &ftl,
        &af,
        &input,
        Box::new(program),
        alone(1 << 20),
        1,
    )
    .unwrap();
    assert_eq!(
        run.output, want.output,
        "read back from flash, byte for byte"
    );
    assert_eq!(run.bytes_in, input.len() as u64);
    assert_eq!(meter.borrow().fuel, want.fuel);
    assert_eq!(meter.borrow().exit_code, Some(0));
    assert_eq!(
        run.instructions, want.fuel as f64,
        "one instruction per fuel unit"
    );
    let pages = (input.len() as u64).div_ceil(4096);
    assert_eq!(run.flash_page_reads, pages);
    assert_eq!(run.flash_page_writes, run.bytes_out.div_ceil(4096));
    assert_eq!(run.chunks, pages.div_ceil(u64::from(af.extent_pages)));
}

#[test]
fn a_program_charged_by_its_cost_per_byte_writes_its_output_to_flash_intact() {
    let (flash, ftl, af) = common::tiny();
    let input = lines(300 << 10);
    let run = run_program(
        &flash,
        &ftl,
        &af,
        &input,
        upper(3.0, false, 2),
        alone(1 << 20),
        2,
    )
    .unwrap();
    assert_eq!(run.output, direct(upper(3.0, false, 2), &input));
    assert_eq!(run.instructions, 3.0 * input.len() as f64);
    // An empty file is one empty chunk: the program still ends its output.
    let run = run_program(&flash, &ftl, &af, &[], upper(3.0, true, 1), alone(4096), 2).unwrap();
    assert_eq!((run.bytes_in, run.bytes_out, run.chunks), (0, 0, 1));
}

#[test]
fn program_time_is_never_below_its_flash_io_or_its_compute_and_meets_the_larger() {
    let (flash, ftl, af) = common::tiny();
    let input = lines(1 << 20);
    let pages = (input.len() as u64).div_ceil(4096) as f64;
    // One page operation at a time (controller_io_depth = 1): each takes the FTL work and the
    // page's transfer on the bus, and tR (a read) or tPROG (a write), at least.
    assert_eq!(af.controller_io_depth, 1);
    let bus_ns = 4224.0 / 133.0 * 1e3;
    let ftl_ns = af.ftl_instructions_per_command * 0.5 / 0.8;
    let read_ns = pages * (ftl_ns + 25_000.0 + bus_ns);
    let write_ns = pages * (ftl_ns + 200_000.0 + bus_ns);
    let ctrl = af.controller();
    for (ipb, copies) in [(1.0, 0), (200.0, 0), (1.0, 1)] {
        let run = run_program(
            &flash,
            &ftl,
            &af,
            &input,
            upper(ipb, true, copies),
            alone(2 << 20),
            3,
        )
        .unwrap();
        let io_ns = read_ns + copies as f64 * write_ns;
        let compute_ns = ctrl.time_ns(ipb * input.len() as f64);
        let t = run.time_ns as f64;
        let story = format!("ipb {ipb}, copies {copies}: {run:?}");
        assert!(t >= io_ns, "{t} ns < flash I/O {io_ns} ns: {story}");
        assert!(t >= compute_ns, "{t} ns < compute {compute_ns} ns: {story}");
        assert!(run.compute_busy_ns as f64 >= compute_ns, "{story}");
        // The larger limit is met, give or take the other's tail (the last chunk's compute
        // after its reads; the first chunk's reads before any compute).
        let bound = io_ns.max(compute_ns);
        assert!(t < 1.15 * bound, "{t} ns, limit {bound} ns: {story}");
    }
}

#[test]
fn a_program_that_loops_forever_ends_its_run_out_of_fuel_and_the_next_run_works() {
    let (flash, ftl, af) = common::tiny();
    let input = lines(200 << 10);
    let spin =
        r#"(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))"#;
    let limits = Limits {
        fuel_max: 1_000_000,
        ..Limits::default()
    };
    let spin = Program::load("spin.wat", spin.as_bytes(), limits).unwrap();
    let program = WasmStreamProgram::new(spin.start(&[], 1));
    let e = run_program(
        &flash,
        &ftl,
        &af,
        &input,
        Box::new(program),
        alone(1 << 20),
        4,
    )
    .unwrap_err();
    let ActiveFlashError::Program { fault, run } = &e else {
        panic!("not a program fault: {e}");
    };
    assert!(
        matches!(fault, ProgramFault::Program(ProgramError::Fault { .. })),
        "{fault:?}"
    );
    assert!(e.to_string().contains("out of fuel"), "{e}");
    assert_eq!(run.chunks, 1, "no chunk is fed after the fault");
    // The fuel burnt is charged (wasmi stops short of the operator the rest cannot pay for).
    assert!(
        run.instructions > 999_000.0 && run.instructions <= 1e6,
        "{run:?}"
    );
    assert!(run.flash_page_reads <= 2 * 16, "reading stops at the fault");
    let ok = run_program(
        &flash,
        &ftl,
        &af,
        &input,
        upper(1.0, true, 1),
        alone(1 << 20),
        4,
    )
    .unwrap();
    assert_eq!(ok.output, input.to_ascii_uppercase());
}

#[test]
fn output_beyond_the_region_is_the_programs_fault_with_the_region_full() {
    let (flash, ftl, af) = common::tiny();
    let input = lines(200 << 10);
    let e = run_program(
        &flash,
        &ftl,
        &af,
        &input,
        upper(1.0, true, 4),
        alone(256 << 10),
        5,
    )
    .unwrap_err();
    let ActiveFlashError::Program { fault, run } = e else {
        panic!("not a program fault: {e}");
    };
    assert_eq!(
        fault,
        ProgramFault::OutputFull {
            bytes_max: 256 << 10
        }
    );
    assert_eq!(run.bytes_out, 256 << 10);
    let want = direct(upper(1.0, true, 4), &input);
    assert_eq!(run.output, want[..256 << 10], "what fit is intact");
}

#[test]
fn a_foreground_preempts_the_program_and_the_same_seed_gives_the_same_trace() {
    let (flash, ftl, af) = common::tiny();
    let input = lines(512 << 10);
    let run = |foreground_mb_s, seed| {
        let params = ProgramParams {
            foreground_mb_s,
            output_bytes_max: 1 << 20,
        };
        run_program(
            &flash,
            &ftl,
            &af,
            &input,
            upper(100.0, true, 1),
            params,
            seed,
        )
        .unwrap()
    };
    let quiet = run(None, 6);
    let busy = run(Some(20.0), 6);
    assert_eq!(busy.output, quiet.output);
    let fg = busy.foreground.as_ref().unwrap();
    assert!(fg.writes > 100, "{fg:?}");
    assert!(
        busy.time_ns > quiet.time_ns,
        "FTL work for the foreground preempts the program: {} vs {} ns",
        busy.time_ns,
        quiet.time_ns
    );
    // Same seed, same everything.
    assert_eq!(run(Some(20.0), 6), busy);
}
