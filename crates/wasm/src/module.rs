//! Loading a user's program: WAT text or a binary module (told apart by the binary's magic
//! `\0asm`: a `.wasm` file or non-UTF-8 bytes without it are refused as a bad magic, not read
//! as text), validated and compiled eagerly, its imports checked against the WASI subset
//! (anything else is refused by name), its exports (`_start`, `memory`) and its declared memory
//! checked against the limits.
//!
//! Tolerates arbitrary bytes: every failure is a `LoadError`, never a panic (fuzzed in
//! tests/sandbox.rs); the module size is bounded before parsing.

use crate::cost;
use crate::error::LoadError;
use crate::limits::Limits;
use crate::run::Run;
use crate::wasi::{self, WasiState, WASI_FUNCTIONS, WASI_MODULE};
use wasmi::{Engine, ExternType, Linker, Module};

/// A loaded, checked program.
pub struct Program {
    name: String,
    engine: Engine,
    module: Module,
    linker: Linker<WasiState>,
    limits: Limits,
    imports: Vec<String>,
    memory_pages: u64,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("imports", &self.imports)
            .field("memory_pages", &self.memory_pages)
            .finish()
    }
}

fn engine() -> Engine {
    Engine::new(&cost::metered_config())
}

impl Program {
    /// Loads `bytes` (a binary module, or WAT text) under `name` (argv[0]: the file name).
    pub fn load(name: &str, bytes: &[u8], limits: Limits) -> Result<Program, LoadError> {
        let bad = |reason: String| LoadError::BadModule {
            name: name.to_string(),
            reason,
        };
        if bytes.len() as u64 > limits.module_bytes_max {
            return Err(LoadError::TooLarge {
                name: name.to_string(),
                bytes: bytes.len() as u64,
                bytes_max: limits.module_bytes_max,
            });
        }
        let binary;
        let wasm: &[u8] = if bytes.starts_with(WASM_MAGIC) {
            bytes
        } else if name.ends_with(".wasm") || std::str::from_utf8(bytes).is_err() {
            return Err(LoadError::BadMagic {
                name: name.to_string(),
                found: magic_of(bytes),
            });
        } else {
            binary = wat::parse_bytes(bytes).map_err(|e| bad(short(&e.to_string())))?;
            &binary
        };
        let engine = engine();
        let module = Module::new(&engine, wasm).map_err(|e| bad(e.to_string()))?;
        let imports = check_imports(name, &module)?;
        let memory_pages = check_exports(name, &module, &limits)?;
        let linker = wasi::linker(&engine);
        Ok(Program {
            name: name.to_string(),
            engine,
            module,
            linker,
            limits,
            imports,
            memory_pages,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The WASI functions the module imports, in its order.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// Pages of linear memory the module declares initially.
    pub fn memory_pages(&self) -> u64 {
        self.memory_pages
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A fresh run with `args` (after argv[0]) and the run's `seed` (random_get), under the
    /// program's limits.
    pub fn start(&self, args: &[String], seed: u64) -> Result<Run, crate::RunError> {
        self.start_with_fuel(args, seed, self.limits.fuel_max)
    }

    /// As `start`, with `fuel_max` for this run (a caller that learns the input's size only
    /// when the run starts: `limits::default_fuel` of it).
    pub fn start_with_fuel(
        &self,
        args: &[String],
        seed: u64,
        fuel_max: u64,
    ) -> Result<Run, crate::RunError> {
        let mut argv = vec![self.name.as_bytes().to_vec()];
        argv.extend(args.iter().map(|a| a.as_bytes().to_vec()));
        let limits = Limits {
            fuel_max,
            ..self.limits
        };
        Run::new(self, WasiState::new(argv, seed, limits))
    }

    pub(crate) fn parts(&self) -> (&Engine, &Module, &Linker<WasiState>) {
        (&self.engine, &self.module, &self.linker)
    }
}

/// The first bytes of every binary module.
const WASM_MAGIC: &[u8] = b"\0asm";

/// The first (up to) four bytes of a file, in hex, for a bad-magic message.
fn magic_of(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing: the file is empty".into();
    }
    bytes
        .iter()
        .take(WASM_MAGIC.len())
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first two lines of a parser's message (the error and its location), each at most 160
/// characters: the text parser quotes the offending line, which may be a whole data file.
fn short(message: &str) -> String {
    message
        .lines()
        .take(2)
        .map(|l| l.chars().take(160).collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

fn check_imports(name: &str, module: &Module) -> Result<Vec<String>, LoadError> {
    let mut names = Vec::new();
    for import in module.imports() {
        let refuse = || LoadError::ForbiddenImport {
            name: name.to_string(),
            module: import.module().to_string(),
            field: import.name().to_string(),
        };
        if import.module() != WASI_MODULE {
            return Err(refuse());
        }
        let Some((_, params, results)) = WASI_FUNCTIONS.iter().find(|f| f.0 == import.name())
        else {
            return Err(refuse());
        };
        let ExternType::Func(ty) = import.ty() else {
            return Err(refuse());
        };
        if ty.params() != *params || ty.results() != *results {
            return Err(LoadError::ImportSignature {
                name: name.to_string(),
                module: import.module().to_string(),
                field: import.name().to_string(),
                reason: format!(
                    "{:?} -> {:?}, expected {:?} -> {:?}",
                    ty.params(),
                    ty.results(),
                    params,
                    results
                ),
            });
        }
        names.push(import.name().to_string());
    }
    Ok(names)
}

/// Checks `_start` and `memory`; returns the declared initial pages.
fn check_exports(name: &str, module: &Module, limits: &Limits) -> Result<u64, LoadError> {
    let mut start = None;
    let mut memory = None;
    for e in module.exports() {
        match (e.name(), e.ty()) {
            ("_start", ExternType::Func(f)) => start = Some(f.clone()),
            ("memory", ExternType::Memory(m)) => memory = Some(*m),
            _ => {}
        }
    }
    let missing = |export| LoadError::MissingExport {
        name: name.to_string(),
        export,
    };
    let start = start.ok_or_else(|| missing("_start"))?;
    if !start.params().is_empty() || !start.results().is_empty() {
        return Err(LoadError::StartSignature {
            name: name.to_string(),
        });
    }
    let memory = memory.ok_or_else(|| missing("memory"))?;
    if memory.minimum() > limits.memory_pages_max {
        return Err(LoadError::MemoryDeclared {
            name: name.to_string(),
            pages: memory.minimum(),
            pages_max: limits.memory_pages_max,
        });
    }
    Ok(memory.minimum())
}
