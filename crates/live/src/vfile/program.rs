//! What a virtual file runs, checked when it is registered: a built-in INSIDER drive program
//! (`nearflash_iscapps`: one pass over a read virtual file) with its parameter messages, or a
//! user's WebAssembly module (`nearflash_wasm`, loaded and validated once) with its argv.
//! Every open starts a fresh instance (INSIDER resets a slot at every vopen).
//!
//! Arguments of a built-in become its parameter messages (`send_params`), one per argument:
//! `hex:…` gives the bytes; otherwise grep takes the pattern's bytes and statistics the row
//! size in bytes as a decimal (as examples/programs/statistics.wat takes it); the other
//! programs take only `hex:`. A module takes its arguments as argv[1..].

use crate::vfile::VfileError;
use nearflash_iscapps::Direction;
use nearflash_stream::StreamProgram;
use nearflash_wasm::limits::{default_fuel, FUEL_BASE};
use nearflash_wasm::stream::WasmStreamProgram;
use nearflash_wasm::{Limits, Program};

/// The most fuel a registration may ask for, and the cap of the default. Fuel of one run
/// unless the registration asks for another is `program run`'s default,
/// `nearflash_wasm::limits::default_fuel` of the real file's size at the open (2 × 10^9 + 100
/// per byte), so a runaway module fails its open with `EIO` within seconds (docs/programs.md,
/// "The sandbox") — the device thread serves nothing else while a run lasts — while a filter
/// has far more than it burns per byte.
pub const FUEL_MAX: u64 = 100_000_000_000;
/// Linear memory of a module unless asked otherwise, and the most it may ask.
pub const MEMORY_MIB_DEFAULT: u64 = 64;
pub const MEMORY_MIB_MAX: u64 = 256;
/// `random_get` of a module is seeded with this, so a virtual file reads the same each time.
pub const WASM_SEED: u64 = 1;
/// Arguments of one registration, and bytes of each.
pub const ARGS_MAX: usize = 16;
pub const ARG_BYTES_MAX: usize = 4096;

/// A module's limits as registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleLimits {
    /// Fuel of every run; `None`: the default for each run's input (`fuel_for`).
    pub fuel_max: Option<u64>,
    pub memory_mib_max: u64,
}

impl Default for ModuleLimits {
    fn default() -> Self {
        ModuleLimits {
            fuel_max: None,
            memory_mib_max: MEMORY_MIB_DEFAULT,
        }
    }
}

impl ModuleLimits {
    /// The limits asked for (either may be absent), checked against the server's.
    pub fn asked(fuel_max: Option<u64>, memory_mib_max: Option<u64>) -> Result<Self, VfileError> {
        let l = ModuleLimits {
            fuel_max,
            memory_mib_max: memory_mib_max.unwrap_or(MEMORY_MIB_DEFAULT),
        };
        for (what, value, max) in [
            ("fuel_max", fuel_max.unwrap_or(FUEL_BASE), FUEL_MAX),
            ("memory_max_mib", l.memory_mib_max, MEMORY_MIB_MAX),
        ] {
            if value > max {
                return Err(VfileError::Limit { what, value, max });
            }
            if value == 0 {
                return Err(VfileError::BadRequest(format!("{what} must be at least 1")));
            }
        }
        Ok(l)
    }

    /// Fuel of a run over `input_bytes`: the registration's, or the default for that input
    /// (at most `FUEL_MAX`).
    pub fn fuel_for(self, input_bytes: u64) -> u64 {
        let fuel = self
            .fuel_max
            .unwrap_or_else(|| default_fuel(input_bytes).min(FUEL_MAX));
        assert!((1..=FUEL_MAX).contains(&fuel), "checked when registered");
        fuel
    }

    fn wasm_limits(self) -> Limits {
        Limits {
            memory_pages_max: self.memory_mib_max * 16,
            fuel_max: self.fuel_for(0),
            ..Limits::default()
        }
    }
}

