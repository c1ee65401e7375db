//! The timed flash backbone. Each die and each channel bus is a server with a FIFO queue:
//!
//! * read: die busy for tR (array → page register), then the channel carries the data out;
//!   the die stays occupied until its register is drained (no cache reads).
//! * program: the die is claimed, the channel carries the data in, then the die is busy for
//!   tPROG; the page lands in the store when tPROG completes.
//! * erase: die busy for tBERS.
//!
//! Multi-plane operations address one block per plane at the same page offset: one tR or
//! tPROG for all planes, one bus transfer carrying every plane's page. A *one-shot* program
//! (`flash.one_shot_pages` = k > 1, 3D TLC's word-line program) covers k consecutive pages
//! of each addressed block: one transfer carries all k × planes pages, then the die is busy
//! one tPROG for the word line. Waiting times and utilization fall out of these events;
//! nothing is computed in closed form.
//!
//! Faults: injected program/erase failures and wear-out turn blocks bad and are reported in
//! the completion; with `[flash.media]` on, every read is decoded by the controller's ECC
//! when its transfer ends (`media.rs`), and a read that does not decode is sensed again
//! (read-retry: the die stays held, each step costs another tR and another transfer) until it
//! does or the steps run out (`OpStatus::Uncorrectable`, the codeword's data left corrupt); a power cut (`power_cut`) tears the pages of programs and erases that were
//! in progress, leaving garbage that only checksums can expose.

use crate::config::{FlashConfig, ONE_SHOT_PAGES_MAX, PLANES_PER_DIE_MAX};
use crate::geometry::{BlockId, DieId, Geometry};
use crate::media::{MediaState, MediaStats, Rber};
use crate::nand::NandState;
use crate::store::PageStore;
use nearflash_sim::{Schedule, SimDuration, SimRng, SimTime, TraceEvent};
use std::collections::VecDeque;

pub const PLANES_MAX: usize = PLANES_PER_DIE_MAX as usize;

/// Most pages one transfer carries: a one-shot program on every plane.
const TRANSFER_PAGES_MAX: usize = PLANES_MAX * ONE_SHOT_PAGES_MAX as usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    Erase,
}

/// One (possibly multi-plane) NAND operation on one die.
#[derive(Clone, Debug)]
pub struct FlashOp {
    pub kind: OpKind,
    pub die: DieId,
    /// Page within each addressed block (ignored by erases); a one-shot program's first page.
    pub page: u32,
    /// Consecutive pages of each addressed block the op covers: 1, or — a one-shot program
    /// of a native (not SLC-mode) word line — `flash.one_shot_pages`, starting at a multiple
    /// of it. Reads and erases cover one.
    pub pages: u32,
    /// Bit `p` set ⇒ plane `p` is addressed.
    pub plane_mask: u8,
    /// Block within plane `p`, for each addressed plane.
    pub plane_blocks: [u32; PLANES_MAX],
    /// Caller's tag, returned in the completion.
    pub tag: u64,
    /// Program: each addressed plane's page data in plane order (a one-shot program: page
    /// `page` of every plane, then page `page + 1` of every plane, ...). Read: filled in
    /// functional fidelity. Empty in timing fidelity.
    pub data: Vec<u8>,
    /// Spare bytes, as `data`.
    pub oob: Vec<u8>,
    /// The addressed blocks are used in SLC mode (one bit per cell): the read or program
    /// takes the SLC-mode latency set with `Backbone::set_slc_mode_latencies` instead of the
    /// native (per-page-type) one. Erases ignore it.
    pub slc: bool,
}

impl FlashOp {
    pub fn planes(&self) -> u32 {
        self.plane_mask.count_ones()
    }

    pub fn plane_iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..PLANES_MAX as u32).filter(move |p| self.plane_mask & (1 << p) != 0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpStatus {
    Ok,
    /// Bit `p` set ⇒ the operation failed on plane `p`, whose block is now bad.
    Failed {
        plane_mask: u8,
    },
    /// Read only: bit `p` set ⇒ plane `p`'s page held a codeword the ECC could not correct
    /// after every read-retry step; its data is wrong and must not reach the host.
    Uncorrectable {
        plane_mask: u8,
    },
}

#[derive(Clone, Debug)]
pub struct FlashCompletion {
    pub op: FlashOp,
    pub status: OpStatus,
    /// Read-retry steps the read needed (0 without media errors).
    pub read_retries: u32,
    /// Bit `p` set ⇒ this read made plane `p`'s block weak: it reached
    /// `flash.media.retire_error_reads` reads that needed a retry or failed. The firmware
    /// should retire it.
    pub weak_planes: u8,
}

/// The backbone's own events: a die or a channel finished its current step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlashEvent {
    DieDone(u32),
    ChannelDone(u32),
}

