//! The zoned drive end to end on the tiny device (2 channels × 2 ways × 2 planes, 16 rows
//! of 16 KiB per zone = 256 KiB zones, 44 zones): each command's effect on the zone, its
//! data and its flash work, and recovery after a power cut.

use super::*;
use crate::testing::{tiny_flash, tiny_ftl};
use crate::zns::recover;
use crate::zns::ZoneFilter;
use nearflash_flash::store::{MemoryStore, NoStore};
use nearflash_sim::{Progress, Sim, Watchdog};

const ROW_SECTORS: u64 = 32;
const ZONE_SECTORS: u64 = 16 * ROW_SECTORS;

pub(crate) struct Rig {
    pub sim: Sim<ZnsEvent>,
    pub dev: ZonedDevice,
    next_id: u64,
}

impl Rig {
    pub fn new(cfg: &ZnsConfig, functional: bool, flash: &FlashConfig) -> Rig {
        let geo = Geometry::from_config(flash);
        let store: Box<dyn PageStore> = if functional {
            Box::new(MemoryStore::new(geo.page_count(), flash.page_size_bytes))
        } else {
            Box::new(NoStore)
        };
        let dev = ZonedDevice::format(flash, &tiny_ftl(), cfg, store).unwrap();
        Rig {
            sim: Sim::new(7),
            dev,
            next_id: 1,
        }
    }

    pub fn tiny() -> Rig {
        Rig::new(&ZnsConfig::default(), true, &tiny_flash())
    }

    fn run(&mut self, done: impl FnMut(&ZonedDevice) -> bool) {
        let mut wd = Watchdog::starting_at(SimDuration::from_us_f64(1e6), self.sim.now());
        self.sim
            .run_until(
                &mut self.dev,
                &mut wd,
                |d| Progress {
                    completed: 0,
                    outstanding: nearflash_blockdev::BlockDevice::outstanding(d),
                },
                done,
            )
            .unwrap();
    }

    pub fn block(&mut self, op: BlockOp, sector: u64, sectors: u64, fill: u8) -> BlockCompletion {
        let id = self.submit_block(op, sector, sectors, fill);
        self.wait_block(id)
    }

    pub fn submit_block(&mut self, op: BlockOp, sector: u64, sectors: u64, fill: u8) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let data = if op == BlockOp::Write {
            vec![fill; (sectors * SECTOR_BYTES) as usize]
        } else {
            Vec::new()
        };
        let req = BlockRequest {
            id,
            op,
            offset_bytes: sector * SECTOR_BYTES,
            len_bytes: sectors * SECTOR_BYTES,
            data,
        };
        self.dev.submit(req, self.sim.queue());
        id
    }

    pub fn wait_block(&mut self, id: u64) -> BlockCompletion {
        let mut found = None;
        let mut out = Vec::new();
        self.run(|d| d.completions.iter().any(|c| c.id == id));
        self.dev.take_completions_into(&mut out);
        for c in out {
            if c.id == id {
                found = Some(c);
            }
        }
        self.dev.check_invariants();
        found.expect("completion")
    }

    pub fn zone(&mut self, cmd: ZoneCommand) -> Result<ZoneReply, IoError> {
        let id = self.next_id;
        self.next_id += 1;
        self.dev
            .submit_zone(ZoneRequest { id, cmd }, self.sim.queue());
        self.run(|d| d.zone_completions.iter().any(|c| c.id == id));
        let mut out = Vec::new();
        self.dev.take_zone_completions(&mut out);
        self.dev.check_invariants();
        out.into_iter().find(|c| c.id == id).unwrap().result
    }

    pub fn send(&mut self, zone: u32, action: ZoneAction) -> Result<ZoneReply, IoError> {
        self.zone(ZoneCommand::Send {
            zone_start_sector: u64::from(zone) * ZONE_SECTORS,
            action,
        })
    }

    pub fn append(&mut self, zone: u32, sectors: u64, fill: u8) -> Result<ZoneReply, IoError> {
        self.zone(ZoneCommand::Append {
            zone_start_sector: u64::from(zone) * ZONE_SECTORS,
            len_bytes: sectors * SECTOR_BYTES,
            data: vec![fill; (sectors * SECTOR_BYTES) as usize],
        })
    }

    pub fn read(&mut self, sector: u64, sectors: u64) -> Vec<u8> {
        let c = self.block(BlockOp::Read, sector, sectors, 0);
        c.result.unwrap();
        c.data
    }
}

