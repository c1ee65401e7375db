//! Commands of other command sets — NVMe Computational Programs and Subsystem Local Memory
//! (`crates/cs`) — on the same queue pairs, link and controller as block I/O, and the
//! controller's own reads of the NVM namespace for them.
//!
//! An extension command takes the NVMe path's steps 1–3 like any command (doorbell, SQE
//! fetch, firmware processing), then DMAs its host data in (`inbound_bytes`: a program chunk,
//! range descriptors, Memory Write data). It is then *ready*: the layer above takes it
//! ([`Nvme::take_ext_ready`]), does its work as its own events, and hands it back
//! ([`Nvme::finish_ext`]) with the bytes to DMA up (Memory Read data, an Identify page);
//! steps 5–6 (data up, CQE, interrupt) follow as for a read. Its completion is an
//! [`ExtCompletion`] ([`Nvme::take_ext_completions`]).
//!
//! An *internal* request ([`Nvme::submit_internal`]) is the controller reading or writing
//! the NVM namespace for itself (a Memory Copy's flash reads): it goes straight to the block
//! device, crosses no link, and its completion comes back through
//! [`Nvme::take_internal_completions`]. Its id carries [`INTERNAL_ID_BIT`], which keeps it apart
//! from the command tags the device echoes for host commands.

use crate::memory::{dma_from_memory, dma_to_memory};
use crate::{Cmd, Nvme, NvmeError, NvmeEvent};
use nearflash_blockdev::{BlockCompletion, BlockDevice, BlockRequest};
use nearflash_sim::{Schedule, SimTime};

/// Set in the id of every internal request (and only there): command tags are below 2^32.
pub const INTERNAL_ID_BIT: u64 = 1 << 63;

/// An extension command as the host submits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtCommand {
    pub qid: u16,
    /// The caller's id, echoed in [`ExtReady`] and [`ExtCompletion`].
    pub id: u64,
    /// Host data the controller DMAs in before the command runs.
    pub inbound_bytes: u64,
}

/// An extension command whose SQE and data are in the controller: the layer above runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtReady {
    pub id: u64,
    /// The controller slot; [`Nvme::finish_ext`] hands it back.
    pub tag: u32,
}

/// An extension command whose completion the host has seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtCompletion {
    pub id: u64,
    pub submitted: SimTime,
    pub completed: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExtState {
    pub(crate) id: u64,
    inbound_bytes: u64,
    /// The layer above has it (between `take_ext_ready` and `finish_ext`).
    running: bool,
}

/// The front end's lists for extension commands and internal requests.
#[derive(Debug, Default)]
pub(crate) struct ExtQueues {
    ready: Vec<ExtReady>,
    completions: Vec<ExtCompletion>,
    internal: Vec<BlockCompletion>,
    internal_outstanding: u64,
}

impl ExtQueues {
    pub(crate) fn internal_done(&mut self, c: BlockCompletion) {
        assert!(self.internal_outstanding > 0, "an internal request was out");
        self.internal_outstanding -= 1;
        self.internal.push(c);
    }

    pub(crate) fn completed(&mut self, c: ExtCompletion) {
        self.completions.push(c);
    }
}

impl<D: BlockDevice> Nvme<D> {
    /// Submits an extension command at `q.now()` (step 1: the SQE and the tail doorbell).
    /// Refused when the queue is full, like [`Nvme::try_submit`].
    pub fn try_submit_ext<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        cmd: ExtCommand,
        q: &mut S,
    ) -> Result<(), NvmeError> {
        self.admit(
            cmd.qid,
            q,
            |_| Ok(()),
            |_, now| {
                let mut c = Cmd::without_block_data(cmd.qid, cmd.id, now);
                c.ext = Some(ExtState {
                    id: cmd.id,
                    inbound_bytes: cmd.inbound_bytes,
                    running: false,
                });
                c
            },
        )
    }

    /// Step 3 done for an extension command: its host data comes in, or it is ready.
    pub(crate) fn ext_processed<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        ext: ExtState,
        now: SimTime,
        q: &mut S,
    ) {
        if ext.inbound_bytes > 0 {
            let host = &mut self.ports[0];
            let at = dma_from_memory(&mut self.link, host, now, ext.inbound_bytes);
            q.schedule_at(at, NvmeEvent::DataIn(tag));
        } else {
            self.ext_ready(tag);
        }
    }

    pub(crate) fn ext_ready(&mut self, tag: u32) {
        let cmd = self.cmds[tag as usize]
            .as_mut()
            .expect("a ready command is live");
        let ext = cmd.ext.as_mut().expect("an extension command");
        assert!(!ext.running, "an extension command becomes ready once");
        ext.running = true;
        self.ext.ready.push(ExtReady { id: ext.id, tag });
    }

    /// Moves the extension commands now ready to run into `out`.
    pub fn take_ext_ready(&mut self, out: &mut Vec<ExtReady>) {
        out.append(&mut self.ext.ready);
    }

    /// The layer above has finished the command of `tag` at `q.now()`: `outbound_bytes` go up
    /// into host memory (step 5), then the CQE (step 6).
    pub fn finish_ext<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        tag: u32,
        outbound_bytes: u64,
        q: &mut S,
    ) {
        let now = q.now();
        let cmd = self.cmds[tag as usize]
            .as_mut()
            .expect("a finished extension command is live");
        let ext = cmd.ext.as_mut().expect("an extension command");
        assert!(ext.running, "an extension command finishes after it ran");
        ext.running = false;
        if outbound_bytes > 0 {
            let host = &mut self.ports[0];
            let at = dma_to_memory(&mut self.link, host, now, outbound_bytes);
            q.schedule_at(at, NvmeEvent::DataOut(tag));
        } else {
            self.post_completion(tag, now, q);
        }
    }

    /// Moves the extension commands whose completion the host has seen into `out`.
    pub fn take_ext_completions(&mut self, out: &mut Vec<ExtCompletion>) {
        out.append(&mut self.ext.completions);
    }

    /// The controller's own request to the device at `q.now()` (no link, no queue slot).
    /// `req.id` must carry [`INTERNAL_ID_BIT`].
    pub fn submit_internal<S: Schedule<NvmeEvent<D::Event>>>(
        &mut self,
        req: BlockRequest,
        q: &mut S,
    ) {
        assert!(
            req.id & INTERNAL_ID_BIT != 0,
            "an internal request's id carries INTERNAL_ID_BIT"
        );
        self.ext.internal_outstanding += 1;
        self.dev.submit(req, &mut q.map(NvmeEvent::Device));
    }

    /// Internal requests submitted and not yet completed.
    pub fn internal_outstanding(&self) -> u64 {
        self.ext.internal_outstanding
    }

    /// Moves completed internal requests into `out`.
    pub fn take_internal_completions(&mut self, out: &mut Vec<BlockCompletion>) {
        out.append(&mut self.ext.internal);
    }
}
