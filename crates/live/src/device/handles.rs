//! Open handles: opening a file, a statistics snapshot or the control file, and reads, writes
//! and releases routed by what the handle names.

use super::*;

impl FsDevice {
    /// `Open`.
    pub(super) fn open(
        &mut self,
        caller: Caller,
        ino: InodeNo,
        flags: i32,
    ) -> Result<Answer, Errno> {
        if ino == STATS_FILE_INO {
            if flags & libc::O_ACCMODE != libc::O_RDONLY {
                return Err(Errno(libc::EACCES));
            }
            let snapshot = self.stats_json();
            let fh = self.snapshots.insert(snapshot)?;
            return Ok(Answer::Opened {
                fh,
                direct_io: true,
            });
        }
        if ino == CONTROL_FILE_INO {
            let fh = self.controls.insert(ControlHandle::default())?;
            return Ok(Answer::Opened {
                fh,
                direct_io: true,
            });
        }
        if self.vfiles.owns_ino(ino) {
            return self.open_vfile(caller, ino, flags);
        }
        if ino == STATS_DIR_INO || ino == VFILES_DIR_INO {
            return Err(Errno(libc::EISDIR));
        }
        let path = self.names.path(ino)?.to_string();
        let flags = open_flags(flags, false);
        match self.fs(
            caller,
            FsOp::Open {
                path,
                flags,
                perm: 0,
            },
        )? {
            FsReply::Opened(fh) => Ok(Answer::Opened {
                fh: u64::from(fh.0),
                direct_io: false,
            }),
            _ => Err(Errno(libc::EIO)),
        }
    }

    /// `Read`.
    pub(super) fn read(
        &mut self,
        caller: Caller,
        fh: u64,
        offset_bytes: u64,
        len_bytes: u32,
    ) -> Result<Answer, Errno> {
        if self.snapshots.owns(fh) {
            let s = self.snapshots.get(fh)?;
            let from = (offset_bytes as usize).min(s.len());
            let to = (from + len_bytes as usize).min(s.len());
            return Ok(Answer::Data(s[from..to].to_vec()));
        }
        if self.controls.owns(fh) {
            return Ok(Answer::Data(
                self.controls.get(fh)?.read(offset_bytes, len_bytes),
            ));
        }
        if self.outputs.owns(fh) {
            return self.read_output(fh, offset_bytes, len_bytes);
        }
        let op = FsOp::Read {
            fh: fs_handle(fh)?,
            offset_bytes,
            len_bytes: u64::from(len_bytes),
        };
        match self.fs(caller, op)? {
            FsReply::Data(d) => Ok(Answer::Data(d)),
            _ => Err(Errno(libc::EIO)),
        }
    }

    /// `Write`.
    pub(super) fn write(
        &mut self,
        caller: Caller,
        fh: u64,
        offset_bytes: u64,
        data: Vec<u8>,
    ) -> Result<Answer, Errno> {
        if self.snapshots.owns(fh) || self.outputs.owns(fh) {
            return Err(Errno(libc::EBADF));
        }
        if self.controls.owns(fh) {
            return self.control_write(caller, fh, offset_bytes, &data);
        }
        let op = FsOp::Write {
            fh: fs_handle(fh)?,
            offset_bytes,
            data,
        };
        match self.fs(caller, op)? {
            FsReply::Written(n) => Ok(Answer::Written(
                u32::try_from(n).map_err(|_| Errno(libc::EIO))?,
            )),
            _ => Err(Errno(libc::EIO)),
        }
    }

    /// `Release`.
    pub(super) fn release(&mut self, caller: Caller, fh: u64) -> Result<Answer, Errno> {
        if self.snapshots.owns(fh) {
            self.snapshots.remove(fh)?;
            return Ok(Answer::Done);
        }
        if self.controls.owns(fh) {
            self.controls.remove(fh)?;
            return Ok(Answer::Done);
        }
        if self.outputs.owns(fh) {
            self.outputs.remove(fh)?;
            return Ok(Answer::Done);
        }
        self.fs(caller, FsOp::Close(fs_handle(fh)?))?;
        Ok(Answer::Done)
    }
}
