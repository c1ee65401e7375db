//! Every way an INSIDER operation fails. Expected failures (a denied permission, an unknown
//! path, a faulting drive program) are values of this enum, never panics.

use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq)]
pub enum InsiderError {
    #[error("config field '{field}': {reason}")]
    Config { field: &'static str, reason: String },
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{path}: already exists")]
    Exists { path: String },
    #[error("{path}: not a directory")]
    NotADirectory { path: String },
    #[error("{path}: is a directory")]
    IsADirectory { path: String },
    #[error("{path}: permission denied for user {login} ({needed})")]
    PermissionDenied {
        path: String,
        login: String,
        needed: &'static str,
    },
    #[error("{path}: operation not permitted: the file is append-only")]
    AppendOnly { path: String },
    #[error("unknown user id {uid}")]
    UnknownUser { uid: u32 },
    #[error("{vpath}: no virtual file of that name is registered for user {login}")]
    UnknownVirtualPath { vpath: String, login: String },
    #[error("{vpath}: already registered")]
    VirtualExists { vpath: String },
    #[error("unknown drive program '{name}'")]
    UnknownProgram { name: String },
    #[error("every application slot is busy ({slots} slots)")]
    NoFreeSlot { slots: u32 },
    #[error("bad file descriptor {fd}")]
    BadDescriptor { fd: u32 },
    #[error("descriptor {fd} was opened {mode}: {op} is not allowed")]
    WrongMode {
        fd: u32,
        mode: &'static str,
        op: &'static str,
    },
    #[error("{range} is outside {path} ({size_bytes} bytes)")]
    OutOfFile {
        path: String,
        range: String,
        size_bytes: u64,
    },
    #[error("device out of space: {needed_bytes} bytes requested")]
    NoSpace { needed_bytes: u64 },
    #[error("I/O error on descriptor {fd}: drive program {program} failed: {reason}")]
    ProgramFault {
        fd: u32,
        program: String,
        reason: String,
    },
    #[error("application: {0}")]
    App(String),
    #[error("{app}: output differs from the reference: {reason}")]
    Verification { app: String, reason: String },
    #[error("drive configuration: {0}")]
    DriveConfig(#[from] nearflash_flash::ConfigError),
    #[error("device file system configuration: {0}")]
    FsConfig(#[from] nearflash_fs::ConfigError),
    #[error("host: {0}")]
    Host(#[from] nearflash_host::HostError),
    #[error("the drive's NVMe front end: {0}")]
    Nvme(#[from] nearflash_nvme::NvmeError),
    #[error("the simulation stalled: {0}")]
    Stalled(#[from] nearflash_sim::Stall),
    #[error("{vpath}: its application slot was released")]
    SlotReleased { vpath: String },
    #[error("firmware write to the drive: {0}")]
    FirmwareWrite(#[source] nearflash_ftl::IoError),
    #[error("{max} calls are already in flight")]
    TooManyCalls { max: usize },
    #[error("device file system: {0}")]
    Fs(#[from] nearflash_fs::FsError),
    #[error("malformed mapping file {path}: {reason}")]
    MappingFile { path: String, reason: String },
}
