//! The operations, each an `async fn` over `Cx` that awaits block I/O. One operation runs at
//! a time (a file-system-wide lock), so an operation sees no interleaving; each checks every
//! precondition (permissions, names, free space) before it changes anything, so a failed
//! operation leaves no trace. Namespace and attribute changes, fsync and sync commit the
//! journal before they complete; writes leave dirty blocks in the cache.

mod dir;
mod file;
pub use file::FALLOCATE_BLOCKS_MAX;
mod journal;
mod meta;
mod ns;
mod path;

use crate::exec::Cx;
use crate::format::superblock::FormatOptions;
use crate::fsck::FsckReport;
use crate::types::{Caller, DirEntry, Fh, FileExtent, OpenFlags, Stat};
use crate::FsError;

/// An operation on the file system. Paths are absolute (`/a/b`); `.` and `..` are not
/// accepted as path components (readdir lists them).
#[derive(Clone, Debug)]
pub enum FsOp {
    /// mkfs: lay out an empty file system on the device and mount it.
    Format(FormatOptions),
    /// Mount: read the superblock and replay a committed journal transaction.
    Mount,
    /// Open (and with `flags.create` create) a regular file; `perm` is used on creation.
    Open {
        path: String,
        flags: OpenFlags,
        perm: u16,
    },
    Close(Fh),
    /// Reads up to `len_bytes` at `offset_bytes` (fewer at end of file).
    Read {
        fh: Fh,
        offset_bytes: u64,
        len_bytes: u64,
    },
    /// Writes at `offset_bytes` (at the end of the file if opened with `append`). At most
    /// `write_bytes_max` are written; the reply says how many.
    Write {
        fh: Fh,
        offset_bytes: u64,
        data: Vec<u8>,
    },
    Truncate {
        path: String,
        size_bytes: u64,
    },
    /// Allocates blocks under `offset_bytes..+len_bytes` and raises the size to its end
    /// (`fallocate` mode 0); at most [`FALLOCATE_BLOCKS_MAX`] blocks per call: the reply
    /// (`Written`) says how many bytes of the range are covered.
    Fallocate {
        fh: Fh,
        offset_bytes: u64,
        len_bytes: u64,
    },
    /// Sets the size of a file whose data the caller writes to its blocks itself (found with
    /// `Extents`, allocated with `Fallocate`): no byte is zeroed; blocks wholly past a
    /// smaller size are freed. Needs a handle open for writing; commits with the next commit.
    SetSize {
        fh: Fh,
        size_bytes: u64,
    },
    /// The file's extents as device byte ranges (`FIEMAP`), for a device that reads the
    /// file's blocks itself (INSIDER's drive).
    Extents(Fh),
    /// Sets or clears the append-only attribute (`chattr ±a`; owner or root).
    SetAppendOnly {
        path: String,
        on: bool,
    },
    /// Atomically renames, replacing an existing target (a file, or an empty directory when
    /// the source is a directory).
    Rename {
        from: String,
        to: String,
    },
    Unlink(String),
    Mkdir {
        path: String,
        perm: u16,
    },
    Rmdir(String),
    Readdir(String),
    Stat(String),
    /// Changes permission bits (owner or root).
    Chmod {
        path: String,
        perm: u16,
    },
    /// Changes owner and group (root only).
    Chown {
        path: String,
        uid: u32,
        gid: u32,
    },
    /// Makes the file's data and metadata durable (commits the whole journal transaction).
    Fsync(Fh),
    /// Makes everything durable.
    Sync,
    /// Commits, then checks the on-device image (`crate::fsck`).
    Fsck,
    /// Drops every clean block from the buffer cache (`drop_caches`), so what follows reads
    /// from the device; dirty blocks stay.
    DropCaches,
}

impl FsOp {
    /// Operations that commit the journal before they complete (the durability promise:
    /// a namespace or attribute change is durable when its operation completes).
    /// Operations that only read: a failed read leaves nothing half-applied.
    fn read_only(&self) -> bool {
        match self {
            FsOp::Open { flags, .. } => !(flags.create || flags.truncate),
            FsOp::Read { .. }
            | FsOp::Extents(_)
            | FsOp::Readdir(_)
            | FsOp::Stat(_)
            | FsOp::Fsck => true,
            _ => false,
        }
    }

    fn commits(&self) -> bool {
        match self {
            FsOp::Open { flags, .. } => flags.create || flags.truncate,
            FsOp::Truncate { .. }
            | FsOp::Rename { .. }
            | FsOp::Unlink(_)
            | FsOp::Mkdir { .. }
            | FsOp::Rmdir(_)
            | FsOp::Chmod { .. }
            | FsOp::Chown { .. }
            | FsOp::SetAppendOnly { .. }
            | FsOp::Fsync(_)
            | FsOp::Sync => true,
            FsOp::Format(_)
            | FsOp::Mount
            | FsOp::Close(_)
            | FsOp::Read { .. }
            | FsOp::Write { .. }
            | FsOp::Fallocate { .. }
            | FsOp::SetSize { .. }
            | FsOp::Extents(_)
            | FsOp::Readdir(_)
            | FsOp::Stat(_)
            | FsOp::DropCaches
            | FsOp::Fsck => false,
        }
    }
}