enum Source {
    Builtin {
        app: &'static str,
        params: Vec<Vec<u8>>,
    },
    Wasm {
        program: Program,
        limits: ModuleLimits,
    },
}

/// A registered program.
pub struct VfileProgram {
    /// The built-in's name, or the module's file name (argv[0]).
    pub label: String,
    pub args: Vec<String>,
    source: Source,
}

impl std::fmt::Debug for VfileProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VfileProgram")
            .field("label", &self.label)
            .field("args", &self.args)
            .field("wasm", &self.is_wasm())
            .finish()
    }
}

/// Whether `program` names a module (by its file name) rather than a built-in.
pub fn is_module_name(program: &str) -> bool {
    program.ends_with(".wasm") || program.ends_with(".wat")
}

impl VfileProgram {
    /// The built-in drive program `name` with `args` as its parameter messages; refused unless
    /// it reads (a virtual write's program, RLE, writes the real file) in one pass (Relief's
    /// second pass needs the host between passes), or when its parameters are refused by it.
    pub fn builtin(name: &str, args: Vec<String>) -> Result<VfileProgram, VfileError> {
        check_args(&args)?;
        let app = nearflash_iscapps::app(name)?;
        let program = app.name();
        if app.direction() != Direction::Read {
            return Err(VfileError::Unsupported {
                program,
                reason: "it is a virtual write's program (it writes the real file)".into(),
            });
        }
        if app.pass_count() != 1 {
            return Err(VfileError::Unsupported {
                program,
                reason: format!(
                    "it runs {} passes with the host between them",
                    app.pass_count()
                ),
            });
        }
        let params = args
            .iter()
            .map(|a| param_message(program, a))
            .collect::<Result<Vec<_>, _>>()?;
        let p = VfileProgram {
            label: program.to_string(),
            args,
            source: Source::Builtin {
                app: program,
                params,
            },
        };
        // A trial over an empty input: parameters missing or refused are the registration's
        // error, not every reader's.
        let params = |e: VfileError| match e {
            VfileError::Program(e) => VfileError::Params(e),
            e => e,
        };
        let mut trial = p.start(0).map_err(params)?;
        nearflash_iscapps::run_program(trial.as_mut(), &[], &nearflash_stream::flits_of(&[]))
            .map_err(VfileError::Params)?;
        Ok(p)
    }

    /// A WebAssembly module (binary or WAT text) named `module_name`, run with `args`.
    pub fn wasm(
        module_name: &str,
        module: &[u8],
        args: Vec<String>,
        limits: ModuleLimits,
    ) -> Result<VfileProgram, VfileError> {
        check_args(&args)?;
        assert!(limits.fuel_for(0) <= FUEL_MAX && limits.memory_mib_max <= MEMORY_MIB_MAX);
        let program = Program::load(module_name, module, limits.wasm_limits())?;
        Ok(VfileProgram {
            label: module_name.to_string(),
            args,
            source: Source::Wasm { program, limits },
        })
    }

    /// A fresh instance for a run over `input_bytes` (a module's default fuel grows with
    /// them), its parameters sent.
    pub fn start(&self, input_bytes: u64) -> Result<Box<dyn StreamProgram>, VfileError> {
        match &self.source {
            Source::Builtin { app, params } => {
                let mut p = nearflash_iscapps::app(app)?.program(0)?;
                for m in params {
                    p.on_params(m)?;
                }
                Ok(p)
            }
            Source::Wasm { program, limits } => Ok(Box::new(WasmStreamProgram::new(
                program.start_with_fuel(&self.args, WASM_SEED, limits.fuel_for(input_bytes)),
            ))),
        }
    }

    pub fn is_wasm(&self) -> bool {
        matches!(self.source, Source::Wasm { .. })
    }

    /// A module's limits; `None` for a built-in.
    pub fn module_limits(&self) -> Option<ModuleLimits> {
        match &self.source {
            Source::Wasm { limits, .. } => Some(*limits),
            Source::Builtin { .. } => None,
        }
    }
}

