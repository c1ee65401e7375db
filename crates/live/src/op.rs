//! What crosses the channel between the FUSE threads and the device thread: a `LiveOp`
//! (a FUSE request in the device's terms: inode numbers, the caller, no reply object) and
//! what the device answers (`Answer`, or an `Errno`). Nothing here knows `fuser`, so the
//! device can be driven in-process by tests without a mount.

use nearflash_fs::{Caller, FileKind, Stat};

/// A FUSE inode number (the file system's own inode numbers, plus the virtual files').
pub type InodeNo = u64;

/// An errno value answered to the program (`libc::E*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

/// One request from the kernel, as the device thread executes it.
#[derive(Clone, Debug)]
pub enum LiveOp {
    Lookup {
        parent: InodeNo,
        name: String,
    },
    /// `fh`: the open handle `fstat` names (a virtual file's size is its run's output).
    Getattr {
        ino: InodeNo,
        fh: Option<u64>,
    },
    /// chmod / chown / truncate (times are accepted and not stored: see `device`).
    Setattr {
        ino: InodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
    },
    Mkdir {
        parent: InodeNo,
        name: String,
        mode: u32,
        umask: u32,
    },
    Unlink {
        parent: InodeNo,
        name: String,
    },
    Rmdir {
        parent: InodeNo,
        name: String,
    },
    /// `noreplace`: RENAME_NOREPLACE.
    Rename {
        parent: InodeNo,
        name: String,
        new_parent: InodeNo,
        new_name: String,
        noreplace: bool,
    },
    Open {
        ino: InodeNo,
        flags: i32,
    },
    Create {
        parent: InodeNo,
        name: String,
        mode: u32,
        umask: u32,
        flags: i32,
    },
    Read {
        ino: InodeNo,
        fh: u64,
        offset_bytes: u64,
        len_bytes: u32,
    },
    Write {
        ino: InodeNo,
        fh: u64,
        offset_bytes: u64,
        data: Vec<u8>,
    },
    Release {
        fh: u64,
    },
    Fsync {
        fh: u64,
    },
    Opendir {
        ino: InodeNo,
    },
    Readdir {
        fh: u64,
        offset: u64,
    },
    Releasedir {
        fh: u64,
    },
    Fsyncdir,
    Statfs,
}

impl LiveOp {
    /// The operation's name in the statistics.
    pub fn kind(&self) -> &'static str {
        match self {
            LiveOp::Lookup { .. } => "lookup",
            LiveOp::Getattr { .. } => "getattr",
            LiveOp::Setattr { .. } => "setattr",
            LiveOp::Mkdir { .. } => "mkdir",
            LiveOp::Unlink { .. } => "unlink",
            LiveOp::Rmdir { .. } => "rmdir",
            LiveOp::Rename { .. } => "rename",
            LiveOp::Open { .. } => "open",
            LiveOp::Create { .. } => "create",
            LiveOp::Read { .. } => "read",
            LiveOp::Write { .. } => "write",
            LiveOp::Release { .. } => "release",
            LiveOp::Fsync { .. } => "fsync",
            LiveOp::Opendir { .. } => "opendir",
            LiveOp::Readdir { .. } => "readdir",
            LiveOp::Releasedir { .. } => "releasedir",
            LiveOp::Fsyncdir => "fsyncdir",
            LiveOp::Statfs => "statfs",
        }
    }
}

/// A request with who sent it.
#[derive(Clone, Debug)]
pub struct Call {
    pub caller: Caller,
    pub op: LiveOp,
}

/// File attributes as the kernel is told them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub ino: InodeNo,
    pub kind: FileKind,
    pub perm: u16,
    pub uid: u32,
    pub gid: u32,
    pub size_bytes: u64,
    /// 512-byte units, as `stat(2)` counts.
    pub blocks_512: u64,
    pub link_count: u32,
    /// Simulated nanoseconds (the device's clock), shown as time since the Unix epoch.
    pub mtime_ns: u64,
    pub ctime_ns: u64,
}

impl Attr {
    pub fn from_stat(st: &Stat) -> Attr {
        Attr {
            ino: u64::from(st.ino.0),
            kind: st.kind,
            perm: st.perm,
            uid: st.uid,
            gid: st.gid,
            size_bytes: st.size_bytes,
            blocks_512: st.blocks * 8,
            link_count: u32::from(st.link_count),
            mtime_ns: st.mtime_ns,
            ctime_ns: st.ctime_ns,
        }
    }
}

/// One directory entry handed to `readdir`; `offset` is where the next call resumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirItem {
    pub ino: InodeNo,
    pub kind: FileKind,
    pub name: String,
    pub offset: u64,
}

/// What `statfs` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsSpace {
    pub blocks: u64,
    pub free_blocks: u64,
    pub inodes: u64,
    pub free_inodes: u64,
    pub block_bytes: u32,
    pub name_bytes_max: u32,
}

/// A successful answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Entry(Attr),
    Attr(Attr),
    /// `direct_io`: the kernel must not cache the file's pages (virtual and raw files).
    Opened {
        fh: u64,
        direct_io: bool,
    },
    Created {
        attr: Attr,
        fh: u64,
    },
    Data(Vec<u8>),
    Written(u32),
    Entries(Vec<DirItem>),
    Space(FsSpace),
    Done,
}
