//! FDP's management commands through the queues and the link, against the FTL's own answers:
//! each command's success and each status.

use super::*;
use crate::testing::FixedDevice;
use crate::{NvmeConfig, NvmeEvent};
use nearflash_blockdev::mgmt::MO_RUH;
use nearflash_blockdev::{BlockOp, BlockRequest, MgmtCommand, PlacementDirective};
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
        // LSP bit 0 is Host Events (QEMU's `nvme_fdp_events`, libnvme's
        // `nvme_get_log_fdp_events`): set for the host's, clear for the controller's. (The
        // two were swapped here before.)
        (0x23, 1, FdpLog::HostEvents),
        (0x23, 0, FdpLog::ControllerEvents),
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
    // FDP Disabled (0x29) with FDP off: `fdp_disabled_is_the_status_of_every_command_needing_fdp`.
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
        (
            MgmtCommand::SetFdp {
                enable: true,
                config_index: 0,
            },
            0x09,
        ),
        (MgmtCommand::GetFdpEvents { handle: 0, noet: 6 }, 0x0A),
    ] {
        let e = host.mgmt(&mut sim, cmd).result.unwrap_err();
        assert_eq!(
            (e.clone(), e.code()),
            (MgmtStatus::InvalidOpcode { opcode }, 0x01)
        );
    }
}

/// The bytes that came up the link while `cmd` ran.
fn up_bytes(host: &mut Host<Device>, sim: &mut DSim, cmd: MgmtCommand) -> (MgmtCompletion, u64) {
    let up = host.0.link().stats(Direction::Up).payload_bytes;
    let c = host.mgmt(sim, cmd);
    (c, host.0.link().stats(Direction::Up).payload_bytes - up)
}

fn get_events(host: &mut Host<Device>, sim: &mut DSim, handle: u16) -> Vec<u8> {
    host.mgmt(
        sim,
        MgmtCommand::GetFdpEvents {
            handle,
            noet: nearflash_ftl::EVENT_TYPES.len() as u8,
        },
    )
    .result
    .expect("a handle of the namespace")
}

fn set_events(host: &mut Host<Device>, sim: &mut DSim, handle: u16, enable: bool, types: &[u8]) {
    let c = host.mgmt(
        sim,
        MgmtCommand::SetFdpEvents {
            handle,
            enable,
            types: types.to_vec(),
        },
    );
    assert_eq!(c.result, Ok(Vec::new()));
}

/// Whether event type `t` is enabled in a Get Features FDP Events answer.
fn enabled(descriptors: &[u8], t: u8) -> bool {
    let d = descriptors
        .chunks(nearflash_ftl::EVENT_DESCRIPTOR_BYTES)
        .find(|d| d[0] == t)
        .expect("a descriptor per type");
    d[1] & 1 == 1
}

#[test]
fn get_features_fdp_answers_in_the_cqe_and_set_features_fdp_is_refused_with_the_specs_statuses() {
    let (mut sim, mut host) = drive(true);
    // Dword 0: FDPE = 1, FDPCIDX = 0; nothing but the completion comes up.
    let (c, moved) = up_bytes(&mut host, &mut sim, MgmtCommand::GetFdp);
    assert_eq!(c.result, Ok(1u32.to_le_bytes().to_vec()));
    let (c, moved_set) = up_bytes(
        &mut host,
        &mut sim,
        MgmtCommand::SetFdp {
            enable: false,
            config_index: 0,
        },
    );
    assert_eq!(moved, moved_set, "Get Features FDP moves no data up");
    // Command Sequence Error (0x0C): namespace 1 exists in the endurance group.
    let e = c.result.unwrap_err();
    assert!(
        matches!(e, MgmtStatus::CommandSequenceError { .. }) && e.code() == 0x0C,
        "{e:?}"
    );
    // Invalid Field (0x02): a configuration index log 0x20 does not offer.
    let e = host
        .mgmt(
            &mut sim,
            MgmtCommand::SetFdp {
                enable: true,
                config_index: 1,
            },
        )
        .result
        .unwrap_err();
    assert!(
        matches!(e, MgmtStatus::InvalidField { .. }) && e.code() == 0x02,
        "{e:?}"
    );
    // Refused: the state is what it was.
    let c = host.mgmt(&mut sim, MgmtCommand::GetFdp);
    assert_eq!(c.result, Ok(1u32.to_le_bytes().to_vec()));
    // Without FDP: FDPE = 0, and no configuration to enable.
    let (mut sim, mut host) = drive(false);
    let c = host.mgmt(&mut sim, MgmtCommand::GetFdp);
    assert_eq!(c.result, Ok(0u32.to_le_bytes().to_vec()));
    let e = host
        .mgmt(
            &mut sim,
            MgmtCommand::SetFdp {
                enable: true,
                config_index: 0,
            },
        )
        .result
        .unwrap_err();
    assert_eq!(e.code(), 0x02, "{e:?}");
}

