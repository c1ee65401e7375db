//! The zone state machine, transition by transition and status by status, and a property
//! test against a reference model written from the spec's transition table.

use super::*;
use crate::zns::reference::ZoneReference;
use proptest::prelude::*;

const ZS: u64 = 64;

fn table(zones: u32, open_max: u32, active_max: u32) -> ZoneTable {
    ZoneTable::new(zones, ZS, 48, open_max, active_max)
}

fn write(t: &mut ZoneTable, zone: u32, len: u64) -> Result<Transition, ZoneStatus> {
    let at = t.wp_sector(zone);
    t.check_write(zone, at, len, false)?;
    t.write(zone, len)
}

#[test]
fn write_to_empty_zone_opens_it_implicitly_and_advances_the_write_pointer() {
    let mut t = table(4, 2, 3);
    write(&mut t, 1, 8).unwrap();
    assert_eq!(t.state(1), ZoneState::ImplicitlyOpen);
    assert_eq!(t.wp_sector(1), ZS + 8);
    assert_eq!((t.open_count(), t.active_count()), (1, 1));
    t.check();
}

#[test]
fn write_reaching_capacity_makes_the_zone_full_and_frees_its_resources() {
    let mut t = table(4, 2, 3);
    write(&mut t, 0, 48).unwrap();
    assert_eq!(t.state(0), ZoneState::Full);
    assert_eq!(t.wp_sector(0), ZS, "a full zone reports its end");
    assert_eq!((t.open_count(), t.active_count()), (0, 0));
    assert_eq!(
        write(&mut t, 0, 1).unwrap_err(),
        ZoneStatus::ZoneIsFull { zone: 0 }
    );
}

#[test]
fn write_not_at_the_write_pointer_is_an_invalid_write() {
    let mut t = table(4, 2, 3);
    write(&mut t, 0, 8).unwrap();
    assert_eq!(
        t.check_write(0, 4, 4, false).unwrap_err(),
        ZoneStatus::InvalidWrite {
            zone: 0,
            sector: 4,
            wp_sector: 8
        }
    );
}

#[test]
fn write_crossing_the_capacity_is_a_boundary_error() {
    let t = table(4, 2, 3);
    assert_eq!(
        t.check_write(0, 0, 49, false).unwrap_err(),
        ZoneStatus::BoundaryError { zone: 0 }
    );
}

#[test]
fn append_must_address_the_zone_start_and_lands_at_the_write_pointer() {
    let mut t = table(4, 2, 3);
    write(&mut t, 2, 8).unwrap();
    assert_eq!(t.check_write(2, 2 * ZS, 4, true), Ok(2 * ZS + 8));
    assert!(matches!(
        t.check_write(2, 2 * ZS + 8, 4, true),
        Err(ZoneStatus::InvalidWrite { .. })
    ));
}

#[test]
fn opening_beyond_mor_closes_the_oldest_implicitly_open_zone() {
    let mut t = table(4, 2, 4);
    write(&mut t, 0, 1).unwrap();
    write(&mut t, 1, 1).unwrap();
    let tr = write(&mut t, 2, 1).unwrap();
    assert_eq!(tr.closed_implicitly, vec![0]);
    assert_eq!(t.state(0), ZoneState::Closed);
    assert_eq!(t.state(2), ZoneState::ImplicitlyOpen);
    assert_eq!((t.open_count(), t.active_count()), (2, 3));
    t.check();
}

#[test]
fn opening_beyond_mor_with_only_explicitly_open_zones_is_too_many_open_zones() {
    let mut t = table(4, 2, 4);
    t.apply(0, ZoneAction::Open).unwrap();
    t.apply(1, ZoneAction::Open).unwrap();
    assert_eq!(
        write(&mut t, 2, 1).unwrap_err(),
        ZoneStatus::TooManyOpenZones { open_max: 2 }
    );
    assert_eq!(
        t.apply(3, ZoneAction::Open).unwrap_err(),
        ZoneStatus::TooManyOpenZones { open_max: 2 }
    );
    assert_eq!(
        t.state(2),
        ZoneState::Empty,
        "a refused command changes nothing"
    );
}

