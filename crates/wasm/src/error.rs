//! Typed errors of one program: why its module was refused at load, and why its run stopped.
//! Each is that program's alone — the caller reports it for the program and carries on.

/// Why a module was refused when it was loaded (`nearflash program check`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("{name}: not a WebAssembly module ({reason})")]
    BadModule { name: String, reason: String },
    /// A file that is neither a binary module (which starts with the magic `\0asm`) nor
    /// text: named `.wasm`, or not UTF-8.
    #[error(
        "{name}: not a WebAssembly binary: bad magic (starts with {found}, expected 00 61 73 6d, \
         \"\\0asm\"); a module in text form is read from a .wat file"
    )]
    BadMagic { name: String, found: String },
    #[error("{name}: module of {bytes} bytes is larger than the {bytes_max}-byte limit")]
    TooLarge {
        name: String,
        bytes: u64,
        bytes_max: u64,
    },
    #[error(
        "{name}: imports {module}.{field}, which is outside the WASI preview 1 subset nearflash \
         provides (docs/programs.md lists it)"
    )]
    ForbiddenImport {
        name: String,
        module: String,
        field: String,
    },
    #[error("{name}: imports {module}.{field} with the wrong signature ({reason})")]
    ImportSignature {
        name: String,
        module: String,
        field: String,
        reason: String,
    },
    #[error("{name}: does not export {export} (a WASI command exports `_start` and `memory`)")]
    MissingExport { name: String, export: &'static str },
    #[error("{name}: `_start` must take and return nothing")]
    StartSignature { name: String },
    #[error(
        "{name}: declares a linear memory of at least {pages} pages (64 KiB each), over the \
         limit of {pages_max}"
    )]
    MemoryDeclared {
        name: String,
        pages: u64,
        pages_max: u64,
    },
}

/// Why a program's run stopped before it exited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("{name}: trapped: {reason}")]
    Trap { name: String, reason: String },
    #[error("{name}: out of fuel after {fuel_max} units (an infinite loop, or raise --fuel-max)")]
    OutOfFuel { name: String, fuel_max: u64 },
    #[error("{name}: out-of-bounds memory access")]
    OutOfBounds { name: String },
    #[error("{name}: linear memory would grow past the limit of {pages_max} pages (64 KiB each)")]
    MemoryLimit { name: String, pages_max: u64 },
    #[error(
        "{name}: wrote more than {bytes_max} output bytes after {input_bytes} input bytes \
         (limit: {base_bytes} + {per_input_byte} per input byte)"
    )]
    OutputLimit {
        name: String,
        bytes_max: u64,
        input_bytes: u64,
        base_bytes: u64,
        per_input_byte: u64,
    },
    #[error("{name}: could not be instantiated: {reason}")]
    Instantiate { name: String, reason: String },
}
