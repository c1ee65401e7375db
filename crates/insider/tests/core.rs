//! The runtime's non-blocking core: calls are submitted, the one loop moves them on, their
//! completions are taken; several are in flight at once and none owns the clock.

mod common;

use common::*;
use nearflash_insider::runtime::{Call, Completion, OpId, Output, Runtime};
use nearflash_insider::stream::Direction;
use nearflash_insider::{BackingKind, InsiderError};
use std::collections::BTreeMap;

fn text(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| b"abcdefghij\n"[(i + seed as usize) % 11])
        .collect()
}

/// Steps the loop until every call in `want` has ended; their completions, by call.
fn wait_all(rt: &mut Runtime, want: &[OpId]) -> BTreeMap<OpId, Completion> {
    let mut got = BTreeMap::new();
    let mut done = Vec::new();
    while want.iter().any(|id| !got.contains_key(id)) {
        assert!(rt.turn().unwrap(), "the loop ran dry with calls in flight");
        rt.take_completions(&mut done);
        for c in done.drain(..) {
            got.insert(c.op, c);
        }
    }
    got
}

/// Two virtual files over echo, opened by alice.
fn two_files(rt: &mut Runtime, a: &[u8], b: &[u8]) -> (u32, u32) {
    for (k, d) in [a, b].iter().enumerate() {
        let path = format!("/data/f{k}");
        rt.install_file(ALICE, &path, 0o644, d.len() as u64, Some(d))
            .unwrap();
        rt.reg_virt_file(ALICE, &format!("/v{k}"), &path, "echo")
            .unwrap();
    }
    let fa = rt.vopen(ALICE, "/v0", Direction::Read).unwrap();
    let fb = rt.vopen(ALICE, "/v1", Direction::Read).unwrap();
    (fa, fb)
}

/// Each of `fds` read to its end by its own process, one vread in flight each.
fn read_concurrently(rt: &mut Runtime, fds: &[u32]) -> Vec<Vec<u8>> {
    let mut out: BTreeMap<u32, Vec<u8>> = fds.iter().map(|&fd| (fd, Vec::new())).collect();
    let mut reads: BTreeMap<OpId, u32> = BTreeMap::new();
    for &fd in fds {
        let id = rt.submit(Call::ProcessVread { fd, len: 32 << 10 }).unwrap();
        reads.insert(id, fd);
    }
    let mut done = Vec::new();
    while !reads.is_empty() {
        assert!(rt.turn().unwrap());
        rt.take_completions(&mut done);
        for c in done.drain(..) {
            let fd = reads.remove(&c.op).expect("ours");
            match c.result.unwrap() {
                Output::Read { n: 0, .. } => {}
                Output::Read { data, .. } => {
                    out.get_mut(&fd).unwrap().extend_from_slice(&data);
                    let id = rt.submit(Call::ProcessVread { fd, len: 32 << 10 }).unwrap();
                    reads.insert(id, fd);
                }
                o => panic!("a vread answered {o:?}"),
            }
        }
    }
    fds.iter().map(|fd| out.remove(fd).unwrap()).collect()
}

#[test]
fn a_submitted_call_returns_at_once_and_its_completion_comes_from_the_loop() {
    let mut rt = small(BackingKind::DramEmulated, true, 1);
    let data = text(100_000, 0);
    rt.install_file(ALICE, "/data/f", 0o644, data.len() as u64, Some(&data))
        .unwrap();
    rt.reg_virt_file(ALICE, "/v", "/data/f", "echo").unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
    let t0 = rt.now();
    let id = rt.submit(Call::Vread { fd, len: 16 << 10 }).unwrap();
    assert_eq!(rt.now(), t0, "submitting moves no clock");
    assert_eq!(rt.in_flight(), 1);
    let got = wait_all(&mut rt, &[id]);
    let c = &got[&id];
    assert_eq!(c.submitted, t0);
    assert!(c.completed > t0, "the read took simulated time");
    assert_eq!(
        c.result.as_ref().unwrap(),
        &Output::Read {
            n: 16 << 10,
            data: data[..16 << 10].to_vec()
        }
    );
    assert_eq!(rt.in_flight(), 0);
    rt.vclose(fd).unwrap();
}

