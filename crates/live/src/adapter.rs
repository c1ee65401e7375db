//! The FUSE side: a `fuser::Filesystem` whose every callback turns the kernel's request into
//! a `LiveOp`, sends it with its reply object over the bounded channel to the device thread
//! and returns. The device thread answers through the reply object when the request
//! completes (at its simulated completion time under `--pace wall`). Nothing here touches
//! the model; a full channel blocks the FUSE thread (back-pressure), a closed one answers
//! `EIO`.

use crate::op::{Answer, Attr, Call, Errno, LiveOp};
use fuser::{
    FileAttr, FileHandle, FileType, FopenFlags, Generation, INodeNo, KernelConfig, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use nearflash_fs::{Caller, FileKind};
use std::ffi::OsStr;
use std::sync::mpsc::SyncSender;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may cache attributes and names: every change goes through this
/// mount, so the kernel's own updates keep its cache true.
const TTL: Duration = Duration::from_secs(1);

/// The cache time of `a`: none for the virtual entries, which change without the kernel
/// seeing it (the statistics grow; virtual files come and go through the control file, and
/// `fstat` of an open one asks its run's output size).
fn ttl(a: &Attr) -> Duration {
    if crate::device::is_virtual(a.ino) {
        Duration::ZERO
    } else {
        TTL
    }
}

/// The largest write the kernel sends in one request (the file system's `write_bytes_max`
/// is 1 MiB, so none is split further).
pub const MAX_WRITE_BYTES: u32 = 1 << 20;

/// A request and what to do with its answer.
pub struct Envelope {
    pub call: Call,
    /// When the FUSE thread received the request from the kernel (its arrival under
    /// `--pace wall`: the hop to the device thread is inside the simulated latency).
    pub received: std::time::Instant,
    pub reply: Box<dyn FnOnce(Result<Answer, Errno>) + Send>,
}

/// The `fuser` file system: a sender to the device thread.
pub struct Adapter {
    tx: SyncSender<Envelope>,
}

impl Adapter {
    pub fn new(tx: SyncSender<Envelope>) -> Adapter {
        Adapter { tx }
    }

    fn send(
        &self,
        req: &Request,
        op: LiveOp,
        reply: impl FnOnce(Result<Answer, Errno>) + Send + 'static,
    ) {
        let call = Call {
            caller: Caller {
                uid: req.uid(),
                gid: req.gid(),
            },
            op,
        };
        let env = Envelope {
            call,
            received: std::time::Instant::now(),
            reply: Box::new(reply),
        };
        if let Err(e) = self.tx.send(env) {
            (e.0.reply)(Err(Errno(libc::EIO)));
        }
    }
}

fn fuse_errno(e: Errno) -> fuser::Errno {
    fuser::Errno::from_i32(e.0)
}

/// An answer of the wrong kind: a bug in the device thread, reported to the program as EIO.
fn wrong_answer(a: &Answer) -> fuser::Errno {
    debug_assert!(false, "unexpected answer {a:?}");
    fuser::Errno::EIO
}

fn file_attr(a: &Attr) -> FileAttr {
    let t = |ns: u64| UNIX_EPOCH + Duration::from_nanos(ns);
    FileAttr {
        ino: INodeNo(a.ino),
        size: a.size_bytes,
        blocks: a.blocks_512,
        atime: t(a.mtime_ns),
        mtime: t(a.mtime_ns),
        ctime: t(a.ctime_ns),
        crtime: t(a.ctime_ns),
        kind: file_type(a.kind),
        perm: a.perm,
        nlink: a.link_count,
        uid: a.uid,
        gid: a.gid,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

fn file_type(k: FileKind) -> FileType {
    match k {
        FileKind::File => FileType::RegularFile,
        FileKind::Dir => FileType::Directory,
    }
}

fn name(n: &OsStr) -> Option<String> {
    n.to_str().map(str::to_string)
}

fn entry(reply: ReplyEntry) -> impl FnOnce(Result<Answer, Errno>) + Send {
    move |r| match r {
        Ok(Answer::Entry(a)) => reply.entry(&ttl(&a), &file_attr(&a), Generation(0)),
        Ok(a) => reply.error(wrong_answer(&a)),
        Err(e) => reply.error(fuse_errno(e)),
    }
}

fn attr(reply: ReplyAttr) -> impl FnOnce(Result<Answer, Errno>) + Send {
    move |r| match r {
        Ok(Answer::Attr(a)) => reply.attr(&ttl(&a), &file_attr(&a)),
        Ok(a) => reply.error(wrong_answer(&a)),
        Err(e) => reply.error(fuse_errno(e)),
    }
}

fn empty(reply: ReplyEmpty) -> impl FnOnce(Result<Answer, Errno>) + Send {
    move |r| match r {
        Ok(Answer::Done) => reply.ok(),
        Ok(a) => reply.error(wrong_answer(&a)),
        Err(e) => reply.error(fuse_errno(e)),
    }
}

fn opened(reply: ReplyOpen) -> impl FnOnce(Result<Answer, Errno>) + Send {
    move |r| match r {
        Ok(Answer::Opened { fh, direct_io }) => {
            let flags = if direct_io {
                FopenFlags::FOPEN_DIRECT_IO
            } else {
                FopenFlags::empty()
            };
            reply.opened(FileHandle(fh), flags)
        }
        Ok(a) => reply.error(wrong_answer(&a)),
        Err(e) => reply.error(fuse_errno(e)),
    }
}

impl fuser::Filesystem for Adapter {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Larger writes if the kernel allows them; its own limit otherwise.
        if let Err(max) = config.set_max_write(MAX_WRITE_BYTES) {
            let _ = config.set_max_write(max);
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, n: &OsStr, reply: ReplyEntry) {
        let Some(name) = name(n) else {
            return reply.error(fuser::Errno::ENOENT);
        };
        self.send(
            req,
            LiveOp::Lookup {
                parent: parent.0,
                name,
            },
            entry(reply),
        );
    }

    fn getattr(&self, req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let op = LiveOp::Getattr {
            ino: ino.0,
            fh: fh.map(|f| f.0),
        };
        self.send(req, op, attr(reply));
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let op = LiveOp::Setattr {
            ino: ino.0,
            mode,
            uid,
            gid,
            size,
        };
        self.send(req, op, attr(reply));
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        n: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let Some(name) = name(n) else {
            return reply.error(fuser::Errno::EINVAL);
        };
        let op = LiveOp::Mkdir {
            parent: parent.0,
            name,
            mode,
            umask,
        };
        self.send(req, op, entry(reply));
    }

    fn unlink(&self, req: &Request, parent: INodeNo, n: &OsStr, reply: ReplyEmpty) {
        let Some(name) = name(n) else {
            return reply.error(fuser::Errno::ENOENT);
        };
        self.send(
            req,
            LiveOp::Unlink {
                parent: parent.0,
                name,
            },
            empty(reply),
        );
    }

    fn rmdir(&self, req: &Request, parent: INodeNo, n: &OsStr, reply: ReplyEmpty) {
        let Some(name) = name(n) else {
            return reply.error(fuser::Errno::ENOENT);
        };
        self.send(
            req,
            LiveOp::Rmdir {
                parent: parent.0,
                name,
            },
            empty(reply),
        );
    }

    fn rename(
        &self,
        req: &Request,
        parent: INodeNo,
        n: &OsStr,
        new_parent: INodeNo,
        new_n: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let (Some(name), Some(new_name)) = (name(n), name(new_n)) else {
            return reply.error(fuser::Errno::EINVAL);
        };
        if flags.intersects(RenameFlags::RENAME_EXCHANGE | RenameFlags::RENAME_WHITEOUT) {
            return reply.error(fuser::Errno::EINVAL);
        }
        let op = LiveOp::Rename {
            parent: parent.0,
            name,
            new_parent: new_parent.0,
            new_name,
            noreplace: flags.contains(RenameFlags::RENAME_NOREPLACE),
        };
        self.send(req, op, empty(reply));
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let op = LiveOp::Open {
            ino: ino.0,
            flags: flags.0,
        };
        self.send(req, op, opened(reply));
    }

    fn read(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let op = LiveOp::Read {
            ino: ino.0,
            fh: fh.0,
            offset_bytes: offset,
            len_bytes: size,
        };
        self.send(req, op, move |r| match r {
            Ok(Answer::Data(d)) => reply.data(&d),
            Ok(a) => reply.error(wrong_answer(&a)),
            Err(e) => reply.error(fuse_errno(e)),
        });
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let op = LiveOp::Write {
            ino: ino.0,
            fh: fh.0,
            offset_bytes: offset,
            data: data.to_vec(),
        };
        self.send(req, op, move |r| match r {
            Ok(Answer::Written(n)) => reply.written(n),
            Ok(a) => reply.error(wrong_answer(&a)),
            Err(e) => reply.error(fuse_errno(e)),
        });
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(2) of one descriptor: the file system keeps nothing per descriptor.
        reply.ok();
    }

    fn release(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.send(req, LiveOp::Release { fh: fh.0 }, empty(reply));
    }

    fn fsync(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.send(req, LiveOp::Fsync { fh: fh.0 }, empty(reply));
    }

    fn opendir(&self, req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        self.send(req, LiveOp::Opendir { ino: ino.0 }, opened(reply));
    }

    fn readdir(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let op = LiveOp::Readdir { fh: fh.0, offset };
        self.send(req, op, move |r| match r {
            Ok(Answer::Entries(items)) => {
                for it in items {
                    if reply.add(INodeNo(it.ino), it.offset, file_type(it.kind), &it.name) {
                        break;
                    }
                }
                reply.ok()
            }
            Ok(a) => reply.error(wrong_answer(&a)),
            Err(e) => reply.error(fuse_errno(e)),
        });
    }

    fn releasedir(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.send(req, LiveOp::Releasedir { fh: fh.0 }, empty(reply));
    }

    fn fsyncdir(
        &self,
        req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.send(req, LiveOp::Fsyncdir, empty(reply));
    }

    fn statfs(&self, req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        self.send(req, LiveOp::Statfs, move |r| match r {
            Ok(Answer::Space(s)) => reply.statfs(
                s.blocks,
                s.free_blocks,
                s.free_blocks,
                s.inodes,
                s.free_inodes,
                s.block_bytes,
                s.name_bytes_max,
                s.block_bytes,
            ),
            Ok(a) => reply.error(wrong_answer(&a)),
            Err(e) => reply.error(fuse_errno(e)),
        });
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        n: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let Some(name) = name(n) else {
            return reply.error(fuser::Errno::EINVAL);
        };
        let op = LiveOp::Create {
            parent: parent.0,
            name,
            mode,
            umask,
            flags,
        };
        self.send(req, op, move |r| match r {
            Ok(Answer::Created { attr, fh }) => reply.created(
                &TTL,
                &file_attr(&attr),
                Generation(0),
                FileHandle(fh),
                FopenFlags::empty(),
            ),
            Ok(a) => reply.error(wrong_answer(&a)),
            Err(e) => reply.error(fuse_errno(e)),
        });
    }
}
