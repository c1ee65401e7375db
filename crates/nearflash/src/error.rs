//! Every way a command can fail, each with a message that names the problem. `main` prints
//! the message and exits non-zero; nothing in the CLI panics on bad input.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CliError {
    #[error("unknown preset '{name}' (built-in presets: {known}; or give a path to a .toml file)")]
    UnknownPreset { name: String, known: String },

    #[error("{source_name}: {reason}")]
    Config { source_name: String, reason: String },

    #[error("override '{spec}': {reason}")]
    Override { spec: String, reason: String },

    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },

    #[error("trace {path}: {source}")]
    Trace {
        path: String,
        #[source]
        source: nearflash_iotrace::TraceError,
    },

    #[error("invalid workload: {0}")]
    Workload(String),

    #[error(
        "{what} (offset {offset_bytes}, {len_bytes} bytes) lies beyond the device's \
         {capacity_bytes} logical bytes{hint}"
    )]
    PastCapacity {
        what: String,
        offset_bytes: u64,
        len_bytes: u64,
        capacity_bytes: u64,
        hint: &'static str,
    },

    #[error("simulation stalled: {0}")]
    Stalled(String),

    #[error("backing store: {0}")]
    Store(String),

    #[error("kernel: {0}")]
    Kernel(String),

    #[error("data verification failed: {0}")]
    Verification(String),

    #[error("accelerator: {0}")]
    Accel(#[from] nearflash_accel::AccelError),

    #[error(
        "preset {preset} has no [accel] table: `run` needs the accelerator's LWPs, DDR3L and PCIe"
    )]
    NoAccel { preset: String },

    #[error(
        "preset {preset} has no [{table}] table: `run --system simd` needs the host \
         ([host]) and its SSD ([ssd_flash], [ssd_ftl])"
    )]
    NoHost { preset: String, table: &'static str },

    #[error("active flash: {0}")]
    ActiveFlash(#[from] nearflash_activeflash::ActiveFlashError),

    #[error("preset {preset} has no [active_flash] table: Active Flash needs the controller and host engines")]
    NoActiveFlash { preset: String },

    #[error("report: {0}")]
    Report(#[from] nearflash_report::ReportError),
}
