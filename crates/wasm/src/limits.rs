//! The limits one program runs under: linear memory, fuel per run, output per input byte and
//! module size. Every one is a bound that turns a hostile program into a typed error.

/// One WebAssembly page.
pub const PAGE_BYTES: u64 = 65_536;

/// Limits of one program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory, in 64 KiB pages (declared and grown).
    pub memory_pages_max: u64,
    /// Fuel for the whole run (docs/programs.md: one unit per executed operator).
    pub fuel_max: u64,
    /// Output allowed regardless of input (headers, a final summary).
    pub output_base_bytes: u64,
    /// Output allowed per input byte consumed so far (a filter writes at most a few).
    pub output_bytes_per_input_byte: u64,
    /// Size of the module file.
    pub module_bytes_max: u64,
    /// Diagnostics (fd 2) kept; the rest is counted and dropped.
    pub diagnostics_bytes_max: u64,
}

/// Fuel any run gets by default, whatever its input: 2 × 10^9, which a runaway loop burnt in
/// 7.4 s of wall time on a loaded 2-core machine (docs/programs.md, "Speed"), so it stops
/// within about 10 s.
pub const FUEL_BASE: u64 = 2_000_000_000;

/// Fuel added by default per input byte: 100, a generous bound for a filter (the examples
/// burn 2–31 per byte).
pub const FUEL_PER_INPUT_BYTE: u64 = 100;

/// The default fuel of a run over `input_bytes` of input: [`FUEL_BASE`] +
/// [`FUEL_PER_INPUT_BYTE`] per byte (`program run` without `--fuel-max`).
pub fn default_fuel(input_bytes: u64) -> u64 {
    FUEL_BASE.saturating_add(FUEL_PER_INPUT_BYTE.saturating_mul(input_bytes))
}

impl Default for Limits {
    /// 64 MiB of memory (1024 pages: enough for a C filter's heap and buffers);
    /// [`FUEL_BASE`] fuel (the default for no input: `default_fuel` adds to it per input
    /// byte); 1 MiB of output plus 4 bytes per input byte; 16 MiB modules; 64 KiB of
    /// diagnostics. All assumptions, chosen as generous bounds for filters, not for any
    /// figure; `program run` overrides the first two (`--memory-max-mib`, `--fuel-max`, whose
    /// default is `default_fuel` of the input).
    fn default() -> Limits {
        Limits {
            memory_pages_max: 1024,
            fuel_max: FUEL_BASE,
            output_base_bytes: 1 << 20,
            output_bytes_per_input_byte: 4,
            module_bytes_max: 16 << 20,
            diagnostics_bytes_max: 64 << 10,
        }
    }
}

impl Limits {
    /// Output bytes allowed after `input_bytes` of input.
    pub fn output_bytes_max(&self, input_bytes: u64) -> u64 {
        self.output_base_bytes
            .saturating_add(self.output_bytes_per_input_byte.saturating_mul(input_bytes))
    }

    /// Linear memory limit in bytes.
    pub fn memory_bytes_max(&self) -> u64 {
        self.memory_pages_max.saturating_mul(PAGE_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_allowance_grows_with_input_and_saturates() {
        let l = Limits::default();
        assert_eq!(l.output_bytes_max(0), 1 << 20);
        assert_eq!(l.output_bytes_max(10), (1 << 20) + 40);
        assert_eq!(l.output_bytes_max(u64::MAX), u64::MAX);
    }

    #[test]
    fn the_default_fuel_grows_with_the_input_and_saturates() {
        assert_eq!(default_fuel(0), Limits::default().fuel_max);
        assert_eq!(default_fuel(1 << 30), 2_000_000_000 + 100 * (1 << 30));
        assert_eq!(default_fuel(u64::MAX), u64::MAX);
    }
}
