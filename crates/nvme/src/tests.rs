use super::*;
use crate::testing::FixedDevice;
use nearflash_blockdev::load::{run_closed, Rig, RigEvent};
use nearflash_hw::link::LinkConfig;
use nearflash_sim::{EventQueue, Model, Sim, SimRng, Watchdog};
use proptest::prelude::*;
use std::convert::Infallible;

const FLASH_NS: u64 = 50_000;

fn read(id: u64, offset_bytes: u64) -> BlockRequest {
    BlockRequest {
        id,
        op: BlockOp::Read,
        offset_bytes,
        len_bytes: 4096,
        data: Vec::new(),
    }
}

type FixedSim = Sim<RigEvent<NvmeEvent<crate::testing::FixedDone>>>;

fn rig(cfg: NvmeConfig, units: usize) -> (FixedSim, Rig<Nvme<FixedDevice>>) {
    let dev = FixedDevice::new(1 << 30, FLASH_NS, units);
    (Sim::new(1), Rig::new(Nvme::new(cfg, dev).unwrap()))
}

/// Runs one request alone and returns its latency in ns.
fn qd1_latency(cfg: NvmeConfig) -> (u64, Nvme<FixedDevice>) {
    let (mut sim, mut rig) = rig(cfg, 1);
    let mut lat = 0;
    let mut reqs = std::iter::once(read(7, 8192));
    run_closed(
        &mut sim,
        &mut rig,
        1,
        &mut Watchdog::new(SimDuration::from_ms(10)),
        |_| reqs.next(),
        |_, c| -> Result<(), Infallible> {
            assert_eq!((c.id, c.result.clone()), (7, Ok(())));
            lat = c.completed.since(c.submitted).as_ns();
            Ok(())
        },
    )
    .unwrap();
    (lat, rig.dev)
}

/// The hand computation of a QD1 4 KiB read on the default link (PCIe 3.0 ×4, 250 ns
/// one-way, 24 B per TLP, 256 B payloads), host DRAM at 59 GB/s and 80 ns, and a device
/// taking `FLASH_NS`. Wire time of b payload bytes = ⌈(b + TLPs × 24) × 130 / 512⌉ ns.
fn hand_qd1_read_ns(poll: bool) -> u64 {
    let link = LinkConfig::default();
    let w = |b| link.wire_time(b).as_ns();
    let lat = 250;
    assert_eq!((w(4), w(0), w(64), w(16), w(4096)), (8, 7, 23, 11, 1138));
    // 1. Doorbell: 4 B down.
    let doorbell = w(4) + lat;
    // 2. Fetch: read request up (0 B), DRAM (64 B at 59 GB/s is 2 ns, not on the critical
    //    path) + 80 ns access, 64 B down.
    let fetch = w(0) + lat + 80 + w(64) + lat;
    // 3. Controller firmware.
    let controller = 2_000;
    // 4. The device.
    let flash = FLASH_NS;
    // 5. Data: 4 KiB up; DRAM absorbs it in 70 + 80 ns well before the last byte lands.
    let data = w(4096) + lat;
    // 6. CQE: 16 B up; its DRAM write (1 ns at 59 GB/s + 80 ns) starts as the first byte
    //    lands, 250 ns after the CQE went on the wire, and ends after the link's last byte.
    let cqe_in_memory = (w(16) + lat).max(lat + 1 + 80);
    let signal = if poll {
        100
    } else {
        // The MSI-X write queues behind the CQE and lands before the CQE's DRAM write;
        // the handler runs 2 µs after.
        assert!(w(16) + w(4) + lat <= cqe_in_memory);
        2_000
    };
    doorbell + fetch + controller + flash + data + cqe_in_memory + signal
}

