//! The table's conversion agrees with the fuel schedule it was measured under.

#[test]
fn the_table_converts_fuel_as_the_wasm_crate_does() {
    assert_eq!(
        nearflash_iscapps::measure::INSTRUCTIONS_PER_FUEL,
        nearflash_wasm::cost::INSTRUCTIONS_PER_FUEL
    );
}