#[test]
fn fdp_events_feature_statuses() {
    // FDP Disabled (0x29): both directions on a drive without FDP.
    let (mut sim, mut host) = drive(false);
    for cmd in [
        MgmtCommand::GetFdpEvents { handle: 0, noet: 6 },
        MgmtCommand::SetFdpEvents {
            handle: 0,
            enable: true,
            types: vec![0x00],
        },
    ] {
        let e = host.mgmt(&mut sim, cmd).result.unwrap_err();
        assert_eq!((e.clone(), e.code()), (MgmtStatus::FdpDisabled, 0x29));
    }
    // Invalid Field (0x02): a handle the namespace lacks, an undefined event type (nothing
    // changes, not even the defined types listed with it).
    let (mut sim, mut host) = drive(true);
    let before = get_events(&mut host, &mut sim, 1);
    for cmd in [
        MgmtCommand::GetFdpEvents { handle: 4, noet: 6 },
        MgmtCommand::GetFdpEvents { handle: 0, noet: 0 },
        MgmtCommand::SetFdpEvents {
            handle: 4,
            enable: false,
            types: vec![0x00],
        },
        MgmtCommand::SetFdpEvents {
            handle: 1,
            enable: false,
            types: vec![0x00, 0x42],
        },
    ] {
        let e = host.mgmt(&mut sim, cmd).result.unwrap_err();
        assert!(
            matches!(e, MgmtStatus::InvalidField { .. }) && e.code() == 0x02,
            "{e:?}"
        );
    }
    assert_eq!(get_events(&mut host, &mut sim, 1), before);
    // Default: every type enabled, one descriptor per type, moved up the link.
    let (c, moved) = up_bytes(
        &mut host,
        &mut sim,
        MgmtCommand::GetFdpEvents { handle: 0, noet: 6 },
    );
    assert_eq!(c.dword0, 6, "Dword 0: the descriptors returned");
    let d = c.result.unwrap();
    assert_eq!(
        d.len(),
        nearflash_ftl::EVENT_TYPES.len() * nearflash_ftl::EVENT_DESCRIPTOR_BYTES
    );
    assert!(moved >= d.len() as u64);
    assert!(nearflash_ftl::EVENT_TYPES.iter().all(|&t| enabled(&d, t)));
    // A Set Features' event types come down the link.
    let down = host.0.link().stats(Direction::Down).payload_bytes;
    set_events(&mut host, &mut sim, 0, true, &[0x00, 0x01, 0x02]);
    assert!(host.0.link().stats(Direction::Down).payload_bytes - down >= 64 + 3);
}

#[test]
fn a_placement_directive_places_with_fdp_and_is_ignored_without() {
    for fdp in [true, false] {
        let (mut sim, mut host) = drive(fdp);
        placed_write(&mut host, &mut sim, 2);
        let dev = host.0.device();
        // FDP on: the unit is handle 2's. Off: the directive is ignored (as QEMU's write path
        // does with FDP disabled), the write succeeds, and no handle or event exists.
        assert_eq!(dev.unit_handle(0), if fdp { 2 } else { 0 }, "fdp {fdp}");
        assert_eq!(dev.fdp_events(false).is_ok(), fdp);
        assert_eq!(dev.stats().fdp.is_some(), fdp);
    }
}