#[test]
fn two_processes_reading_at_once_both_get_their_bytes_sooner_than_one_after_the_other() {
    let (a, b) = (text(300_000, 1), text(300_000, 5));
    let mut conc = small(BackingKind::DramEmulated, true, 2);
    let (fa, fb) = two_files(&mut conc, &a, &b);
    let t0 = conc.now();
    let got = read_concurrently(&mut conc, &[fa, fb]);
    let together = conc.now().since(t0);
    assert_eq!(got, vec![a.clone(), b.clone()]);

    let mut seq = small(BackingKind::DramEmulated, true, 2);
    let (fa, fb) = two_files(&mut seq, &a, &b);
    let t0 = seq.now();
    let first = read_concurrently(&mut seq, &[fa]);
    let second = read_concurrently(&mut seq, &[fb]);
    let apart = seq.now().since(t0);
    assert_eq!(vec![first[0].clone(), second[0].clone()], vec![a, b]);
    assert!(
        together < apart,
        "in flight together {together:?} vs one after the other {apart:?}"
    );
}

/// Story: two processes read virtual files at once off the flash device while every
/// event is followed by the drive's invariant checks (its FTL's tables, the ISC unit's
/// counts and buffers, the host's page cache): none fails, and the bytes are right.
#[test]
fn two_processes_reading_off_flash_keep_every_invariant_after_every_event() {
    let (a, b) = (text(120_000, 3), text(90_000, 7));
    let mut rt = small(BackingKind::Flash, true, 4);
    rt.check_invariants_after_every_event(true);
    let (fa, fb) = two_files(&mut rt, &a, &b);
    let got = read_concurrently(&mut rt, &[fa, fb]);
    assert_eq!(got, vec![a, b]);
}

#[test]
fn a_blocking_call_lets_the_calls_in_flight_go_on() {
    let mut rt = small(BackingKind::DramEmulated, true, 3);
    let (a, b) = (text(64 << 10, 2), text(256 << 10, 3));
    let (fa, _) = two_files(&mut rt, &a, &b);
    let id = rt
        .submit(Call::ProcessVread {
            fd: fa,
            len: 16 << 10,
        })
        .unwrap();
    // The application thread reads another file the ordinary way meanwhile.
    let plain = rt.open(ALICE, "/data/f1", false).unwrap();
    let (n, data) = rt.pread(plain, 0, 256 << 10).unwrap();
    assert_eq!((n, data), (b.len() as u64, b));
    let mut done = Vec::new();
    rt.take_completions(&mut done);
    assert_eq!(done.len(), 1, "the process's vread ended during the pread");
    assert_eq!(done[0].op, id);
    assert!(done[0].completed <= rt.now());
    assert_eq!(
        done[0].result.as_ref().unwrap(),
        &Output::Read {
            n: 16 << 10,
            data: a[..16 << 10].to_vec()
        }
    );
}

#[test]
fn a_call_on_a_bad_descriptor_ends_with_its_error() {
    let mut rt = small(BackingKind::DramEmulated, false, 4);
    let id = rt.submit(Call::Vread { fd: 99, len: 4096 }).unwrap();
    let got = wait_all(&mut rt, &[id]);
    assert!(matches!(
        got[&id].result,
        Err(InsiderError::BadDescriptor { fd: 99 })
    ));
}

#[test]
fn the_same_seed_runs_the_same_concurrent_calls_identically() {
    let run = || {
        let mut rt = small(BackingKind::Flash, false, 7);
        let (a, b) = (vec![0u8; 200_000], vec![0u8; 120_000]);
        let (fa, fb) = two_files(&mut rt, &a, &b);
        read_concurrently(&mut rt, &[fa, fb]);
        (rt.now(), rt.machine().trace_hash(), rt.machine().events())
    };
    assert_eq!(run(), run());
}

/// A thread sleeps 5 ms while nothing else happens on the drive: the loop turns exactly
/// once — the sleep's timer, an event on the queue — and the call ends at its deadline to
/// the nanosecond, not at the next unrelated event nor by a clock moved by hand.
#[test]
fn a_sleeping_call_wakes_at_its_deadline_by_a_timer_on_the_queue() {
    let mut rt = small(BackingKind::DramEmulated, false, 1);
    // Let whatever the set-up left in flight settle first.
    let settle = rt.now() + nearflash_sim::SimDuration::from_ms(50);
    rt.call(Call::Sleep { until: settle }).unwrap();
    let events = rt.machine().events();
    let until = rt.now() + nearflash_sim::SimDuration::from_ms(5);
    let id = rt.submit(Call::Sleep { until }).unwrap();
    let got = wait_all(&mut rt, &[id]);
    assert_eq!(got[&id].completed, until, "woke at its deadline");
    assert_eq!(rt.now(), until);
    assert_eq!(
        rt.machine().events(),
        events + 1,
        "one event brought the clock there: the sleep's timer"
    );
}