#[test]
fn opening_beyond_mar_is_too_many_active_zones() {
    let mut t = table(4, 1, 2);
    write(&mut t, 0, 1).unwrap();
    t.apply(0, ZoneAction::Close).unwrap();
    write(&mut t, 1, 1).unwrap();
    t.apply(1, ZoneAction::Close).unwrap();
    assert_eq!(
        write(&mut t, 2, 1).unwrap_err(),
        ZoneStatus::TooManyActiveZones { active_max: 2 }
    );
    assert_eq!(
        t.apply(2, ZoneAction::Finish).unwrap_err(),
        ZoneStatus::TooManyActiveZones { active_max: 2 }
    );
    // A closed zone reopens without a new active resource.
    write(&mut t, 0, 1).unwrap();
    assert_eq!(t.state(0), ZoneState::ImplicitlyOpen);
}

#[test]
fn explicit_open_promotes_an_implicitly_open_zone_and_is_idempotent() {
    let mut t = table(4, 2, 3);
    write(&mut t, 0, 1).unwrap();
    t.apply(0, ZoneAction::Open).unwrap();
    assert_eq!(t.state(0), ZoneState::ExplicitlyOpen);
    t.apply(0, ZoneAction::Open).unwrap();
    assert_eq!((t.open_count(), t.active_count()), (1, 1));
    t.check();
}

#[test]
fn close_of_an_unwritten_open_zone_returns_it_to_empty() {
    let mut t = table(4, 2, 3);
    t.apply(0, ZoneAction::Open).unwrap();
    t.apply(0, ZoneAction::Close).unwrap();
    assert_eq!(t.state(0), ZoneState::Empty);
    write(&mut t, 1, 4).unwrap();
    t.apply(1, ZoneAction::Close).unwrap();
    assert_eq!(t.state(1), ZoneState::Closed);
    t.apply(1, ZoneAction::Close).unwrap();
    assert_eq!((t.open_count(), t.active_count()), (0, 1));
}

#[test]
fn finish_makes_empty_open_and_closed_zones_full() {
    let mut t = table(4, 2, 3);
    t.apply(0, ZoneAction::Finish).unwrap();
    write(&mut t, 1, 4).unwrap();
    t.apply(1, ZoneAction::Finish).unwrap();
    write(&mut t, 2, 4).unwrap();
    t.apply(2, ZoneAction::Close).unwrap();
    t.apply(2, ZoneAction::Finish).unwrap();
    for z in 0..3 {
        assert_eq!(t.state(z), ZoneState::Full);
    }
    t.apply(0, ZoneAction::Finish).unwrap();
    assert_eq!((t.open_count(), t.active_count()), (0, 0));
}

#[test]
fn reset_empties_full_open_and_closed_zones() {
    let mut t = table(4, 2, 3);
    write(&mut t, 0, 48).unwrap();
    write(&mut t, 1, 4).unwrap();
    write(&mut t, 2, 4).unwrap();
    t.apply(2, ZoneAction::Close).unwrap();
    for z in 0..4 {
        t.apply(z, ZoneAction::Reset).unwrap();
        assert_eq!(t.state(z), ZoneState::Empty);
        assert_eq!(t.wp_sector(z), t.start_sector(z));
    }
    assert_eq!((t.open_count(), t.active_count()), (0, 0));
}

#[test]
fn read_only_zone_refuses_writes_and_goes_offline_only_on_request() {
    let mut t = table(4, 2, 3);
    write(&mut t, 0, 4).unwrap();
    t.make_read_only(0);
    assert_eq!((t.open_count(), t.active_count()), (0, 0));
    assert_eq!(
        write(&mut t, 0, 1).unwrap_err(),
        ZoneStatus::ZoneIsReadOnly { zone: 0 }
    );
    for a in [
        ZoneAction::Open,
        ZoneAction::Close,
        ZoneAction::Finish,
        ZoneAction::Reset,
    ] {
        assert!(matches!(
            t.apply(0, a),
            Err(ZoneStatus::InvalidStateTransition { .. })
        ));
    }
    t.apply(0, ZoneAction::Offline).unwrap();
    assert_eq!(t.state(0), ZoneState::Offline);
    assert_eq!(
        write(&mut t, 0, 1).unwrap_err(),
        ZoneStatus::ZoneIsOffline { zone: 0 }
    );
}

