//! What the call machines share: starting and polling file-system operations, the in-core
//! views they refresh, and the host model's files and bytes.

use super::*;

impl Runtime {
    /// Starts a stat of `path` that refreshes the in-core view of its inode when it ends.
    pub(super) fn start_refresh(&mut self, path: &str) -> Result<FsWait, InsiderError> {
        self.fs_start(
            ROOT_UID,
            FsOp::Stat(path.to_string()),
            path,
            "search",
            Then::Refresh,
        )
    }

    /// Starts a file-system operation as `uid` (its error named after `path`, `needed`).
    pub(super) fn fs_start(
        &mut self,
        uid: u32,
        op: FsOp,
        path: &str,
        needed: &'static str,
        then: Then,
    ) -> Result<FsWait, InsiderError> {
        let caller = self.caller(uid)?;
        let ticket = self.fs.submit(&mut self.m, caller, op);
        Ok(FsWait {
            ticket,
            uid,
            path: path.to_string(),
            needed,
            then,
        })
    }

    /// Where the operation in `slot` stands; an ended one is taken out of the slot.
    pub(super) fn fs_poll(&mut self, slot: &mut Option<FsWait>) -> Result<FsPoll, InsiderError> {
        let Some(w) = slot.as_ref() else {
            return Ok(FsPoll::Idle);
        };
        let Some(r) = self.fs.take(w.ticket) else {
            return Ok(FsPoll::Waiting);
        };
        let w = slot.take().expect("checked");
        let reply = r.map_err(|e| self.fs_error(e, w.uid, &w.path, w.needed))?;
        match (&w.then, &reply) {
            (Then::Refresh, FsReply::Stat(st)) => {
                self.views.insert(st.ino, FileView::of(st));
            }
            (Then::Extents(ino), FsReply::Extents(e)) => {
                if let Some(v) = self.views.get_mut(ino) {
                    v.extents = Some(e.clone());
                }
            }
            (Then::Nothing, _) => {}
            (_, r) => unreachable!("a view refresh answered {r:?}"),
        }
        Ok(FsPoll::Reply(reply))
    }

    /// The file-system operation the in-core view of `ino` still needs (its inode, then its
    /// extents), started; `None` when the view is complete.
    pub(super) fn view_need(
        &mut self,
        ino: Ino,
        fh: Fh,
        path: &str,
    ) -> Result<Option<FsWait>, InsiderError> {
        match self.views.get(&ino) {
            None => Ok(Some(self.fs_start(
                ROOT_UID,
                FsOp::Stat(path.into()),
                path,
                "search",
                Then::Refresh,
            )?)),
            Some(v) if v.extents.is_none() => Ok(Some(self.fs_start(
                ROOT_UID,
                FsOp::Extents(fh),
                path,
                "read",
                Then::Extents(ino),
            )?)),
            Some(_) => Ok(None),
        }
    }

    /// The `Fsync` that makes the file system write what it holds dirty for `ino`, started
    /// (`None` when it holds nothing).
    pub(super) fn sync_need(
        &mut self,
        ino: Ino,
        fh: Fh,
        path: &str,
    ) -> Result<Option<FsWait>, InsiderError> {
        if !self.fs_dirty.remove(&ino) {
            return Ok(None);
        }
        Ok(Some(self.fs_start(
            ROOT_UID,
            FsOp::Fsync(fh),
            path,
            "write",
            Then::Nothing,
        )?))
    }

    /// Work on the application thread's own core (the runtime's copies): when it is done.
    pub(super) fn host_thread_done(&mut self, ns: u64) -> SimTime {
        self.host_cpu.serve(self.m.now(), SimDuration::from_ns(ns))
    }

    /// Declares `ino`'s `extents` to the host model (or its new layout): its id there.
    pub(super) fn host_file(
        &mut self,
        ino: Ino,
        extents: &[FileExtent],
        path: &str,
    ) -> Result<FileId, InsiderError> {
        let mut runs: Vec<HostExtent> = Vec::new();
        let mut at = 0;
        for e in extents {
            if e.file_offset_bytes != at {
                return Err(InsiderError::OutOfFile {
                    path: path.into(),
                    range: format!("{at}+{} (not allocated)", e.file_offset_bytes - at),
                    size_bytes: extents.iter().map(|e| e.len_bytes).sum(),
                });
            }
            at += e.len_bytes;
            match runs.last_mut() {
                Some(r) if r.dev_offset + r.len == e.device_offset_bytes => r.len += e.len_bytes,
                _ => runs.push(HostExtent {
                    dev_offset: e.device_offset_bytes,
                    len: e.len_bytes,
                }),
            }
        }
        match self.host_files.get_mut(&ino) {
            Some(f) if f.extents == runs => Ok(f.id),
            Some(f) => {
                self.m.host_set_extents(f.id, runs.clone())?;
                f.extents = runs;
                Ok(f.id)
            }
            None => {
                let id = self.m.host_add_file(runs.clone())?;
                self.host_files.insert(ino, HostFile { id, extents: runs });
                Ok(id)
            }
        }
    }

    /// The host operation `op`, once it ended: `Some(Ok)` or its error.
    pub(super) fn host_poll(&mut self, op: HostOpId) -> Option<Result<(), InsiderError>> {
        let c = self.m.host_done(op)?;
        Some(c.result.map_err(InsiderError::from))
    }

    /// Functional fidelity: bytes `offset .. offset + len` of host file `file` (with
    /// `extents`), from the pages the firmware path read for the host.
    pub(super) fn host_bytes(&mut self, ino: Ino, offset: u64, len: u64) -> Vec<u8> {
        let b = PAGE_BYTES;
        let mut out = Vec::with_capacity(len as usize);
        let extents = &self.host_files[&ino].extents;
        let port = self.m.host().device();
        for p in offset / b..(offset + len).div_ceil(b) {
            let dev = dev_of(extents, p * b);
            let page = port
                .page(dev)
                .expect("the host read or holds every page it copied");
            let s = (offset.max(p * b) - p * b) as usize;
            let e = ((offset + len).min((p + 1) * b) - p * b) as usize;
            out.extend_from_slice(&page[s..e]);
        }
        // Keep the port's bytes to the pages the host still caches (amortized: when it
        // holds twice as many).
        let cache = self.m.host().cache();
        if port.pages_held() as u64 > 2 * cache.bytes() / b {
            let mut keep = BTreeSet::new();
            for f in self.host_files.values() {
                for key in cache.cached_in(f.id.0, 0, u64::MAX) {
                    keep.insert(dev_of(&f.extents, key.index * b));
                }
            }
            self.m.host_port_mut().retain_pages(|d| keep.contains(&d));
        }
        out
    }
}

/// The device offset of file byte `offset` (within `extents`).
pub(super) fn dev_of(extents: &[HostExtent], mut offset: u64) -> u64 {
    for e in extents {
        if offset < e.len {
            return e.dev_offset + offset;
        }
        offset -= e.len;
    }
    unreachable!("an offset inside the file's extents")
}
