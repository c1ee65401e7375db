//! What the runtime asks of the drive: opening and feeding streams, and the firmware path
//! (ordinary reads and writes through the NVMe front end to the backing device).

use super::*;

impl State {
    /// Opens a stream: a read starts issuing at once when pipelined (§3.5 pre-issue).
    pub fn open(&mut self, q: &mut Q, mut s: Stream) {
        let fd = s.fd;
        s.opened_at = q.now();
        s.host_capacity_bytes = self.cfg.host_buffer_bytes;
        self.wake.touched.insert(fd);
        self.unit.open(s);
        self.try_slot(q, fd);
        self.issue(q);
    }

    /// The program may start (its parameters are in, or the host began reading/writing).
    pub fn arm(&mut self, q: &mut Q, fd: u32) {
        if let Some(s) = touch(&mut self.wake, &mut self.unit, fd) {
            s.armed = true;
        }
        self.try_slot(q, fd);
    }

    /// Non-pipelined: a vread waits for the host buffer to hold `bytes`.
    pub fn want(&mut self, q: &mut Q, fd: u32, bytes: u64) {
        if let Some(s) = touch(&mut self.wake, &mut self.unit, fd) {
            s.want_bytes = bytes;
        }
        self.issue(q);
        self.try_dma(q, fd);
    }

    /// Takes up to `max` bytes from the host-side buffer.
    pub fn take(&mut self, q: &mut Q, fd: u32, max: u64) -> (u64, Vec<u8>) {
        let Some(s) = touch(&mut self.wake, &mut self.unit, fd) else {
            return (0, Vec::new());
        };
        let n = max.min(s.host_buf_bytes);
        s.host_buf_bytes -= n;
        s.read_bytes += n;
        assert!(
            s.read_bytes <= s.produced_out_bytes,
            "the host took more of stream {fd} than its program produced"
        );
        let data: Vec<u8> = if s.host_buf.is_empty() {
            Vec::new()
        } else {
            s.host_buf.drain(..n as usize).collect()
        };
        debug_assert!(
            s.host_buf.is_empty() || s.host_buf.len() as u64 == s.host_buf_bytes,
            "stream {fd}'s host buffer count drifted"
        );
        self.try_dma(q, fd);
        (n, data)
    }

    /// Virtual write: sends `bytes` (functional: `data`) over PCIe to the program's FIFO.
    pub fn push_write(&mut self, q: &mut Q, fd: u32, bytes: u64, data: Vec<u8>, last: bool) {
        let now = q.now();
        let at = self.dma(now, Wire::Down, bytes);
        let s = touch(&mut self.wake, &mut self.unit, fd).expect("open for writing");
        assert_eq!(s.dir, Direction::Write, "vwrite on read stream {fd}");
        assert!(
            data.is_empty() || data.len() as u64 == bytes,
            "vwrite of {bytes} bytes carried {} bytes of data",
            data.len()
        );
        s.h2d_inflight_bytes += bytes;
        s.total_in_bytes += bytes;
        s.h2d.push_back(Chunk { bytes, data, last });
        self.schedule(q, at, Ev::H2dDone(fd));
    }

    /// An ordinary host request (the file system's, or the host model's), handed to the
    /// drive now: one command of the whole sectors it covers, submitted to the NVMe front
    /// end (its doorbell, SQE fetch and controller, then the firmware path behind it).
    pub fn firmware(
        &mut self,
        q: &mut Q,
        op: BlockOp,
        offset_bytes: u64,
        len_bytes: u64,
        data: Vec<u8>,
    ) -> u64 {
        let id = self.next_fw;
        self.next_fw += 1;
        self.fw.insert(
            id,
            FwRequest {
                op,
                offset_bytes,
                len_bytes,
                done: None,
                host: None,
                submitted: q.now(),
            },
        );
        let (a, alen, skip) = sector_span(offset_bytes, len_bytes);
        assert!(
            op == BlockOp::Read || (skip == 0 && alen == len_bytes),
            "a firmware write covers whole sectors: {len_bytes} bytes at {offset_bytes}"
        );
        let req = BlockRequest {
            id,
            op,
            offset_bytes: a,
            len_bytes: alen,
            data,
        };
        self.nvme.submit(req, &mut q.map(MachineEvent::Nvme));
        self.commands_submitted += 1;
        id
    }

