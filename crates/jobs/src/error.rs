//! Every way a job can fail, each with a message that names the problem — the same messages
//! the CLI has always printed (the CLI carries this error whole; Python raises it as an
//! exception). The libraries' errors are carried whole.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum JobError {
    #[error(transparent)]
    Preset(#[from] nearflash_preset::PresetError),

    #[error(transparent)]
    IoBench(#[from] nearflash_iobench::IoBenchError),

    /// Boxed: the accelerator's errors make it the largest variant by far.
    #[error(transparent)]
    Reproduce(Box<nearflash_reproduce::ReproduceError>),

    #[error("{source_name}: {reason}")]
    Config { source_name: String, reason: String },

    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    Placement(#[from] nearflash_placement::PlacementError),

    #[error("invalid workload: {0}")]
    Workload(String),

    #[error("kernel: {0}")]
    Kernel(String),

    #[error("data verification failed: {0}")]
    Verification(String),

    /// Boxed: a verification failure carries every instance's verdict.
    #[error("accelerator: {0}")]
    Accel(Box<nearflash_accel::AccelError>),

    #[error("insider: {0}")]
    Insider(#[from] nearflash_insider::InsiderError),

    #[error("application: {0}")]
    App(#[from] nearflash_iscapps::AppError),

    #[error("report: {0}")]
    Report(#[from] nearflash_report::ReportError),

    #[error(transparent)]
    Fidelity(#[from] nearflash_sim::UnknownFidelity),

    /// Boxed: the drive's build errors are large.
    #[error("computational storage: {0}")]
    Cs(Box<nearflash_cs::session::SessionError>),

    #[error("active flash: {0}")]
    ActiveFlash(Box<nearflash_activeflash::ActiveFlashError>),

    #[error(transparent)]
    ProgramLoad(Box<nearflash_wasm::LoadError>),

    #[error(transparent)]
    ProgramRun(Box<nearflash_wasm::RunError>),

    #[error("hayagui: {0}")]
    HayaguiFile(Box<nearflash_hayagui::FileError>),

    #[error("fileops: {0}")]
    Fileops(Box<nearflash_hayagui::fileops::FileOpsError>),

    #[error("db_bench: {0}")]
    DbBench(Box<nearflash_hayagui::dbbench::DbBenchError>),

    #[error("{0}")]
    KvBench(Box<nearflash_kvbench::KvBenchError>),

    #[error("genome: {0}")]
    Genome(Box<nearflash_genome::GenomeError>),

    #[error(transparent)]
    Image(Box<nearflash_image::ImageError>),

    /// Options given as a document (Python keyword arguments, a sweep's parameters) that do
    /// not fit the job's options: an unknown name or a value of the wrong type.
    #[error("{job}: {reason}")]
    Options { job: &'static str, reason: String },
}

impl From<nearflash_accel::AccelError> for JobError {
    fn from(e: nearflash_accel::AccelError) -> Self {
        JobError::Accel(Box::new(e))
    }
}

impl From<nearflash_reproduce::ReproduceError> for JobError {
    fn from(e: nearflash_reproduce::ReproduceError) -> Self {
        JobError::Reproduce(Box::new(e))
    }
}

impl From<nearflash_activeflash::ActiveFlashError> for JobError {
    fn from(e: nearflash_activeflash::ActiveFlashError) -> Self {
        JobError::ActiveFlash(Box::new(e))
    }
}

impl From<nearflash_wasm::LoadError> for JobError {
    fn from(e: nearflash_wasm::LoadError) -> Self {
        JobError::ProgramLoad(Box::new(e))
    }
}

impl From<nearflash_wasm::RunError> for JobError {
    fn from(e: nearflash_wasm::RunError) -> Self {
        JobError::ProgramRun(Box::new(e))
    }
}

impl From<nearflash_hayagui::FileError> for JobError {
    fn from(e: nearflash_hayagui::FileError) -> Self {
        JobError::HayaguiFile(Box::new(e))
    }
}

impl From<nearflash_hayagui::fileops::FileOpsError> for JobError {
    fn from(e: nearflash_hayagui::fileops::FileOpsError) -> Self {
        JobError::Fileops(Box::new(e))
    }
}

impl From<nearflash_hayagui::dbbench::DbBenchError> for JobError {
    fn from(e: nearflash_hayagui::dbbench::DbBenchError) -> Self {
        JobError::DbBench(Box::new(e))
    }
}

impl From<nearflash_kvbench::KvBenchError> for JobError {
    fn from(e: nearflash_kvbench::KvBenchError) -> Self {
        JobError::KvBench(Box::new(e))
    }
}

impl From<nearflash_genome::GenomeError> for JobError {
    fn from(e: nearflash_genome::GenomeError) -> Self {
        JobError::Genome(Box::new(e))
    }
}

impl From<nearflash_image::ImageError> for JobError {
    fn from(e: nearflash_image::ImageError) -> Self {
        JobError::Image(Box::new(e))
    }
}
