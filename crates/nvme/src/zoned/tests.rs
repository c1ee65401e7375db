//! The zoned drive behind the front end: each zone command's success and each zone status
//! through the queues and the link, the controller's own Invalid Command Opcode on a
//! conventional namespace, commands held for a slot, and a property test against the
//! reference zone model (`nearflash_ftl::zns::reference`) with the zones read back by Report
//! Zones through the queues.

use super::*;
use crate::testing::FixedDevice;
use crate::{NvmeConfig, NvmeEvent};
use nearflash_blockdev::{BlockOp, BlockRequest, ZoneCompletion, SECTOR_BYTES};
use nearflash_flash::{FlashConfig, NoStore};
use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
use nearflash_ftl::zns::reference::ZoneReference;
use nearflash_ftl::zns::{ZnsConfig, ZnsEvent, ZoneAction, ZoneFilter, ZoneState, ZonedDevice};
use nearflash_hw::link::Direction;
use nearflash_sim::{EventQueue, Model, Sim, SimRng};
use proptest::prelude::*;

/// Sectors of a tiny zone (16 rows of 32 sectors) and of one row.
const ZONE_SECTORS: u64 = 512;
const ROW_SECTORS: u64 = 32;

/// The host: any device's front end on the one loop, requests issued one at a time.
struct Host<D: BlockDevice> {
    nvme: Nvme<D>,
    next_id: u64,
}

impl<D: BlockDevice> Model for Host<D> {
    type Event = NvmeEvent<D::Event>;
    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.nvme.handle_event(ev, q, rng);
    }
}

impl<D: BlockDevice> Host<D> {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Runs `cmd` alone through the queues and returns its completion.
    fn zone(&mut self, sim: &mut Sim<NvmeEvent<D::Event>>, cmd: ZoneCommand) -> ZoneCompletion {
        let id = self.id();
        self.nvme
            .submit_zone(ZoneRequest { id, cmd }, sim.queue())
            .expect("the front end takes every zone command");
        while sim.step(self) {}
        let mut out = Vec::new();
        self.nvme.take_zone_completions(&mut out);
        assert_eq!(out.len(), 1, "one command, one completion");
        let c = out.pop().unwrap();
        assert_eq!(c.id, id, "the caller's id comes back");
        c
    }

    /// Runs a block request alone through the queues.
    fn block(
        &mut self,
        sim: &mut Sim<NvmeEvent<D::Event>>,
        op: BlockOp,
        sector: u64,
        sectors: u64,
    ) -> Result<(), IoError> {
        let id = self.id();
        let req = BlockRequest {
            id,
            op,
            offset_bytes: sector * SECTOR_BYTES,
            len_bytes: sectors * SECTOR_BYTES,
            data: Vec::new(),
        };
        self.nvme.submit(req, sim.queue());
        while sim.step(self) {}
        let mut out = Vec::new();
        self.nvme.take_completions(&mut out);
        assert_eq!(out.len(), 1);
        out.pop().unwrap().result
    }
}

type ZSim = Sim<NvmeEvent<ZnsEvent>>;

fn zoned_on(flash: &FlashConfig, zns: &ZnsConfig, cfg: NvmeConfig) -> (ZSim, Host<ZonedDevice>) {
    let dev = ZonedDevice::format(flash, &tiny_ftl(), zns, Box::new(NoStore)).unwrap();
    let nvme = Nvme::new(cfg, dev).unwrap();
    (Sim::new(5), Host { nvme, next_id: 0 })
}

fn zoned(zns: &ZnsConfig) -> (ZSim, Host<ZonedDevice>) {
    zoned_on(&tiny_flash(), zns, NvmeConfig::default())
}

fn append(zone: u64, sectors: u64) -> ZoneCommand {
    ZoneCommand::Append {
        zone_start_sector: zone * ZONE_SECTORS,
        len_bytes: sectors * SECTOR_BYTES,
        data: Vec::new(),
    }
}

fn send(zone: u64, action: ZoneAction) -> ZoneCommand {
    ZoneCommand::Send {
        zone_start_sector: zone * ZONE_SECTORS,
        action,
    }
}