impl ZonedDevice {
    fn take_completions_into(&mut self, out: &mut Vec<BlockCompletion>) {
        nearflash_blockdev::BlockDevice::take_completions(self, out);
    }
}

fn zone_err(r: Result<ZoneReply, IoError>) -> ZoneStatus {
    match r {
        Err(IoError::Zone(s)) => s,
        other => panic!("expected a zone status, got {other:?}"),
    }
}

#[test]
fn zone_geometry_comes_from_the_superblock() {
    let rig = Rig::tiny();
    assert_eq!(rig.dev.zones().count(), 44, "every superblock is a zone");
    assert_eq!(rig.dev.zone_bytes(), 16 * 16 * 1024);
    assert_eq!(rig.dev.zones().zone_sectors(), ZONE_SECTORS);
}

#[test]
fn write_at_the_write_pointer_reads_back_and_unwritten_sectors_read_zeros() {
    let mut rig = Rig::tiny();
    let c = rig.block(BlockOp::Write, 0, 40, 0xA1);
    c.result.unwrap();
    assert_eq!(rig.dev.zones().wp_sector(0), 40);
    let data = rig.read(0, 48);
    assert!(data[..40 * 512].iter().all(|&b| b == 0xA1));
    assert!(data[40 * 512..].iter().all(|&b| b == 0));
}

#[test]
fn zone_append_returns_the_assigned_lba_in_submission_order() {
    let mut rig = Rig::tiny();
    let mut ids = Vec::new();
    for (i, n) in [8u64, 16, 4].iter().enumerate() {
        let id = rig.next_id;
        rig.next_id += 1;
        ids.push(id);
        let cmd = ZoneCommand::Append {
            zone_start_sector: 3 * ZONE_SECTORS,
            len_bytes: n * 512,
            data: vec![i as u8 + 1; (n * 512) as usize],
        };
        rig.dev
            .submit_zone(ZoneRequest { id, cmd }, rig.sim.queue());
    }
    rig.run(|d| d.zone_completions.len() == 3);
    let mut out = Vec::new();
    rig.dev.take_zone_completions(&mut out);
    out.sort_by_key(|c| c.id);
    let lbas: Vec<ZoneReply> = out.into_iter().map(|c| c.result.unwrap()).collect();
    let base = 3 * ZONE_SECTORS;
    assert_eq!(
        lbas,
        vec![
            ZoneReply::Appended { sector: base },
            ZoneReply::Appended { sector: base + 8 },
            ZoneReply::Appended { sector: base + 24 }
        ]
    );
    let data = rig.read(base + 8, 16);
    assert!(data.iter().all(|&b| b == 2));
}

#[test]
fn appends_in_one_instant_share_one_row_program() {
    let mut rig = Rig::tiny();
    for _ in 0..4 {
        let id = rig.next_id;
        rig.next_id += 1;
        let cmd = ZoneCommand::Append {
            zone_start_sector: 0,
            len_bytes: 8 * 512,
            data: vec![9; 8 * 512],
        };
        rig.dev
            .submit_zone(ZoneRequest { id, cmd }, rig.sim.queue());
    }
    rig.run(|d| d.zone_completions.len() == 4);
    assert_eq!(rig.dev.stats().rows_programmed, 1);
    assert_eq!(rig.dev.stats().rows_padded, 0);
    assert_eq!(
        rig.dev.backbone().stats().page_programs,
        4,
        "one page per channel × plane"
    );
}

#[test]
fn append_larger_than_zasl_is_refused() {
    let cfg = ZnsConfig {
        zone_append_size_limit_bytes: 8192,
        ..ZnsConfig::default()
    };
    let mut rig = Rig::new(&cfg, true, &tiny_flash());
    assert_eq!(
        zone_err(rig.append(0, 17, 1)),
        ZoneStatus::AppendTooLarge {
            len_bytes: 17 * 512,
            zasl_bytes: 8192
        }
    );
    assert!(rig.append(0, 16, 1).is_ok());
}

