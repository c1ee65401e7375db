//! The sandbox holds: hostile and broken programs end in their own typed error within bounded
//! fuel (so bounded simulated and wall time), a well-behaved program run beside them finishes
//! with the right output, and the loader survives arbitrary and mutated bytes.

use nearflash_wasm::{run_chunks, Limits, LoadError, Program, RunError, Status};
use proptest::prelude::*;

const CAT: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $r (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $l
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 4096))
      (drop (call $r (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
      (if (i32.load (i32.const 16))
        (then
          (i32.store (i32.const 4) (i32.load (i32.const 16)))
          (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))
          (br $l))))))"#;

fn body(code: &str) -> String {
    format!(r#"(module (memory (export "memory") 1) (func (export "_start") {code}))"#)
}

fn small() -> Limits {
    Limits {
        memory_pages_max: 16,
        fuel_max: 2_000_000,
        ..Limits::default()
    }
}

fn load(src: &str) -> Result<Program, LoadError> {
    Program::load("p.wat", src.as_bytes(), small())
}

#[test]
fn cat_copies_its_input_in_any_chunking() {
    // One byte a chunk is 20,000 reads and writes of `HOST_CALL_FUEL` and more each.
    let limits = Limits {
        fuel_max: 10_000_000,
        ..small()
    };
    let p = Program::load("cat.wat", CAT.as_bytes(), limits).unwrap();
    let input: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
    for chunk in [1, 100, 4096, 20_000] {
        let out = run_chunks(&p, &[], 0, &input, chunk).unwrap();
        assert_eq!((out.exit_code, &out.output), (0, &input));
        assert_eq!(out.input_read_bytes, 20_000);
    }
}

#[test]
fn two_programs_side_by_side_one_misbehaves_the_other_finishes() {
    let input: Vec<u8> = (0..50_000u32).map(|i| (i * 7) as u8).collect();
    let bad = [
        ("an infinite loop", body("(loop $l (br $l))")),
        ("a memory bomb", body("(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))")),
        ("an out-of-bounds store", body("(i32.store (i32.const 70000) (i32.const 1))")),
        ("an unreachable", body("unreachable")),
        ("deep recursion", r#"(module (memory (export "memory") 1) (func $f (call $f)) (func (export "_start") (call $f)))"#.to_string()),
        ("a division by zero", body("(drop (i32.div_u (i32.const 1) (i32.const 0)))")),
    ];
    let good = load(CAT).unwrap();
    for (what, src) in bad {
        let bad = load(&src).unwrap();
        let mut b = bad.start(&[], 1).unwrap();
        let mut g = good.start(&[], 1).unwrap();
        let mut out = Vec::new();
        let mut bad_error = None;
        for (i, chunk) in input.chunks(4096).enumerate() {
            let last = (i + 1) * 4096 >= input.len();
            if bad_error.is_none() {
                match b.feed(i as u64, chunk, last) {
                    Ok(_) => {}
                    Err(e) => bad_error = Some(e),
                }
            }
            let s = g.feed(i as u64, chunk, last).unwrap();
            out.extend(g.take_output());
            if last {
                assert_eq!(s.status, Status::Exited { code: 0 });
            }
        }
        assert_eq!(out, input, "{what}: the good program's output");
        let e = bad_error.unwrap_or_else(|| panic!("{what}: no error"));
        let expected = match what {
            "an infinite loop" => matches!(
                e,
                RunError::OutOfFuel {
                    fuel_max: 2_000_000,
                    ..
                }
            ),
            "a memory bomb" => matches!(e, RunError::MemoryLimit { pages_max: 16, .. }),
            "an out-of-bounds store" => matches!(e, RunError::OutOfBounds { .. }),
            _ => matches!(e, RunError::Trap { .. }),
        };
        assert!(expected, "{what}: {e}");
        assert!(b.fuel_consumed() <= 2_000_000, "{what}: fuel is bounded");
        assert!(
            b.feed(99, b"", true).is_err(),
            "{what}: a failed run stays failed"
        );
    }
}

#[test]
fn unknown_imports_garbage_and_oversized_declarations_are_refused_at_load_by_name() {
    let e = load(r#"(module (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32))) (memory (export "memory") 1) (func (export "_start")))"#).unwrap_err();
    assert!(
        matches!(&e, LoadError::ForbiddenImport { field, .. } if field == "path_open"),
        "{e}"
    );
    assert!(e.to_string().contains("path_open"));
    let e = load(r#"(module (import "env" "sock" (func)) (memory (export "memory") 1) (func (export "_start")))"#).unwrap_err();
    assert!(e.to_string().contains("env.sock"), "{e}");
    let e = load(r#"(module (import "wasi_snapshot_preview1" "fd_read" (func (param i32))) (memory (export "memory") 1) (func (export "_start")))"#).unwrap_err();
    assert!(matches!(e, LoadError::ImportSignature { .. }), "{e}");
    assert!(matches!(
        load("\0asm garbage"),
        Err(LoadError::BadModule { .. })
    ));
    assert!(matches!(load("(module"), Err(LoadError::BadModule { .. })));
    let e =
        load(r#"(module (memory (export "memory") 65536) (func (export "_start")))"#).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::MemoryDeclared {
                pages: 65536,
                pages_max: 16,
                ..
            }
        ),
        "{e}"
    );
    let e = load(r#"(module (memory (export "memory") 1))"#).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::MissingExport {
                export: "_start",
                ..
            }
        ),
        "{e}"
    );
    let e = load(r#"(module (func (export "_start")))"#).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::MissingExport {
                export: "memory",
                ..
            }
        ),
        "{e}"
    );
    let big = vec![b' '; 17 << 20];
    assert!(matches!(
        Program::load("big", &big, Limits::default()),
        Err(LoadError::TooLarge { .. })
    ));
}

