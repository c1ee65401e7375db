//! Instruction counts of the applications, **measured** by running them: the table in
//! `measured.rs` is written by `scripts/measure-insider-costs.sh` (the `nearflash-iscmeasure`
//! tool), never by hand.
//!
//! **How.** The crate is built, unchanged, as one WebAssembly module (`nearflash-iscapps-wasm`,
//! target `wasm32-wasip1`, the `release` profile); wasmi runs it under the fuel schedule of
//! `nearflash_wasm::cost` (one fuel unit per WebAssembly operator that becomes a machine
//! instruction on a register machine: `INSTRUCTIONS_PER_FUEL` = 1, its derivation and
//! calibration in crates/wasm/src/cost.rs and docs/programs.md). Each app runs on its own
//! generated data (seed 1) at two sizes; the fuel of each step is read around that step alone:
//! each pass's drive program over every 64-byte flit of the input (`on_params`, `on_flit`,
//! its `FlitWriter`), and the host-side remainder over the passes' outputs. Generating the
//! data, cutting it into flits and reassembling the outputs are the runtime's work and are not
//! counted. The result is verified against the independent reference in the same module.
//!
//! **Per byte** is the slope between the two sizes, so a run's fixed costs (parameters,
//! tables, the result's allocation) cancel: a drive pass costs Δfuel ÷ Δinput bytes, the
//! remainder Δfuel ÷ Δoutput bytes of every pass, and the host-only formulation (the same
//! programs run on the host over the data it reads, then the remainder: `pure_cpu`) the sum of
//! the passes' and the remainder's Δfuel ÷ Δinput bytes.
//!
//! **Currency.** `SOURCE_DIGEST` is an FNV-1a digest of every source the measurement depends
//! on (`DIGEST_SOURCES`); tests/measured.rs recomputes it and fails when a source changed
//! since the table was measured. `nearflash-iscmeasure --check` re-measures and compares the
//! fuel figure by figure.

/// One application's measurement: fuel of each step at two input sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measurement {
    pub app: &'static str,
    /// Input bytes generated at the two sizes (whole records).
    pub input_bytes: [u64; 2],
    /// Per pass: the drive program's fuel at the two sizes.
    pub pass_fuel: &'static [[u64; 2]],
    /// Per pass: the program's output bytes at the two sizes.
    pub output_bytes: &'static [[u64; 2]],
    /// The host-side remainder's fuel at the two sizes.
    pub remainder_fuel: [u64; 2],
}

fn slope(fuel: [u64; 2], bytes: [u64; 2]) -> f64 {
    let db = bytes[1] as f64 - bytes[0] as f64;
    if db == 0.0 {
        return 0.0;
    }
    ((fuel[1] as f64 - fuel[0] as f64) / db).max(0.0)
}

fn sum2<'a>(rows: impl Iterator<Item = &'a [u64; 2]>) -> [u64; 2] {
    rows.fold([0, 0], |a, r| [a[0] + r[0], a[1] + r[1]])
}

impl Measurement {
    /// Drive-core instructions per input byte of `pass` (`None` past the last pass).
    pub fn drive_instructions_per_byte(&self, pass: usize) -> Option<f64> {
        self.pass_fuel
            .get(pass)
            .map(|f| slope(*f, self.input_bytes) * INSTRUCTIONS_PER_FUEL)
    }

    /// Host instructions of the remainder per byte of drive output (all passes' outputs);
    /// 0 when the output does not grow with the input (a fixed-size result).
    pub fn remainder_instructions_per_output_byte(&self) -> f64 {
        slope(self.remainder_fuel, sum2(self.output_bytes.iter())) * INSTRUCTIONS_PER_FUEL
    }

    /// Host instructions of the host-only formulation per input-file byte, all passes.
    pub fn pure_cpu_instructions_per_input_byte(&self) -> f64 {
        let passes = sum2(self.pass_fuel.iter());
        let all = [
            passes[0] + self.remainder_fuel[0],
            passes[1] + self.remainder_fuel[1],
        ];
        slope(all, self.input_bytes) * INSTRUCTIONS_PER_FUEL
    }
}

