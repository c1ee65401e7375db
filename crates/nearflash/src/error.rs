//! Every way a command can fail, each with a message that names the problem. `main` prints
//! the message and exits non-zero; nothing in the CLI panics on bad input. The libraries'
//! errors are carried whole.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CliError {
    #[error(transparent)]
    Preset(#[from] nearflash_preset::PresetError),

    #[error(transparent)]
    Image(#[from] nearflash_image::ImageError),

    #[error(transparent)]
    IoBench(#[from] nearflash_iobench::IoBenchError),

    #[error(transparent)]
    Fio(#[from] nearflash_fio::FioError),

    /// Boxed: the accelerator's errors make it the largest variant by far.
    #[error(transparent)]
    Reproduce(Box<nearflash_reproduce::ReproduceError>),

    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    Cs(#[from] nearflash_cs::sequence::OffloadError),
    #[error("cs script: {0}")]
    CsScript(Box<nearflash_cs::script::ScriptError>),

    #[error("invalid workload: {0}")]
    Workload(String),

    #[error("trace {path}: {source}")]
    Trace {
        path: String,
        #[source]
        source: nearflash_iotrace::TraceError,
    },

    /// Ctrl-C stopped the command's work (`interrupt::until_ctrl_c`); names what was left.
    #[error("interrupted (Ctrl-C): {0}")]
    Interrupted(&'static str),

    #[error("backing store: {0}")]
    Store(String),

    #[error("kernel: {0}")]
    Kernel(String),

    #[error("accelerator: {0}")]
    Accel(#[from] nearflash_accel::AccelError),

    #[error("active flash: {0}")]
    ActiveFlash(#[from] nearflash_activeflash::ActiveFlashError),

    #[error(transparent)]
    ProgramLoad(#[from] nearflash_wasm::LoadError),

    #[error(transparent)]
    ProgramRun(#[from] nearflash_wasm::RunError),

    #[error("insider: {0}")]
    Insider(#[from] nearflash_insider::InsiderError),

    /// Boxed: it carries the image's errors.
    #[error(transparent)]
    Live(Box<nearflash_live::LiveError>),

    /// A virtual-file request that the running server refused: its errno and message.
    #[error(
        "refused by the server: {message} [{}]",
        std::io::Error::from_raw_os_error(*errno)
    )]
    VfileRefused { errno: i32, message: String },

    /// `nearflash stats` read a file that is not a live server's statistics.
    #[error("{path}: not nearflash statistics: {source}")]
    StatsFile {
        path: String,
        #[source]
        source: serde_json::Error,
    },

    #[error("report: {0}")]
    Report(#[from] nearflash_report::ReportError),

    /// A job of the library every front end shares (`nearflash-jobs`), carried whole: its
    /// messages are the CLI's.
    #[error(transparent)]
    Job(#[from] nearflash_jobs::JobError),

    /// Boxed: it carries a job's error beside the point it stopped at.
    #[error(transparent)]
    Sweep(Box<nearflash_sweep::SweepError>),
}

impl From<nearflash_reproduce::ReproduceError> for CliError {
    fn from(e: nearflash_reproduce::ReproduceError) -> Self {
        CliError::Reproduce(Box::new(e))
    }
}

impl From<nearflash_cs::script::ScriptError> for CliError {
    fn from(e: nearflash_cs::script::ScriptError) -> Self {
        CliError::CsScript(Box::new(e))
    }
}
