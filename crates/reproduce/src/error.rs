//! Why a reproduction could not run, each message naming the problem (the flag where one is
//! at fault); the lower layers' errors are carried whole.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ReproduceError {
    #[error(transparent)]
    Preset(#[from] nearflash_preset::PresetError),

    /// An option that does not fit the paper (an unknown workload, a flag of another paper).
    #[error("{0}")]
    Invalid(String),

    #[error("accelerator: {0}")]
    Accel(#[from] nearflash_accel::AccelError),

    #[error("kernel: {0}")]
    Kernel(#[from] nearflash_kernels::KernelError),

    #[error("active flash: {0}")]
    ActiveFlash(#[from] nearflash_activeflash::ActiveFlashError),

    #[error("{what}: {source}")]
    Insider {
        what: String,
        #[source]
        source: nearflash_insider::InsiderError,
    },

    #[error("application: {0}")]
    App(#[from] nearflash_iscapps::AppError),

    #[error("hayagui: the VE's files: {0}")]
    HayaguiFiles(#[from] nearflash_hayagui::FileError),

    #[error("hayagui: file operations: {0}")]
    HayaguiFileOps(#[from] nearflash_hayagui::fileops::FileOpsError),

    #[error("hayagui: db_bench: {0}")]
    HayaguiDbBench(#[from] nearflash_hayagui::dbbench::DbBenchError),

    #[error("hayagui: YCSB: {0}")]
    HayaguiYcsb(#[from] nearflash_kvbench::KvBenchError),

    #[error("hayagui: genome: {0}")]
    HayaguiGenome(#[from] nearflash_genome::GenomeError),

    /// A run's output disagrees with its independent reference.
    #[error("{what}: {reason}")]
    Disagrees { what: String, reason: String },

    /// Ctrl-C (the caller's interrupt check) stopped the simulations; nothing was computed.
    #[error("interrupted: the simulations were stopped before they finished")]
    Interrupted(#[from] nearflash_sim::interrupt::Interrupted),

    #[error("data verification failed: {what}: {source}")]
    Verification {
        what: String,
        #[source]
        source: nearflash_insider::InsiderError,
    },
}