fn check_args(args: &[String]) -> Result<(), VfileError> {
    if args.len() > ARGS_MAX {
        return Err(VfileError::Limit {
            what: "argument count",
            value: args.len() as u64,
            max: ARGS_MAX as u64,
        });
    }
    if let Some(a) = args.iter().find(|a| a.len() > ARG_BYTES_MAX) {
        return Err(VfileError::Limit {
            what: "argument bytes",
            value: a.len() as u64,
            max: ARG_BYTES_MAX as u64,
        });
    }
    Ok(())
}

/// One argument of built-in `program` as its parameter message.
fn param_message(program: &'static str, arg: &str) -> Result<Vec<u8>, VfileError> {
    let bad = |reason: String| VfileError::BadArg {
        program,
        arg: arg.to_string(),
        reason,
    };
    if let Some(hex) = arg.strip_prefix("hex:") {
        return crate::vfile::control::hex_decode(hex).map_err(bad);
    }
    match program {
        "grep" => Ok(arg.as_bytes().to_vec()),
        "statistics" => arg
            .parse::<u32>()
            .map(|n| n.to_le_bytes().to_vec())
            .map_err(|e| bad(format!("the row size in bytes, a decimal ({e})"))),
        _ => Err(bad(format!(
            "{program}'s parameter messages are binary: give each as hex:BYTES"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn grep_statistics_and_passthrough_register_and_bad_parameters_are_refused() {
        assert!(VfileProgram::builtin("grep", args(&["AB"])).is_ok());
        assert!(VfileProgram::builtin("statistics", args(&["16"])).is_ok());
        assert!(VfileProgram::builtin("passthrough", vec![]).is_ok());
        assert!(VfileProgram::builtin("grep", args(&["hex:4142"])).is_ok());
        let no_pattern = VfileProgram::builtin("grep", vec![]).unwrap_err();
        assert!(matches!(no_pattern, VfileError::Params(_)), "{no_pattern}");
        let six = VfileProgram::builtin("statistics", args(&["6"])).unwrap_err();
        assert_eq!(six.errno(), crate::op::Errno(libc::EINVAL), "{six}");
        assert!(matches!(
            VfileProgram::builtin("statistics", args(&["many"])),
            Err(VfileError::BadArg { .. })
        ));
        assert!(matches!(
            VfileProgram::builtin("nope", vec![]),
            Err(VfileError::App(_))
        ));
    }

    #[test]
    fn a_virtual_writes_program_and_a_two_pass_program_are_refused_by_name() {
        let rle = VfileProgram::builtin("rle", vec![]).unwrap_err();
        assert!(rle.to_string().contains("virtual write"), "{rle}");
        let relief = VfileProgram::builtin("relief", vec![]).unwrap_err();
        assert!(relief.to_string().contains("2 passes"), "{relief}");
    }

    #[test]
    fn module_limits_over_the_servers_are_refused() {
        assert_eq!(ModuleLimits::asked(None, None), Ok(ModuleLimits::default()));
        assert!(matches!(
            ModuleLimits::asked(Some(FUEL_MAX + 1), None),
            Err(VfileError::Limit { .. })
        ));
        assert!(ModuleLimits::asked(None, Some(0)).is_err());
        assert!(ModuleLimits::asked(Some(0), None).is_err());
        let bad = VfileProgram::wasm("x.wat", b"(module", vec![], ModuleLimits::default());
        assert!(matches!(bad, Err(VfileError::Load(_))));
    }

    #[test]
    fn a_modules_default_fuel_is_program_runs_for_the_real_files_size() {
        let default = ModuleLimits::default();
        assert_eq!(default.fuel_for(0), 2_000_000_000);
        assert_eq!(default.fuel_for(1 << 20), 2_000_000_000 + 100 * (1 << 20));
        assert_eq!(default.fuel_for(u64::MAX), FUEL_MAX);
        let asked = ModuleLimits::asked(Some(5), None).unwrap();
        assert_eq!(asked.fuel_for(1 << 30), 5);
    }
}
