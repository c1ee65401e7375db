//! The measurer against small stand-in modules with the same exports, whose work per step is
//! known in proportion: each step's fuel lands in its own figure, fixed costs cancel, and a
//! run that fails to verify is an error, not a table.

use nearflash_iscmeasure::{measure, MeasureError};

/// Pass `p` loops (p + 1) × bytes/64 times; the remainder does fixed work; `verify` answers
/// `verify`.
fn stand_in(verify: u64) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(module
          (global $bytes (mut i64) (i64.const 0))
          (memory (export "memory") 1)
          (func (export "nf_prepare") (param i32 i64 i64) (result i64)
            (global.set $bytes (local.get 2)) (local.get 2))
          (func (export "nf_params") (param i32) (result i64) (i64.const 0))
          (func (export "nf_run_pass") (param $pass i32) (result i64) (local $n i64)
            (local.set $n (i64.mul (i64.div_u (global.get $bytes) (i64.const 64))
                                   (i64.extend_i32_u (i32.add (local.get $pass) (i32.const 1)))))
            (block $done (loop $l
              (br_if $done (i64.eqz (local.get $n)))
              (local.set $n (i64.sub (local.get $n) (i64.const 1)))
              (br $l)))
            (i64.const 0))
          (func (export "nf_collect") (param i32) (result i64)
            (i64.div_u (global.get $bytes) (i64.const 8)))
          (func (export "nf_remainder") (result i64) (local $n i32)
            (local.set $n (i32.const 100))
            (block $done (loop $l
              (br_if $done (i32.eqz (local.get $n)))
              (local.set $n (i32.sub (local.get $n) (i32.const 1)))
              (br $l)))
            (i64.const 0))
          (func (export "nf_verify") (result i64) (i64.const {verify})))"#
    ))
    .unwrap()
}

#[test]
fn each_steps_fuel_lands_in_its_own_figure_and_fixed_costs_cancel() {
    let fuel = measure(&stand_in(0)).unwrap();
    assert_eq!(fuel.len(), nearflash_iscapps::APPS.len());
    let relief = fuel.iter().find(|f| f.app == "relief").unwrap();
    let m = relief.as_measurement();
    let (p0, p1) = (
        m.drive_instructions_per_byte(0).unwrap(),
        m.drive_instructions_per_byte(1).unwrap(),
    );
    assert!(p0 > 0.0);
    assert!(
        (p1 - 2.0 * p0).abs() < 1e-9,
        "pass 1 loops twice as often: {p0} {p1}"
    );
    // The remainder's work does not grow with the data: its slope is 0.
    assert_eq!(relief.remainder_fuel[0], relief.remainder_fuel[1]);
    assert_eq!(m.remainder_instructions_per_output_byte(), 0.0);
    assert!((m.pure_cpu_instructions_per_input_byte() - 3.0 * p0).abs() < 1e-9);
    let grep = fuel.iter().find(|f| f.app == "grep").unwrap();
    assert_eq!(grep.output_bytes[0][1], grep.input_bytes[1] / 8);
}

#[test]
fn a_run_that_does_not_verify_is_an_error() {
    match measure(&stand_in(1)) {
        Err(MeasureError::Step { app, step }) => {
            assert_eq!(app, "grep");
            assert!(step.contains("verify"), "{step}");
        }
        other => panic!("expected a verify failure, got {other:?}"),
    }
}
