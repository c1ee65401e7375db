//! The shared host model (`nearflash-host`) over the drive's firmware path: the runtime's
//! POSIX calls and the drive file system's files go through its page cache, and its block
//! requests become firmware requests.

use super::*;

impl Machine {
    /// The host model (its page cache, its counters).
    pub fn host(&self) -> &Host<FirmwarePort> {
        &self.st().host
    }

    pub fn host_add_file(&mut self, extents: Vec<HostExtent>) -> Result<FileId, HostError> {
        self.st_mut().host.add_file(extents)
    }

    pub fn host_set_extents(
        &mut self,
        file: FileId,
        extents: Vec<HostExtent>,
    ) -> Result<(), HostError> {
        self.st_mut().host.set_extents(file, extents)
    }

    /// `posix_fadvise(POSIX_FADV_DONTNEED)` over pages `first..=last` of `file`.
    pub fn host_drop_cached(&mut self, file: FileId, first: u64, last: u64) {
        self.st_mut()
            .host
            .drop_cached(file, first, last)
            .expect("a file the runtime declared");
    }

    /// Starts a read (`direct`: O_DIRECT) or write of `file` through the host at `now`.
    pub fn host_io(
        &mut self,
        write: bool,
        file: FileId,
        offset: u64,
        len: u64,
        flags: OpFlags,
    ) -> Result<HostOpId, HostError> {
        let (st, q) = self.parts();
        let hq = &mut q.map(MachineEvent::Host);
        let op = if write {
            st.host.write(file, offset, len, flags, hq)
        } else {
            st.host.read(file, offset, len, flags, hq)
        }?;
        st.host_io(q);
        Ok(op)
    }

    /// The completion of host operation `op` once it ended (removing it).
    pub fn host_done(&mut self, op: HostOpId) -> Option<HostCompletion> {
        let st = self.st_mut();
        let i = st.host_done.iter().position(|c| c.op == op)?;
        let c = st.host_done.remove(i);
        assert!(c.completed >= c.submitted, "an op ends after it began");
        Some(c)
    }

    /// The firmware path as the host's block device (functional fidelity: the pages read).
    pub fn host_port_mut(&mut self) -> &mut FirmwarePort {
        self.st_mut().host.device_mut()
    }
}

impl State {
    /// Hands the requests the host submitted to the drive's firmware path and collects the
    /// host's operations that ended.
    pub(super) fn host_io(&mut self, q: &mut Q) {
        for req in self.host.device_mut().take_submitted() {
            let id = self.firmware(q, req.op, req.offset_bytes, req.len_bytes, req.data);
            let r = self.fw.get_mut(&id).expect("just made");
            assert!(r.host.is_none(), "one host request per firmware request");
            r.host = Some(req.id);
        }
        let before = self.host_done.len();
        self.host.take_completions(&mut self.host_done);
        self.wake.host_ended += (self.host_done.len() - before) as u64;
    }
}
