//! The fuel schedule (`nearflash_wasm::cost`) checked against hand derivations for an ideal
//! scalar core (kept beside the built-in programs for this purpose only; the models use their
//! measured counts, crates/iscapps/src/measure.rs): the same algorithm, written in
//! WebAssembly, is charged within `CALIBRATION_FACTOR_MAX` of the derived instructions per
//! byte, on the paper's
//! record shapes (rows of 786,432 bytes for statistics; 65,535-char lines for grep), here at
//! a few MiB.

use nearflash_iscapps::apps::{
    GrepApp, StatisticsApp, GREP_HAND_DERIVED_INSTRUCTIONS_PER_BYTE,
    STATISTICS_HAND_DERIVED_INSTRUCTIONS_PER_BYTE,
};
use nearflash_iscapps::IscApp;
use nearflash_wasm::cost::{instructions, CALIBRATION_FACTOR_MAX};
use nearflash_wasm::{run_chunks, Limits, Program};

fn example(name: &str) -> Program {
    let path = format!(
        "{}/../../examples/programs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    Program::load(name, &std::fs::read(&path).unwrap(), Limits::default()).unwrap()
}

/// Instructions per input byte charged to `prog` over `app`'s generated data, and the
/// hand-derived figure `derived`.
fn per_byte(prog: &Program, app: &dyn IscApp, arg: String, bytes: u64, derived: f64) -> (f64, f64) {
    let data = app.generate(11, bytes).unwrap();
    let out = run_chunks(prog, &[arg], 0, &data.input, 256 << 10).unwrap();
    assert_eq!(out.exit_code, 0);
    let wasm = instructions(out.fuel) / data.input.len() as f64;
    (wasm, derived)
}

fn within_factor(what: &str, wasm: f64, builtin: f64) {
    let factor = wasm / builtin;
    println!("{what}: WebAssembly {wasm:.3} instructions/byte, built-in {builtin:.3}, factor {factor:.2}");
    assert!(
        (1.0 / CALIBRATION_FACTOR_MAX..=CALIBRATION_FACTOR_MAX).contains(&factor),
        "{what}: factor {factor:.2} outside 1/{CALIBRATION_FACTOR_MAX}..{CALIBRATION_FACTOR_MAX}"
    );
}

#[test]
fn statistics_in_webassembly_is_charged_within_the_stated_factor_of_the_builtin() {
    let app = StatisticsApp::default();
    let (wasm, builtin) = per_byte(
        &example("statistics.wat"),
        &app,
        "786432".into(),
        4 << 20,
        STATISTICS_HAND_DERIVED_INSTRUCTIONS_PER_BYTE,
    );
    within_factor("statistics", wasm, builtin);
}

#[test]
fn grep_in_webassembly_is_charged_within_the_stated_factor_of_the_builtin() {
    let app = GrepApp::default();
    let (wasm, builtin) = per_byte(
        &example("grep.wat"),
        &app,
        pattern(&app),
        2 << 20,
        GREP_HAND_DERIVED_INSTRUCTIONS_PER_BYTE,
    );
    within_factor("grep", wasm, builtin);
}

fn pattern(app: &GrepApp) -> String {
    String::from_utf8(app.generate(11, 1 << 17).unwrap().params[0].clone()).unwrap()
}