fn report(from_zone: u64, filter: ZoneFilter, limit: usize) -> ZoneCommand {
    ZoneCommand::Report {
        from_sector: from_zone * ZONE_SECTORS,
        filter,
        limit,
    }
}

fn status(r: Result<ZoneReply, IoError>) -> ZoneStatus {
    match r {
        Err(IoError::Zone(s)) => s,
        other => panic!("expected a zone status, got {other:?}"),
    }
}

fn block_status(r: Result<(), IoError>) -> ZoneStatus {
    status(r.map(|()| ZoneReply::Done))
}

#[test]
fn zone_append_through_the_queues_returns_the_assigned_lba_after_the_nvme_path() {
    let (mut sim, mut host) = zoned(&ZnsConfig::default());
    let first = host.zone(&mut sim, append(3, ROW_SECTORS));
    let second = host.zone(&mut sim, append(3, ROW_SECTORS));
    assert_eq!(
        first.result,
        Ok(ZoneReply::Appended {
            sector: 3 * ZONE_SECTORS
        })
    );
    assert_eq!(
        second.result,
        Ok(ZoneReply::Appended {
            sector: 3 * ZONE_SECTORS + ROW_SECTORS
        })
    );
    // The same append on the bare drive: the front end adds its whole path around it.
    let mut bare_sim: Sim<ZnsEvent> = Sim::new(5);
    let mut bare = ZonedDevice::format(
        &tiny_flash(),
        &tiny_ftl(),
        &ZnsConfig::default(),
        Box::new(NoStore),
    )
    .unwrap();
    bare.submit_zone(
        ZoneRequest {
            id: 1,
            cmd: append(3, ROW_SECTORS),
        },
        bare_sim.queue(),
    );
    while bare_sim.step(&mut bare) {}
    let mut out = Vec::new();
    bare.take_zone_completions(&mut out);
    let bare_ns = out[0].completed.since(out[0].submitted).as_ns();
    let nvme_ns = first.completed.since(first.submitted).as_ns();
    let cfg = NvmeConfig::default();
    // At least the firmware, four link crossings (doorbell, fetch request and SQE, data
    // request) and the data's wire time.
    let wire = cfg.link.wire_time(ROW_SECTORS * SECTOR_BYTES).as_ns();
    assert!(
        nvme_ns >= bare_ns + cfg.controller_ns + 4 * 250 + wire,
        "append via NVMe {nvme_ns} ns, bare {bare_ns} ns"
    );
    let s = host.nvme.stats();
    assert_eq!((s.zone_appends, s.commands, s.cqes), (2, 2, 2));
    assert!(
        host.nvme.link().stats(Direction::Down).payload_bytes >= 2 * ROW_SECTORS * SECTOR_BYTES
    );
}

#[test]
fn report_zones_through_the_queues_moves_its_descriptors_up_the_link() {
    let (mut sim, mut host) = zoned(&ZnsConfig::default());
    host.zone(&mut sim, append(1, ROW_SECTORS)).result.unwrap();
    host.zone(&mut sim, send(2, ZoneAction::Finish))
        .result
        .unwrap();
    let up_before = host.nvme.link().stats(Direction::Up).payload_bytes;
    let all = host.zone(&mut sim, report(0, ZoneFilter::All, 8));
    let up_after = host.nvme.link().stats(Direction::Up).payload_bytes;
    let Ok(ZoneReply::Report(list)) = all.result else {
        panic!("a report: {:?}", all.result)
    };
    assert_eq!(list.len(), 8);
    let states: Vec<ZoneState> = list.iter().map(|d| d.state).collect();
    assert_eq!(
        states[..3],
        [ZoneState::Empty, ZoneState::ImplicitlyOpen, ZoneState::Full]
    );
    assert_eq!(list[1].wp_sector, ZONE_SECTORS + ROW_SECTORS);
    // Header and 8 descriptors of 64 bytes go up, besides the completion entry.
    assert!(
        up_after - up_before >= 64 + 8 * 64,
        "{} bytes up",
        up_after - up_before
    );
    let full = host.zone(&mut sim, report(0, ZoneFilter::Only(ZoneState::Full), 100));
    let Ok(ZoneReply::Report(list)) = full.result else {
        panic!("a report")
    };
    assert_eq!(list.iter().map(|d| d.zone).collect::<Vec<_>>(), [2]);
    assert_eq!(host.nvme.stats().zone_receives, 2);
}