#[test]
fn output_beyond_the_allowance_per_input_byte_is_an_error() {
    // Writes 64 KiB per 1-byte read: far above 1 MiB + 4 per input byte after a few reads.
    let src = r#"(module
      (import "wasi_snapshot_preview1" "fd_read" (func $r (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 2)
      (func (export "_start")
        (loop $l
          (i32.store (i32.const 0) (i32.const 100)) (i32.store (i32.const 4) (i32.const 1))
          (drop (call $r (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
          (i32.store (i32.const 0) (i32.const 0)) (i32.store (i32.const 4) (i32.const 65536))
          (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))
          (br_if $l (i32.load (i32.const 16))))))"#;
    let p = Program::load("flood.wat", src.as_bytes(), Limits::default()).unwrap();
    let e = run_chunks(&p, &[], 0, &[7; 1000], 1000).unwrap_err();
    assert!(matches!(e, RunError::OutputLimit { .. }), "{e}");
}

#[test]
fn args_environ_clock_random_and_exit_are_deterministic() {
    // Writes argv (sizes), then 8 random bytes, then the clock, then exits 3.
    let src = r#"(module
      (import "wasi_snapshot_preview1" "args_sizes_get" (func $as (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "args_get" (func $ag (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "environ_sizes_get" (func $es (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "random_get" (func $rg (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "clock_time_get" (func $ct (param i32 i64 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "proc_exit" (func $x (param i32)))
      (memory (export "memory") 1)
      (func (export "_start")
        (drop (call $as (i32.const 100) (i32.const 104)))
        (drop (call $ag (i32.const 200) (i32.const 300)))
        (drop (call $es (i32.const 108) (i32.const 112)))
        (drop (call $rg (i32.const 120) (i32.const 8)))
        (drop (call $ct (i32.const 1) (i64.const 0) (i32.const 128)))
        ;; out: sizes+environ (16 bytes), random+clock (16 bytes), then the argument strings
        (i32.store (i32.const 0) (i32.const 100)) (i32.store (i32.const 4) (i32.const 16))
        (i32.store (i32.const 8) (i32.const 120)) (i32.store (i32.const 12) (i32.const 16))
        (i32.store (i32.const 16) (i32.const 300)) (i32.store (i32.const 20) (i32.load (i32.const 104)))
        (drop (call $w (i32.const 1) (i32.const 0) (i32.const 3) (i32.const 40)))
        (call $x (i32.const 3))))"#;
    let p = load(src).unwrap();
    let run = |seed: u64| {
        let mut r = p.start(&["a".into(), "bc".into()], seed).unwrap();
        let s = r.feed(12_345, b"", true).unwrap();
        assert_eq!(s.status, Status::Exited { code: 3 });
        r.take_output()
    };
    let out = run(5);
    assert_eq!(&out[0..4], &3u32.to_le_bytes(), "argc");
    assert_eq!(&out[4..8], &(6 + 2 + 3u32).to_le_bytes(), "argv bytes");
    assert_eq!(&out[8..16], &[0; 8], "empty environment");
    assert_eq!(&out[24..32], &12_345u64.to_le_bytes(), "simulated time");
    assert_eq!(&out[32..], b"p.wat\0a\0bc\0");
    assert_eq!(out, run(5), "same seed, same bytes");
    assert_ne!(
        out[16..24],
        run(6)[16..24],
        "another seed, other random bytes"
    );
}

/// Story (issue 28): random bytes in a file named `.wasm` were parsed as WebAssembly text and
/// refused with a text parser's complaint about the first "token".
#[test]
fn random_bytes_named_wasm_are_refused_as_not_a_binary_bad_magic() {
    let random: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (name, bytes) in [
        ("r.wasm", &random[..]),
        ("r.wasm", b"(module)".as_slice()),
        ("r.wat", &random[..]),
        ("r", b"\x7fELF\x02\x01\x01\x00\xff".as_slice()), // not UTF-8: not text either
    ] {
        let e = Program::load(name, bytes, small()).unwrap_err();
        assert!(matches!(&e, LoadError::BadMagic { .. }), "{name}: {e}");
        let m = e.to_string();
        assert!(
            m.contains("not a WebAssembly binary: bad magic") && m.contains("00 61 73 6d"),
            "{m}"
        );
    }
    let e = Program::load("e.wasm", b"", small())
        .unwrap_err()
        .to_string();
    assert!(e.contains("the file is empty"), "{e}");
    // Text stays text under any name but .wasm.
    assert!(Program::load("p.wat", body("").as_bytes(), small()).is_ok());
    assert!(Program::load("p", body("").as_bytes(), small()).is_ok());
}

/// Story (issue 28): a module growing its memory one page at a time past ~2.7 GiB under
/// `--memory-max-mib 4096` (the largest accepted) aborted the whole process with a stack
/// overflow: every executed `memory.grow` left a native stack frame behind in the
/// interpreter. Grown to the whole wasm32 address space (4 GiB, the limit), the next
/// `memory.grow` answers -1, as the standard says, and the program goes on; past a lower limit
/// it is the run's memory-limit error (`two_programs_side_by_side…`, "a memory bomb").
#[test]
fn a_module_growing_memory_page_by_page_to_the_limit_gets_an_error_not_a_crash() {
    let limits = Limits {
        memory_pages_max: 65_536, // 4096 MiB: program run's largest --memory-max-mib
        fuel_max: 1_000_000_000,  // growth costs 1 per 8 bytes: 2^29 for 4 GiB
        ..Limits::default()
    };
    // Grows until memory.grow fails, then exits 7 if it has the whole 4 GiB (65536 pages).
    let grow = r#"(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (func (export "_start")
        (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
        (call $exit (select (i32.const 7) (i32.const 3) (i32.eq (memory.size) (i32.const 65536))))))"#;
    let p = Program::load("grow.wat", grow.as_bytes(), limits).unwrap();
    let out = run_chunks(&p, &[], 1, b"", 1).unwrap();
    assert_eq!(out.exit_code, 7, "grown to the whole 4 GiB");
    assert!(out.fuel > 65_535, "{}", out.fuel);
}

/// The same cause without the memory: `memory.grow 0` and `table.grow 0` executed ten million
/// times each must not use native stack (each used one frame until the run returned).
#[test]
fn growth_operators_executed_millions_of_times_use_no_native_stack() {
    let limits = Limits {
        fuel_max: 1_000_000_000,
        ..small()
    };
    for op in [
        "(drop (memory.grow (global.get $z)))",
        "(drop (table.grow (ref.null func) (global.get $z)))",
    ] {
        let src = format!(
            r#"(module (memory (export "memory") 1) (table 0 funcref) (global $z (mut i32) (i32.const 0))
                 (func (export "_start") (local $i i32)
                   (loop $l {op}
                     (local.set $i (i32.add (local.get $i) (i32.const 1)))
                     (br_if $l (i32.lt_u (local.get $i) (i32.const 10000000))))))"#
        );
        let p = Program::load("g.wat", src.as_bytes(), limits).unwrap();
        let out = run_chunks(&p, &[], 1, b"", 1).unwrap();
        assert_eq!(out.exit_code, 0, "{op}");
    }
}

/// Story (issue 28): an infinite loop under the default fuel took 93 s of wall time to stop.
/// The default must stop it within seconds of CPU (docs/programs.md: about 10 s on a 2-core
/// machine; generous here). Measured as this thread's CPU time, not wall time, which grows
/// with whatever else the machine runs.
#[test]
fn a_runaway_loop_under_the_default_fuel_stops_within_seconds() {
    let p = Program::load(
        "spin.wat",
        body("(loop $l (br $l))").as_bytes(),
        Limits::default(),
    )
    .unwrap();
    let t0 = thread_cpu();
    let e = run_chunks(&p, &[], 1, b"some input", 4096).unwrap_err();
    let cpu = thread_cpu() - t0;
    assert!(matches!(e, RunError::OutOfFuel { .. }), "{e}");
    assert!(
        cpu < std::time::Duration::from_secs(30),
        "the default fuel let a runaway loop run {cpu:?} of CPU"
    );
}

/// The calling thread's CPU time (`run_chunks` with one thread runs the module on it).
fn thread_cpu() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime: {}", std::io::Error::last_os_error());
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A module whose `_start` calls WASI function `name` (signature `sig`) with `args` forever.
fn calling_forever(name: &str, sig: &str, args: &str) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "{name}" (func $f {sig}))
  (memory (export "memory") 2)
  (func (export "_start") (loop $l (drop (call $f {args})) (br $l))))"#
    )
}

/// Story (issue 28): each WASI call was charged 1 fuel, while it costs the interpreter about
/// 60 ns of host work, so a loop of calls — `fd_write` of nothing, the clock, `random_get` —
/// ran about 40 s under the default fuel before it was stopped. A call now costs its work
/// (`cost::HOST_CALL_FUEL` and the per-byte charges): every such loop stops with the
/// out-of-fuel error within seconds, and a call is charged at least the fixed cost.
#[test]
fn a_loop_of_wasi_calls_under_the_default_fuel_stops_within_seconds() {
    let loops = [
        (
            "fd_write of 0 bytes",
            calling_forever(
                "fd_write",
                "(param i32 i32 i32 i32) (result i32)",
                "(i32.const 1) (i32.const 0) (i32.const 0) (i32.const 16)",
            ),
        ),
        (
            "clock_time_get",
            calling_forever(
                "clock_time_get",
                "(param i32 i64 i32) (result i32)",
                "(i32.const 1) (i64.const 0) (i32.const 16)",
            ),
        ),
        (
            "random_get of 64 KiB",
            calling_forever(
                "random_get",
                "(param i32 i32) (result i32)",
                "(i32.const 0) (i32.const 65536)",
            ),
        ),
        (
            "fd_read into no buffer",
            calling_forever(
                "fd_read",
                "(param i32 i32 i32 i32) (result i32)",
                "(i32.const 0) (i32.const 0) (i32.const 0) (i32.const 16)",
            ),
        ),
    ];
    for (what, src) in loops {
        let p = Program::load("calls.wat", src.as_bytes(), Limits::default()).unwrap();
        let t0 = std::time::Instant::now();
        let e = run_chunks(&p, &[], 1, b"some input", 4096).unwrap_err();
        let wall = t0.elapsed();
        println!("{what}: stopped after {wall:?}");
        assert!(matches!(e, RunError::OutOfFuel { .. }), "{what}: {e}");
        assert!(e.to_string().contains("out of fuel"), "{what}: {e}");
        // 40 s before; about 1-2 s now on a 2-core machine, generous for a loaded one.
        assert!(
            wall < std::time::Duration::from_secs(12),
            "{what}: a loop of WASI calls ran {wall:?} under the default fuel"
        );
    }
}

/// Each call is charged at least `HOST_CALL_FUEL`: a loop writing one diagnostics byte per
/// call makes at most fuel ÷ `HOST_CALL_FUEL` calls (every call is counted, kept or dropped).
#[test]
fn every_wasi_call_is_charged_its_fixed_cost() {
    let fuel_max = 1_000_000;
    let src = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 1))
    (loop $l (drop (call $w (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16))) (br $l))))"#;
    let limits = Limits {
        fuel_max,
        ..Limits::default()
    };
    let p = Program::load("diag.wat", src.as_bytes(), limits).unwrap();
    let mut run = p.start(&[], 1).unwrap();
    let e = run.feed(0, b"", true).unwrap_err();
    assert!(matches!(e, RunError::OutOfFuel { .. }), "{e}");
    let calls = run.diagnostics().len() as u64 + run.diagnostics_dropped_bytes();
    let per_call = nearflash_wasm::cost::iovec_call_fuel(1, 1);
    assert!(calls > 0);
    assert!(
        calls <= fuel_max / per_call,
        "{calls} calls for {fuel_max} fuel: under {per_call} a call"
    );
    assert!(calls >= fuel_max / (per_call + 10), "{calls} calls");
}

/// A valid module to mutate: CAT compiled.
fn cat_binary() -> Vec<u8> {
    wat::parse_str(CAT).unwrap()
}

fn try_everything(bytes: &[u8]) {
    let limits = Limits {
        memory_pages_max: 4,
        fuel_max: 100_000,
        ..Limits::default()
    };
    // Under both names: a `.wasm` file is only ever a binary, a `.wat` file may be text.
    for name in ["fuzz.wasm", "fuzz.wat"] {
        if let Ok(p) = Program::load(name, bytes, limits) {
            let _ = run_chunks(&p, &[], 1, b"some input\n", 4);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_loader_never_panics_on_arbitrary_bytes(mut bytes in proptest::collection::vec(any::<u8>(), 0..512), wasm_header in any::<bool>()) {
        if wasm_header {
            bytes.splice(0..0, *b"\0asm\x01\0\0\0");
        }
        try_everything(&bytes);
    }

    #[test]
    fn the_loader_never_panics_on_mutated_modules(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = cat_binary();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        try_everything(&bytes);
    }
}
