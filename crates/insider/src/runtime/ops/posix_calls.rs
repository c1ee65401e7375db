//! The ordinary path's calls as state machines: `pread` through the shared host model and
//! `pwrite` with `O_DIRECT`.

use super::*;

impl Runtime {
    pub(super) fn resume_pread(&mut self, t: &mut Pread) -> Result<Step, InsiderError> {
        loop {
            if let FsPoll::Waiting = self.fs_poll(&mut t.fs)? {
                return Ok(Step::Wait(None));
            }
            match t.stage {
                PStage::Start => {
                    let r = self.real(t.fd)?;
                    (t.ino, t.fh, t.path) = (r.ino, r.fh, r.path.clone());
                    t.stage = PStage::Sync;
                    t.fs = self.sync_need(t.ino, t.fh, &t.path.clone())?;
                }
                PStage::Sync => {
                    t.stage = PStage::Size;
                    if !self.views.contains_key(&t.ino) {
                        let path = t.path.clone();
                        t.fs = Some(self.start_refresh(&path)?);
                    }
                }
                PStage::Size => {
                    let size = self.views[&t.ino].size_bytes;
                    t.len = t.len.min(size.saturating_sub(t.offset));
                    if t.len == 0 {
                        let done = self.host_thread_done(self.host.syscall_ns);
                        t.stage = PStage::End;
                        return Ok(Step::Wait(Some(done)));
                    }
                    t.stage = PStage::Extents;
                }
                PStage::Extents => {
                    let path = t.path.clone();
                    if let Some(w) = self.view_need(t.ino, t.fh, &path)? {
                        t.fs = Some(w);
                        continue;
                    }
                    let extents = self.views[&t.ino].extents.clone().expect("fetched");
                    let file = self.host_file(t.ino, &extents, &path)?;
                    let op = self
                        .m
                        .host_io(false, file, t.offset, t.len, OpFlags::default())?;
                    t.op = Some(op);
                    t.stage = PStage::Host;
                }
                PStage::Host => {
                    let Some(r) = self.host_poll(t.op.expect("started")) else {
                        return Ok(Step::Wait(None));
                    };
                    r?;
                    t.stage = PStage::End;
                }
                PStage::End => {
                    let data = if self.is_functional() && t.len > 0 {
                        self.host_bytes(t.ino, t.offset, t.len)
                    } else {
                        Vec::new()
                    };
                    return Ok(Step::Done(Output::Read { n: t.len, data }));
                }
            }
        }
    }

    pub(super) fn resume_pwrite_direct(
        &mut self,
        t: &mut PwriteDirect,
    ) -> Result<Step, InsiderError> {
        loop {
            let polled = if t.stage == WStage::Allocate {
                self.fs_poll_nospace(t)?
            } else {
                self.fs_poll(&mut t.fs)?
            };
            let reply = match polled {
                FsPoll::Waiting => return Ok(Step::Wait(None)),
                FsPoll::Reply(r) => Some(r),
                FsPoll::Idle => None,
            };
            let path = t.path.clone();
            match t.stage {
                WStage::Start => {
                    (t.ino, t.fh, t.path) = self.writable(t.fd)?;
                    t.stage = WStage::View;
                }
                WStage::View | WStage::View2 => {
                    if let Some(w) = self.view_need(t.ino, t.fh, &path)? {
                        t.fs = Some(w);
                        continue;
                    }
                    let v = &self.views[&t.ino];
                    t.extents = v.extents.clone().expect("fetched");
                    if t.stage == WStage::View2 {
                        t.stage = WStage::Sync;
                        continue;
                    }
                    if v.append_only && t.offset != v.size_bytes {
                        return Err(InsiderError::AppendOnly { path });
                    }
                    t.stage = if t.offset + t.len > v.size_bytes {
                        WStage::Allocate
                    } else {
                        WStage::Sync
                    };
                }
                WStage::Allocate => {
                    match reply {
                        Some(FsReply::Written(n)) => t.allocated += n,
                        Some(r) => unreachable!("fallocate answered {r:?}"),
                        None => {}
                    }
                    if t.allocated < t.len {
                        let op = FsOp::Fallocate {
                            fh: t.fh,
                            offset_bytes: t.offset + t.allocated,
                            len_bytes: t.len - t.allocated,
                        };
                        let w = self.fs_start(ROOT_UID, op, &path, "write", Then::Nothing)?;
                        t.fs = Some(w);
                        continue;
                    }
                    // A partial last block may have had its stale tail zeroed in the file
                    // system's cache.
                    self.fs_dirty.insert(t.ino);
                    t.fs = Some(self.start_refresh(&path)?);
                    t.stage = WStage::Refreshed;
                }
                WStage::Refreshed => t.stage = WStage::View2,
                WStage::Sync => {
                    t.stage = WStage::Start2;
                    t.fs = self.sync_need(t.ino, t.fh, &path)?;
                }
                WStage::Start2 => {
                    // O_DIRECT moves whole sectors (the extents are whole blocks); the host
                    // writes back and drops its cached pages of the range first.
                    map_extents(&t.extents, &path, t.offset, t.len)?;
                    let file = self.host_file(t.ino, &t.extents, &path)?;
                    let a = t.offset / SECTOR_BYTES * SECTOR_BYTES;
                    let e = (t.offset + t.len).div_ceil(SECTOR_BYTES) * SECTOR_BYTES;
                    let direct = OpFlags { direct: true };
                    let op = self.m.host_io(true, file, a, e - a, direct)?;
                    t.op = Some(op);
                    t.stage = WStage::Write;
                }
                WStage::Write => {
                    return Ok(match self.host_poll(t.op.expect("started")) {
                        Some(r) => r.map(|()| Step::Done(Output::Done))?,
                        None => Step::Wait(None),
                    });
                }
            }
        }
    }

    /// `fs_poll` for a fallocate: no space is the caller's `NoSpace` for what is left.
    pub(super) fn fs_poll_nospace(&mut self, t: &mut PwriteDirect) -> Result<FsPoll, InsiderError> {
        let needed_bytes = t.len - t.allocated;
        match self.fs_poll(&mut t.fs) {
            Err(InsiderError::Fs(FsError::NoSpace(_))) => {
                Err(InsiderError::NoSpace { needed_bytes })
            }
            r => r,
        }
    }
}