#[test]
fn zone_management_send_actions_through_the_queues_change_the_zone() {
    let (mut sim, mut host) = zoned(&ZnsConfig::default());
    let state = |host: &Host<ZonedDevice>, z: u32| host.nvme.device().zones().state(z);
    host.zone(&mut sim, send(0, ZoneAction::Open))
        .result
        .unwrap();
    assert_eq!(state(&host, 0), ZoneState::ExplicitlyOpen);
    host.zone(&mut sim, send(0, ZoneAction::Close))
        .result
        .unwrap();
    assert_eq!(
        state(&host, 0),
        ZoneState::Empty,
        "nothing written: back to Empty"
    );
    host.block(&mut sim, BlockOp::Write, 0, ROW_SECTORS)
        .unwrap();
    host.zone(&mut sim, send(0, ZoneAction::Close))
        .result
        .unwrap();
    assert_eq!(state(&host, 0), ZoneState::Closed);
    host.zone(&mut sim, send(0, ZoneAction::Finish))
        .result
        .unwrap();
    assert_eq!(state(&host, 0), ZoneState::Full);
    let erases = host.nvme.device().stats().zone_erases;
    host.zone(&mut sim, send(0, ZoneAction::Reset))
        .result
        .unwrap();
    assert_eq!(state(&host, 0), ZoneState::Empty);
    assert_eq!(host.nvme.device().stats().zone_erases, erases + 1);
    assert_eq!(host.nvme.stats().zone_sends, 5);
}

