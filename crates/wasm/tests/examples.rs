//! The example programs (examples/programs/*.wat) compute what the built-in INSIDER drive
//! programs compute, byte for byte, on generated inputs fed in chunks of awkward sizes.

use nearflash_iscapps::apps::{GrepApp, StatisticsApp};
use nearflash_iscapps::run_program;
use nearflash_iscapps::IscApp;
use nearflash_stream::flits_of;
use nearflash_wasm::{run_chunks, Limits, Program};

fn example(name: &str) -> Program {
    let path = format!(
        "{}/../../examples/programs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Program::load(name, &bytes, Limits::default()).unwrap()
}

fn builtin(app: &dyn IscApp, seed: u64, bytes: u64) -> (Vec<u8>, Vec<Vec<u8>>, Vec<u8>) {
    let data = app.generate(seed, bytes).unwrap();
    let mut p = app.program(0).unwrap();
    let out = run_program(p.as_mut(), &data.params, &flits_of(&data.input)).unwrap();
    (data.input, data.params, out)
}

#[test]
fn grep_example_matches_the_builtin_grep_program() {
    let prog = example("grep.wat");
    for (seed, line_chars) in [(1u64, 40u64), (2, 300), (3, 5)] {
        let app = GrepApp::with_line_chars(line_chars).unwrap();
        let (input, params, want) = builtin(&app, seed, 50_000);
        let pattern = String::from_utf8(params[0].clone()).unwrap();
        for chunk in [1, 777, 4096, 1 << 20] {
            let got = run_chunks(&prog, std::slice::from_ref(&pattern), 0, &input, chunk).unwrap();
            assert_eq!(got.exit_code, 0);
            assert!(!want.is_empty());
            assert_eq!(
                got.output, want,
                "seed {seed}, lines of {line_chars}, chunks of {chunk}"
            );
        }
    }
}

#[test]
fn statistics_example_matches_the_builtin_statistics_program() {
    let prog = example("statistics.wat");
    for (seed, row_values) in [(4u64, 1u32), (5, 37), (6, 1000)] {
        let app = StatisticsApp::with_row_values(row_values).unwrap();
        let (input, _, want) = builtin(&app, seed, 80_000);
        let arg = (row_values * 4).to_string();
        for chunk in [3, 1000, 65_537] {
            let got = run_chunks(&prog, std::slice::from_ref(&arg), 0, &input, chunk).unwrap();
            assert_eq!(
                got.exit_code,
                0,
                "{}",
                String::from_utf8_lossy(&got.diagnostics)
            );
            assert_eq!(
                got.output, want,
                "seed {seed}, {row_values} per row, chunks of {chunk}"
            );
        }
    }
}

#[test]
fn statistics_example_rejects_a_row_cut_short_and_a_bad_row_size() {
    let prog = example("statistics.wat");
    let got = run_chunks(&prog, &["8".into()], 0, &[1, 2, 3, 4], 2).unwrap();
    assert_eq!(got.exit_code, 1);
    assert!(String::from_utf8_lossy(&got.diagnostics).contains("inside a row"));
    for bad in ["0", "6", "x", ""] {
        let got = run_chunks(&prog, &[bad.into()], 0, &[0; 8], 8).unwrap();
        assert_eq!(got.exit_code, 2, "row size {bad:?}");
    }
}

#[test]
fn crc32_example_matches_crc32fast() {
    let prog = example("crc32.wat");
    let input: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (len, chunk) in [(0, 1), (1, 1), (100_000, 999), (65_536, 65_536)] {
        let got = run_chunks(&prog, &[], 0, &input[..len], chunk).unwrap();
        let want = format!("{:08x}\n", crc32fast::hash(&input[..len]));
        assert_eq!(String::from_utf8(got.output).unwrap(), want, "{len} bytes");
    }
}

/// Compiles examples/programs/NAME.c with Debian's clang for wasm32-wasi (wasi-libc).
fn compile_c(dir: &std::path::Path, name: &str) -> Program {
    let src = format!(
        "{}/../../examples/programs/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = dir.join(format!("{name}.wasm"));
    let status = std::process::Command::new("clang")
        .args(["--target=wasm32-wasi", "-O2", "-Wl,--strip-all", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("clang runs (scripts/setup.sh installs clang, lld, wasi-libc)");
    assert!(status.success(), "clang {src}");
    Program::load(
        &format!("{name}.wasm"),
        &std::fs::read(&out).unwrap(),
        Limits::default(),
    )
    .unwrap()
}

#[test]
fn the_c_examples_compiled_with_wasi_libc_compute_what_the_builtins_compute() {
    let dir = tempfile::tempdir().unwrap();
    let grep = compile_c(dir.path(), "grep");
    let app = GrepApp::with_line_chars(120).unwrap();
    let (input, params, want) = builtin(&app, 7, 40_000);
    let pattern = String::from_utf8(params[0].clone()).unwrap();
    let got = run_chunks(&grep, &[pattern], 0, &input, 5000).unwrap();
    assert_eq!((got.exit_code, got.output), (0, want));

    let stats = compile_c(dir.path(), "statistics");
    let app = StatisticsApp::with_row_values(50).unwrap();
    let (input, _, want) = builtin(&app, 8, 40_000);
    let got = run_chunks(&stats, &["200".into()], 0, &input, 3333).unwrap();
    assert_eq!((got.exit_code, got.output), (0, want));
    let got = run_chunks(&stats, &["7".into()], 0, &input, 3333).unwrap();
    assert_eq!(got.exit_code, 2);
    assert!(String::from_utf8_lossy(&got.diagnostics).contains("usage"));

    let crc = compile_c(dir.path(), "crc32");
    let got = run_chunks(&crc, &[], 0, &input, 4096).unwrap();
    let want = format!("{:08x}\n", crc32fast::hash(&input));
    assert_eq!(
        (got.exit_code, String::from_utf8(got.output).unwrap()),
        (0, want)
    );
}