#[test]
fn append_not_addressed_to_a_zone_start_is_an_invalid_zone() {
    let mut rig = Rig::tiny();
    let r = rig.zone(ZoneCommand::Append {
        zone_start_sector: 5,
        len_bytes: 512,
        data: vec![0; 512],
    });
    assert_eq!(zone_err(r), ZoneStatus::InvalidZone { sector: 5 });
}

#[test]
fn write_errors_are_the_spec_statuses() {
    let mut rig = Rig::tiny();
    rig.block(BlockOp::Write, 0, 8, 1).result.unwrap();
    assert_eq!(
        rig.block(BlockOp::Write, 16, 8, 1).result,
        Err(IoError::Zone(ZoneStatus::InvalidWrite {
            zone: 0,
            sector: 16,
            wp_sector: 8
        }))
    );
    assert_eq!(
        rig.block(BlockOp::Write, 8, ZONE_SECTORS, 1).result,
        Err(IoError::Zone(ZoneStatus::BoundaryError { zone: 0 }))
    );
    rig.send(0, ZoneAction::Finish).unwrap();
    assert_eq!(
        rig.block(BlockOp::Write, 8, 8, 1).result,
        Err(IoError::Zone(ZoneStatus::ZoneIsFull { zone: 0 }))
    );
    assert_eq!(
        rig.block(BlockOp::Trim, 0, 8, 0).result,
        Err(IoError::Zone(ZoneStatus::DeallocateUnsupported))
    );
}

#[test]
fn reset_erases_the_zone_blocks_on_their_dies_and_empties_it() {
    let mut rig = Rig::tiny();
    rig.block(BlockOp::Write, ZONE_SECTORS, 64, 5)
        .result
        .unwrap();
    let erases = rig.dev.backbone().stats().block_erases;
    let before = rig.sim.now();
    rig.send(1, ZoneAction::Reset).unwrap();
    assert_eq!(
        rig.dev.backbone().stats().block_erases - erases,
        4,
        "one block per channel × plane"
    );
    assert!(
        rig.sim.now().as_ns() - before.as_ns() >= 1_000_000,
        "the reset waits for tBERS (1 ms on the tiny device)"
    );
    assert_eq!(rig.dev.zones().state(1), ZoneState::Empty);
    assert!(rig.read(ZONE_SECTORS, 64).iter().all(|&b| b == 0));
    rig.block(BlockOp::Write, ZONE_SECTORS, 8, 6)
        .result
        .unwrap();
    assert!(rig.read(ZONE_SECTORS, 8).iter().all(|&b| b == 6));
}

#[test]
fn writes_beyond_mor_close_the_oldest_implicitly_open_zone() {
    let cfg = ZnsConfig {
        max_open_zones: 2,
        max_active_zones: 3,
        ..ZnsConfig::default()
    };
    let mut rig = Rig::new(&cfg, true, &tiny_flash());
    for z in 0..3 {
        rig.block(BlockOp::Write, z * ZONE_SECTORS, 8, 1)
            .result
            .unwrap();
    }
    assert_eq!(rig.dev.zones().state(0), ZoneState::Closed);
    assert_eq!(rig.dev.stats().implicit_closes, 1);
    assert_eq!(
        rig.block(BlockOp::Write, 3 * ZONE_SECTORS, 8, 1).result,
        Err(IoError::Zone(ZoneStatus::TooManyActiveZones {
            active_max: 3
        }))
    );
    rig.send(1, ZoneAction::Open).unwrap();
    rig.send(2, ZoneAction::Open).unwrap();
    assert_eq!(
        zone_err(rig.send(0, ZoneAction::Open)),
        ZoneStatus::TooManyOpenZones { open_max: 2 }
    );
}

#[test]
fn small_writes_one_per_instant_are_padded_until_the_controller_finishes_the_zone() {
    let mut rig = Rig::tiny();
    for i in 0..16 {
        rig.block(BlockOp::Write, i * 8, 8, 1).result.unwrap();
    }
    assert_eq!(rig.dev.stats().rows_padded, 16);
    let d = rig.dev.zones().descriptor(0);
    assert_eq!(d.state, ZoneState::Full);
    assert!(
        d.finished_by_controller,
        "ZFC: its rows ran out before ZCAP"
    );
    assert!(rig.read(0, 128).iter().all(|&b| b == 1));
}

