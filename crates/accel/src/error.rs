//! The crate's one error type: everything a caller can get wrong (a bad config field, an
//! unknown kernel, workload or scheduler, a dataset that does not fit the device) is a typed
//! value whose message names the field or value involved.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum AccelError {
    #[error("accel.{field}: {reason}")]
    Config { field: &'static str, reason: String },

    #[error(transparent)]
    Host(#[from] nearflash_host::HostError),

    #[error("SIMD's SSD: {0}")]
    Ssd(#[from] nearflash_ssd::SsdError),

    #[error(
        "unknown system `{name}`; expected one of: simd, inter-st, inter-dy, intra-io, intra-o3"
    )]
    UnknownScheduler { name: String },

    #[error(transparent)]
    UnknownFidelity(#[from] nearflash_sim::UnknownFidelity),

    #[error("unknown workload `{name}`; expected a kernel name ({kernels}) or mx1..mx14")]
    UnknownWorkload { name: String, kernels: String },

    #[error("kernel: {0}")]
    Kernel(#[from] nearflash_kernels::KernelError),

    #[error(
        "the workload's data sections need {needed_bytes} bytes of flash but the device has \
         {capacity_bytes} logical bytes"
    )]
    DoesNotFit {
        needed_bytes: u64,
        capacity_bytes: u64,
    },

    #[error(
        "SIMD: kernel {kernel}'s microblock {microblock} needs {needed_bytes} bytes of DDR3L at \
         once but {budget_bytes} are left beside the kernel description; raise accel.ddr_bytes"
    )]
    SimdUnitTooLarge {
        kernel: &'static str,
        microblock: usize,
        needed_bytes: u64,
        budget_bytes: u64,
    },

    #[error("kernel {kernel}: microblock {microblock} has zero screens")]
    ZeroScreens { kernel: String, microblock: usize },

    #[error("kernel {kernel} has no microblocks")]
    NoMicroblocks { kernel: String },

    #[error(
        "the preconditioned device was written for another {differs}: a run can start only \
         from its own workload's preconditioning"
    )]
    NotPreconditionedFor { differs: &'static str },

    #[error("flash device configuration: {0}")]
    DeviceConfig(#[from] nearflash_flash::ConfigError),

    #[error("flash device: {op:?} at byte {offset_bytes}: {source}")]
    Io {
        op: nearflash_ftl::BlockOp,
        offset_bytes: u64,
        #[source]
        source: nearflash_ftl::IoError,
    },

    #[error("functional fidelity: reading {section} of instance {instance} back: {source}")]
    ReadBack {
        section: &'static str,
        instance: usize,
        #[source]
        source: nearflash_ftl::IoError,
    },

    #[error("{what}: {stall}")]
    Stalled {
        what: &'static str,
        stall: nearflash_sim::Stall,
    },

    #[error(
        "functional fidelity: {instances} instances share flash with earlier ones for lack of \
         space (their inputs would be overwritten); use a smaller dataset"
    )]
    FunctionalReuse { instances: usize },

    #[error(
        "functional fidelity: the run would hold about {needed_mib} MiB of data in memory, \
         above the limit of {max_mib} MiB; use a smaller dataset or raise the limit"
    )]
    FunctionalTooLarge { needed_mib: u64, max_mib: u64 },

    #[error("kernel {kernel}: data section `{section}`: {reason}")]
    SectionImage {
        kernel: &'static str,
        section: &'static str,
        reason: String,
    },

    #[error(
        "functional verification failed for {failed} of {} instances; first: instance \
         {instance}: {first}", checks.len()
    )]
    Verification {
        failed: usize,
        instance: usize,
        first: nearflash_kernels::KernelError,
        /// Every instance's verdict, for a table.
        checks: Vec<crate::functional::InstanceCheck>,
    },
}