/// Core instructions per fuel unit: `nearflash_wasm::cost::INSTRUCTIONS_PER_FUEL` (this crate
/// cannot depend on the wasm crate, which depends on it for its tests; tests/measured.rs in
/// nearflash-iscmeasure checks the two agree).
pub const INSTRUCTIONS_PER_FUEL: f64 = 1.0;

/// The measurement of `app` (every registry app has one: tests/measured.rs).
pub fn measured(app: &str) -> Option<&'static Measurement> {
    crate::measured::MEASUREMENTS.iter().find(|m| m.app == app)
}

/// The committed table (every app's fuel).
pub fn table() -> &'static [Measurement] {
    crate::measured::MEASUREMENTS
}

/// The sources' digest the committed table was measured at.
pub fn table_digest() -> u64 {
    crate::measured::SOURCE_DIGEST
}

/// The compiler the committed table's module was built with.
pub fn table_toolchain() -> &'static str {
    crate::measured::TOOLCHAIN
}

/// Drive instructions per byte of `app`'s pass `pass`, for the programs' `cost()`.
pub(crate) fn drive(app: &str, pass: usize) -> f64 {
    measured(app)
        .and_then(|m| m.drive_instructions_per_byte(pass))
        .expect("every app's every pass is measured (tests/measured.rs)")
}

/// `app`'s measured host costs.
pub(crate) fn host(app: &str) -> crate::HostCost {
    let m = measured(app).expect("every app is measured (tests/measured.rs)");
    crate::HostCost {
        remainder_instructions_per_output_byte: m.remainder_instructions_per_output_byte(),
        pure_cpu_instructions_per_input_byte: m.pure_cpu_instructions_per_input_byte(),
    }
}

/// What the measurement depends on, relative to the workspace root: directories (every `.rs`
/// below them) and files. The generated table itself is left out.
pub const DIGEST_SOURCES: &[&str] = &[
    "crates/iscapps/src",
    "crates/iscapps/Cargo.toml",
    "crates/stream/src",
    "crates/stream/Cargo.toml",
    "crates/sim/src/rng.rs",
    "crates/iscapps-wasm/src",
    "crates/iscapps-wasm/Cargo.toml",
    "crates/iscmeasure/src",
    "crates/wasm/src/cost.rs",
];

/// The generated table, left out of its own digest.
pub const TABLE_PATH: &str = "crates/iscapps/src/measured.rs";

/// FNV-1a (64-bit) over `(path, content)` pairs in the order given (callers sort by path):
/// each path's bytes, a 0 byte, the content, a 0 byte.
pub fn source_digest<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    for (path, content) in files {
        eat(path.as_bytes());
        eat(&[0]);
        eat(content);
        eat(&[0]);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slopes_cancel_fixed_costs_and_sum_passes_with_the_remainder() {
        let m = Measurement {
            app: "t",
            input_bytes: [1000, 3000],
            pass_fuel: &[[500 + 2000, 500 + 6000], [10, 10]],
            output_bytes: &[[100, 300], [0, 0]],
            remainder_fuel: [40 + 100, 40 + 300],
        };
        assert_eq!(m.drive_instructions_per_byte(0), Some(2.0));
        assert_eq!(m.drive_instructions_per_byte(1), Some(0.0));
        assert_eq!(m.drive_instructions_per_byte(2), None);
        assert_eq!(m.remainder_instructions_per_output_byte(), 1.0);
        assert_eq!(m.pure_cpu_instructions_per_input_byte(), 2.1);
    }

    #[test]
    fn the_digest_sees_paths_and_contents() {
        let a = source_digest([("a.rs", &b"x"[..])]);
        assert_ne!(a, source_digest([("b.rs", &b"x"[..])]));
        assert_ne!(a, source_digest([("a.rs", &b"y"[..])]));
        assert_eq!(a, source_digest([("a.rs", &b"x"[..])]));
    }
}