#[test]
fn a_qd1_4kib_read_costs_doorbell_fetch_controller_flash_dma_and_completion() {
    let (lat, nvme) = qd1_latency(NvmeConfig::default());
    assert_eq!(lat, hand_qd1_read_ns(false));
    assert_eq!(lat, FLASH_NS + 6_587);
    let cfg = NvmeConfig::default();
    let data = cfg.link.wire_time(4096).as_ns() + cfg.link.latency_ns;
    let closed = cfg.submit_ns() + cfg.controller_ns + FLASH_NS + data + cfg.completion_ns();
    assert_eq!(
        closed, lat,
        "the closed per-command costs agree with the model at QD1"
    );
    assert_eq!(cfg.qd1_read_overhead_ns(4096), 6_587);
    let s = nvme.stats();
    assert_eq!(
        s.controller_busy_ns, cfg.controller_ns,
        "one command processed"
    );
    assert_eq!(
        (s.commands, s.sqe_fetches, s.cqes, s.interrupts),
        (1, 1, 1, 1)
    );
    assert_eq!(s.doorbells, 2, "SQ tail, then CQ head");
    // Up: the fetch's request, 4 KiB, the CQE, the MSI-X write.
    assert_eq!(
        nvme.link().stats(Direction::Up).payload_bytes,
        4096 + 16 + 4
    );
    assert_eq!(nvme.link().stats(Direction::Down).payload_bytes, 4 + 64 + 4);
}

#[test]
fn a_polled_qd1_read_saves_the_interrupt_and_charges_the_spinning_core() {
    let cfg = NvmeConfig {
        completion: CompletionMode::Poll,
        ..NvmeConfig::default()
    };
    let (lat, nvme) = qd1_latency(cfg.clone());
    assert_eq!(lat, hand_qd1_read_ns(true));
    let data = cfg.link.wire_time(4096).as_ns() + cfg.link.latency_ns;
    let closed = cfg.submit_ns() + cfg.controller_ns + FLASH_NS + data + cfg.completion_ns();
    assert_eq!(
        closed, lat,
        "the closed per-command costs agree with the model when polled"
    );
    assert_eq!(lat, FLASH_NS + 4_687);
    assert_eq!(cfg.qd1_read_overhead_ns(4096), 4_687);
    assert_eq!(nvme.stats().interrupts, 0);
    assert_eq!(
        nvme.stats().poll_cpu_ns,
        lat,
        "one core spun the whole time"
    );
}

/// IOPS of 4 KiB reads at queue depth `qd` over a device with 8 units.
fn iops(cfg: NvmeConfig, qd: u32) -> (f64, Nvme<FixedDevice>) {
    let (mut sim, mut rig) = rig(cfg, 8);
    let n = 400u64;
    let mut i = 0u64;
    run_closed(
        &mut sim,
        &mut rig,
        qd,
        &mut Watchdog::new(SimDuration::from_ms(100)),
        |_| {
            i += 1;
            (i <= n).then(|| read(i, (i % 1000) * 4096))
        },
        |_, c| -> Result<(), Infallible> {
            assert!(c.result.is_ok());
            Ok(())
        },
    )
    .unwrap();
    (n as f64 / sim.now().as_secs_f64(), rig.dev)
}

#[test]
fn throughput_scales_with_queue_depth_up_to_the_devices_limit() {
    // The device's 8 units of 50 µs; Little's law caps QD n at n / (QD1 latency).
    let limit = 8.0 / (FLASH_NS as f64 * 1e-9);
    let qd1_s = hand_qd1_read_ns(false) as f64 * 1e-9;
    let mut last = 0.0;
    let mut seen = Vec::new();
    for qd in [1, 2, 4, 8, 16, 32] {
        let (x, nvme) = iops(NvmeConfig::default(), qd);
        assert!(
            x <= limit.min(f64::from(qd) / qd1_s) * 1.001,
            "QD{qd}: {x:.0} IOPS"
        );
        assert!(nvme.stats().in_flight_max <= qd);
        if qd <= 8 {
            assert!(x > last * 1.7, "QD{qd}: {x:.0} IOPS after {last:.0}");
        }
        last = x;
        seen.push(x);
    }
    let (x16, x32) = (seen[4], seen[5]);
    assert!(
        x16 > 0.95 * limit,
        "saturated at QD16: {x16:.0} of {limit:.0}"
    );
    assert!(
        (x32 - x16).abs() < 0.02 * limit,
        "flat past saturation: {x16:.0}, {x32:.0}"
    );
}

#[test]
fn a_queue_of_five_entries_never_holds_more_than_four_commands() {
    let cfg = NvmeConfig {
        queue_entries: 5,
        ..NvmeConfig::default()
    };
    let (x16, nvme) = iops(cfg.clone(), 16);
    assert_eq!(nvme.stats().in_flight_max, 4);
    assert!(nvme.device().busy_max <= 4);
    let (x4, _) = iops(cfg, 4);
    assert!(
        (x16 - x4).abs() / x4 < 0.02,
        "QD16 through a 4-deep queue runs as QD4"
    );
}