impl TraceEvent for FlashEvent {
    fn hash_word(&self) -> u64 {
        match *self {
            FlashEvent::DieDone(d) => 1 << 32 | u64::from(d),
            FlashEvent::ChannelDone(c) => 2 << 32 | u64::from(c),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Queued,
    DieWork,
    WaitBus,
    Transfer,
}

#[derive(Clone)]
struct Slot {
    op: FlashOp,
    phase: Phase,
    /// Program planes whose block was already bad when the program reached the die: the
    /// chip reports a program failure for them and their pages are left untouched.
    refused: u8,
    /// Read: planes whose block this read made weak (see `FlashCompletion::weak_planes`).
    weak: u8,
    /// Read with media errors on: the ECC's progress over the read's codewords.
    decode: Option<Box<Decode>>,
}

/// The controller's ECC state for one read across its retry steps.
#[derive(Clone)]
struct Decode {
    /// Retry steps taken so far.
    step: u32,
    /// Codewords not yet decoded: (plane index within the op × codewords per page + cw,
    /// its fixed errors — the same at every step — or `None` when they alone exceed t).
    undecoded: Vec<(u32, Option<u32>)>,
    /// RBER of each addressed plane's page at the first sensing.
    rber: Vec<Rber>,
}

#[derive(Clone, Default)]
struct Server {
    current: Option<u32>,
    queue: VecDeque<u32>,
    busy_since: SimTime,
    busy_ns: u64,
}

/// Counters of what the backbone did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlashStats {
    /// Operations the dies executed: one multi-plane read, program or erase is one.
    pub die_ops: u64,
    /// Pages read, counted per plane (a two-plane read is two).
    pub page_reads: u64,
    pub page_programs: u64,
    pub block_erases: u64,
    pub program_failures: u64,
    pub erase_failures: u64,
}

/// What a power cut interrupted.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PowerCutReport {
    pub torn_program_pages: u64,
    /// Programs cut before tPROG began (data still on the bus): their pages stay erased.
    pub dropped_programs: u64,
    pub torn_erase_blocks: u64,
    pub lost_reads: u64,
}

pub struct Backbone {
    geo: Geometry,
    cfg: FlashConfig,
    nand: NandState,
    store: Box<dyn PageStore>,
    slots: Vec<Option<Slot>>,
    free_slots: Vec<u32>,
    dies: Vec<Server>,
    channels: Vec<Server>,
    /// Bus time of a transfer of `i + 1` pages (data + spare) including command cycles: up
    /// to every plane's pages of a one-shot program.
    transfer: [SimDuration; TRANSFER_PAGES_MAX],
    read_latency: Vec<SimDuration>,
    program_latency: Vec<SimDuration>,
    erase_latency: SimDuration,
    /// SLC-mode (read, program) latencies, for operations flagged `slc`.
    slc_latency: Option<(SimDuration, SimDuration)>,
    stats: FlashStats,
    in_flight: usize,
    /// Media error model, when `[flash.media]` is enabled.
    media: Option<MediaState>,
}

fn latency_table(base_us: f64, by_type: &Option<Vec<f64>>) -> Vec<SimDuration> {
    match by_type {
        Some(t) => t.iter().map(|&us| SimDuration::from_us_f64(us)).collect(),
        None => vec![SimDuration::from_us_f64(base_us)],
    }
}

impl Backbone {
    /// A copy in the same state — operations in flight, dies and buses, wear, counters —
    /// over a copy of its store; `None` when the store cannot be copied (a file). The copy
    /// continues exactly as this backbone would (with a copy of the run's `Sim`).
    pub fn try_clone(&self) -> Option<Backbone> {
        Some(Backbone {
            geo: self.geo.clone(),
            cfg: self.cfg.clone(),
            nand: self.nand.clone(),
            store: self.store.try_clone()?,
            slots: self.slots.clone(),
            free_slots: self.free_slots.clone(),
            dies: self.dies.clone(),
            channels: self.channels.clone(),
            transfer: self.transfer,
            read_latency: self.read_latency.clone(),
            program_latency: self.program_latency.clone(),
            erase_latency: self.erase_latency,
            slc_latency: self.slc_latency,
            stats: self.stats.clone(),
            in_flight: self.in_flight,
            media: self.media.clone(),
        })
    }

