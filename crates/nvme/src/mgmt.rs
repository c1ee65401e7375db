//! FDP's management commands (NVMe TP4146; STANDARDS §3.3) on the same queue pairs, link and
//! controller as block I/O. (A host sends the admin commands — Get Log Page, Set and Get
//! Features — on the admin queue, which is not modelled apart: they take an I/O queue here, with
//! the same link and controller costs.)
//!
//! | command | opcode | FID / MO / LID | source |
//! |---|---|---|---|
//! | Get Log Page (admin) | 0x02 | LID 0x20–0x23 | confirmed: STANDARDS §3.3, FEMU `nvme.h` |
//! | Set Features (admin) | 0x09 | FID 0x1D FDP, 0x1E FDP Events | confirmed: QEMU, Linux `nvme.h` (`NVME_FEAT_FDP`, `NVME_FEAT_FDP_EVENTS`) |
//! | Get Features (admin) | 0x0A | FID 0x1D, 0x1E | confirmed: as Set Features |
//! | I/O Management Receive | 0x12 | MO 0x01 RUH Status | confirmed: STANDARDS §3.3 |
//! | I/O Management Send | 0x1D | MO 0x01 RUH Update | confirmed: STANDARDS §3.3 |
//!
//! Assumed, not read in the specification: the fields' bit positions in CDW11/CDW12 of the two
//! features (from nvme-cli's `fdp` plugin and QEMU), Invalid Field for an undefined event type,
//! and the order of Set Features FDP's checks (the configuration index, then Command Sequence
//! Error while a namespace exists — always, here: namespace 1 is never deleted).
//!
//! Steps 1–3 as any command; a Send DMAs its Placement Identifiers in, a Set Features FDP
//! Events its event types (step 4); the command
//! then goes to the device ([`BlockDevice::submit_mgmt`]). A device that offers none hands it
//! back and the controller completes it with Invalid Command Opcode. An answer's bytes (a log
//! page, the status descriptors, the event descriptors) DMA up into host memory (step 5), then
//! the CQE (step 6), which alone carries Get Features FDP's Dword 0. The
//! host sees an [`MgmtCompletion`] through [`BlockDevice::take_mgmt_completions`].

use crate::memory::{dma_from_memory, dma_to_memory};
use crate::{Cmd, Nvme, NvmeError, NvmeEvent};
use nearflash_blockdev::{BlockDevice, MgmtCompletion, MgmtRequest, MgmtStatus};
use nearflash_sim::{Schedule, SimTime};

/// A management command as the host submits it on queue `qid`. Its `req.id` is the caller's, echoed
/// in the completion.
#[derive(Clone, Debug)]
pub struct NvmeMgmtCommand {
    pub qid: u16,
    pub req: MgmtRequest,
}

///
/// A management command in the controller.
#[derive(Debug)]
pub(crate) struct MgmtCmdState {
    /// The caller's id.
    id: u64,
    /// The command until it is handed to the device.
    req: Option<MgmtRequest>,
    /// The answer, once the device (or the controller) gave it.
    result: Option<Result<Vec<u8>, MgmtStatus>>,
    /// The device's completion Dword 0.
    dword0: u32,
    /// The answer rides in the CQE's Dword 0 (Get Features FDP): no data moves up.
    answer_in_cqe: bool,
}

impl MgmtCmdState {
    /// The host's view of the finished command.
    pub(crate) fn completion(self, submitted: SimTime, completed: SimTime) -> MgmtCompletion {
        MgmtCompletion {
            id: self.id,
            submitted,
            completed,
            result: self
                .result
                .expect("a management command completes with an answer"),
            dword0: self.dword0,
        }
    }
}

impl<D: BlockDevice> Nvme<D> {
    /// Submits a management command at `q.now()` (step 1: the SQE and the tail doorbell). Refused
    /// when the queue is full, like [`Nvme::try_submit`].
    pub fn try_submit_mgmt<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        cmd: NvmeMgmtCommand,
        q: &mut S,
    ) -> Result<(), NvmeError> {
        self.admit(
            cmd.qid,
            q,
            |_| Ok(()),
            |nvme, now| {
                nvme.stats.mgmt_commands += 1;
                let mut c = Cmd::without_block_data(cmd.qid, cmd.req.id, now);
                c.mgmt = Some(MgmtCmdState {
                    id: cmd.req.id,
                    answer_in_cqe: cmd.req.cmd.answer_in_cqe(),
                    req: Some(cmd.req),
                    result: None,
                    dword0: 0,
                });
                c
            },
        )
    }

    /// Step 3 done for a management command: an update's identifiers come in, or the
    /// command goes to the device.
    pub(crate) fn mgmt_processed<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        now: SimTime,
        q: &mut S,
    ) {
        let inbound = self
            .mgmt_mut(tag)
            .req
            .as_ref()
            .expect("a management command not yet run")
            .cmd
            .inbound_bytes();
        if inbound > 0 {
            let host = &mut self.ports[0];
            let at = dma_from_memory(&mut self.link, host, now, inbound);
            q.schedule_at(at, NvmeEvent::DataIn(tag));
        } else {
            self.submit_mgmt_to_device(tag, now, q);
        }
    }

    /// Step 4 done: the command goes to the device under the controller's tag; a device
    /// that offers no management commands gets Invalid Command Opcode from the controller.
    pub(crate) fn submit_mgmt_to_device<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        now: SimTime,
        q: &mut S,
    ) {
        let state = self.mgmt_mut(tag);
        let mut req = state.req.take().expect("a management command runs once");
        req.id = u64::from(tag);
        if let Err(back) = self.dev.submit_mgmt(req, &mut q.map(NvmeEvent::Device)) {
            self.mgmt_mut(tag).result = Some(Err(MgmtStatus::InvalidOpcode {
                opcode: back.cmd.opcode(),
            }));
            self.post_completion(tag, now, q);
        }
    }

    /// Moves the device's answered management commands on: the answer's bytes up, then the
    /// CQE.
    pub(crate) fn drain_mgmt_device<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        now: SimTime,
        q: &mut S,
    ) {
        self.dev.take_mgmt_completions(&mut self.mgmt_dev_done);
        let mut done = std::mem::take(&mut self.mgmt_dev_done);
        for c in done.drain(..) {
            let tag = u32::try_from(c.id).expect("the device echoes our tag");
            let state = self.mgmt_mut(tag);
            let outbound = match &c.result {
                Ok(b) if !state.answer_in_cqe => b.len() as u64,
                Ok(_) | Err(_) => 0,
            };
            assert!(
                state.result.is_none(),
                "a management command is answered once"
            );
            state.result = Some(c.result);
            state.dword0 = c.dword0;
            if outbound > 0 {
                // Step 5: the answer goes up into host memory.
                let host = &mut self.ports[0];
                let at = dma_to_memory(&mut self.link, host, now, outbound);
                q.schedule_at(at, NvmeEvent::DataOut(tag));
            } else {
                self.post_completion(tag, now, q);
            }
        }
        self.mgmt_dev_done = done;
    }

    fn mgmt_mut(&mut self, tag: u32) -> &mut MgmtCmdState {
        self.cmds[tag as usize]
            .as_mut()
            .and_then(|c| c.mgmt.as_mut())
            .expect("a live management command")
    }
}

#[cfg(test)]
mod tests;
