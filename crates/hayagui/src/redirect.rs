//! The baseline: the same calls redirected to the host. A VE system call is executed by the
//! VE process's pseudo process on the host (VEOS); arguments and buffers cross PCIe by
//! VEOS's DMA (SX-Aurora.github.io, "accelerated I/O", 2019-03-31). A call costs
//! `redirect.call_overhead_ns`, plus the copy of its buffer at the configured copy rate
//! (VEOS system DMA or the accelerated-I/O library), plus the host's own work: its file
//! system, page cache and NVMe driver (the machine's file system and front end, configured
//! as the host's).

use crate::config::RedirectConfig;
use crate::files::{Fd, FileError, OpenMode};
use crate::machine::{Calls, MachineError, Run};
use nearflash_fs::{Caller, Fh, FsError, FsOp, FsReply, OpenFlags};
use nearflash_sim::SimDuration;
use serde::Serialize;
use std::collections::BTreeMap;

/// The redirected path's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RedirectStats {
    pub calls: u64,
    pub call_overhead_ns: u64,
    pub copy_to_ve_bytes: u64,
    pub copy_to_host_bytes: u64,
    pub copy_ns: u64,
}

pub struct Redirected {
    cfg: RedirectConfig,
    fds: BTreeMap<Fd, Fh>,
    next_fd: u64,
    stats: RedirectStats,
}

impl Redirected {
    pub fn new(cfg: RedirectConfig) -> Redirected {
        Redirected {
            cfg,
            fds: BTreeMap::new(),
            next_fd: 3,
            stats: RedirectStats::default(),
        }
    }

    pub fn stats(&self) -> RedirectStats {
        self.stats
    }

    fn call(&mut self, m: &mut Run) {
        self.stats.calls += 1;
        self.stats.call_overhead_ns += self.cfg.call_overhead_ns;
        m.advance(SimDuration::from_ns(self.cfg.call_overhead_ns));
    }

    fn copy(&mut self, m: &mut Run, to_ve: bool, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let ns = self.cfg.rates().copy_ns(to_ve, bytes);
        if to_ve {
            self.stats.copy_to_ve_bytes += bytes;
        } else {
            self.stats.copy_to_host_bytes += bytes;
        }
        self.stats.copy_ns += ns;
        m.advance(SimDuration::from_ns(ns));
    }

    fn fs(m: &mut Run, op: FsOp) -> Result<FsReply, FileError> {
        Ok(m.fs_run(Caller::ROOT, op)?)
    }

    fn fh(&self, fd: Fd) -> Result<Fh, FileError> {
        self.fds.get(&fd).copied().ok_or(FileError::BadFd(fd))
    }

    pub fn open(&mut self, m: &mut Run, path: &str, mode: OpenMode) -> Result<Fd, FileError> {
        self.call(m);
        let flags = OpenFlags {
            read: true,
            write: true,
            append: false,
            truncate: mode.truncate,
            create: mode.create,
            excl: false,
        };
        let FsReply::Opened(fh) = Self::fs(
            m,
            FsOp::Open {
                path: path.to_string(),
                flags,
                perm: 0o644,
            },
        )?
        else {
            unreachable!("Open answers a handle")
        };
        let fd = Fd(self.next_fd);
        self.next_fd += 1;
        self.fds.insert(fd, fh);
        Ok(fd)
    }

    pub fn close(&mut self, m: &mut Run, fd: Fd) -> Result<(), FileError> {
        self.call(m);
        let fh = self.fds.remove(&fd).ok_or(FileError::BadFd(fd))?;
        Self::fs(m, FsOp::Close(fh))?;
        Ok(())
    }

    /// `pread(2)`: the call, the host's read (page cache, file system, SSD), then the data's
    /// copy into the VE.
    pub fn read_at(
        &mut self,
        m: &mut Run,
        fd: Fd,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>, FileError> {
        let fh = self.fh(fd)?;
        self.call(m);
        let mut out = Vec::with_capacity(len.min(1 << 26) as usize);
        while (out.len() as u64) < len {
            let FsReply::Data(d) = Self::fs(
                m,
                FsOp::Read {
                    fh,
                    offset_bytes: offset + out.len() as u64,
                    len_bytes: len - out.len() as u64,
                },
            )?
            else {
                unreachable!("Read answers data")
            };
            if d.is_empty() {
                break;
            }
            out.extend_from_slice(&d);
        }
        self.copy(m, true, out.len() as u64);
        Ok(out)
    }

    /// `pwrite(2)`: the data's copy to the host, the call, the host's write into its page
    /// cache (short writes continued within the call).
    pub fn write_at(
        &mut self,
        m: &mut Run,
        fd: Fd,
        offset: u64,
        data: &[u8],
    ) -> Result<(), FileError> {
        let fh = self.fh(fd)?;
        self.copy(m, false, data.len() as u64);
        self.call(m);
        let mut done = 0usize;
        while done < data.len() {
            let FsReply::Written(n) = Self::fs(
                m,
                FsOp::Write {
                    fh,
                    offset_bytes: offset + done as u64,
                    data: data[done..].to_vec(),
                },
            )?
            else {
                unreachable!("Write answers the bytes written")
            };
            assert!(n > 0, "a write makes progress or fails");
            done += n as usize;
        }
        Ok(())
    }

    /// `fdatasync(2)`.
    pub fn sync(&mut self, m: &mut Run, fd: Fd) -> Result<(), FileError> {
        let fh = self.fh(fd)?;
        self.call(m);
        Self::fs(m, FsOp::Fsync(fh))?;
        Ok(())
    }

    pub fn size(&mut self, m: &mut Run, path: &str) -> Result<u64, FileError> {
        self.call(m);
        let FsReply::Stat(st) = Self::fs(m, FsOp::Stat(path.to_string()))? else {
            unreachable!("Stat answers a stat")
        };
        Ok(st.size_bytes)
    }

    pub fn exists(&mut self, m: &mut Run, path: &str) -> Result<bool, FileError> {
        self.call(m);
        match m.fs_run(Caller::ROOT, FsOp::Stat(path.to_string())) {
            Ok(_) => Ok(true),
            Err(MachineError::Fs(FsError::NotFound(_))) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    pub fn children(&mut self, m: &mut Run, dir: &str) -> Result<Vec<String>, FileError> {
        self.call(m);
        let FsReply::Entries(es) = Self::fs(m, FsOp::Readdir(dir.to_string()))? else {
            unreachable!("Readdir answers entries")
        };
        Ok(crate::files::names(es))
    }

    pub fn mkdir(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.call(m);
        Self::fs(
            m,
            FsOp::Mkdir {
                path: path.to_string(),
                perm: 0o755,
            },
        )?;
        Ok(())
    }

    pub fn rmdir(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.call(m);
        Self::fs(m, FsOp::Rmdir(path.to_string()))?;
        Ok(())
    }

    pub fn delete(&mut self, m: &mut Run, path: &str) -> Result<(), FileError> {
        self.call(m);
        Self::fs(m, FsOp::Unlink(path.to_string()))?;
        Ok(())
    }

    pub fn rename(&mut self, m: &mut Run, from: &str, to: &str) -> Result<(), FileError> {
        self.call(m);
        Self::fs(
            m,
            FsOp::Rename {
                from: from.to_string(),
                to: to.to_string(),
            },
        )?;
        Ok(())
    }
}
