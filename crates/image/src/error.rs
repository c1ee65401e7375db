//! Every way an image operation fails. Each message names the image (or the host path) and
//! the problem; nothing here panics on a bad file.

use nearflash_flash::StoreError;
use nearflash_fs::HostError;
use thiserror::Error;

/// Why an image could not be created, opened or operated on. A message about the image names
/// it (`image PATH: ...`), one about a host file names that (`host file PATH: ...`).
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
    #[error("image header: preset to TOML: {0}")]
    PresetToToml(#[source] toml::ser::Error),

    /// The preset's TOML is larger than the header region.
    #[error("image header: the preset does not fit the image header (1 MiB)")]
    PresetTooLarge,

    /// The file does not start with the image magic.
    #[error("image {image}: not a nearflash image (bad magic)")]
    BadMagic {
        /// The image's path.
        image: String,
    },

    /// The header's preset length runs past the header region.
    #[error("image {image}: corrupt header (preset length {preset_len_bytes})")]
    CorruptHeader {
        /// The image's path.
        image: String,
        /// The length the header claims.
        preset_len_bytes: u64,
    },

    /// The file is shorter than the layout its preset describes (cut short by a copy or a
    /// full disk).
    #[error(
        "image {image}: truncated image ({len_bytes} bytes, its preset's layout needs \
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
    #[error("image {image}: preset is not UTF-8")]
    PresetNotUtf8 {
        /// The image's path.
        image: String,
    },

    /// The preset's flash or FTL configuration refused by the device.
    #[error("image device: {0}")]
    Format(#[source] nearflash_flash::ConfigError),

    /// The FTL could not be recovered from the image's pages.
    #[error("image {image}: FTL recovery: {source}")]
    Recovery {
        /// The image's path.
        image: String,
        /// Why recovery failed.
        #[source]
        source: nearflash_ftl::recovery::RecoveryError,
    },

    /// The file system refused its configuration.
    #[error("image file system: {0}")]
    FsConfig(#[source] HostError),

    /// A file-system operation failed.
    #[error("image {image}: {source}")]
    Op {
        /// The image's path.
        image: String,
        /// The file system's error.
        #[source]
        source: HostError,
    },

    /// Reading a file in the image failed (e.g. a damaged page: an integrity error), at the
    /// first failing 4 KiB block of the file.
    #[error("image {image}: reading {path} at byte {offset_bytes}: {source}")]
    ReadFile {
        /// The image's path.
        image: String,
        /// The file, as the image names it.
        path: String,
        /// Where in the file the first unreadable block starts.
        offset_bytes: u64,
        /// The file system's error.
        #[source]
        source: HostError,
    },

    /// Reading or writing the image's pages failed (the page store's first error).
    #[error("image pages: {0}")]
    Store(#[source] StoreError),

    /// A file-system operation answered with another kind of reply than asked for.
    #[error("image file system: {0}")]
    UnexpectedReply(&'static str),

    /// A host path to import has no final name component that is UTF-8 (e.g. `..`).
    #[error("host file {path}: no usable file name")]
    NoFileName {
        /// The host path.
        path: String,
    },

    /// Another process holds the image's lock: a writer (or, for a writer, any user).
    #[error(
        "image {image} is in use by {}: {}",
        holder.map_or_else(|| "another process".to_string(), |p| format!("PID {p}")),
        if *writing { "another command is writing it" } else { "one writer at a time" }
    )]
    InUse {
        /// The image's path.
        image: String,
        /// The holder's PID, when `/proc/locks` names it.
        holder: Option<u32>,
        /// Whether the holder is a writer (a reader was refused).
        writing: bool,
    },

    /// The file is too short to be an image (empty, or cut before its header's end).
    #[error(
        "image {image}: not a nearflash image ({len_bytes} bytes; an image starts with a \
         {header_bytes}-byte header, made by `nearflash fs mkfs`)"
    )]
    TooShort {
        /// The image's path.
        image: String,
        /// The file's length.
        len_bytes: u64,
        /// The header's length.
        header_bytes: u64,
    },

    /// An export would overwrite an existing host file (without `--force`).
    #[error("host file {path} exists: not overwritten (use --force to replace it)")]
    HostExists {
        /// The host path.
        path: String,
    },

    /// `rm` of a directory without `-r`.
    #[error("image {image}: {path} is a directory (use rm -r)")]
    IsDirectory {
        /// The image's path.
        image: String,
        /// The directory.
        path: String,
    },

    /// A host directory entry to import has a name that is not UTF-8.
    #[error("host file {path}: name is not UTF-8")]
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
