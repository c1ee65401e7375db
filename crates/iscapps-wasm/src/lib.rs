//! INSIDER's applications (`nearflash-iscapps`) as one WebAssembly module whose exports run
//! each step of an app separately, so the measurer (`nearflash-iscmeasure`) reads the fuel
//! of each step on its own: generating the data and cutting it into flits (not measured),
//! each drive pass's program over the flits, and the host-side remainder.
//!
//! The exports, called in this order for one measurement:
//! 1. `nf_prepare(app, seed, input_bytes)`: generates the app's data set (app = index into
//!    `nearflash_iscapps::APPS`) and cuts it into 64-byte flits; answers the input bytes
//!    generated (whole records), or `u64::MAX` on error.
//! 2. for each pass: `nf_params(pass)` (the host's work at a barrier: parameter messages),
//!    then `nf_run_pass(pass)`: on_params, then every flit through the program, its output
//!    flits left in the writer; answers the program's output bytes, or `u64::MAX` on a fault.
//!    `nf_collect(pass)` then reassembles the output (the runtime's work).
//! 3. `nf_remainder()`: the host-side remainder over the passes' outputs; 0, or 1 on error.
//! 4. `nf_verify()`: the result compared with the independent reference; 0 when equal.
//!
//! The module holds one measurement's state at a time. Natively (the workspace build) the
//! same functions run the same code, which the tests below use.

use std::cell::RefCell;

use nearflash_iscapps::{AppOutput, Dataset, IscApp};
use nearflash_stream::{flits_of, Flit, FlitWriter, Reassembler};

/// Answer of a measured call that failed.
pub const FAILED: u64 = u64::MAX;

#[derive(Default)]
struct State {
    app: Option<Box<dyn IscApp>>,
    dataset: Option<Dataset>,
    flits: Vec<Flit>,
    params: Vec<Vec<u8>>,
    writer: FlitWriter,
    outputs: Vec<Vec<u8>>,
    result: Option<AppOutput>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Generates app `app`'s data set of at most `input_bytes` bytes and cuts it into flits.
#[no_mangle]
pub extern "C" fn nf_prepare(app: u32, seed: u64, input_bytes: u64) -> u64 {
    let Some(name) = nearflash_iscapps::APPS.get(app as usize) else {
        return FAILED;
    };
    let Ok(app) = nearflash_iscapps::app(name) else {
        return FAILED;
    };
    let Ok(dataset) = app.generate(seed, input_bytes) else {
        return FAILED;
    };
    STATE.with_borrow_mut(|s| {
        *s = State::default();
        s.flits = flits_of(&dataset.input);
        let n = dataset.input.len() as u64;
        s.dataset = Some(dataset);
        s.app = Some(app);
        n
    })
}

/// The parameter messages of `pass` (from the dataset, or from the earlier passes' outputs).
#[no_mangle]
pub extern "C" fn nf_params(pass: u32) -> u64 {
    STATE.with_borrow_mut(|s| {
        let (Some(app), Some(dataset)) = (&s.app, &s.dataset) else {
            return FAILED;
        };
        match app.pass_params(dataset, pass as usize, &s.outputs) {
            Ok(p) => {
                s.params = p;
                0
            }
            Err(_) => FAILED,
        }
    })
}

/// Runs pass `pass`'s drive program over every flit: the measured drive-side work.
#[no_mangle]
pub extern "C" fn nf_run_pass(pass: u32) -> u64 {
    STATE.with_borrow_mut(|s| {
        let Some(app) = &s.app else {
            return FAILED;
        };
        let Ok(mut program) = app.program(pass as usize) else {
            return FAILED;
        };
        let mut out = FlitWriter::new();
        for p in &s.params {
            if program.on_params(p).is_err() {
                return FAILED;
            }
        }
        for f in &s.flits {
            if program.on_flit(f, &mut out).is_err() {
                return FAILED;
            }
        }
        s.writer = out;
        0
    })
}

/// Reassembles pass `pass`'s output flits into bytes (the runtime's work, not measured);
/// answers the output bytes.
#[no_mangle]
pub extern "C" fn nf_collect(pass: u32) -> u64 {
    STATE.with_borrow_mut(|s| {
        if s.outputs.len() != pass as usize {
            return FAILED;
        }
        let mut bytes = Reassembler::new();
        for f in s.writer.drain() {
            if bytes.push(&f).is_err() {
                return FAILED;
            }
        }
        if !bytes.is_done() {
            return FAILED;
        }
        let out = bytes.into_bytes();
        let n = out.len() as u64;
        s.outputs.push(out);
        n
    })
}

/// The host-side remainder over every pass's output: the measured host-side work.
#[no_mangle]
pub extern "C" fn nf_remainder() -> u64 {
    STATE.with_borrow_mut(|s| {
        let (Some(app), Some(dataset)) = (&s.app, &s.dataset) else {
            return FAILED;
        };
        match app.host_remainder(dataset, &s.outputs) {
            Ok(r) => {
                s.result = Some(r);
                0
            }
            Err(_) => FAILED,
        }
    })
}

/// The result against the independent reference: 0 when they agree.
#[no_mangle]
pub extern "C" fn nf_verify() -> u64 {
    STATE.with_borrow(|s| {
        let (Some(app), Some(dataset), Some(got)) = (&s.app, &s.dataset, &s.result) else {
            return FAILED;
        };
        match app.reference(dataset) {
            Ok(want) if app.verify(got, &want).is_ok() => 0,
            _ => FAILED,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every app, natively, through the exports in order: each step succeeds and the result
    /// matches the reference (the measurer checks the same in WebAssembly).
    #[test]
    fn every_app_runs_through_the_exports_and_verifies() {
        for (i, name) in nearflash_iscapps::APPS.iter().enumerate() {
            let app = nearflash_iscapps::app(name).unwrap();
            let bytes = nf_prepare(i as u32, 7, 1 << 20);
            assert!(bytes > 0 && bytes != FAILED, "{name}");
            for pass in 0..app.pass_count() as u32 {
                assert_eq!(nf_params(pass), 0, "{name} pass {pass}");
                assert_eq!(nf_run_pass(pass), 0, "{name} pass {pass}");
                assert_ne!(nf_collect(pass), FAILED, "{name} pass {pass}");
            }
            assert_eq!(nf_remainder(), 0, "{name}");
            assert_eq!(nf_verify(), 0, "{name}");
        }
    }

    #[test]
    fn an_unknown_app_or_steps_out_of_order_fail() {
        assert_eq!(nf_prepare(u32::MAX, 1, 1 << 20), FAILED);
        assert!(nf_prepare(0, 1, 1 << 20) > 0);
        assert_eq!(nf_collect(1), FAILED, "pass 1 before pass 0");
        assert_eq!(nf_params(5), FAILED, "grep has one pass");
    }
}
