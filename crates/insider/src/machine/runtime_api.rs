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
    /// drive now.
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
                data,
                posted: None,
                done: None,
                host: None,
                submitted: q.now(),
            },
        );
        // NVMe steps 1–3: the doorbell, the SQE fetch, then the controller (one command at
        // a time) before the drive serves the request.
        let fetched = q.now() + SimDuration::from_ns(self.nvme.submit_ns());
        let ready = self
            .nvme_controller
            .serve(fetched, SimDuration::from_ns(self.nvme.controller_ns));
        self.schedule(q, ready, Ev::FwSubmit(id));
        id
    }

    /// NVMe step 6: the controller posts the completion; the host sees it after the CQE
    /// lands and the interrupt reaches its handler.
    pub(super) fn post_completion(&mut self, q: &mut Q, id: u64, result: Result<Vec<u8>, IoError>) {
        let at = q.now() + SimDuration::from_ns(self.nvme.completion_ns());
        if let Some(host_id) = self.fw[&id].host {
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
                completed: at,
                result,
                data,
            });
            q.schedule_at(
                at,
                MachineEvent::Host(HostEvent::Device(PortEvent(host_id))),
            );
            return;
        }
        let r = self.fw.get_mut(&id).expect("a firmware request");
        assert!(
            r.posted.is_none() && r.done.is_none(),
            "one completion per request"
        );
        r.posted = Some(result);
        self.schedule(q, at, Ev::FwCompleted(id));
    }

    pub(super) fn fw_submit(&mut self, q: &mut Q, id: u64) {
        let now = q.now();
        let r = self.fw.get(&id).expect("a firmware request");
        let (op, off, len) = (r.op, r.offset_bytes, r.len_bytes);
        match op {
            BlockOp::Read => {
                let (a, alen, skip) = sector_span(off, len);
                let req = self.submit_backing(q, BlockOp::Read, a, alen, Vec::new());
                self.mux.push(SifEntry {
                    req_id: req,
                    slot: 0,
                    origin: Origin::Firmware(id),
                    skip_bytes: skip,
                    take_bytes: len,
                    done: None,
                });
            }
            _ => {
                let at = self.dma(now, Wire::Down, len);
                self.schedule(q, at, Ev::FwWriteArrived(id));
            }
        }
    }
}