/// Three submitters on a controller with three queue pairs: each keeps its requests on a
/// queue of its own (`submit_from`), where the plain face would deal them out in turn.
#[test]
fn each_submitter_keeps_its_own_queue_pair() {
    let cfg = NvmeConfig {
        queue_pairs: 3,
        ..NvmeConfig::default()
    };
    let (mut sim, mut rig) = rig(cfg, 1);
    for (i, stream) in [0u32, 0, 0, 0, 2, 2, 4].into_iter().enumerate() {
        let req = read(i as u64, i as u64 * 4096);
        rig.submit_from(stream, req, false, None, sim.queue());
    }
    // Stream 4 is queue 4 mod 3 = 1.
    let held: Vec<u32> = (0..3).map(|qid| rig.dev.in_flight(qid)).collect();
    assert_eq!(held, [4, 1, 2]);
}

#[test]
fn a_full_queue_refuses_a_direct_submission() {
    let cfg = NvmeConfig {
        queue_entries: 2,
        ..NvmeConfig::default()
    };
    let mut nvme = Nvme::new(cfg, FixedDevice::new(1 << 20, FLASH_NS, 1)).unwrap();
    let mut q = nearflash_sim::EventQueue::new();
    let cmd = |id| NvmeCommand {
        qid: 0,
        req: read(id, 0),
        target: EndpointId::HOST,
        fua: false,
        placement: None,
    };
    nvme.try_submit(cmd(1), &mut q).unwrap();
    assert_eq!(
        nvme.try_submit(cmd(2), &mut q),
        Err(NvmeError::QueueFull {
            qid: 0,
            depth_max: 1
        })
    );
    let bad_q = NvmeCommand { qid: 3, ..cmd(3) };
    assert!(matches!(
        nvme.try_submit(bad_q, &mut q),
        Err(NvmeError::NoSuchQueue { qid: 3, .. })
    ));
}

/// The front end alone on the one loop, for commands the block interface cannot say (a
/// peer's memory as the target).
struct Alone<D: BlockDevice>(Nvme<D>);

impl<D: BlockDevice> Model for Alone<D> {
    type Event = NvmeEvent<D::Event>;

    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.0.handle_event(ev, q, rng);
    }
}

#[test]
fn a_read_into_a_slow_peer_memory_is_bounded_by_that_memory() {
    let mut nvme = Nvme::new(
        NvmeConfig::default(),
        FixedDevice::new(1 << 30, FLASH_NS, 1),
    )
    .unwrap();
    let peer = nvme
        .add_endpoint(MemoryPortConfig {
            bandwidth_mb_s: 100.0,
            latency_ns: 0,
        })
        .unwrap();
    let mut sim: Sim<NvmeEvent<crate::testing::FixedDone>> = Sim::new(1);
    let req = BlockRequest {
        len_bytes: 128 << 10,
        ..read(1, 0)
    };
    nvme.try_submit(
        NvmeCommand {
            qid: 0,
            req,
            target: peer,
            fua: false,
            placement: None,
        },
        sim.queue(),
    )
    .unwrap();
    let mut alone = Alone(nvme);
    while sim.step(&mut alone) {}
    let mut nvme = alone.0;
    let mut out = Vec::new();
    nvme.take_completions_into(&mut out);
    assert_eq!(out.len(), 1, "the command completed once");
    let lat = out[0].completed.since(out[0].submitted).as_ns();
    // 128 KiB at 100 MB/s is 1.31 ms, far beyond the device's 50 µs and the link's 36 µs.
    assert!(
        lat > 1_310_720 + FLASH_NS && lat < 1_310_720 + FLASH_NS + 10_000,
        "{lat}"
    );
    assert_eq!(nvme.endpoint_bytes(peer), Some(128 << 10));
    assert_eq!(nvme.endpoint_bytes(EndpointId::HOST), Some(64 + 16));
    assert_eq!(nvme.stats().peer_dma_bytes, 128 << 10);
}