#[test]
fn events_are_logged_only_for_the_types_a_handle_enables() {
    let (mut sim, mut host) = drive(true);
    let update = |host: &mut Host<Device>, sim: &mut DSim, pid: u16| {
        placed_write(host, sim, pid);
        let c = host.mgmt(
            sim,
            MgmtCommand::IoManagementSend {
                mo: MO_RUH,
                pids: vec![pid],
            },
        );
        assert_eq!(c.result, Ok(Vec::new()));
    };
    // Handle 1 stops logging Reclaim Unit Not Fully Written; handle 2 keeps it.
    set_events(&mut host, &mut sim, 1, false, &[0x00]);
    let d = get_events(&mut host, &mut sim, 1);
    assert!(!enabled(&d, 0x00) && enabled(&d, 0x03) && enabled(&d, 0x81));
    update(&mut host, &mut sim, 1);
    assert!(host.0.device().fdp_events(false).unwrap().is_empty());
    update(&mut host, &mut sim, 2);
    let events = host.0.device().fdp_events(false).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].location.map(|l| l.0), Some(2));
    // Enabled again, handle 1's next one is logged.
    set_events(&mut host, &mut sim, 1, true, &[0x00]);
    update(&mut host, &mut sim, 1);
    let events = host.0.device().fdp_events(false).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].location.map(|l| l.0), Some(1));
    // An invalid Placement Identifier's event is placement handle 0's: counted always,
    // logged only while handle 0 enables it.
    set_events(&mut host, &mut sim, 0, false, &[0x03]);
    placed_write(&mut host, &mut sim, 9);
    let dev = host.0.device();
    assert_eq!(dev.fdp_events(false).unwrap().len(), 2);
    assert_eq!(dev.stats().fdp.as_ref().unwrap().invalid_placement_ids, 1);
    set_events(&mut host, &mut sim, 0, true, &[0x03]);
    placed_write(&mut host, &mut sim, 9);
    let events = host.0.device().fdp_events(false).unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(events[2].pid, Some(9));
}

/// Issue 34's story: a host finds FDP on with Get Features, learns that it cannot switch it
/// while its namespace exists, silences the Reclaim Unit Not Fully Written events of the one
/// handle it updates on purpose, and reads back an events log that holds only the others.
#[test]
fn issue_34_host_reads_fdp_state_and_silences_one_handles_expected_events() {
    let (mut sim, mut host) = drive(true);
    let fdp = host.mgmt(&mut sim, MgmtCommand::GetFdp).result.unwrap();
    assert_eq!(fdp[0] & 1, 1, "FDP enabled");
    let off = host.mgmt(
        &mut sim,
        MgmtCommand::SetFdp {
            enable: false,
            config_index: fdp[1],
        },
    );
    assert_eq!(off.result.unwrap_err().code(), 0x0C);
    set_events(&mut host, &mut sim, 3, false, &[0x00]);
    for round in 0..3 {
        for pid in [1, 3] {
            placed_write(&mut host, &mut sim, pid);
        }
        let c = host.mgmt(
            &mut sim,
            MgmtCommand::IoManagementSend {
                mo: MO_RUH,
                pids: vec![1, 3],
            },
        );
        assert_eq!(c.result, Ok(Vec::new()), "round {round}");
    }
    let log = host
        .mgmt(&mut sim, MgmtCommand::GetLogPage { lid: 0x23, lsp: 1 })
        .result
        .unwrap();
    let events = host.0.device().fdp_events(false).unwrap();
    assert_eq!(log, nearflash_ftl::fdp::log::encode_events_log(&events));
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events.iter().all(|e| e.pid == Some(1)));
    assert_eq!(host.0.device().stats().fdp.as_ref().unwrap().ruh_updates, 6);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
    /// The FDP and FDP Events features stay as set through any run of unrelated commands:
    /// placed writes (valid or not), log pages, handle status and updates.
    #[test]
    fn features_survive_unrelated_commands(
        masks in proptest::collection::vec(0u8..64, 4),
        ops in proptest::collection::vec((0u8..4, 0u16..6), 1..12),
    ) {
        let (mut sim, mut host) = drive(true);
        for (h, &m) in masks.iter().enumerate() {
            let off: Vec<u8> = nearflash_ftl::EVENT_TYPES
                .iter()
                .enumerate()
                .filter(|(i, _)| m & (1 << i) != 0)
                .map(|(_, &t)| t)
                .collect();
            set_events(&mut host, &mut sim, h as u16, false, &off);
        }
        let before: Vec<Vec<u8>> = (0..4).map(|h| get_events(&mut host, &mut sim, h)).collect();
        let fdp = host.mgmt(&mut sim, MgmtCommand::GetFdp).result.unwrap();
        for (op, pid) in ops {
            match op {
                0 => placed_write(&mut host, &mut sim, pid),
                1 => {
                    host.mgmt(&mut sim, MgmtCommand::GetLogPage { lid: 0x20 + (pid % 4) as u8, lsp: 0 });
                }
                2 => {
                    host.mgmt(&mut sim, MgmtCommand::IoManagementReceive { mo: MO_RUH });
                }
                _ => {
                    host.mgmt(&mut sim, MgmtCommand::IoManagementSend { mo: MO_RUH, pids: vec![pid] });
                }
            }
        }
        for (h, want) in before.iter().enumerate() {
            proptest::prop_assert_eq!(&get_events(&mut host, &mut sim, h as u16), want);
        }
        proptest::prop_assert_eq!(host.mgmt(&mut sim, MgmtCommand::GetFdp).result.unwrap(), fdp);
    }
}

