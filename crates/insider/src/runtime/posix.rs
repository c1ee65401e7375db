//! The ordinary file path: `open`/`pread`/`pwrite`/`fsync`/`truncate`/`fallocate` and the
//! file-system operations behind them (see the module above for how they reach the drive).

use super::*;

impl Runtime {
    /// `stat(path)` as `uid`.
    pub fn stat(&mut self, uid: u32, path: &str) -> Result<Stat, InsiderError> {
        match self.fs_op(uid, FsOp::Stat(path.into()), path, "search")? {
            FsReply::Stat(s) => Ok(s),
            r => unreachable!("stat answered {r:?}"),
        }
    }

    /// Stats `path` and refreshes the in-core view of its inode.
    pub(super) fn refresh(&mut self, path: &str) -> Result<Stat, InsiderError> {
        let st = self.stat(ROOT_UID, path)?;
        self.views.insert(st.ino, FileView::of(&st));
        Ok(st)
    }

    pub(super) fn fs_open(
        &mut self,
        uid: u32,
        path: &str,
        flags: OpenFlags,
        perm: u16,
    ) -> Result<Fh, InsiderError> {
        let needed = if flags.write { "write" } else { "read" };
        let op = FsOp::Open {
            path: path.into(),
            flags,
            perm,
        };
        match self.fs_op(uid, op, path, needed)? {
            FsReply::Opened(fh) => Ok(fh),
            r => unreachable!("open answered {r:?}"),
        }
    }

    pub(super) fn fs_close(&mut self, fh: Fh) -> Result<(), InsiderError> {
        self.fs_op(ROOT_UID, FsOp::Close(fh), "", "").map(|_| ())
    }

    pub(super) fn fs_extents(
        &mut self,
        fh: Fh,
        path: &str,
    ) -> Result<Vec<FileExtent>, InsiderError> {
        match self.fs_op(ROOT_UID, FsOp::Extents(fh), path, "read")? {
            FsReply::Extents(e) => Ok(e),
            r => unreachable!("extents answered {r:?}"),
        }
    }

    /// Makes the file system write the data it holds dirty for `ino` (through `fh`).
    pub(super) fn fs_sync(&mut self, ino: Ino, fh: Fh, path: &str) -> Result<(), InsiderError> {
        if self.fs_dirty.remove(&ino) {
            self.fs_op(ROOT_UID, FsOp::Fsync(fh), path, "write")?;
        }
        Ok(())
    }

