//! Virtual-file calls as state machines: `vread` (the host-side buffer, the process's own
//! core) and `vwrite` (bytes through the drive program into the real file).

use super::*;

impl Runtime {
    pub(super) fn resume_vread(
        &mut self,
        fd: u32,
        len: u64,
        process: bool,
        stage: &mut VStage,
        out: &mut Vec<u8>,
    ) -> Result<Step, InsiderError> {
        loop {
            match *stage {
                VStage::Start => {
                    let v = self.virt(fd)?;
                    if v.dir != Direction::Read {
                        return Err(InsiderError::WrongMode {
                            fd,
                            mode: Direction::Write.name(),
                            op: "vread",
                        });
                    }
                    if process {
                        self.fault(fd)?;
                    }
                    self.m.arm(fd);
                    let pipelined = process || self.m.stream(fd).expect("open").pipelined;
                    if !pipelined {
                        self.m.want(fd, len);
                    }
                    // A vread larger than the host-side buffers returns what they hold when
                    // full.
                    let enough = if pipelined {
                        len.min(self.cfg.host_buffer_bytes)
                    } else {
                        len
                    };
                    *stage = VStage::Wait { enough, pipelined };
                }
                VStage::Wait { enough, pipelined } => {
                    let s = self
                        .m
                        .stream(fd)
                        .ok_or(InsiderError::BadDescriptor { fd })?;
                    if !(s.host_buf_bytes >= enough || s.output_complete()) {
                        return Ok(Step::Wait(None));
                    }
                    if !pipelined {
                        self.m.want(fd, 0);
                    }
                    self.fault(fd)?;
                    let (n, data) = self.m.take(fd, len);
                    // The runtime copies from its DMA buffer into the caller's buffer.
                    let ns = self.host.copy_ns(n);
                    let done = if process {
                        let now = self.m.now();
                        self.process_cpu
                            .entry(fd)
                            .or_default()
                            .serve(now, SimDuration::from_ns(ns))
                    } else {
                        self.host_thread_done(ns)
                    };
                    *out = data;
                    *stage = VStage::Copy { n };
                    return Ok(Step::Wait(Some(done)));
                }
                VStage::Copy { n } => {
                    let data = std::mem::take(out);
                    return Ok(Step::Done(Output::Read { n, data }));
                }
                VStage::Chunks => unreachable!("a vread has no chunks"),
            }
        }
    }

    pub(super) fn resume_vwrite(
        &mut self,
        fd: u32,
        len: u64,
        data: &mut Vec<u8>,
        at: &mut u64,
        stage: &mut VStage,
    ) -> Result<Step, InsiderError> {
        if let VStage::Start = stage {
            let v = self.virt(fd)?;
            if v.dir != Direction::Write {
                return Err(InsiderError::WrongMode {
                    fd,
                    mode: Direction::Read.name(),
                    op: "vwrite",
                });
            }
            self.fault(fd)?;
            self.m.arm(fd);
            let done = self.host_thread_done(self.host.copy_ns(len));
            *stage = VStage::Chunks;
            return Ok(Step::Wait(Some(done)));
        }
        let c = self.cfg.credit_request_bytes;
        let window = c * u64::from(self.cfg.credits_initial);
        while *at < len {
            let n = c.min(len - *at);
            let s = self
                .m
                .stream(fd)
                .ok_or(InsiderError::BadDescriptor { fd })?;
            let room = s.fault.is_some()
                || s.h2d_inflight_bytes + s.fifo.iter().map(|c| c.bytes).sum::<u64>() + n <= window;
            if !room {
                return Ok(Step::Wait(None));
            }
            self.fault(fd)?;
            let chunk = if data.is_empty() {
                Vec::new()
            } else {
                data[*at as usize..(*at + n) as usize].to_vec()
            };
            self.m.push_write(fd, n, chunk, false);
            *at += n;
        }
        data.clear();
        Ok(Step::Done(Output::Done))
    }

    /// `write_idle` for the core (the machine's view of a virtual write's stream).
    pub(super) fn write_idle(m: &Machine, fd: u32, ended: bool) -> bool {
        let Some(s) = m.stream(fd) else {
            return true;
        };
        s.fault.is_some()
            || (s.h2d.is_empty()
                && s.fifo.is_empty()
                && !s.slot_busy
                && s.writes_inflight == 0
                && (!ended || s.program_ended))
    }
}
