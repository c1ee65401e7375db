//! Users' WebAssembly programs behind virtual files (`nearflash-wasm`): installed like any
//! drive program, bound to a file by reg_virt_file, checked by vopen's permission check, run
//! in a slot or on the drive's cores and charged their fuel; a misbehaving one fails its own
//! vread while the one beside it finishes.

mod common;

use common::*;
use nearflash_insider::runtime::{Call, Output, ProgramSpec, Runtime};
use nearflash_insider::stream::Direction;
use nearflash_insider::{BackingKind, InsiderError};
use nearflash_iscapps::apps::GrepApp;
use nearflash_iscapps::{run_program, IscApp};
use nearflash_stream::flits_of;
use nearflash_wasm::stream::WasmStreamProgram;
use nearflash_wasm::{Limits, Program};
use std::collections::BTreeMap;

fn example(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../examples/programs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap()
}

fn install(rt: &mut Runtime, name: &str, bytes: &[u8], args: &[&str]) {
    let limits = Limits {
        fuel_max: 50_000_000,
        ..Limits::default()
    };
    let program = Program::load(name, bytes, limits).unwrap();
    let args = args.iter().map(|a| a.to_string()).collect();
    rt.install_program(
        name,
        ProgramSpec {
            make: Box::new(WasmStreamProgram::factory(program, args, 7)),
            output_per_input: 0.01,
        },
    );
}

/// Grep's input and pattern, and the built-in grep program's output on it.
fn grep_case() -> (Vec<u8>, String, Vec<u8>) {
    let app = GrepApp::with_line_chars(200).unwrap();
    let data = app.generate(3, 300_000).unwrap();
    let mut p = app.program(0).unwrap();
    let want = run_program(p.as_mut(), &data.params, &flits_of(&data.input)).unwrap();
    let pattern = String::from_utf8(data.params[0].clone()).unwrap();
    (data.input, pattern, want)
}

#[test]
fn a_webassembly_grep_behind_a_virtual_file_reads_what_the_builtin_computes() {
    let (input, pattern, want) = grep_case();
    let mut rt = small(BackingKind::DramEmulated, true, 1);
    install(&mut rt, "grep.wat", &example("grep.wat"), &[&pattern]);
    rt.install_file(ALICE, "/data/text", 0o644, input.len() as u64, Some(&input))
        .unwrap();
    rt.reg_virt_file(ALICE, "/v", "/data/text", "grep.wat")
        .unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
    let got = vread_all(&mut rt, fd, 64 << 10).unwrap();
    rt.vclose(fd).unwrap();
    assert_eq!(got, want);
    assert!(rt.machine().engine_busy_ns().iter().sum::<u64>() > 0);
}

#[test]
fn two_programs_side_by_side_one_loops_forever_the_other_finishes() {
    let (input, pattern, want) = grep_case();
    let mut rt = small(BackingKind::DramEmulated, true, 2);
    install(&mut rt, "grep.wat", &example("grep.wat"), &[&pattern]);
    let spin =
        r#"(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))"#;
    install(&mut rt, "spin.wat", spin.as_bytes(), &[]);
    rt.install_file(ALICE, "/data/text", 0o644, input.len() as u64, Some(&input))
        .unwrap();
    rt.reg_virt_file(ALICE, "/good", "/data/text", "grep.wat")
        .unwrap();
    rt.reg_virt_file(ALICE, "/bad", "/data/text", "spin.wat")
        .unwrap();
    let good = rt.vopen(ALICE, "/good", Direction::Read).unwrap();
    let bad = rt.vopen(ALICE, "/bad", Direction::Read).unwrap();
    let mut out: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut errors = BTreeMap::new();
    let mut reads = BTreeMap::new();
    for fd in [good, bad] {
        reads.insert(
            rt.submit(Call::ProcessVread { fd, len: 32 << 10 }).unwrap(),
            fd,
        );
    }
    let mut done = Vec::new();
    while !reads.is_empty() {
        assert!(rt.turn().unwrap(), "the loop ran dry with reads in flight");
        rt.take_completions(&mut done);
        for c in done.drain(..) {
            let fd = reads.remove(&c.op).unwrap();
            match c.result {
                Ok(Output::Read { n: 0, .. }) => {}
                Ok(Output::Read { data, .. }) => {
                    out.entry(fd).or_default().extend_from_slice(&data);
                    reads.insert(
                        rt.submit(Call::ProcessVread { fd, len: 32 << 10 }).unwrap(),
                        fd,
                    );
                }
                Ok(o) => panic!("a vread answered {o:?}"),
                Err(e) => {
                    errors.insert(fd, e);
                }
            }
        }
    }
    assert_eq!(
        out.remove(&good).unwrap_or_default(),
        want,
        "the good program's output"
    );
    let e = errors
        .remove(&bad)
        .expect("the spinning program fails its vread");
    assert!(
        matches!(&e, InsiderError::ProgramFault { reason, .. } if reason.contains("out of fuel")),
        "{e}"
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        rt.now().as_ns() < 1_000_000_000,
        "bounded simulated time: {}",
        rt.now().as_ns()
    );
}

#[test]
fn a_program_sees_only_a_file_its_caller_may_read() {
    let mut rt = small(BackingKind::DramEmulated, true, 3);
    install(&mut rt, "crc32.wat", &example("crc32.wat"), &[]);
    rt.install_file(ALICE, "/data/secret", 0o600, 4096, Some(&[9; 4096]))
        .unwrap();
    rt.reg_virt_file(BOB, "/peek", "/data/secret", "crc32.wat")
        .unwrap();
    let e = rt.vopen(BOB, "/peek", Direction::Read).unwrap_err();
    assert!(matches!(e, InsiderError::PermissionDenied { .. }), "{e}");
    rt.reg_virt_file(ALICE, "/sum", "/data/secret", "crc32.wat")
        .unwrap();
    let fd = rt.vopen(ALICE, "/sum", Direction::Read).unwrap();
    let got = vread_all(&mut rt, fd, 4096).unwrap();
    assert_eq!(
        got,
        format!("{:08x}\n", crc32fast::hash(&[9; 4096])).into_bytes()
    );
}
