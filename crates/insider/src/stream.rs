//! The state of one open virtual file on both sides of the bus (§3.5): the extents the ISC
//! unit still has to issue, the program's credit register, its input FIFO, its output FIFO,
//! the host-side buffer the runtime pops `vread` from — or, for a virtual write, the bytes the
//! host pushed and where the program's output goes in the real files.

use crate::probe::CounterProbe;
use nearflash_sim::SimTime;
use nearflash_stream::{FlitWriter, StreamProgram, WorkCost};
use std::collections::VecDeque;

/// Which way the data flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "O_RDONLY",
            Direction::Write => "O_WRONLY",
        }
    }
}

/// A run of device bytes a stream reads or writes (a piece of a real file's extent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub device_offset_bytes: u64,
    pub len_bytes: u64,
}

/// Data in an input FIFO: `bytes` long; `data` holds them in functional fidelity.
#[derive(Debug, Default)]
pub struct Chunk {
    pub bytes: u64,
    pub data: Vec<u8>,
    /// The stream's last input.
    pub last: bool,
}

/// How the drive program is run: the real program (functional) and its cost.
pub struct ProgramRun {
    pub name: String,
    pub program: Option<Box<dyn StreamProgram>>,
    pub cost: WorkCost,
    /// Timing fidelity: output bytes per input byte.
    pub output_per_input: f64,
    /// §5.3: a cap on the program's processing rate.
    pub throttle_mb_s: Option<f64>,
}

pub struct Stream {
    pub fd: u32,
    pub slot: usize,
    pub dir: Direction,
    pub run: ProgramRun,
    /// §3.5 pre-issue and host buffering; when false the drive works only for a pending vread.
    pub pipelined: bool,
    /// The program reads its parameter FIFO first: it starts on the host's first `vread` or
    /// `vwrite`, after every `send_params` before it (the ISC unit may already have filled
    /// its input FIFO).
    pub armed: bool,

    /// Read: the real files' device ranges in stream order. Write: where output goes.
    pub extents: Vec<Extent>,
    pub ext_idx: usize,
    pub ext_off: u64,
    pub total_in_bytes: u64,
    pub issued_in_bytes: u64,

    /// The credit register and the requests its credits are out on.
    pub credits: u32,
    pub inflight_chunks: u32,
    pub fifo: VecDeque<Chunk>,
    pub slot_busy: bool,
    pub consumed_in_bytes: u64,
    pub produced_out_bytes: u64,
    pub writer: FlitWriter,
    /// Input bytes past the last whole flit, carried into the next chunk: chunk boundaries
    /// (extents, scatter-gather pieces, `vwrite` lengths) need not fall on flit boundaries,
    /// but the program sees one byte stream in whole flits until its last.
    pub partial_flit: Vec<u8>,
    pub program_ended: bool,

    /// Output FIFO: produced, not yet moved by DMA.
    pub out_fifo: VecDeque<(u64, Vec<u8>)>,
    pub out_fifo_bytes: u64,
    /// The slot's output for the chunk it is processing, visible when it finishes.
    pub slot_out: (u64, Vec<u8>),
    pub slot_chunk_last: bool,
    pub dma_inflight: VecDeque<(u64, Vec<u8>)>,
    pub dma_inflight_bytes: u64,
    pub host_buf: VecDeque<u8>,
    pub host_buf_bytes: u64,
    pub host_capacity_bytes: u64,
    /// Non-pipelined: the host buffer fill a pending vread waits for (0: none pending).
    pub want_bytes: u64,
    /// Bytes the host has taken with vread.
    pub read_bytes: u64,

    /// Write: chunks crossing PCIe towards the input FIFO, in order.
    pub h2d: VecDeque<Chunk>,
    pub h2d_inflight_bytes: u64,
    pub wbuf: Vec<u8>,
    pub wbuf_bytes: u64,
    pub written_bytes: u64,
    pub writes_inflight: u32,

    pub fault: Option<String>,
    /// The program's own fault in its slot, typed (`fault` holds its message).
    pub slot_fault: Option<crate::isc::SlotFault>,
    pub opened_at: SimTime,
    /// Input bytes consumed, read after every chunk at the times an experiment asks about
    /// (rate time series); none unless one armed it.
    pub consumed_probe: Option<CounterProbe>,
}

impl Stream {
    pub fn new(fd: u32, slot: usize, dir: Direction, run: ProgramRun, credits: u32) -> Stream {
        Stream {
            fd,
            slot,
            dir,
            run,
            pipelined: true,
            armed: false,
            extents: Vec::new(),
            ext_idx: 0,
            ext_off: 0,
            total_in_bytes: 0,
            issued_in_bytes: 0,
            credits,
            inflight_chunks: 0,
            fifo: VecDeque::new(),
            slot_busy: false,
            consumed_in_bytes: 0,
            produced_out_bytes: 0,
            writer: FlitWriter::new(),
            partial_flit: Vec::new(),
            program_ended: false,
            out_fifo: VecDeque::new(),
            out_fifo_bytes: 0,
            slot_out: (0, Vec::new()),
            slot_chunk_last: false,
            dma_inflight: VecDeque::new(),
            dma_inflight_bytes: 0,
            host_buf: VecDeque::new(),
            host_buf_bytes: 0,
            host_capacity_bytes: 0,
            want_bytes: 0,
            read_bytes: 0,
            h2d: VecDeque::new(),
            h2d_inflight_bytes: 0,
            wbuf: Vec::new(),
            wbuf_bytes: 0,
            written_bytes: 0,
            writes_inflight: 0,
            fault: None,
            slot_fault: None,
            opened_at: SimTime::ZERO,
            consumed_probe: None,
        }
    }

    /// The next device range to read, at most `max_bytes`, advancing the cursor.
    pub fn next_range(&mut self, max_bytes: u64) -> Option<Extent> {
        while let Some(e) = self.extents.get(self.ext_idx) {
            if self.ext_off < e.len_bytes {
                let n = max_bytes.min(e.len_bytes - self.ext_off);
                let r = Extent {
                    device_offset_bytes: e.device_offset_bytes + self.ext_off,
                    len_bytes: n,
                };
                self.ext_off += n;
                return Some(r);
            }
            self.ext_idx += 1;
            self.ext_off = 0;
        }
        None
    }

    /// Every output byte reached the host buffer (or the program failed).
    pub fn output_complete(&self) -> bool {
        self.fault.is_some()
            || (self.program_ended && self.out_fifo_bytes == 0 && self.dma_inflight_bytes == 0)
    }

    /// Output the host has or will get from data already read: the host buffer, DMA in
    /// flight, the output FIFO and (as if passed through) input read but not yet processed.
    fn prospective_output_bytes(&self) -> u64 {
        self.host_buf_bytes
            + self.dma_inflight_bytes
            + self.out_fifo_bytes
            + (self.issued_in_bytes - self.consumed_in_bytes)
    }

    /// True when the ISC unit has something to issue for this stream now.
    pub fn wants_issue(&self) -> bool {
        self.dir == Direction::Read
            && self.fault.is_none()
            && self.issued_in_bytes < self.total_in_bytes
            && self.credits > 0
            && (self.pipelined || self.want_bytes > self.prospective_output_bytes())
    }
}