    /// `fallocate` through `fh` until `offset..offset + len` is covered.
    pub(super) fn fs_fallocate(
        &mut self,
        ino: Ino,
        fh: Fh,
        path: &str,
        offset: u64,
        len: u64,
    ) -> Result<(), InsiderError> {
        let mut done = 0;
        while done < len {
            let op = FsOp::Fallocate {
                fh,
                offset_bytes: offset + done,
                len_bytes: len - done,
            };
            match self.fs_op(ROOT_UID, op, path, "write") {
                Ok(FsReply::Written(n)) => done += n,
                Ok(r) => unreachable!("fallocate answered {r:?}"),
                Err(InsiderError::Fs(FsError::NoSpace(_))) => {
                    return Err(InsiderError::NoSpace {
                        needed_bytes: len - done,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        // A partial last block may have had its stale tail zeroed in the file system's cache.
        self.fs_dirty.insert(ino);
        self.refresh(path).map(|_| ())
    }

    pub fn mkdir(&mut self, uid: u32, path: &str, mode: u16) -> Result<(), InsiderError> {
        let op = FsOp::Mkdir {
            path: path.into(),
            perm: mode,
        };
        self.fs_op(uid, op, path, "write").map(|_| ())
    }

    pub fn create(&mut self, uid: u32, path: &str, mode: u16) -> Result<(), InsiderError> {
        let flags = OpenFlags {
            excl: true,
            ..OpenFlags::CREATE_TRUNC
        };
        let fh = self.fs_open(uid, path, flags, mode)?;
        self.fs_close(fh)
    }

    /// Untimed preconditioning: a file whose `contents` (timing fidelity: `size_bytes` of
    /// no particular bytes) were written long before the run. The file system's operations
    /// (create, allocate) still take their simulated time.
    pub fn install_file(
        &mut self,
        uid: u32,
        path: &str,
        mode: u16,
        size_bytes: u64,
        contents: Option<&[u8]>,
    ) -> Result<(), InsiderError> {
        let flags = OpenFlags {
            excl: true,
            ..OpenFlags::CREATE_TRUNC
        };
        let fh = self.fs_open(uid, path, flags, mode)?;
        let ino = self.stat(uid, path)?.ino;
        if size_bytes > 0 {
            self.fs_fallocate(ino, fh, path, 0, size_bytes)?;
        }
        let all = self.fs_extents(fh, path)?;
        self.fs_close(fh)?;
        // Long before the run: the file system committed it, too.
        self.fs_op(ROOT_UID, FsOp::Sync, path, "write")?;
        self.fs_dirty.remove(&ino);
        let extents = map_extents(&all, path, 0, size_bytes)?;
        let emulated_timing =
            !self.is_functional() && self.cfg.backing == BackingKind::DramEmulated;
        if emulated_timing {
            return Ok(());
        }
        let mut at = 0usize;
        for e in extents {
            let data = match contents {
                Some(c) if self.is_functional() => c[at..at + e.len_bytes as usize].to_vec(),
                _ => Vec::new(),
            };
            at += e.len_bytes as usize;
            // Whole blocks: the tail of the last one is zeros.
            let len = e.len_bytes.div_ceil(self.cfg.fs_block_bytes) * self.cfg.fs_block_bytes;
            self.m.preload(e.device_offset_bytes, len, data)?;
        }
        Ok(())
    }

    /// Opens a real file for the ordinary path (a writable descriptor appends only to an
    /// append-only file).
    pub fn open(&mut self, uid: u32, path: &str, writable: bool) -> Result<u32, InsiderError> {
        let flags = OpenFlags {
            write: writable,
            ..OpenFlags::READ
        };
        let fh = self.fs_open(uid, path, flags, 0)?;
        let ino = match self.refresh(path) {
            Ok(s) => s.ino,
            Err(e) => {
                self.fs_close(fh)?;
                return Err(e);
            }
        };
        let fd = self.next_fd;
        self.next_fd += 1;
        self.fds.insert(
            fd,
            Fd::Real(RealFd {
                ino,
                fh,
                path: path.into(),
                writable,
            }),
        );
        Ok(fd)
    }

    pub fn close(&mut self, fd: u32) -> Result<(), InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Real(r)) => {
                let fh = r.fh;
                self.fds.remove(&fd);
                self.fs_close(fh)
            }
            Some(Fd::Virtual(_)) => Err(InsiderError::WrongMode {
                fd,
                mode: "virtual",
                op: "close (use vclose)",
            }),
            None => Err(InsiderError::BadDescriptor { fd }),
        }
    }

    pub(super) fn real(&self, fd: u32) -> Result<&RealFd, InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Real(r)) => Ok(r),
            Some(Fd::Virtual(_)) => Err(InsiderError::WrongMode {
                fd,
                mode: "virtual",
                op: "a POSIX call",
            }),
            None => Err(InsiderError::BadDescriptor { fd }),
        }
    }

    pub(super) fn writable(&self, fd: u32) -> Result<(Ino, Fh, String), InsiderError> {
        let r = self.real(fd)?;
        if !r.writable {
            return Err(InsiderError::WrongMode {
                fd,
                mode: "read-only",
                op: "write",
            });
        }
        Ok((r.ino, r.fh, r.path.clone()))
    }

    pub(super) fn block(&self) -> u64 {
        self.cfg.fs_block_bytes
    }

    /// `pwrite`: a file-system write (into its buffer cache, dirty until a commit).
    /// Append-only files accept writes at their end only.
    pub fn pwrite(&mut self, fd: u32, offset: u64, data: &[u8]) -> Result<(), InsiderError> {
        self.pwrite_len(fd, offset, data.len() as u64, data)
    }

    /// `pwrite` of `len` bytes; `data` is empty in timing fidelity (zeros are written).
    pub fn pwrite_len(
        &mut self,
        fd: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), InsiderError> {
        assert!(data.is_empty() || data.len() as u64 == len);
        let (ino, fh, path) = self.writable(fd)?;
        let b = self.block();
        self.drop_pages(ino, offset / b, (offset + len).div_ceil(b));
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(nearflash_fs::FsConfig::default().write_bytes_max);
            let bytes = if data.is_empty() {
                vec![0; n as usize]
            } else {
                data[at as usize..(at + n) as usize].to_vec()
            };
            let op = FsOp::Write {
                fh,
                offset_bytes: offset + at,
                data: bytes,
            };
            self.fs_dirty.insert(ino);
            match self.fs_op(ROOT_UID, op, &path, "write") {
                Ok(FsReply::Written(w)) => at += w,
                Ok(r) => unreachable!("write answered {r:?}"),
                Err(InsiderError::Fs(FsError::NoSpace(_))) => {
                    return Err(InsiderError::NoSpace {
                        needed_bytes: len - at,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        self.refresh(&path)?;
        Ok(())
    }

    /// `pwrite` with `O_DIRECT` (timing fidelity: no data): straight to the drive in
    /// `io_request_bytes` requests through the storage stack, at most `io_queue_depth` in
    /// flight, bypassing the caches; returns when every request is acknowledged. Writes
    /// past the size allocate first (and commit, so no cached block lands on them later).
    /// Blocking form of `Call::PwriteDirect`.
    pub fn pwrite_direct(&mut self, fd: u32, offset: u64, len: u64) -> Result<(), InsiderError> {
        self.call(Call::PwriteDirect { fd, offset, len })
            .map(|_| ())
    }

    /// `pread`: cached pages are copied; the rest come from the drive through the stack.
    /// Returns the bytes read (short at the end of the file); `data` is empty in timing
    /// fidelity. Blocking form of `Call::Pread`.
    pub fn pread(
        &mut self,
        fd: u32,
        offset: u64,
        len: u64,
    ) -> Result<(u64, Vec<u8>), InsiderError> {
        match self.call(Call::Pread { fd, offset, len })? {
            Output::Read { n, data } => Ok((n, data)),
            o => unreachable!("pread answered {o:?}"),
        }
    }

    /// Drops the host's cached pages `first .. end` of `ino` (they went stale).
    pub(super) fn drop_pages(&mut self, ino: Ino, first: u64, end: u64) {
        if end <= first {
            return;
        }
        if let Some(f) = self.host_files.get(&ino) {
            self.m.host_drop_cached(f.id, first, end - 1);
        }
    }

    /// The host's page cache (what `pread` keeps).
    pub fn page_cache(&self) -> &nearflash_host::PageCache {
        self.m.host().cache()
    }

    /// `fsync`: the file system commits (the file's data, then the journal).
    pub fn fsync(&mut self, fd: u32) -> Result<(), InsiderError> {
        let r = self.real(fd)?;
        let (ino, fh, path) = (r.ino, r.fh, r.path.clone());
        self.fs_dirty.remove(&ino);
        self.fs_op(ROOT_UID, FsOp::Fsync(fh), &path, "write")
            .map(|_| ())
    }

    /// `truncate(path, size)`: needs write permission; fails on an append-only file.
    pub fn truncate(&mut self, uid: u32, path: &str, size_bytes: u64) -> Result<(), InsiderError> {
        let op = FsOp::Truncate {
            path: path.into(),
            size_bytes,
        };
        self.fs_op(uid, op, path, "write")?;
        let ino = self.refresh(path)?.ino;
        let keep = size_bytes.div_ceil(self.block());
        self.drop_pages(ino, keep, u64::MAX);
        Ok(())
    }

    /// `fallocate(path, 0, len)`: allocates blocks so the file covers `len` bytes (and has at
    /// least that size); the new blocks count as written (the unwritten flag is cleared, as
    /// §3.3.2 asks of users of virtual writes).
    pub fn fallocate(&mut self, uid: u32, path: &str, len: u64) -> Result<(), InsiderError> {
        let flags = OpenFlags {
            append: true,
            ..OpenFlags::WRITE
        };
        let fh = self.fs_open(uid, path, flags, 0)?;
        let ino = self.stat(uid, path)?.ino;
        let r = if len > 0 {
            self.fs_fallocate(ino, fh, path, 0, len)
        } else {
            Ok(())
        };
        self.fs_close(fh)?;
        r
    }

    /// `posix_fadvise(POSIX_FADV_DONTNEED)`: drops the file's pages from the read cache.
    pub fn drop_cache(&mut self, path: &str) -> Result<(), InsiderError> {
        let ino = self.stat(ROOT_UID, path)?.ino;
        self.drop_pages(ino, 0, u64::MAX);
        Ok(())
    }

    /// Sets or clears the append-only attribute (`chattr +a`; owner or root).
    pub fn set_append_only(&mut self, uid: u32, path: &str, on: bool) -> Result<(), InsiderError> {
        let op = FsOp::SetAppendOnly {
            path: path.into(),
            on,
        };
        self.fs_op(uid, op, path, "owner")?;
        self.refresh(path).map(|_| ())
    }

    /// The whole content of a real file through the ordinary path (functional fidelity).
    pub fn read_file(&mut self, uid: u32, path: &str) -> Result<Vec<u8>, InsiderError> {
        let fd = self.open(uid, path, false)?;
        let size = self.refresh(path)?.size_bytes;
        let (_, data) = self.pread(fd, 0, size)?;
        self.close(fd)?;
        Ok(data)
    }
}
