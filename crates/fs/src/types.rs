//! The file system's vocabulary: inode numbers and block addresses as newtypes, the caller's
//! identity, file kinds and modes, open flags, file handles, and what `stat` and `readdir`
//! return. Nothing here does I/O.

use serde::Serialize;
use std::fmt;

/// File-system block size: every on-disk structure is addressed in these.
pub const BLOCK_BYTES: usize = 4096;
/// `BLOCK_BYTES` as a u64, for byte arithmetic.
pub const BLOCK_BYTES_U64: u64 = BLOCK_BYTES as u64;

/// An inode number. 0 is "no inode"; the root directory is [`ROOT_INO`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Ino(pub u32);

/// The root directory's inode.
pub const ROOT_INO: Ino = Ino(1);

impl fmt::Display for Ino {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inode {}", self.0)
    }
}

/// A file-system block address (a 4 KiB unit from the start of the device).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BlockNo(pub u32);

impl BlockNo {
    /// Byte offset of the block on the device.
    pub fn offset_bytes(self) -> u64 {
        u64::from(self.0) * BLOCK_BYTES_U64
    }
}

impl fmt::Display for BlockNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {}", self.0)
    }
}

/// Who performs an operation (POSIX credentials without supplementary groups). uid 0 is
/// root: it passes every read/write/search permission check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Caller {
    pub uid: u32,
    pub gid: u32,
}

impl Caller {
    pub const ROOT: Caller = Caller { uid: 0, gid: 0 };

    pub fn is_root(self) -> bool {
        self.uid == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Dir,
}

impl FileKind {
    /// The POSIX type bits (`S_IFREG`, `S_IFDIR`) stored in an inode's mode.
    pub fn type_bits(self) -> u16 {
        match self {
            FileKind::File => 0o100_000,
            FileKind::Dir => 0o040_000,
        }
    }

    pub fn from_mode(mode: u16) -> Option<FileKind> {
        match mode & 0o170_000 {
            0o100_000 => Some(FileKind::File),
            0o040_000 => Some(FileKind::Dir),
            _ => None,
        }
    }
}

/// Permission bits a caller may set (rwx for owner, group, other; no setuid/sticky).
pub const PERM_MASK: u16 = 0o777;

/// What a caller wants to do with an inode, for permission checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Search a directory (traverse it in a path).
    Search,
}

/// How a file is opened (POSIX `O_*` flags). At least one of `read`/`write` must be set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenFlags {
    pub read: bool,
    pub write: bool,
    /// Every write goes to the end of the file (`O_APPEND`).
    pub append: bool,
    /// Cut the file to zero bytes on open (`O_TRUNC`; needs `write`).
    pub truncate: bool,
    /// Create the file if it does not exist (`O_CREAT`).
    pub create: bool,
    /// With `create`: fail if the file exists (`O_EXCL`).
    pub excl: bool,
}

impl OpenFlags {
    pub const READ: OpenFlags = OpenFlags {
        read: true,
        write: false,
        append: false,
        truncate: false,
        create: false,
        excl: false,
    };
    pub const WRITE: OpenFlags = OpenFlags {
        read: false,
        write: true,
        append: false,
        truncate: false,
        create: false,
        excl: false,
    };
    /// Create or truncate for writing (`open(path, O_WRONLY|O_CREAT|O_TRUNC)`).
    pub const CREATE_TRUNC: OpenFlags = OpenFlags {
        read: false,
        write: true,
        append: false,
        truncate: true,
        create: true,
        excl: false,
    };
}

/// An open file, returned by `Open` and named by `Read`/`Write`/`Fsync`/`Close`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Fh(pub u32);

/// What `stat` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stat {
    pub ino: Ino,
    pub kind: FileKind,
    /// Permission bits (`mode & 0o777`).
    pub perm: u16,
    pub uid: u32,
    pub gid: u32,
    pub size_bytes: u64,
    pub link_count: u16,
    /// Blocks allocated to the file (data, not counting its extent block).
    pub blocks: u64,
    pub mtime_ns: u64,
    pub ctime_ns: u64,
    /// The append-only attribute (`chattr +a`).
    pub append_only: bool,
}

/// A run of a file's bytes on the device (what `FIEMAP`/`filefrag` reports): file bytes
/// `file_offset_bytes..+len_bytes` live at device bytes `device_offset_bytes..+len_bytes`.
/// Whole blocks: the last extent of a file may reach past its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FileExtent {
    pub file_offset_bytes: u64,
    pub device_offset_bytes: u64,
    pub len_bytes: u64,
}

/// One entry of `readdir` (`.` and `..` included, first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DirEntry {
    pub name: String,
    pub ino: Ino,
    pub kind: FileKind,
}