    /// A backbone over `store`; `cfg` must have passed `validate`.
    pub fn new(cfg: &FlashConfig, store: Box<dyn PageStore>) -> Self {
        let geo = Geometry::from_config(cfg);
        let page_bytes = f64::from(cfg.page_size_bytes + cfg.oob_size_bytes);
        let mut transfer = [SimDuration::ZERO; TRANSFER_PAGES_MAX];
        for (i, t) in transfer.iter_mut().enumerate() {
            let bytes = page_bytes * (i + 1) as f64;
            // MB/s = bytes per microsecond.
            *t = SimDuration::from_ns(cfg.command_overhead_ns)
                + SimDuration::from_us_f64(bytes / cfg.channel_rate_mb_s);
        }
        let mut nand = NandState::new(&geo);
        nand.age(cfg.media.initial_pe_cycles);
        let media = cfg
            .media
            .enabled
            .then(|| MediaState::new(&cfg.media, geo.block_count(), geo.page_count()));
        Backbone {
            nand,
            media,
            dies: (0..geo.die_count()).map(|_| Server::default()).collect(),
            channels: (0..geo.channels).map(|_| Server::default()).collect(),
            geo,
            cfg: cfg.clone(),
            store,
            slots: Vec::new(),
            free_slots: Vec::new(),
            transfer,
            read_latency: latency_table(cfg.read_latency_us, &cfg.read_latency_by_page_type_us),
            program_latency: latency_table(
                cfg.program_latency_us,
                &cfg.program_latency_by_page_type_us,
            ),
            erase_latency: SimDuration::from_us_f64(cfg.erase_latency_us),
            slc_latency: None,
            stats: FlashStats::default(),
            in_flight: 0,
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn config(&self) -> &FlashConfig {
        &self.cfg
    }

    pub fn nand(&self) -> &NandState {
        &self.nand
    }

    pub fn nand_mut(&mut self) -> &mut NandState {
        &mut self.nand
    }

    pub fn store(&self) -> &dyn PageStore {
        self.store.as_ref()
    }

    pub fn store_mut(&mut self) -> &mut dyn PageStore {
        self.store.as_mut()
    }

    pub fn stats(&self) -> &FlashStats {
        &self.stats
    }

    /// What the ECC and read-retry did; `None` when media errors are off.
    pub fn media_stats(&self) -> Option<&MediaStats> {
        self.media.as_ref().map(|m| &m.stats)
    }

    /// Operations submitted and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Bus time of one transfer of `pages` pages.
    pub fn transfer_time(&self, pages: u32) -> SimDuration {
        self.transfer[pages as usize - 1]
    }

    pub fn read_latency(&self, page: u32) -> SimDuration {
        self.read_latency[page as usize % self.read_latency.len()]
    }

    pub fn program_latency(&self, page: u32) -> SimDuration {
        self.program_latency[page as usize % self.program_latency.len()]
    }

    pub fn erase_latency(&self) -> SimDuration {
        self.erase_latency
    }

    /// Sets the latencies of operations flagged `slc` (blocks of a multi-bit die used in SLC
    /// mode, e.g. an FTL's SLC write cache). Without this, flagged operations take the
    /// native latencies.
    pub fn set_slc_mode_latencies(&mut self, read: SimDuration, program: SimDuration) {
        self.slc_latency = Some((read, program));
    }

    /// The array time of a read of `page`, in SLC mode or not.
    fn read_time(&self, page: u32, slc: bool) -> SimDuration {
        match self.slc_latency {
            Some((read, _)) if slc => read,
            _ => self.read_latency(page),
        }
    }

    /// The array time of a program of `page`, in SLC mode or not.
    fn program_time(&self, page: u32, slc: bool) -> SimDuration {
        match self.slc_latency {
            Some((_, program)) if slc => program,
            _ => self.program_latency(page),
        }
    }

    /// Busy time of each die so far (an op in progress counts up to `now`).
    pub fn die_busy_ns(&self, now: SimTime) -> Vec<u64> {
        self.dies.iter().map(|s| busy_until(s, now)).collect()
    }

    pub fn channel_busy_ns(&self, now: SimTime) -> Vec<u64> {
        self.channels.iter().map(|s| busy_until(s, now)).collect()
    }

    /// Queues `op` on its die.
    pub fn submit(&mut self, op: FlashOp, q: &mut impl Schedule<FlashEvent>) {
        assert!(op.die.0 < self.geo.die_count(), "die out of range");
        assert!(op.plane_mask != 0, "operation addresses no plane");
        assert!(
            u32::from(op.plane_mask) < 1 << self.geo.planes_per_die,
            "plane mask {:#b} beyond {} planes",
            op.plane_mask,
            self.geo.planes_per_die
        );
        if op.pages != 1 {
            let k = self.cfg.one_shot_pages;
            assert!(
                op.kind == OpKind::Program && !op.slc && k > 1 && op.pages == k,
                "only a native program covers more than one page: a one-shot program of \
                 flash.one_shot_pages = {k} pages (got {} pages, {:?}, slc {})",
                op.pages,
                op.kind,
                op.slc
            );
            assert!(
                op.page.is_multiple_of(k),
                "a one-shot program starts a word line (page {} is not a multiple of {k})",
                op.page
            );
        }
        if op.kind == OpKind::Program && self.store.holds_data() {
            let pages = (op.planes() * op.pages) as usize;
            assert_eq!(op.data.len(), pages * self.geo.page_size_bytes as usize);
            assert_eq!(op.oob.len(), pages * self.geo.oob_size_bytes as usize);
        }
        let die = op.die.0;
        let slot = Slot {
            op,
            phase: Phase::Queued,
            refused: 0,
            weak: 0,
            decode: None,
        };
        let id = match self.free_slots.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(slot);
                id
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        self.in_flight += 1;
        self.dies[die as usize].queue.push_back(id);
        if self.dies[die as usize].current.is_none() {
            self.start_die(die, q);
        }
    }

    fn slot(&mut self, id: u32) -> &mut Slot {
        self.slots[id as usize].as_mut().expect("live op slot")
    }

    fn start_die(&mut self, die: u32, q: &mut impl Schedule<FlashEvent>) {
        let now = q.now();
        let server = &mut self.dies[die as usize];
        debug_assert!(server.current.is_none());
        let Some(id) = server.queue.pop_front() else {
            return;
        };
        server.current = Some(id);
        server.busy_since = now;
        let (kind, page, slc) = {
            let s = self.slot(id);
            (s.op.kind, s.op.page, s.op.slc)
        };
        match kind {
            OpKind::Read => {
                self.slot(id).phase = Phase::DieWork;
                q.schedule_in(self.read_time(page, slc), FlashEvent::DieDone(die));
            }
            OpKind::Program => {
                self.apply_program_order(id);
                self.request_bus(id, q);
            }
            OpKind::Erase => {
                self.slot(id).phase = Phase::DieWork;
                q.schedule_in(self.erase_latency, FlashEvent::DieDone(die));
            }
        }
    }

    /// The NAND in-order rule, checked when the program reaches the die. A block that turned
    /// bad after the program was queued (an earlier program to it failed) cannot take it: like
    /// a real chip, the program then ends with a failure status for that plane. Firmware
    /// cannot avoid this race — the op was already on the die's queue when the block failed.
    fn apply_program_order(&mut self, id: u32) {
        let (die, page, pages, mask, blocks) = {
            let op = &self.slot(id).op;
            (op.die, op.page, op.pages, op.plane_mask, op.plane_blocks)
        };
        let mut refused = 0u8;
        for p in 0..PLANES_MAX as u32 {
            if mask & (1 << p) != 0 {
                let b = self.geo.block_id(die, p, blocks[p as usize]);
                if self.nand.is_bad(b) {
                    refused |= 1 << p;
                } else {
                    for k in 0..pages {
                        self.nand.on_program(b, page + k);
                    }
                }
            }
        }
        self.slot(id).refused = refused;
    }

    fn request_bus(&mut self, id: u32, q: &mut impl Schedule<FlashEvent>) {
        let die = self.slot(id).op.die;
        let ch = self.geo.channel_of(die);
        self.slot(id).phase = Phase::WaitBus;
        let server = &mut self.channels[ch as usize];
        server.queue.push_back(id);
        if server.current.is_none() {
            self.start_channel(ch, q);
        }
    }

    fn start_channel(&mut self, ch: u32, q: &mut impl Schedule<FlashEvent>) {
        let now = q.now();
        let server = &mut self.channels[ch as usize];
        let Some(id) = server.queue.pop_front() else {
            return;
        };
        server.current = Some(id);
        server.busy_since = now;
        let pages = self.slot(id).op.planes() * self.slot(id).op.pages;
        self.slot(id).phase = Phase::Transfer;
        q.schedule_in(self.transfer_time(pages), FlashEvent::ChannelDone(ch));
    }

    /// Handles one backbone event; finished operations are appended to `done`.
    pub fn handle(
        &mut self,
        ev: FlashEvent,
        q: &mut impl Schedule<FlashEvent>,
        rng: &mut SimRng,
        done: &mut Vec<FlashCompletion>,
    ) {
        match ev {
            FlashEvent::DieDone(die) => self.on_die_done(die, q, rng, done),
            FlashEvent::ChannelDone(ch) => self.on_channel_done(ch, q, rng, done),
        }
    }

    fn on_die_done(
        &mut self,
        die: u32,
        q: &mut impl Schedule<FlashEvent>,
        rng: &mut SimRng,
        done: &mut Vec<FlashCompletion>,
    ) {
        let id = self.dies[die as usize]
            .current
            .expect("die done while idle");
        debug_assert_eq!(self.slot(id).phase, Phase::DieWork);
        match self.slot(id).op.kind {
            OpKind::Read => {
                self.sense(id);
                self.load_register(id);
                self.request_bus(id, q);
            }
            OpKind::Program => {
                let status = self.land_program(id, q.now(), rng);
                self.finish(id, status, q, done);
            }
            OpKind::Erase => {
                let status = self.land_erase(id, rng);
                self.finish(id, status, q, done);
            }
        }
    }

    fn on_channel_done(
        &mut self,
        ch: u32,
        q: &mut impl Schedule<FlashEvent>,
        rng: &mut SimRng,
        done: &mut Vec<FlashCompletion>,
    ) {
        let now = q.now();
        let server = &mut self.channels[ch as usize];
        let id = server.current.take().expect("channel done while idle");
        server.busy_ns += now.since(server.busy_since).as_ns();
        self.start_channel(ch, q);
        match self.slot(id).op.kind {
            OpKind::Read => {
                if self.slot(id).decode.as_ref().is_none_or(|d| d.step == 0) {
                    self.stats.page_reads += u64::from(self.slot(id).op.planes());
                }
                match self.decode(id, q.now(), rng) {
                    Some(status) => self.finish(id, status, q, done),
                    None => {
                        // Read-retry: the die (still held) senses the page again with shifted
                        // references, then the register crosses the bus again.
                        let (page, die) = (self.slot(id).op.page, self.slot(id).op.die.0);
                        let slc = self.slot(id).op.slc;
                        self.slot(id).phase = Phase::DieWork;
                        q.schedule_in(self.read_time(page, slc), FlashEvent::DieDone(die));
                    }
                }
            }
            OpKind::Program => {
                let page = self.slot(id).op.page;
                let die = self.slot(id).op.die.0;
                let slc = self.slot(id).op.slc;
                self.slot(id).phase = Phase::DieWork;
                q.schedule_in(self.program_time(page, slc), FlashEvent::DieDone(die));
            }
            OpKind::Erase => unreachable!("erases do not use the bus"),
        }
    }

    /// Media errors: a sensing (first read or retry step) disturbs every addressed block.
    fn sense(&mut self, id: u32) {
        let Some(media) = self.media.as_mut() else {
            return;
        };
        let op = &self.slots[id as usize].as_ref().expect("live op slot").op;
        for p in op.plane_iter() {
            media.on_sense(self.geo.block_id(op.die, p, op.plane_blocks[p as usize]));
        }
    }

    /// The ECC decodes the read's codewords that are still undecoded at the current retry
    /// step. Returns the read's status when it is done, `None` when it needs another step.
    fn decode(&mut self, id: u32, now: SimTime, rng: &mut SimRng) -> Option<OpStatus> {
        let Some(media) = self.media.as_mut() else {
            return Some(OpStatus::Ok);
        };
        let cpp = media.codewords_per_page(self.geo.page_size_bytes);
        let slot = self.slots[id as usize].as_mut().expect("live op slot");
        let op = &slot.op;
        let decode = slot.decode.get_or_insert_with(|| {
            let cfg = &media.cfg;
            let mut rber = Vec::new();
            let mut undecoded = Vec::new();
            for (i, p) in op.plane_iter().enumerate() {
                let b = self.geo.block_id(op.die, p, op.plane_blocks[p as usize]);
                let page = self.geo.page_id(b, op.page);
                let pe = self.nand.pe_cycles(b);
                match media.page_rber(b, page, pe, now) {
                    Some(r) => {
                        rber.push(r);
                        for cw in 0..cpp {
                            let fixed = cfg.draw_codeword_errors(r.fixed.min(0.5), rng);
                            undecoded.push((i as u32 * cpp + cw, fixed));
                        }
                    }
                    // Erased page: nothing to decode.
                    None => rber.push(Rber {
                        fixed: 0.0,
                        shift: 0.0,
                    }),
                }
            }
            Box::new(Decode {
                step: 0,
                undecoded,
                rber,
            })
        });
        let cfg = &media.cfg;
        let step = decode.step;
        let t = cfg.correctable_bits;
        decode.undecoded.retain(|&(cw, fixed)| {
            let Some(fixed) = fixed else {
                return true; // worn out: no reference shift brings it back
            };
            let shift = cfg.shift_at_step(decode.rber[(cw / cpp) as usize], step);
            match cfg.draw_errors_up_to(shift, t - fixed, rng) {
                Some(fresh) => {
                    let bits = fixed + fresh;
                    media.stats.bits_corrected += u64::from(bits);
                    media.stats.codewords_corrected += u64::from(bits > 0);
                    false
                }
                None => true,
            }
        });
        if !decode.undecoded.is_empty() && step < cfg.read_retry_steps_max {
            decode.step += 1;
            media.stats.read_retries_by_step[step as usize] += 1;
            return None;
        }
        Some(self.finish_decode(id, rng))
    }

    /// Ends a read's decoding: planes with a codeword left undecoded are uncorrectable and
    /// their data is left as the failed decode leaves it (wrong); blocks of reads that needed
    /// help count towards their retirement.
    fn finish_decode(&mut self, id: u32, rng: &mut SimRng) -> OpStatus {
        let media = self.media.as_mut().expect("media on");
        let cpp = media.codewords_per_page(self.geo.page_size_bytes);
        let t = media.cfg.correctable_bits;
        let cw_bytes = media.cfg.codeword_bytes as usize;
        let ps = self.geo.page_size_bytes as usize;
        let slot = self.slots[id as usize].as_mut().expect("live op slot");
        let decode = slot.decode.as_ref().expect("decoded read");
        let planes: Vec<u32> = slot.op.plane_iter().collect();
        let mut uncorrectable = 0u8;
        // The positions of the wrong bits come from a stream of their own, seeded by one draw
        // of the run's RNG that both fidelities make: a timing run (no data to corrupt) stays
        // event for event the same as the functional run of the same seed.
        let mut flips =
            (!decode.undecoded.is_empty()).then(|| SimRng::seed_from_u64(rng.next_u64()));
        for &(cw, _) in &decode.undecoded {
            let i = (cw / cpp) as usize;
            uncorrectable |= 1 << planes[i];
            let Some(flips) = flips.as_mut().filter(|_| !slot.op.data.is_empty()) else {
                continue;
            };
            // More than t bits are wrong; flip t + 1 of them.
            let start = i * ps + (cw % cpp) as usize * cw_bytes;
            let end = (start + cw_bytes).min((i + 1) * ps);
            let bits = ((end - start) * 8) as u64;
            for _ in 0..=t {
                let bit = flips.below(bits) as usize;
                slot.op.data[start + bit / 8] ^= 1 << (bit % 8);
            }
        }
        media.stats.uncorrectable_page_reads += u64::from(uncorrectable.count_ones());
        let helped = decode.step > 0 || uncorrectable != 0;
        let mut weak = 0u8;
        if helped {
            for &p in &planes {
                let b = self
                    .geo
                    .block_id(slot.op.die, p, slot.op.plane_blocks[p as usize]);
                if media.on_error_read(b) {
                    weak |= 1 << p;
                }
            }
        }
        slot.weak = weak;
        if uncorrectable == 0 {
            OpStatus::Ok
        } else {
            OpStatus::Uncorrectable {
                plane_mask: uncorrectable,
            }
        }
    }

    /// Functional fidelity: the array contents move to the page register at the end of tR.
    fn load_register(&mut self, id: u32) {
        if !self.store.holds_data() {
            return;
        }
        let (ps, os) = (
            self.geo.page_size_bytes as usize,
            self.geo.oob_size_bytes as usize,
        );
        let mut op = std::mem::replace(&mut self.slot(id).op, placeholder_op());
        let planes = op.planes() as usize;
        op.data.resize(planes * ps, 0);
        op.oob.resize(planes * os, 0);
        for (i, p) in op.plane_iter().enumerate().collect::<Vec<_>>() {
            let b = self.geo.block_id(op.die, p, op.plane_blocks[p as usize]);
            let page = self.geo.page_id(b, op.page);
            self.store.read(
                page,
                &mut op.data[i * ps..(i + 1) * ps],
                &mut op.oob[i * os..(i + 1) * os],
            );
        }
        self.slot(id).op = op;
    }

    fn land_program(&mut self, id: u32, now: SimTime, rng: &mut SimRng) -> OpStatus {
        let (ps, os) = (
            self.geo.page_size_bytes as usize,
            self.geo.oob_size_bytes as usize,
        );
        let fail_p = self.cfg.program_fail_probability;
        // The slot is borrowed in place, beside the fields the loop updates (moving the op
        // out and back cost a copy of it per program).
        let slot = self.slots[id as usize].as_ref().expect("live op slot");
        let (op, refused) = (&slot.op, slot.refused);
        let planes = op.planes() as usize;
        let mut failed = 0u8;
        for (i, p) in op.plane_iter().enumerate() {
            let b = self.geo.block_id(op.die, p, op.plane_blocks[p as usize]);
            let word_line = op.page..op.page + op.pages;
            self.stats.page_programs += u64::from(op.pages);
            if refused & (1 << p) == 0 {
                if let Some(m) = self.media.as_mut() {
                    for page in word_line.clone() {
                        m.on_program(self.geo.page_id(b, page), now);
                    }
                }
            }
            if refused & (1 << p) != 0 {
                failed |= 1 << p;
                self.stats.program_failures += 1;
            } else if word_line.clone().any(|_| rng.chance(fail_p)) {
                // A page of the word line failed: the plane's block is bad and every page
                // the op addressed on it holds junk.
                failed |= 1 << p;
                self.stats.program_failures += 1;
                self.nand.mark_bad(b);
                // The junk comes from a stream of its own, seeded by one draw both fidelities
                // make (see `finish_decode`).
                let junk_seed = rng.next_u64();
                if self.store.holds_data() {
                    let mut junk = vec![0u8; ps + os];
                    let mut junk_rng = SimRng::seed_from_u64(junk_seed);
                    for page in word_line {
                        junk_rng.fill_bytes(&mut junk);
                        self.store
                            .program(self.geo.page_id(b, page), &junk[..ps], &junk[ps..]);
                    }
                }
            } else if self.store.holds_data() {
                for (k, page) in word_line.enumerate() {
                    let at = k * planes + i;
                    self.store.program(
                        self.geo.page_id(b, page),
                        &op.data[at * ps..(at + 1) * ps],
                        &op.oob[at * os..(at + 1) * os],
                    );
                }
            }
        }
        if failed == 0 {
            OpStatus::Ok
        } else {
            OpStatus::Failed { plane_mask: failed }
        }
    }

    fn land_erase(&mut self, id: u32, rng: &mut SimRng) -> OpStatus {
        let fail_p = self.cfg.erase_fail_probability;
        let endurance = self.cfg.endurance_pe_cycles;
        let ppb = self.geo.pages_per_block;
        let (die, mask, blocks) = {
            let op = &self.slot(id).op;
            (op.die, op.plane_mask, op.plane_blocks)
        };
        let mut failed = 0u8;
        for p in 0..PLANES_MAX as u32 {
            if mask & (1 << p) == 0 {
                continue;
            }
            let b = self.geo.block_id(die, p, blocks[p as usize]);
            self.stats.block_erases += 1;
            if self.nand.pe_cycles(b) >= endurance || rng.chance(fail_p) {
                failed |= 1 << p;
                self.stats.erase_failures += 1;
                self.nand.mark_bad(b);
            } else {
                self.nand.on_erase(b);
                self.store.erase(b, ppb);
                if let Some(m) = self.media.as_mut() {
                    m.on_erase(b, self.geo.page_id(b, 0), ppb);
                }
            }
        }
        if failed == 0 {
            OpStatus::Ok
        } else {
            OpStatus::Failed { plane_mask: failed }
        }
    }

    fn finish(
        &mut self,
        id: u32,
        status: OpStatus,
        q: &mut impl Schedule<FlashEvent>,
        done: &mut Vec<FlashCompletion>,
    ) {
        let now = q.now();
        let slot = self.slots[id as usize].take().expect("live op slot");
        self.free_slots.push(id);
        self.in_flight -= 1;
        self.stats.die_ops += 1;
        let die = slot.op.die.0 as usize;
        let server = &mut self.dies[die];
        debug_assert_eq!(server.current, Some(id));
        server.current = None;
        server.busy_ns += now.since(server.busy_since).as_ns();
        done.push(FlashCompletion {
            op: slot.op,
            status,
            read_retries: slot.decode.map_or(0, |d| d.step),
            weak_planes: slot.weak,
        });
        self.start_die(die as u32, q);
    }

    /// Power is lost now: programs in their tPROG phase leave garbage in their pages, programs
    /// still transferring their data leave their pages erased, erases in progress leave
    /// garbage in every page of their blocks (which are closed: the firmware must erase them
    /// again), and every queued operation is dropped. The caller drops the events.
    pub fn power_cut(&mut self, rng: &mut SimRng) -> PowerCutReport {
        let mut report = PowerCutReport::default();
        let (ps, os) = (
            self.geo.page_size_bytes as usize,
            self.geo.oob_size_bytes as usize,
        );
        let ppb = self.geo.pages_per_block;
        let mut junk = vec![0u8; ps + os];
        for die in 0..self.dies.len() {
            let Some(id) = self.dies[die].current else {
                continue;
            };
            let slot = self.slots[id as usize].as_ref().expect("live op slot");
            let op = &slot.op;
            let blocks: Vec<BlockId> = op
                .plane_iter()
                .map(|p| self.geo.block_id(op.die, p, op.plane_blocks[p as usize]))
                .collect();
            match (op.kind, slot.phase) {
                (OpKind::Program, Phase::DieWork) => {
                    let refused: Vec<BlockId> = op
                        .plane_iter()
                        .filter(|p| slot.refused & (1 << p) != 0)
                        .map(|p| self.geo.block_id(op.die, p, op.plane_blocks[p as usize]))
                        .collect();
                    for b in blocks.into_iter().filter(|b| !refused.contains(b)) {
                        for page in op.page..op.page + op.pages {
                            rng.fill_bytes(&mut junk);
                            let pid = self.geo.page_id(b, page);
                            self.store.program(pid, &junk[..ps], &junk[ps..]);
                            report.torn_program_pages += 1;
                        }
                    }
                }
                (OpKind::Erase, Phase::DieWork) => {
                    for b in blocks {
                        for page in 0..ppb {
                            rng.fill_bytes(&mut junk);
                            let pid = self.geo.page_id(b, page);
                            self.store.program(pid, &junk[..ps], &junk[ps..]);
                        }
                        self.nand.close(b);
                        report.torn_erase_blocks += 1;
                    }
                }
                (OpKind::Program, Phase::WaitBus | Phase::Transfer) => {
                    // The data was still on its way to the page register: the array was never
                    // touched and the pages stay erased.
                    for p in op.plane_iter().filter(|p| slot.refused & (1 << p) == 0) {
                        let b = self.geo.block_id(op.die, p, op.plane_blocks[p as usize]);
                        for page in (op.page..op.page + op.pages).rev() {
                            self.nand.unprogram(b, page);
                        }
                    }
                    report.dropped_programs += 1;
                }
                (OpKind::Read, _) => report.lost_reads += 1,
                _ => {}
            }
        }
        for s in self.dies.iter_mut().chain(self.channels.iter_mut()) {
            s.current = None;
            s.queue.clear();
        }
        self.slots.clear();
        self.free_slots.clear();
        self.in_flight = 0;
        report
    }

    /// The operations the dies are executing now, as (kind, caller's tag): what a power cut
    /// would interrupt.
    pub fn executing_ops(&self) -> impl Iterator<Item = (OpKind, u64)> + '_ {
        self.dies.iter().filter_map(|d| {
            d.current
                .and_then(|id| self.slots[id as usize].as_ref())
                .map(|s| (s.op.kind, s.op.tag))
        })
    }

    /// Whether an erase or a program is executing on some die right now (for crash tests
    /// that classify where a cut landed).
    pub fn executing(&self, kind: OpKind) -> bool {
        self.dies.iter().any(|d| {
            d.current
                .and_then(|id| self.slots[id as usize].as_ref())
                .is_some_and(|s| s.op.kind == kind)
        })
    }
}

fn busy_until(s: &Server, now: SimTime) -> u64 {
    s.busy_ns
        + if s.current.is_some() {
            now.since(s.busy_since).as_ns()
        } else {
            0
        }
}

fn placeholder_op() -> FlashOp {
    FlashOp {
        kind: OpKind::Read,
        die: DieId(0),
        page: 0,
        pages: 1,
        plane_mask: 0,
        plane_blocks: [0; PLANES_MAX],
        tag: 0,
        data: Vec::new(),
        oob: Vec::new(),
        slc: false,
    }
}

#[cfg(test)]
mod tests;