    /// Moves the front end's work on after its events: the commands its controller handed
    /// the drive go down the firmware path, and the commands whose completion the host's
    /// handler saw (CQE + MSI-X) end.
    pub(super) fn nvme_io(&mut self, q: &mut Q) {
        for req in self.nvme.device_mut().take_submitted() {
            self.drive_submit(q, req);
        }
        self.nvme.take_completions_into(&mut self.nvme_done);
        for c in std::mem::take(&mut self.nvme_done) {
            self.command_done(q, c);
        }
    }

    /// The firmware path behind the controller: a read through the multiplexer (slot 0,
    /// in order with the ISC unit's requests) to the storage; a write, its data already in
    /// the drive, to the storage.
    fn drive_submit(&mut self, q: &mut Q, req: BlockRequest) {
        let (tag, op, off, len) = (req.id, req.op, req.offset_bytes, req.len_bytes);
        match op {
            BlockOp::Read => {
                let id = self.submit_backing(q, BlockOp::Read, off, len, Vec::new());
                self.mux.push(SifEntry {
                    req_id: id,
                    slot: 0,
                    origin: Origin::Firmware(tag),
                    skip_bytes: 0,
                    take_bytes: len,
                    done: None,
                });
            }
            BlockOp::Write => {
                let id = self.submit_backing(q, BlockOp::Write, off, len, req.data);
                self.writes.insert(id, WritePurpose::Firmware(tag));
            }
            BlockOp::Trim | BlockOp::Flush => {
                unreachable!("the drive's file system and the host send reads and writes")
            }
        }
    }

    /// The firmware path finished command `tag` (a read's data through slot 0 at `at`): the
    /// controller sees it then, and the front end moves a read's data up, posts the CQE and
    /// raises the interrupt.
    pub(super) fn drive_done(
        &mut self,
        q: &mut Q,
        tag: u64,
        at: SimTime,
        result: Result<Vec<u8>, IoError>,
    ) {
        assert!(at >= q.now(), "the drive finishes a command now or later");
        self.nvme.device_mut().post(tag, at, result);
        q.schedule_at(at, MachineEvent::Nvme(NvmeEvent::Device(DriveDone(tag))));
    }

    /// The host's handler saw firmware request `c.id`'s completion: the host model's
    /// request goes back to the host (its port's event), the file system's is done.
    fn command_done(&mut self, q: &mut Q, c: BlockCompletion) {
        let id = c.id;
        let now = q.now();
        let r = self.fw.get(&id).expect("a firmware request");
        assert_eq!(r.op, c.op, "the front end completes the command we gave it");
        self.commands_completed += 1;
        assert!(self.commands_completed <= self.commands_submitted);
        let (_, alen, skip) = sector_span(r.offset_bytes, r.len_bytes);
        assert_eq!(
            c.len_bytes, alen,
            "the command covered the request's sectors"
        );
        let data = if c.data.is_empty() {
            c.data
        } else {
            c.data[skip as usize..(skip + r.len_bytes) as usize].to_vec()
        };
        let result = c.result.map(|()| data);
        if let Some(host_id) = r.host {
            let r = self.fw.remove(&id).expect("a firmware request");
            let (result, data) = match result {
                Ok(data) => (Ok(()), data),
                Err(e) => (Err(e), Vec::new()),
            };
            self.host.device_mut().post(BlockCompletion {
                id: host_id,
                op: r.op,
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
                submitted: r.submitted,
                completed: now,
                result,
                data,
            });
            q.schedule_at(
                now,
                MachineEvent::Host(HostEvent::Device(PortEvent(host_id))),
            );
            return;
        }
        let r = self.fw.get_mut(&id).expect("a firmware request");
        assert!(r.done.is_none(), "firmware request {id} completes once");
        r.done = Some(result);
        self.fw_completed += 1;
    }
}