#[test]
fn an_out_of_range_read_completes_with_an_error_and_moves_no_data() {
    let (mut sim, mut rig) = rig(NvmeConfig::default(), 1);
    let mut reqs = std::iter::once(read(1, 1 << 30));
    let mut err = None;
    run_closed(
        &mut sim,
        &mut rig,
        1,
        &mut Watchdog::new(SimDuration::from_ms(10)),
        |_| reqs.next(),
        |_, c| -> Result<(), Infallible> {
            err = c.result.err();
            Ok(())
        },
    )
    .unwrap();
    assert!(matches!(err, Some(IoError::OutOfRange { .. })));
    assert_eq!(rig.dev.link().stats(Direction::Up).payload_bytes, 16 + 4);
}

#[test]
fn bad_config_fields_are_named() {
    let e = |cfg: NvmeConfig| {
        Nvme::new(cfg, FixedDevice::new(4096, 1, 1))
            .err()
            .unwrap()
            .to_string()
    };
    assert!(e(NvmeConfig {
        queue_entries: 1,
        ..NvmeConfig::default()
    })
    .contains("nvme.queue_entries"));
    assert!(e(NvmeConfig {
        queue_pairs: 0,
        ..NvmeConfig::default()
    })
    .contains("nvme.queue_pairs"));
    let link = LinkConfig {
        lanes: 5,
        ..LinkConfig::default()
    };
    assert!(e(NvmeConfig {
        link,
        ..NvmeConfig::default()
    })
    .contains("link.lanes"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Whatever the queue size, the number of queues and the load, no queue ever holds more
    /// than `entries − 1` commands at any event, and every request completes exactly once.
    #[test]
    fn no_queue_ever_holds_more_than_its_depth(
        entries in 2u32..9,
        pairs in 1u16..3,
        ops in proptest::collection::vec((0u8..4, 0u64..64, 1u64..9), 1..60),
    ) {
        let cfg = NvmeConfig { queue_entries: entries, queue_pairs: pairs, ..NvmeConfig::default() };
        let (mut sim, mut rig) = rig(cfg, 3);
        for (i, &(op, sector, len)) in ops.iter().enumerate() {
            let op = [BlockOp::Read, BlockOp::Write, BlockOp::Trim, BlockOp::Flush][usize::from(op)];
            let req = BlockRequest { id: i as u64, op, offset_bytes: sector * 512, len_bytes: len * 512, data: Vec::new() };
            rig.submit(req, sim.queue());
        }
        let mut seen = vec![0u32; ops.len()];
        let mut out = Vec::new();
        while sim.step(&mut rig) {
            for qid in 0..pairs {
                prop_assert!(rig.dev.in_flight(qid) < entries);
            }
            rig.take_completions(&mut out);
            for c in out.drain(..) {
                prop_assert!(c.result.is_ok());
                seen[c.id as usize] += 1;
            }
        }
        prop_assert!(seen.iter().all(|&n| n == 1));
        prop_assert_eq!(rig.dev.outstanding(), 0);
    }
}

mod ftl {
    use super::*;
    use nearflash_flash::NoStore;
    use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
    use nearflash_ftl::Device;

    fn write(id: u64) -> BlockRequest {
        BlockRequest {
            op: BlockOp::Write,
            ..read(id, 0)
        }
    }

    /// Latency of a 4 KiB write then a 4 KiB read on a fresh tiny FTL device, bare.
    fn bare() -> Vec<u64> {
        let mut sim = Sim::new(3);
        let dev = Device::format(
            &tiny_flash(),
            &tiny_ftl(),
            Box::new(NoStore),
            &mut sim.queue().map(RigEvent::Device),
        )
        .unwrap();
        let mut rig = Rig::new(dev);
        drive(&mut sim, &mut rig)
    }

    fn drive<D: BlockDevice>(sim: &mut Sim<RigEvent<D::Event>>, rig: &mut Rig<D>) -> Vec<u64> {
        let mut reqs = vec![write(1), read(2, 0)].into_iter();
        let mut lat = Vec::new();
        run_closed(
            sim,
            rig,
            1,
            &mut Watchdog::new(SimDuration::from_ms(100)),
            |_| reqs.next(),
            |_, c| -> Result<(), Infallible> {
                assert!(c.result.is_ok());
                lat.push(c.completed.since(c.submitted).as_ns());
                Ok(())
            },
        )
        .unwrap();
        lat
    }

    #[test]
    fn an_nvme_attached_ftl_read_costs_the_flash_read_plus_the_nvme_path() {
        let bare = bare();
        let mut sim = Sim::new(3);
        let dev = Device::format(
            &tiny_flash(),
            &tiny_ftl(),
            Box::new(NoStore),
            &mut sim.queue().map(|e| RigEvent::Device(NvmeEvent::Device(e))),
        )
        .unwrap();
        let mut rig = Rig::new(Nvme::new(NvmeConfig::default(), dev).unwrap());
        let nvme = drive(&mut sim, &mut rig);
        // The read: everything of the hand computation around the device's own time.
        // The read is submitted the instant the write's completion is seen, so its SQ tail
        // doorbell queues behind the CQ head doorbell the host just wrote for the write.
        let path = hand_qd1_read_ns(false) - FLASH_NS;
        let behind_cq_doorbell = LinkConfig::default().wire_time(DOORBELL_BYTES).as_ns();
        assert_eq!(
            nvme[1],
            bare[1] + behind_cq_doorbell + path,
            "bare FTL read {} ns",
            bare[1]
        );
        // A write pulls its 4 KiB down the link before the program instead of pushing it up.
        assert!(
            nvme[0] > bare[0] + 4_000,
            "write {} vs bare {}",
            nvme[0],
            bare[0]
        );
    }
}

/// The machine of the extension-command tests: the front end alone, its events driven by
/// hand (the layer above is the test).
struct ExtRig(Nvme<FixedDevice>);

impl Model for ExtRig {
    type Event = NvmeEvent<crate::testing::FixedDone>;
    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.0.handle_event(ev, q, rng);
    }
}

#[test]
fn an_extension_command_takes_the_command_path_and_an_internal_read_skips_the_link() {
    let mut sim: Sim<NvmeEvent<crate::testing::FixedDone>> = Sim::new(1);
    let mut rig = ExtRig(
        Nvme::new(
            NvmeConfig::default(),
            FixedDevice::new(1 << 30, FLASH_NS, 1),
        )
        .unwrap(),
    );
    let cmd = ExtCommand {
        qid: 0,
        id: 42,
        inbound_bytes: 4096,
    };
    rig.0.try_submit_ext(cmd, sim.queue()).unwrap();
    let mut ready = Vec::new();
    while ready.is_empty() {
        assert!(sim.step(&mut rig), "the command becomes ready");
        rig.0.take_ext_ready(&mut ready);
    }
    assert_eq!(ready[0].id, 42);
    let down_before = rig.0.link().stats(Direction::Down).payload_bytes;
    let up_before = rig.0.link().stats(Direction::Up).payload_bytes;
    let mut read = read(INTERNAL_ID_BIT | 5, 0);
    read.len_bytes = 8192;
    rig.0.submit_internal(read, sim.queue());
    let mut internal = Vec::new();
    while internal.is_empty() {
        assert!(sim.step(&mut rig), "the internal read completes");
        rig.0.take_internal_completions(&mut internal);
    }
    assert_eq!(internal[0].id, INTERNAL_ID_BIT | 5);
    assert_eq!(rig.0.internal_outstanding(), 0);
    assert_eq!(
        rig.0.link().stats(Direction::Up).payload_bytes,
        up_before,
        "an internal read moves no byte over the link"
    );
    assert_eq!(
        rig.0.link().stats(Direction::Down).payload_bytes,
        down_before
    );
    rig.0.finish_ext(ready[0].tag, 512, sim.queue());
    let mut done = Vec::new();
    while done.is_empty() {
        assert!(sim.step(&mut rig), "the command completes");
        rig.0.take_ext_completions(&mut done);
    }
    assert_eq!(done[0].id, 42);
    assert!(rig.0.link().stats(Direction::Up).payload_bytes >= up_before + 512 + 16);
    assert!(done[0].completed.since(done[0].submitted).as_ns() > FLASH_NS);
    assert_eq!(rig.0.in_flight(0), 0);
}

/// A polled extension command (a computational-storage program's) is counted on the spinning
/// core like any other: it starts the core's busy time at submission and ends it at its
/// completion, so the core's time covers the command and the count of polled commands
/// returns to zero (the completion path asserts it never goes below).
#[test]
fn a_polled_extension_command_is_spun_on_from_submission_to_completion() {
    let mut sim: Sim<NvmeEvent<crate::testing::FixedDone>> = Sim::new(1);
    let cfg = NvmeConfig {
        completion: crate::CompletionMode::Poll,
        ..NvmeConfig::default()
    };
    let mut rig = ExtRig(Nvme::new(cfg, FixedDevice::new(1 << 30, FLASH_NS, 1)).unwrap());
    let cmd = ExtCommand {
        qid: 0,
        id: 7,
        inbound_bytes: 0,
    };
    rig.0.try_submit_ext(cmd, sim.queue()).unwrap();
    let mut ready = Vec::new();
    while ready.is_empty() {
        assert!(sim.step(&mut rig), "the command becomes ready");
        rig.0.take_ext_ready(&mut ready);
    }
    rig.0.finish_ext(ready[0].tag, 0, sim.queue());
    let mut done = Vec::new();
    while done.is_empty() {
        assert!(sim.step(&mut rig), "the command completes");
        rig.0.take_ext_completions(&mut done);
    }
    let spun_ns = rig.0.stats().poll_cpu_ns;
    let took_ns = done[0].completed.since(done[0].submitted).as_ns();
    assert!(spun_ns > 0, "the core spun while the command was out");
    assert!(
        spun_ns >= took_ns,
        "spun {spun_ns} ns over a {took_ns} ns command"
    );
}

/// A host tags every other write with a placement handle and keeps more writes outstanding
/// than the one queue holds: the tagged writes reach the drive with the Placement Identifier
/// their SQE carried — also those the front end held back for a free slot — and the others,
/// and a read submitted with a directive, with none.
#[test]
fn placement_directives_ride_the_sqe_to_the_drive_also_when_held_for_a_slot() {
    use nearflash_blockdev::load::Submission;
    let cfg = NvmeConfig {
        queue_pairs: 1,
        queue_entries: 3,
        ..NvmeConfig::default()
    };
    let (mut sim, mut rig) = rig(cfg, 1);
    let write = |i: u64| BlockRequest {
        id: i,
        op: BlockOp::Write,
        offset_bytes: i * 4096,
        len_bytes: 4096,
        data: Vec::new(),
    };
    let mut subs = (0..16u64)
        .map(|i| Submission {
            req: write(i),
            placement: (i % 2 == 0).then_some(PlacementDirective(i as u16 / 2)),
        })
        .chain(std::iter::once(Submission {
            req: read(99, 0),
            placement: Some(PlacementDirective(5)),
        }));
    run_closed(
        &mut sim,
        &mut rig,
        17,
        &mut Watchdog::new(SimDuration::from_ms(10)),
        |_| subs.next(),
        |_, c| -> Result<(), Infallible> {
            assert_eq!(c.result, Ok(()));
            Ok(())
        },
    )
    .unwrap();
    let placed = &rig.dev.device().placements;
    assert_eq!(placed.len(), 16, "every write reached the drive once");
    for i in 0..16u64 {
        let want = (i % 2 == 0).then_some(PlacementDirective(i as u16 / 2));
        assert_eq!(placed[&(i * 4096)], want, "write {i}");
    }
    assert_eq!(
        rig.dev.stats().placed_writes,
        8,
        "the read's directive is dropped"
    );
    assert!(
        rig.dev.stats().in_flight_max <= 2,
        "writes were held for a slot"
    );
}

/// Every command the queues admit goes straight to the device, so a front end with more
/// slots than the device admits would overrun it: the configuration is refused, naming both.
#[test]
fn a_front_end_with_more_slots_than_the_device_admits_is_refused() {
    let mut dev = FixedDevice::new(1 << 20, FLASH_NS, 1);
    dev.admission_limit = 100;
    let cfg = NvmeConfig::default();
    match Nvme::new(cfg.clone(), dev) {
        Err(NvmeError::SlotsOverAdmission { slots, limit }) => {
            assert_eq!((slots, limit), (u64::from(cfg.depth_max()), 100));
        }
        Err(e) => panic!("expected the slots refused, got {e}"),
        Ok(_) => panic!("1,023 slots over a device admitting 100 were accepted"),
    }
    let mut dev = FixedDevice::new(1 << 20, FLASH_NS, 1);
    dev.admission_limit = 100;
    let small = NvmeConfig {
        queue_entries: 64,
        ..cfg
    };
    assert!(Nvme::new(small, dev).is_ok(), "63 slots fit a limit of 100");
}
