//! FDP's management commands through the queues and the link, against the FTL's own answers:
//! each command's success and each status.

use super::*;
use crate::testing::FixedDevice;
use crate::{NvmeConfig, NvmeEvent};
use nearflash_blockdev::mgmt::MO_RUH;
use nearflash_blockdev::{MgmtCommand, PlacementDirective};
use nearflash_flash::NoStore;
use nearflash_ftl::fdp::{FdpConfig, FdpLog, HandleType};
use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
use nearflash_ftl::{Device, FtlConfig, MappingMode};
use nearflash_hw::link::Direction;
use nearflash_sim::{EventQueue, Model, Sim, SimRng};

struct Host<D: BlockDevice>(Nvme<D>);

impl<D: BlockDevice> Model for Host<D> {
    type Event = NvmeEvent<D::Event>;
    fn handle(&mut self, ev: Self::Event, q: &mut EventQueue<Self::Event>, rng: &mut SimRng) {
        self.0.handle_event(ev, q, rng);
    }
}

impl<D: BlockDevice> Host<D> {
    /// Runs `cmd` alone through the queues.
    fn mgmt(&mut self, sim: &mut Sim<NvmeEvent<D::Event>>, cmd: MgmtCommand) -> MgmtCompletion {
        self.0
            .submit_mgmt(MgmtRequest { id: 77, cmd }, sim.queue())
            .expect("the front end takes every management command");
        // The FTL keeps timers of its own: run until the answer, not until the queue empties.
        let mut out = Vec::new();
        while out.is_empty() {
            assert!(sim.step(self), "the command completes");
            self.0.take_mgmt_completions(&mut out);
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].id, 77);
        out.pop().unwrap()
    }
}

fn fdp_ftl(enabled: bool) -> FtlConfig {
    FtlConfig {
        mapping: MappingMode::Page,
        fdp: FdpConfig {
            enabled,
            handles: 4,
            handle_type: HandleType::InitiallyIsolated,
            reclaim_groups: 1,
        },
        ..tiny_ftl()
    }
}

type DSim = Sim<NvmeEvent<nearflash_ftl::Event>>;

fn drive(enabled: bool) -> (DSim, Host<Device>) {
    let mut sim = Sim::new(3);
    let dev = Device::format(
        &tiny_flash(),
        &fdp_ftl(enabled),
        Box::new(NoStore),
        &mut sim.queue().map(NvmeEvent::Device),
    )
    .unwrap();
    (sim, Host(Nvme::new(NvmeConfig::default(), dev).unwrap()))
}

fn placed_write(host: &mut Host<Device>, sim: &mut DSim, pid: u16) {
    let req = BlockRequest {
        id: 1,
        op: BlockOp::Write,
        offset_bytes: 0,
        len_bytes: 16 << 10,
        data: Vec::new(),
    };
    host.0
        .submit_placed(None, req, false, PlacementDirective(pid), sim.queue());
    let mut out = Vec::new();
    while out.is_empty() {
        assert!(sim.step(host), "the write completes");
        host.0.take_completions(&mut out);
    }
    assert!(out[0].result.is_ok());
}

#[test]
fn each_fdp_log_page_through_the_queues_is_the_drives_own_and_moves_up_the_link() {
    let (mut sim, mut host) = drive(true);
    placed_write(&mut host, &mut sim, 2);
    for (lid, lsp, which) in [
        (0x20, 0, FdpLog::Configurations),
        (0x21, 0, FdpLog::RuhUsage),
        (0x22, 0, FdpLog::Statistics),
        (0x23, 0, FdpLog::HostEvents),
        (0x23, 1, FdpLog::ControllerEvents),
    ] {
        let want = host.0.device().fdp_log(which).unwrap();
        let up = host.0.link().stats(Direction::Up).payload_bytes;
        let c = host.mgmt(&mut sim, MgmtCommand::GetLogPage { lid, lsp });
        let moved = host.0.link().stats(Direction::Up).payload_bytes - up;
        assert_eq!(c.result.as_ref(), Ok(&want), "log {lid:#x}");
        assert!(moved >= want.len() as u64, "log {lid:#x}: {moved} bytes up");
        assert!(c.completed > c.submitted);
    }
    assert_eq!(host.0.stats().mgmt_commands, 5);
}