/// What a successful operation answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsReply {
    Done,
    Opened(Fh),
    Data(Vec<u8>),
    Written(u64),
    Stat(Stat),
    Entries(Vec<DirEntry>),
    Extents(Vec<FileExtent>),
    Fsck(FsckReport),
}

/// Runs one operation to its end.
pub(crate) async fn run(cx: &Cx, caller: Caller, op: FsOp) -> Result<FsReply, FsError> {
    cx.cpu(cx.cfg.op_cpu_ns).await;
    if let Some(e) = cx.st.borrow().poisoned.clone() {
        return Err(e);
    }
    match op {
        FsOp::Format(opts) => return journal::format(cx, opts).await.map(|()| FsReply::Done),
        FsOp::Mount => return journal::mount(cx).await.map(|()| FsReply::Done),
        _ => {}
    }
    cx.sb()?;
    let commits = op.commits();
    let read_only = op.read_only();
    let write_errors = cx.st.borrow().stats.write_errors;
    let result = dispatch(cx, caller, op).await;
    if let Err(e @ (FsError::Io(_) | FsError::Corrupt(_))) = &result {
        // Half-applied in memory: never commit it. A read-only operation whose reads failed
        // changed nothing (a damaged block of one file must not make every other unreadable).
        if !read_only || cx.st.borrow().stats.write_errors != write_errors {
            cx.st.borrow_mut().poisoned = Some(e.clone());
        }
        return result;
    }
    let over_threshold = {
        let st = cx.st.borrow();
        let j = st.mounted.as_ref().map_or(0, |m| m.sb.journal_blocks) as usize;
        st.cache.dirty_meta() > journal::commit_threshold(j)
    };
    if commits || over_threshold {
        if let Err(e) = journal::commit(cx).await {
            cx.st.borrow_mut().poisoned = Some(e.clone());
            return Err(e);
        }
    }
    result
}

async fn dispatch(cx: &Cx, caller: Caller, op: FsOp) -> Result<FsReply, FsError> {
    match op {
        FsOp::Format(_) | FsOp::Mount => unreachable!("handled by run"),
        FsOp::Open { path, flags, perm } => file::open(cx, caller, &path, flags, perm)
            .await
            .map(FsReply::Opened),
        FsOp::Close(fh) => file::close(cx, fh).map(|()| FsReply::Done),
        FsOp::Read {
            fh,
            offset_bytes,
            len_bytes,
        } => file::read(cx, fh, offset_bytes, len_bytes)
            .await
            .map(FsReply::Data),
        FsOp::Write {
            fh,
            offset_bytes,
            data,
        } => file::write(cx, fh, offset_bytes, &data)
            .await
            .map(FsReply::Written),
        FsOp::Truncate { path, size_bytes } => file::truncate_path(cx, caller, &path, size_bytes)
            .await
            .map(|()| FsReply::Done),
        FsOp::Fallocate {
            fh,
            offset_bytes,
            len_bytes,
        } => file::fallocate(cx, fh, offset_bytes, len_bytes)
            .await
            .map(FsReply::Written),
        FsOp::Extents(fh) => file::extents(cx, fh).await.map(FsReply::Extents),
        FsOp::DropCaches => {
            cx.st.borrow_mut().cache.drop_clean();
            Ok(FsReply::Done)
        }
        FsOp::SetSize { fh, size_bytes } => file::set_size_owned(cx, fh, size_bytes)
            .await
            .map(|()| FsReply::Done),
        FsOp::SetAppendOnly { path, on } => ns::set_append_only(cx, caller, &path, on)
            .await
            .map(|()| FsReply::Done),
        FsOp::Rename { from, to } => ns::rename(cx, caller, &from, &to)
            .await
            .map(|()| FsReply::Done),
        FsOp::Unlink(path) => ns::unlink(cx, caller, &path).await.map(|()| FsReply::Done),
        FsOp::Mkdir { path, perm } => ns::mkdir(cx, caller, &path, perm)
            .await
            .map(|()| FsReply::Done),
        FsOp::Rmdir(path) => ns::rmdir(cx, caller, &path).await.map(|()| FsReply::Done),
        FsOp::Readdir(path) => ns::readdir(cx, caller, &path).await.map(FsReply::Entries),
        FsOp::Stat(path) => ns::stat(cx, caller, &path).await.map(FsReply::Stat),
        FsOp::Chmod { path, perm } => ns::chmod(cx, caller, &path, perm)
            .await
            .map(|()| FsReply::Done),
        FsOp::Chown { path, uid, gid } => ns::chown(cx, caller, &path, uid, gid)
            .await
            .map(|()| FsReply::Done),
        FsOp::Fsync(fh) => file::handle_inode(cx, fh).await.map(|_| FsReply::Done),
        FsOp::Sync => Ok(FsReply::Done),
        FsOp::Fsck => {
            journal::commit(cx).await?;
            crate::fsck::check(cx).await.map(FsReply::Fsck)
        }
    }
}