#[test]
fn each_zone_status_comes_back_through_the_queues() {
    let (mut sim, mut host) = zoned(&ZnsConfig::default());
    // Zone Invalid Write (0xBC): not at the write pointer.
    let s = block_status(host.block(&mut sim, BlockOp::Write, 8, 8));
    assert_eq!(
        (s, s.code()),
        (
            ZoneStatus::InvalidWrite {
                zone: 0,
                sector: 8,
                wp_sector: 0
            },
            0xBC
        )
    );
    // Zone Boundary Error (0xB8): crossing the zone's end.
    host.block(&mut sim, BlockOp::Write, 0, ZONE_SECTORS - ROW_SECTORS)
        .unwrap();
    let s = block_status(host.block(
        &mut sim,
        BlockOp::Write,
        ZONE_SECTORS - ROW_SECTORS,
        2 * ROW_SECTORS,
    ));
    assert_eq!((s, s.code()), (ZoneStatus::BoundaryError { zone: 0 }, 0xB8));
    // Zone Is Full (0xB9).
    host.zone(&mut sim, send(0, ZoneAction::Finish))
        .result
        .unwrap();
    let s = status(host.zone(&mut sim, append(0, 8)).result);
    assert_eq!((s, s.code()), (ZoneStatus::ZoneIsFull { zone: 0 }, 0xB9));
    // Invalid Zone State Transition (0xBF): Offline needs Read Only.
    let s = status(host.zone(&mut sim, send(1, ZoneAction::Offline)).result);
    assert_eq!(s.code(), 0xBF);
    // Invalid Field (0x02): an append beyond ZASL, a zone start that is not one, a trim.
    let zasl_sectors = ZnsConfig::default().zone_append_size_limit_bytes / SECTOR_BYTES;
    let s = status(host.zone(&mut sim, append(1, zasl_sectors + 8)).result);
    assert!(
        matches!(s, ZoneStatus::AppendTooLarge { .. }) && s.code() == 0x02,
        "{s:?}"
    );
    let off = ZoneCommand::Send {
        zone_start_sector: ZONE_SECTORS + 8,
        action: ZoneAction::Open,
    };
    let s = status(host.zone(&mut sim, off).result);
    assert_eq!(
        (s, s.code()),
        (
            ZoneStatus::InvalidZone {
                sector: ZONE_SECTORS + 8
            },
            0x02
        )
    );
    let s = block_status(host.block(&mut sim, BlockOp::Trim, 0, 8));
    assert_eq!((s, s.code()), (ZoneStatus::DeallocateUnsupported, 0x02));

    // Too Many Open Zones (0xBE) and Too Many Active Zones (0xBD).
    let limits = ZnsConfig {
        max_open_zones: 2,
        max_active_zones: 3,
        ..ZnsConfig::default()
    };
    let (mut sim, mut host) = zoned(&limits);
    host.zone(&mut sim, send(0, ZoneAction::Open))
        .result
        .unwrap();
    host.zone(&mut sim, send(1, ZoneAction::Open))
        .result
        .unwrap();
    let s = block_status(host.block(&mut sim, BlockOp::Write, 2 * ZONE_SECTORS, 8));
    assert_eq!(
        (s, s.code()),
        (ZoneStatus::TooManyOpenZones { open_max: 2 }, 0xBE)
    );
    host.zone(&mut sim, send(1, ZoneAction::Close))
        .result
        .unwrap();
    host.block(&mut sim, BlockOp::Write, 2 * ZONE_SECTORS, ROW_SECTORS)
        .unwrap();
    host.zone(&mut sim, send(2, ZoneAction::Close))
        .result
        .unwrap();
    // Zone 1 went back to Empty (nothing written); 0 open, 2 closed: 2 active of 3.
    host.zone(&mut sim, send(3, ZoneAction::Open))
        .result
        .unwrap();
    let s = status(host.zone(&mut sim, append(4, 8)).result);
    assert_eq!(
        (s, s.code()),
        (ZoneStatus::TooManyActiveZones { active_max: 3 }, 0xBD)
    );

    // Write Fault, then Zone Is Read Only (0xBA) and Zone Is Offline (0xBB).
    let failing = FlashConfig {
        program_fail_probability: 1.0,
        ..tiny_flash()
    };
    let (mut sim, mut host) = zoned_on(&failing, &ZnsConfig::default(), NvmeConfig::default());
    let s = block_status(host.block(&mut sim, BlockOp::Write, 0, ROW_SECTORS));
    assert_eq!((s, s.code()), (ZoneStatus::WriteFault { zone: 0 }, 0x80));
    let s = status(host.zone(&mut sim, append(0, 8)).result);
    assert_eq!(
        (s, s.code()),
        (ZoneStatus::ZoneIsReadOnly { zone: 0 }, 0xBA)
    );
    host.zone(&mut sim, send(0, ZoneAction::Offline))
        .result
        .unwrap();
    let s = block_status(host.block(&mut sim, BlockOp::Read, 0, 8));
    assert_eq!((s, s.code()), (ZoneStatus::ZoneIsOffline { zone: 0 }, 0xBB));
}

#[test]
fn a_zone_command_to_a_conventional_namespace_is_an_invalid_opcode_and_moves_no_data() {
    let dev = FixedDevice::new(1 << 30, 50_000, 1);
    let mut host = Host {
        nvme: Nvme::new(NvmeConfig::default(), dev).unwrap(),
        next_id: 0,
    };
    let mut sim = Sim::new(1);
    assert!(!host.nvme.is_zoned());
    for (cmd, opcode) in [
        (append(0, 256), 0x7D),
        (send(0, ZoneAction::Reset), 0x79),
        (report(0, ZoneFilter::All, 4), 0x7A),
    ] {
        let s = status(host.zone(&mut sim, cmd).result);
        assert_eq!((s, s.code()), (ZoneStatus::InvalidOpcode { opcode }, 0x01));
    }
    // Only doorbells and SQE fetches crossed: not the append's 128 KiB.
    assert!(host.nvme.link().stats(Direction::Down).payload_bytes < 4096);
    assert_eq!(host.nvme.stats().cqes, 3);
}