#[test]
fn ruh_status_and_update_through_the_queues_move_the_handle_and_log_the_event() {
    let (mut sim, mut host) = drive(true);
    placed_write(&mut host, &mut sim, 1);
    let status = host.mgmt(&mut sim, MgmtCommand::IoManagementReceive { mo: MO_RUH });
    assert_eq!(
        status.result.unwrap(),
        host.0.device().ruh_status_bytes().unwrap()
    );
    let down = host.0.link().stats(Direction::Down).payload_bytes;
    let update = host.mgmt(
        &mut sim,
        MgmtCommand::IoManagementSend {
            mo: MO_RUH,
            pids: vec![1, 3],
        },
    );
    assert_eq!(update.result, Ok(Vec::new()));
    // The SQE (64 B) and the two identifiers (4 B) came down.
    assert!(host.0.link().stats(Direction::Down).payload_bytes - down >= 64 + 4);
    let dev = host.0.device();
    let events = dev.fdp_events(false).unwrap();
    assert_eq!(events.len(), 1, "handle 1's part-written unit: {events:?}");
    assert_eq!(events[0].pid, Some(1));
    assert_eq!(dev.stats().fdp.as_ref().unwrap().ruh_updates, 2);
}

#[test]
fn each_management_status_comes_back_through_the_queues() {
    let (mut sim, mut host) = drive(true);
    // Invalid Log Page (0x09): a log the drive does not offer.
    let c = host.mgmt(&mut sim, MgmtCommand::GetLogPage { lid: 0x24, lsp: 0 });
    let e = c.result.unwrap_err();
    assert_eq!(
        (e.clone(), e.code()),
        (MgmtStatus::InvalidLogPage { lid: 0x24 }, 0x09)
    );
    // Invalid Field (0x02): an identifier naming no handle (none is updated), another
    // management operation.
    let c = host.mgmt(
        &mut sim,
        MgmtCommand::IoManagementSend {
            mo: MO_RUH,
            pids: vec![0, 9],
        },
    );
    assert_eq!(c.result.unwrap_err().code(), 0x02);
    assert_eq!(host.0.device().stats().fdp.as_ref().unwrap().ruh_updates, 0);
    for cmd in [
        MgmtCommand::IoManagementReceive { mo: 2 },
        MgmtCommand::IoManagementSend {
            mo: 2,
            pids: vec![0],
        },
    ] {
        let e = host.mgmt(&mut sim, cmd).result.unwrap_err();
        assert!(
            matches!(e, MgmtStatus::InvalidField { .. }) && e.code() == 0x02,
            "{e:?}"
        );
    }
    // Invalid Field (0x02): FDP not enabled on the drive.
    let (mut sim, mut host) = drive(false);
    let e = host
        .mgmt(&mut sim, MgmtCommand::GetLogPage { lid: 0x20, lsp: 0 })
        .result
        .unwrap_err();
    assert!(e.to_string().contains("not enabled"), "{e}");
    assert_eq!(e.code(), 0x02);
    // Invalid Command Opcode (0x01): a device without management commands.
    let mut sim = Sim::new(1);
    let mut host =
        Host(Nvme::new(NvmeConfig::default(), FixedDevice::new(1 << 30, 1000, 1)).unwrap());
    for (cmd, opcode) in [
        (MgmtCommand::GetLogPage { lid: 0x20, lsp: 0 }, 0x02),
        (MgmtCommand::IoManagementReceive { mo: MO_RUH }, 0x12),
        (
            MgmtCommand::IoManagementSend {
                mo: MO_RUH,
                pids: vec![0],
            },
            0x1D,
        ),
    ] {
        let e = host.mgmt(&mut sim, cmd).result.unwrap_err();
        assert_eq!(
            (e.clone(), e.code()),
            (MgmtStatus::InvalidOpcode { opcode }, 0x01)
        );
    }
}
