//! The assembled SSD over the tiny FTL (`ftl::testing`): bytes through all three layers, a
//! disabled buffer that changes nothing, a shadowed FTL in timing fidelity, and refusals
//! that name their layer.

use super::*;
use nearflash_blockdev::shadow::Shadowed;
use nearflash_blockdev::{BlockCompletion, BlockOp, BlockRequest};
use nearflash_flash::{Geometry, MemoryStore, NoStore};
use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
use nearflash_sim::{EventQueue, Model, Sim, SimRng, SimTime};

fn cfg(buffered: bool) -> SsdConfig {
    SsdConfig {
        flash: tiny_flash(),
        ftl: tiny_ftl(),
        write_cache: WriteCacheConfig {
            enabled: buffered,
            capacity_bytes: 64 * 4096,
            ..WriteCacheConfig::default()
        },
        nvme: NvmeConfig::default(),
    }
}

fn memory() -> Box<dyn PageStore> {
    let flash = tiny_flash();
    Box::new(MemoryStore::new(
        Geometry::from_config(&flash).page_count(),
        flash.page_size_bytes,
    ))
}

/// A drive alone on its loop as a `sim::Model`.
struct Alone<D>(D);

impl<D: BlockDevice> Model for Alone<D> {
    type Event = D::Event;

    fn handle(&mut self, ev: D::Event, q: &mut EventQueue<D::Event>, rng: &mut SimRng) {
        self.0.handle(ev, q, rng);
    }
}

/// A drive on its own loop, with its completions collected.
struct Rig<D: BlockDevice> {
    sim: Sim<D::Event>,
    drive: Alone<D>,
    done: Vec<BlockCompletion>,
    next_id: u64,
}

impl<D: BlockDevice> Rig<D> {
    fn new(sim: Sim<D::Event>, drive: D) -> Rig<D> {
        Rig {
            sim,
            drive: Alone(drive),
            done: Vec::new(),
            next_id: 0,
        }
    }

    fn dev(&self) -> &D {
        &self.drive.0
    }

    fn submit(&mut self, op: BlockOp, offset_bytes: u64, data: Vec<u8>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let len_bytes = if op == BlockOp::Flush { 0 } else { 4096 };
        let req = BlockRequest {
            id,
            op,
            offset_bytes,
            len_bytes,
            data,
        };
        self.drive.0.submit(req, self.sim.queue());
        id
    }

    /// Runs until request `id` completes.
    fn wait(&mut self, id: u64) -> BlockCompletion {
        loop {
            self.drive.0.take_completions(&mut self.done);
            if let Some(i) = self.done.iter().position(|c| c.id == id) {
                return self.done.remove(i);
            }
            assert!(
                self.sim.step(&mut self.drive),
                "request {id} never completed"
            );
        }
    }

    /// Runs until `n` requests have completed (the FTL's timers never let the queue run
    /// dry); the time of the last completion.
    fn drain(&mut self, n: usize) -> SimTime {
        while self.done.len() < n {
            assert!(self.sim.step(&mut self.drive), "the queue ran dry");
            self.drive.0.take_completions(&mut self.done);
        }
        self.sim.now()
    }
}

#[test]
fn a_write_flushed_through_front_end_buffer_and_ftl_reads_back_its_bytes() {
    let mut sim = Sim::new(1);
    let ssd = format(&cfg(true), memory(), sim.queue()).unwrap();
    let mut r = Rig::new(sim, ssd);
    let w = r.submit(BlockOp::Write, 8192, vec![0xA5; 4096]);
    r.wait(w).result.unwrap();
    assert_eq!(
        r.dev().inner().stats().host_writes,
        0,
        "the write completed from the buffer, before any flash program"
    );
    let f = r.submit(BlockOp::Flush, 0, Vec::new());
    r.wait(f).result.unwrap();
    assert!(r.dev().inner().stats().host_writes > 0, "FLUSH destaged it");
    assert_eq!(
        r.dev().buffer().occupied_units(),
        0,
        "nothing dirty is left"
    );
    let rd = r.submit(BlockOp::Read, 8192, Vec::new());
    assert_eq!(r.wait(rd).data, vec![0xA5; 4096]);
    assert_eq!(r.dev().stats().commands, 3, "three NVMe commands");
}

#[test]
fn a_disabled_buffer_leaves_every_completion_time_as_the_front_end_alone_gives() {
    fn run<D: BlockDevice>(mut r: Rig<D>) -> (Vec<(u64, SimTime)>, SimTime) {
        let mut ids = Vec::new();
        for i in 0..32u64 {
            ids.push(r.submit(BlockOp::Write, (i * 7 % 40) * 4096, vec![i as u8; 4096]));
        }
        for i in 0..32u64 {
            ids.push(r.submit(BlockOp::Read, (i * 5 % 40) * 4096, Vec::new()));
        }
        let end = r.drain(ids.len());
        let mut done: Vec<_> = r.done.iter().map(|c| (c.id, c.completed)).collect();
        done.sort();
        (done, end)
    }
    let c = cfg(false);
    let mut sim = Sim::new(7);
    let ssd = format(&c, memory(), sim.queue()).unwrap();
    let assembled = run(Rig::new(sim, ssd));
    let mut sim = Sim::new(7);
    let dev = Device::format(
        &c.flash,
        &c.ftl,
        memory(),
        &mut sim.queue().map(NvmeEvent::Device),
    )
    .unwrap();
    let bare = run(Rig::new(sim, Nvme::new(c.nvme.clone(), dev).unwrap()));
    assert_eq!(assembled, bare);
}

#[test]
fn a_shadowed_ftl_in_timing_fidelity_answers_reads_with_the_bytes_written() {
    let c = cfg(true);
    let mut sim = Sim::new(3);
    let dev = Device::format(
        &c.flash,
        &c.ftl,
        Box::new(NoStore),
        &mut sim.queue().map(wrap),
    )
    .unwrap();
    let ssd = attach(Shadowed::new(dev), &c.write_cache, &c.nvme).unwrap();
    assert!(ssd.is_functional(), "the shadow carries the bytes");
    let mut r = Rig::new(sim, ssd);
    let w = r.submit(BlockOp::Write, 0, vec![0x3C; 4096]);
    r.wait(w).result.unwrap();
    let f = r.submit(BlockOp::Flush, 0, Vec::new());
    r.wait(f).result.unwrap();
    assert!(r.dev().inner().device().stats().host_writes > 0);
    let rd = r.submit(BlockOp::Read, 0, Vec::new());
    assert_eq!(r.wait(rd).data, vec![0x3C; 4096]);
}

#[test]
fn a_refused_configuration_names_its_layer() {
    let mut bad = cfg(true);
    bad.write_cache.unit_bytes = 1000;
    let mut sim = Sim::new(1);
    let Err(e) = format(&bad, memory(), sim.queue()) else {
        panic!("refused")
    };
    assert!(matches!(e, SsdError::WriteCache(_)), "{e}");
    assert!(e.to_string().contains("unit_bytes"), "{e}");
    let mut bad = cfg(false);
    bad.nvme.queue_entries = 1;
    let Err(e) = format(&bad, memory(), Sim::new(1).queue()) else {
        panic!("refused")
    };
    assert!(matches!(e, SsdError::Nvme(_)), "{e}");
    let mut bad = cfg(false);
    bad.ftl.over_provisioning_percent = 500.0;
    let Err(e) = format(&bad, memory(), Sim::new(1).queue()) else {
        panic!("refused")
    };
    assert!(matches!(e, SsdError::Ftl(_)), "{e}");
}