#[test]
fn report_zones_filters_by_state() {
    let mut rig = Rig::tiny();
    rig.block(BlockOp::Write, 2 * ZONE_SECTORS, 8, 1)
        .result
        .unwrap();
    rig.send(5, ZoneAction::Finish).unwrap();
    let r = rig.zone(ZoneCommand::Report {
        from_sector: 0,
        filter: ZoneFilter::Only(ZoneState::Full),
        limit: 10,
    });
    let ZoneReply::Report(list) = r.unwrap() else {
        panic!("a report")
    };
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].zone, 5);
    let r = rig.zone(ZoneCommand::Report {
        from_sector: 0,
        filter: ZoneFilter::All,
        limit: 3,
    });
    let ZoneReply::Report(list) = r.unwrap() else {
        panic!("a report")
    };
    assert_eq!(
        list.iter().map(|d| d.state).collect::<Vec<_>>(),
        vec![
            ZoneState::Empty,
            ZoneState::Empty,
            ZoneState::ImplicitlyOpen
        ]
    );
}

#[test]
fn failed_program_turns_the_zone_read_only_and_offline_erases_it() {
    let flash = FlashConfig {
        program_fail_probability: 1.0,
        ..tiny_flash()
    };
    let mut rig = Rig::new(&ZnsConfig::default(), true, &flash);
    assert_eq!(
        rig.block(BlockOp::Write, 0, 32, 1).result,
        Err(IoError::Zone(ZoneStatus::WriteFault { zone: 0 }))
    );
    assert_eq!(rig.dev.zones().state(0), ZoneState::ReadOnly);
    assert_eq!(
        rig.block(BlockOp::Write, 32, 8, 1).result,
        Err(IoError::Zone(ZoneStatus::ZoneIsReadOnly { zone: 0 }))
    );
    rig.send(0, ZoneAction::Offline).unwrap();
    assert_eq!(rig.dev.zones().state(0), ZoneState::Offline);
    assert_eq!(
        rig.block(BlockOp::Read, 0, 8, 0).result,
        Err(IoError::Zone(ZoneStatus::ZoneIsOffline { zone: 0 }))
    );
}

#[test]
fn power_cut_keeps_acknowledged_data_and_the_finish_of_a_zone() {
    let mut rig = Rig::tiny();
    rig.block(BlockOp::Write, 0, 40, 3).result.unwrap();
    rig.block(BlockOp::Write, ZONE_SECTORS, 8, 4)
        .result
        .unwrap();
    rig.send(1, ZoneAction::Finish).unwrap();
    rig.block(BlockOp::Write, 2 * ZONE_SECTORS, 8, 5)
        .result
        .unwrap();
    rig.send(2, ZoneAction::Reset).unwrap();
    let mut rng = rig.sim.into_rng();
    let mut bb = rig.dev.into_backbone();
    bb.power_cut(&mut rng);
    let (dev, report) = recover(bb, &tiny_ftl(), &ZnsConfig::default()).unwrap();
    assert_eq!(report.finish_marks, 1);
    let mut rig = Rig {
        sim: Sim::new(8),
        dev,
        next_id: 100,
    };
    let z = rig.dev.zones();
    assert_eq!((z.state(0), z.wp_sector(0)), (ZoneState::Closed, 40));
    assert_eq!(z.state(1), ZoneState::Full);
    assert_eq!(z.state(2), ZoneState::Empty);
    assert!(rig.read(0, 40).iter().all(|&b| b == 3));
    assert!(rig.read(ZONE_SECTORS, 8).iter().all(|&b| b == 4));
    rig.block(BlockOp::Write, 40, 8, 7).result.unwrap();
    assert!(rig.read(40, 8).iter().all(|&b| b == 7));
}

#[test]
fn same_seed_gives_the_same_timing() {
    let run = || {
        let mut rig = Rig::new(&ZnsConfig::default(), false, &tiny_flash());
        for i in 0..7 {
            rig.block(BlockOp::Write, i * 64, 64, 0).result.unwrap();
            rig.send(0, ZoneAction::Close).unwrap();
        }
        rig.send(0, ZoneAction::Reset).unwrap();
        (rig.sim.now(), rig.sim.trace_hash().finish())
    };
    assert_eq!(run(), run());
}
