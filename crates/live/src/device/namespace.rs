//! The namespace requests a mount serves: attributes (chmod, chown, truncate), directories,
//! names (create, rename), each as the calling user and refused on the virtual entries.

use super::*;

impl FsDevice {
    /// `Setattr`.
    pub(super) fn setattr(
        &mut self,
        caller: Caller,
        ino: InodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
    ) -> Result<Answer, Errno> {
        let only_truncate = mode.is_none() && uid.is_none() && gid.is_none();
        if ino == CONTROL_FILE_INO && size == Some(0) && only_truncate {
            // `echo REQUEST > control` truncates first: nothing to truncate.
            return self
                .virtual_attr(ino, None)
                .map(Answer::Attr)
                .ok_or(Errno(libc::EIO));
        }
        if is_virtual(ino) {
            return Err(Errno(libc::EPERM));
        }
        let path = self.names.path(ino)?.to_string();
        if let Some(mode) = mode {
            let perm = (mode & 0o777) as u16;
            self.fs(
                caller,
                FsOp::Chmod {
                    path: path.clone(),
                    perm,
                },
            )?;
        }
        if uid.is_some() || gid.is_some() {
            let now = self.stat(Caller::ROOT, &path)?;
            let (uid, gid) = (uid.unwrap_or(now.uid), gid.unwrap_or(now.gid));
            if (uid, gid) != (now.uid, now.gid) {
                self.fs(
                    caller,
                    FsOp::Chown {
                        path: path.clone(),
                        uid,
                        gid,
                    },
                )?;
            }
        }
        if let Some(size_bytes) = size {
            self.fs(
                caller,
                FsOp::Truncate {
                    path: path.clone(),
                    size_bytes,
                },
            )?;
        }
        Ok(Answer::Attr(self.stat(Caller::ROOT, &path)?))
    }

    /// `Mkdir`.
    pub(super) fn mkdir(
        &mut self,
        caller: Caller,
        parent: InodeNo,
        name: String,
        mode: u32,
        umask: u32,
    ) -> Result<Answer, Errno> {
        self.refuse_virtual_name(parent, &name)?;
        let path = self.names.child(parent, &name)?;
        let perm = (mode & !umask & 0o777) as u16;
        self.fs(
            caller,
            FsOp::Mkdir {
                path: path.clone(),
                perm,
            },
        )?;
        let a = self.stat(Caller::ROOT, &path)?;
        self.names.set(a.ino, path);
        Ok(Answer::Entry(a))
    }

    /// `Rename`.
    pub(super) fn rename(
        &mut self,
        caller: Caller,
        parent: InodeNo,
        name: String,
        new_parent: InodeNo,
        new_name: String,
        noreplace: bool,
    ) -> Result<Answer, Errno> {
        self.refuse_virtual_name(parent, &name)?;
        self.refuse_virtual_name(new_parent, &new_name)?;
        let from = self.names.child(parent, &name)?;
        let to = self.names.child(new_parent, &new_name)?;
        // Requests run one at a time, so nothing can create `to` in between.
        if noreplace && self.stat(Caller::ROOT, &to).is_ok() {
            return Err(Errno(libc::EEXIST));
        }
        self.fs(
            caller,
            FsOp::Rename {
                from: from.clone(),
                to: to.clone(),
            },
        )?;
        self.names.renamed(&from, &to);
        Ok(Answer::Done)
    }

    /// `Create`.
    pub(super) fn create(
        &mut self,
        caller: Caller,
        parent: InodeNo,
        name: String,
        mode: u32,
        umask: u32,
        flags: i32,
    ) -> Result<Answer, Errno> {
        self.refuse_virtual_name(parent, &name)?;
        let path = self.names.child(parent, &name)?;
        let perm = (mode & !umask & 0o777) as u16;
        let op = FsOp::Open {
            path: path.clone(),
            flags: open_flags(flags, true),
            perm,
        };
        let FsReply::Opened(fh) = self.fs(caller, op)? else {
            return Err(Errno(libc::EIO));
        };
        let attr = self.stat(Caller::ROOT, &path)?;
        self.names.set(attr.ino, path);
        Ok(Answer::Created {
            attr,
            fh: u64::from(fh.0),
        })
    }
}
