//! Commands of the zoned command set (NVMe ZNS, TP4053; STANDARDS §3.2) on the same queue
//! pairs, link and controller as block I/O: Zone Append (opcode 0x7D), Zone Management Send
//! (0x79) and Zone Management Receive (0x7A), so that a zoned drive behind the front end is
//! timed end to end like a conventional one.
//!
//! A zone command takes the NVMe path's steps 1–3 (doorbell, SQE fetch, firmware). A Zone
//! Append then DMAs its data in (step 4), as a write does. The controller checks the
//! namespace's command set: on a namespace that is not zoned the command completes with
//! Invalid Command Opcode (generic status 0x01) before any data moves. Otherwise the command
//! goes to the device ([`BlockDevice::submit_zone`]), whose own checks answer with the zone
//! statuses (boundary, full, invalid write, too many open or active zones, …). A Report
//! Zones answer DMAs its header and descriptors up into host memory (step 5); an append's
//! assigned LBA rides in the completion entry. Step 6 (CQE, interrupt or poll) is as for any
//! command. The host sees a [`ZoneCompletion`] through [`BlockDevice::take_zone_completions`]
//! with the front end's submission and completion times.

use crate::memory::{dma_from_memory, dma_to_memory};
use crate::{Cmd, Nvme, NvmeError, NvmeEvent};
use nearflash_blockdev::{
    BlockDevice, IoError, ZoneCommand, ZoneCompletion, ZoneReply, ZoneRequest, ZoneStatus,
};
use nearflash_sim::{Schedule, SimTime};

/// A zone command as the host submits it on queue `qid`. Its `req.id` is the caller's, echoed
/// in the completion.
#[derive(Clone, Debug)]
pub struct NvmeZoneCommand {
    pub qid: u16,
    pub req: ZoneRequest,
}

/// A zone command in the controller.
#[derive(Debug)]
pub(crate) struct ZoneCmdState {
    /// The caller's id.
    id: u64,
    opcode: u8,
    /// The command until it is handed to the device.
    req: Option<ZoneRequest>,
    /// The answer, once the device (or the controller) gave it.
    result: Option<Result<ZoneReply, IoError>>,
}

impl ZoneCmdState {
    /// The host's view of the finished command.
    pub(crate) fn completion(self, submitted: SimTime, completed: SimTime) -> ZoneCompletion {
        ZoneCompletion {
            id: self.id,
            submitted,
            completed,
            result: self
                .result
                .expect("a zone command completes with an answer"),
        }
    }
}

impl<D: BlockDevice> Nvme<D> {
    /// Submits a zone command at `q.now()` (step 1: the SQE and the tail doorbell). Refused
    /// when the queue is full, like [`Nvme::try_submit`].
    pub fn try_submit_zone<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        cmd: NvmeZoneCommand,
        q: &mut S,
    ) -> Result<(), NvmeError> {
        self.admit(
            cmd.qid,
            q,
            |_| Ok(()),
            |nvme, now| {
                match cmd.req.cmd {
                    ZoneCommand::Append { .. } => nvme.stats.zone_appends += 1,
                    ZoneCommand::Send { .. } => nvme.stats.zone_sends += 1,
                    ZoneCommand::Report { .. } => nvme.stats.zone_receives += 1,
                }
                let mut c = Cmd::without_block_data(cmd.qid, cmd.req.id, now);
                c.zone = Some(ZoneCmdState {
                    id: cmd.req.id,
                    opcode: cmd.req.cmd.opcode(),
                    req: Some(cmd.req),
                    result: None,
                });
                c
            },
        )
    }

    /// Step 3 done for a zone command: the controller checks the namespace's command set,
    /// then an append's data comes in, or the command goes to the device.
    pub(crate) fn zone_processed<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        now: SimTime,
        q: &mut S,
    ) {
        let zoned = self.dev.is_zoned();
        let zone = self.zone_mut(tag);
        if !zoned {
            let opcode = zone.opcode;
            zone.req = None;
            zone.result = Some(Err(ZoneStatus::InvalidOpcode { opcode }.into()));
            self.post_completion(tag, now, q);
            return;
        }
        let inbound = zone
            .req
            .as_ref()
            .expect("a zone command not yet run")
            .cmd
            .inbound_bytes();
        if inbound > 0 {
            let host = &mut self.ports[0];
            let at = dma_from_memory(&mut self.link, host, now, inbound);
            q.schedule_at(at, NvmeEvent::DataIn(tag));
        } else {
            self.submit_zone_to_device(tag, now, q);
        }
    }

    /// Step 4 done: the command goes to the device under the controller's tag.
    pub(crate) fn submit_zone_to_device<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        now: SimTime,
        q: &mut S,
    ) {
        let zone = self.zone_mut(tag);
        let mut req = zone.req.take().expect("a zone command runs once");
        req.id = u64::from(tag);
        if let Err(back) = self.dev.submit_zone(req, &mut q.map(NvmeEvent::Device)) {
            // The device below says it is not zoned after all: the same answer as above.
            let zone = self.zone_mut(tag);
            zone.result = Some(Err(ZoneStatus::InvalidOpcode {
                opcode: back.cmd.opcode(),
            }
            .into()));
            self.post_completion(tag, now, q);
        }
    }

    /// Moves the device's answered zone commands on: a report's data DMA, or straight to
    /// the CQE.
    pub(crate) fn drain_zone_device<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        now: SimTime,
        q: &mut S,
    ) {
        self.dev.take_zone_completions(&mut self.zone_dev_done);
        let mut done = std::mem::take(&mut self.zone_dev_done);
        for c in done.drain(..) {
            let tag = u32::try_from(c.id).expect("the device echoes our tag");
            let outbound = c.result.as_ref().map_or(0, ZoneReply::outbound_bytes);
            let zone = self.zone_mut(tag);
            assert!(zone.result.is_none(), "a zone command is answered once");
            zone.result = Some(c.result);
            if outbound > 0 {
                // Step 5: the report goes up into host memory.
                let host = &mut self.ports[0];
                let at = dma_to_memory(&mut self.link, host, now, outbound);
                q.schedule_at(at, NvmeEvent::DataOut(tag));
            } else {
                self.post_completion(tag, now, q);
            }
        }
        self.zone_dev_done = done;
    }

    fn zone_mut(&mut self, tag: u32) -> &mut ZoneCmdState {
        self.cmds[tag as usize]
            .as_mut()
            .and_then(|c| c.zone.as_mut())
            .expect("a live zone command")
    }
}

#[cfg(test)]
mod tests;