/// QEMU's `hw/nvme/ctrl.c` answers every FDP command that needs FDP enabled with FDP Disabled
/// (0x29) when it is off — the RUH Usage, Statistics and Events logs (`nvme_fdp_ruh_usage`,
/// `nvme_fdp_stats`, `nvme_fdp_events`), Reclaim Unit Handle Status and Update
/// (`nvme_io_mgmt_recv_ruhs`, `nvme_io_mgmt_send_ruh_update`) and both FDP Events features —
/// where this drive answered Invalid Field before; an unknown management operation is still
/// Invalid Field (checked first), and the Configurations log is answered either way.
#[test]
fn fdp_disabled_is_the_status_of_every_command_needing_fdp() {
    let (mut sim, mut host) = drive(false);
    for cmd in [
        MgmtCommand::GetLogPage { lid: 0x21, lsp: 0 },
        MgmtCommand::GetLogPage { lid: 0x22, lsp: 0 },
        MgmtCommand::GetLogPage { lid: 0x23, lsp: 0 },
        MgmtCommand::GetLogPage { lid: 0x23, lsp: 1 },
        MgmtCommand::IoManagementReceive { mo: MO_RUH },
        MgmtCommand::IoManagementSend {
            mo: MO_RUH,
            pids: vec![0],
        },
        MgmtCommand::GetFdpEvents { handle: 0, noet: 6 },
        MgmtCommand::SetFdpEvents {
            handle: 0,
            enable: true,
            types: vec![0x00],
        },
    ] {
        let c = host.mgmt(&mut sim, cmd.clone());
        let e = c.result.unwrap_err();
        assert_eq!(
            (e.clone(), e.code()),
            (MgmtStatus::FdpDisabled, 0x29),
            "{cmd:?}"
        );
        assert_eq!(c.dword0, 0);
    }
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
    // The Configurations log lists the preset's configuration: 4 handles, 1 group.
    let log = host
        .mgmt(&mut sim, MgmtCommand::GetLogPage { lid: 0x20, lsp: 0 })
        .result
        .unwrap();
    let on = drive(true)
        .1
         .0
        .device()
        .fdp_configuration()
        .unwrap()
        .encode_log();
    assert_eq!(log, on, "what enabling would give");
}

/// Get Features FDP Events returns the first NOET supported event types in type order, in a
/// buffer of NOET descriptors, and says in Dword 0 how many it filled (QEMU's
/// `nvme_get_feature_fdp_events`).
#[test]
fn get_features_fdp_events_returns_noet_descriptors_and_their_count_in_dword0() {
    let (mut sim, mut host) = drive(true);
    set_events(&mut host, &mut sim, 2, false, &[0x01]);
    let types = nearflash_ftl::EVENT_TYPES;
    let bytes = nearflash_ftl::EVENT_DESCRIPTOR_BYTES;
    // Fewer than supported: the first two types.
    let (c, moved) = up_bytes(
        &mut host,
        &mut sim,
        MgmtCommand::GetFdpEvents { handle: 2, noet: 2 },
    );
    assert_eq!(c.dword0, 2);
    assert_eq!(c.result, Ok(vec![types[0], 1, types[1], 0]));
    assert!(moved >= 4);
    // More than supported: every type, then zeroed descriptors up to NOET.
    let c = host.mgmt(&mut sim, MgmtCommand::GetFdpEvents { handle: 2, noet: 9 });
    assert_eq!(c.dword0, types.len() as u32);
    let d = c.result.unwrap();
    assert_eq!(d.len(), 9 * bytes);
    assert!(d[types.len() * bytes..].iter().all(|&b| b == 0));
    let listed: Vec<u8> = d.chunks(bytes).take(types.len()).map(|d| d[0]).collect();
    assert_eq!(listed, types);
    // Get Features FDP's Dword 0 is its value.
    assert_eq!(host.mgmt(&mut sim, MgmtCommand::GetFdp).dword0, 1);
}
