//! Why a benchmark could not run or was cut short, each message naming the problem (the flag
//! of the front end where one is at fault).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum IoBenchError {
    #[error("invalid workload: {0}")]
    Workload(String),

    /// Writes cannot be spread over placement handles as asked (`--placement-handles`).
    #[error("{0}")]
    Placement(String),

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

    #[error("trace {path}: {source}")]
    TraceOpen {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// Boxed: a trace error carries a line's text and 128-bit timestamps.
    #[error("trace {path}: {source}")]
    Trace {
        path: String,
        #[source]
        source: Box<nearflash_iotrace::TraceError>,
    },

    #[error("preset {preset}: {source}")]
    Format {
        preset: String,
        #[source]
        source: nearflash_flash::ConfigError,
    },

    #[error("preset {preset}: {source}")]
    Nvme {
        preset: String,
        #[source]
        source: nearflash_nvme::NvmeError,
    },
    #[error("preset {preset}: {source}")]
    Ssd {
        preset: String,
        #[source]
        source: nearflash_ssd::SsdError,
    },

    #[error("backing store: {0}")]
    Store(#[from] nearflash_flash::StoreError),

    /// The store failed during the run (its error stays with the store; this is its message).
    #[error("backing store: {0}")]
    StoreFailed(String),

    #[error("simulation stalled: {0}")]
    Stalled(String),

    #[error("data verification failed: {0}")]
    Verification(String),
}