#[test]
fn offline_of_a_healthy_zone_and_close_of_an_empty_one_are_invalid_transitions() {
    let mut t = table(4, 2, 3);
    assert_eq!(
        t.apply(0, ZoneAction::Offline).unwrap_err(),
        ZoneStatus::InvalidStateTransition {
            zone: 0,
            action: "offline",
            state: "empty"
        }
    );
    assert!(t.apply(0, ZoneAction::Close).is_err());
    write(&mut t, 1, 48).unwrap();
    assert!(t.apply(1, ZoneAction::Open).is_err());
    assert!(t.apply(1, ZoneAction::Close).is_err());
}

#[test]
fn report_filters_by_state_from_a_starting_zone_within_a_limit() {
    let mut t = table(6, 3, 4);
    write(&mut t, 1, 48).unwrap();
    write(&mut t, 3, 48).unwrap();
    write(&mut t, 4, 2).unwrap();
    let full: Vec<u32> = t
        .report(0, ZoneFilter::Only(ZoneState::Full), 10)
        .iter()
        .map(|d| d.zone)
        .collect();
    assert_eq!(full, vec![1, 3]);
    let from2: Vec<u32> = t
        .report(2 * ZS + 5, ZoneFilter::All, 2)
        .iter()
        .map(|d| d.zone)
        .collect();
    assert_eq!(from2, vec![2, 3]);
    let open = t.report(0, ZoneFilter::from_code(2).unwrap(), 10);
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].wp_sector, 4 * ZS + 2);
    assert_eq!(ZoneFilter::from_code(8), None);
}

#[test]
fn state_codes_follow_the_spec() {
    let codes: Vec<u8> = [
        ZoneState::Empty,
        ZoneState::ImplicitlyOpen,
        ZoneState::ExplicitlyOpen,
        ZoneState::Closed,
        ZoneState::ReadOnly,
        ZoneState::Full,
        ZoneState::Offline,
    ]
    .iter()
    .map(|s| s.code())
    .collect();
    assert_eq!(codes, vec![0x1, 0x2, 0x3, 0x4, 0xD, 0xE, 0xF]);
}

#[derive(Clone, Debug)]
enum Cmd {
    Write(u32, u64),
    Act(u32, ZoneAction),
    Fail(u32),
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let action = prop_oneof![
        Just(ZoneAction::Open),
        Just(ZoneAction::Close),
        Just(ZoneAction::Finish),
        Just(ZoneAction::Reset),
        Just(ZoneAction::Offline),
    ];
    prop_oneof![
        6 => (0u32..6, 1u64..20).prop_map(|(z, l)| Cmd::Write(z, l)),
        4 => (0u32..6, action).prop_map(|(z, a)| Cmd::Act(z, a)),
        1 => (0u32..6).prop_map(Cmd::Fail),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn zone_table_agrees_with_the_reference_model(
        cmds in proptest::collection::vec(cmd(), 1..120),
        open_max in 1u32..4,
        extra_active in 0u32..3,
    ) {
        let active_max = open_max + extra_active;
        let mut t = table(6, open_max, active_max);
        let mut r = ZoneReference::new(6, ZS, 48, open_max, active_max);
        for c in cmds {
            let (got, want) = match c {
                Cmd::Write(z, l) => (write(&mut t, z, l).is_ok(), r.write(z, l)),
                Cmd::Act(z, a) => (t.apply(z, a).is_ok(), r.act(z, a)),
                Cmd::Fail(z) => {
                    t.make_read_only(z);
                    r.fail(z);
                    (true, true)
                }
            };
            prop_assert_eq!(got, want, "{:?}", c);
            t.check();
            for z in 0..6u32 {
                prop_assert_eq!(t.state(z), r.states[z as usize], "zone {} after {:?}", z, c);
                prop_assert_eq!(t.wp_sector(z) - t.start_sector(z), r.wps[z as usize]);
            }
        }
    }
}