#[test]
fn zone_commands_held_for_a_slot_all_complete_in_zone_order() {
    let cfg = NvmeConfig {
        queue_pairs: 1,
        queue_entries: 3,
        ..NvmeConfig::default()
    };
    let (mut sim, mut host) = zoned_on(&tiny_flash(), &ZnsConfig::default(), cfg);
    for id in 0..10 {
        host.nvme
            .submit_zone(
                ZoneRequest {
                    id,
                    cmd: append(5, ROW_SECTORS),
                },
                sim.queue(),
            )
            .unwrap();
    }
    assert!(host.nvme.in_flight(0) <= 2, "a queue of 3 entries holds 2");
    while sim.step(&mut host) {}
    let mut out = Vec::new();
    host.nvme.take_zone_completions(&mut out);
    let mut lbas: Vec<u64> = out
        .iter()
        .map(|c| match c.result {
            Ok(ZoneReply::Appended { sector }) => sector,
            ref other => panic!("{other:?}"),
        })
        .collect();
    lbas.sort_unstable();
    let want: Vec<u64> = (0..10)
        .map(|i| 5 * ZONE_SECTORS + i * ROW_SECTORS)
        .collect();
    assert_eq!(lbas, want);
    assert_eq!(host.nvme.outstanding(), 0);
}

#[derive(Clone, Debug)]
enum Op {
    /// A write of this many rows at the host's idea of the write pointer.
    Write(u32, u64),
    Append(u32, u64),
    Act(u32, ZoneAction),
}

fn op() -> impl Strategy<Value = Op> {
    let action = prop_oneof![
        Just(ZoneAction::Open),
        Just(ZoneAction::Close),
        Just(ZoneAction::Finish),
        Just(ZoneAction::Reset),
        Just(ZoneAction::Offline),
    ];
    prop_oneof![
        4 => (0u32..6, 1u64..7).prop_map(|(z, r)| Op::Write(z, r)),
        3 => (0u32..6, 1u64..5).prop_map(|(z, r)| Op::Append(z, r)),
        4 => (0u32..6, action).prop_map(|(z, a)| Op::Act(z, a)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Whole rows only, one command at a time: no row is padded, so the drive's zones must
    /// follow the spec's table exactly; the host sees them by Report Zones over the link.
    #[test]
    fn zones_driven_through_the_queues_agree_with_the_reference_model(
        ops in proptest::collection::vec(op(), 1..40),
        open_max in 1u32..4,
        extra_active in 0u32..3,
    ) {
        let zns = ZnsConfig {
            max_open_zones: open_max,
            max_active_zones: open_max + extra_active,
            ..ZnsConfig::default()
        };
        let (mut sim, mut host) = zoned(&zns);
        let zones = host.nvme.device().zones().count();
        let mut r = ZoneReference::new(zones, ZONE_SECTORS, ZONE_SECTORS, open_max, open_max + extra_active);
        for o in &ops {
            let (got, want) = match *o {
                Op::Write(z, rows) => {
                    let wp = r.wps[z as usize].min(ZONE_SECTORS - 1);
                    let at = u64::from(z) * ZONE_SECTORS + wp;
                    let got = host.block(&mut sim, BlockOp::Write, at, rows * ROW_SECTORS).is_ok();
                    (got, r.write(z, rows * ROW_SECTORS))
                }
                Op::Append(z, rows) => {
                    let got = host.zone(&mut sim, append(u64::from(z), rows * ROW_SECTORS)).result;
                    let want_at = u64::from(z) * ZONE_SECTORS + r.wps[z as usize];
                    let want = r.write(z, rows * ROW_SECTORS);
                    if want {
                        prop_assert_eq!(got.clone(), Ok(ZoneReply::Appended { sector: want_at }));
                    }
                    (got.is_ok(), want)
                }
                Op::Act(z, a) => {
                    let got = host.zone(&mut sim, send(u64::from(z), a)).result.is_ok();
                    (got, r.act(z, a))
                }
            };
            prop_assert_eq!(got, want, "{:?}", o);
            let Ok(ZoneReply::Report(list)) =
                host.zone(&mut sim, report(0, ZoneFilter::All, zones as usize)).result
            else {
                panic!("a report")
            };
            for d in &list {
                prop_assert_eq!(d.state, r.states[d.zone as usize], "zone {} after {:?}", d.zone, o);
                prop_assert_eq!(d.wp_sector - d.start_sector, r.wps[d.zone as usize]);
            }
        }
        host.nvme.device().check_invariants();
    }
}
