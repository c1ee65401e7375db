//! Every way an image operation fails. Each message names the image (or the host path) and
//! the problem; nothing here panics on a bad file.

use nearflash_flash::StoreError;
use nearflash_fs::HostError;
use thiserror::Error;

/// Why an image could not be created, opened or operated on. Messages keep the CLI's wording
/// (`backing store: ...`, `image PATH: ...`).
#[derive(Debug, Error)]
pub enum ImageError {
    /// The preset in the image's header does not parse or validate.
    #[error(transparent)]
    Preset(#[from] nearflash_preset::PresetError),

    /// Reading or writing the image, or a host file or directory.
    #[error("{what}: {source}")]
    Io {
        /// The file or directory, as the message names it.
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The preset could not be written as TOML for the header.
    #[error("backing store: preset to TOML: {0}")]
    PresetToToml(#[source] toml::ser::Error),

    /// The preset's TOML is larger than the header region.
    #[error("backing store: the preset does not fit the image header")]
    PresetTooLarge,

    /// The file does not start with the image magic.
    #[error("backing store: {image} is not a nearflash image (bad magic)")]
    BadMagic {
        /// The image's path.
        image: String,
    },

    /// The header's preset length runs past the header region.
    #[error("backing store: {image}: corrupt header (preset length {preset_len_bytes})")]
    CorruptHeader {
        /// The image's path.
        image: String,
        /// The length the header claims.
        preset_len_bytes: u64,
    },

    /// The file is shorter than the layout its preset describes (cut short by a copy or a
    /// full disk).
    #[error(
        "backing store: {image}: truncated image ({len_bytes} bytes, its preset's layout needs \
         {expected_bytes})"
    )]
    Truncated {
        /// The image's path.
        image: String,
        /// The file's length.
        len_bytes: u64,
        /// The length of the layout its preset describes.
        expected_bytes: u64,
    },

    /// The header's preset is not UTF-8 text.
    #[error("backing store: {image}: preset is not UTF-8")]
    PresetNotUtf8 {
        /// The image's path.
        image: String,
    },

    /// The preset's flash or FTL configuration refused by the device.
    #[error("backing store: {0}")]
    Format(#[source] nearflash_flash::ConfigError),

    /// The FTL could not be recovered from the image's pages.
    #[error("backing store: {image}: FTL recovery: {source}")]
    Recovery {
        /// The image's path.
        image: String,
        /// Why recovery failed.
        #[source]
        source: nearflash_ftl::recovery::RecoveryError,
    },

    /// The file system refused its configuration.
    #[error("backing store: {0}")]
    FsConfig(#[source] HostError),

    /// A file-system operation failed.
    #[error("backing store: {image}: {source}")]
    Op {
        /// The image's path.
        image: String,
        /// The file system's error.
        #[source]
        source: HostError,
    },

    /// Reading or writing the image's pages failed (the page store's first error).
    #[error("backing store: {0}")]
    Store(#[source] StoreError),

    /// A file-system operation answered with another kind of reply than asked for.
    #[error("backing store: {0}")]
    UnexpectedReply(&'static str),

    /// A host path to import has no final name component that is UTF-8 (e.g. `..`).
    #[error("backing store: {path}: no usable file name")]
    NoFileName {
        /// The host path.
        path: String,
    },

    /// A host directory entry to import has a name that is not UTF-8.
    #[error("backing store: {path}: name is not UTF-8")]
    NameNotUtf8 {
        /// The host path of the entry.
        path: String,
    },
}

impl ImageError {
    /// Wraps an I/O error with what was being read or written.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ImageError {
        let what = what.into();
        move |source| ImageError::Io { what, source }
    }

    /// An owned copy of the page store's error (the store keeps its own).
    pub(crate) fn store(e: &StoreError) -> ImageError {
        let StoreError::Io { path, source } = e;
        ImageError::Store(StoreError::Io {
            path: path.clone(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        })
    }
}
