//! Why `serve` could not start or stop cleanly; each message names the path and what to do.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LiveError {
    #[error(transparent)]
    Image(#[from] nearflash_image::ImageError),
    #[error(transparent)]
    Preset(#[from] nearflash_preset::PresetError),
    #[error("mount point {0}: no such directory (create it first)")]
    MountPointMissing(String),
    #[error("mount point {0}: not a directory")]
    MountPointNotDir(String),
    #[error("mount point {path}: busy ({why})")]
    MountPointBusy { path: String, why: String },
    #[error("FUSE unavailable: {0}")]
    FuseUnavailable(String),
    #[error("mounting {path}: {source}")]
    Mount {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("unmounting {path}: {source}")]
    Unmount {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("signal handler: {0}")]
    Signal(#[source] std::io::Error),
    #[error("device thread: {0}")]
    Thread(String),
}
