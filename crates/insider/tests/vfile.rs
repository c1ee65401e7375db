//! The virtual-file API end to end on real bytes (functional fidelity), on both backings:
//! outputs match references; protection, isolation and the API's errors behave as §3.3 says.

mod common;
use common::*;
use nearflash_insider::stream::Direction;
use nearflash_insider::{BackingKind, InsiderError};

const BACKINGS: [BackingKind; 2] = [BackingKind::DramEmulated, BackingKind::Flash];

#[test]
fn virtual_grep_returns_exactly_the_matching_lines_on_both_backings() {
    for backing in BACKINGS {
        let mut rt = small(backing, true, 7);
        let data = text(300_000, 1);
        rt.install_file(ALICE, "/data/log", 0o600, data.len() as u64, Some(&data))
            .unwrap();
        rt.reg_virt_file(ALICE, "/data/log.grep", "/data/log", "linegrep")
            .unwrap();
        let fd = rt.vopen(ALICE, "/data/log.grep", Direction::Read).unwrap();
        rt.send_params(fd, b"needle").unwrap();
        let got = vread_all(&mut rt, fd, 10_000).unwrap();
        assert_eq!(rt.vclose(fd).unwrap(), 0);
        let want = grep_reference(&data, b"needle");
        assert!(!want.is_empty());
        assert_eq!(got, want, "{backing:?}");
        let (isc, _) = rt.machine().mux_requests();
        assert_eq!(isc, 300_000u64.div_ceil(16 << 10), "one request per C");
    }
}

#[test]
fn scatter_gather_file_is_the_concatenation_of_its_pieces() {
    let mut rt = small(BackingKind::DramEmulated, true, 1);
    let a = text(50_000, 2);
    let b = text(70_000, 3);
    rt.install_file(ALICE, "/data/a", 0o644, a.len() as u64, Some(&a))
        .unwrap();
    rt.install_file(ALICE, "/data/b", 0o644, b.len() as u64, Some(&b))
        .unwrap();
    rt.reg_virt_file_sg(
        ALICE,
        "/v",
        &[("/data/a", 1000, 20_000), ("/data/b", 333, 40_000)],
        "echo",
    )
    .unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
    let got = vread_all(&mut rt, fd, 7000).unwrap();
    rt.vclose(fd).unwrap();
    let mut want = a[1000..21_000].to_vec();
    want.extend_from_slice(&b[333..40_333]);
    assert_eq!(got, want);
}

#[test]
fn a_vopen_by_a_user_without_read_permission_is_refused_before_any_drive_request() {
    for backing in BACKINGS {
        let mut rt = small(backing, true, 3);
        let data = text(100_000, 4);
        rt.install_file(ALICE, "/data/secret", 0o600, data.len() as u64, Some(&data))
            .unwrap();
        // Bob registers a virtual file over Alice's file: registration checks nothing...
        rt.reg_virt_file(BOB, "/data/steal", "/data/secret", "echo")
            .unwrap();
        let reads_before = rt.machine().backing_stats().reads;
        let mux_before = rt.machine().mux_requests();
        // ...but vopen does, before anything starts.
        let e = rt.vopen(BOB, "/data/steal", Direction::Read).unwrap_err();
        assert!(
            matches!(&e, InsiderError::PermissionDenied { path, needed: "read", .. } if path == "/data/secret"),
            "{e}"
        );
        assert_eq!(
            rt.machine().backing_stats().reads,
            reads_before,
            "no flash read"
        );
        assert_eq!(rt.machine().mux_requests(), mux_before, "no drive request");
        assert!(!rt.stat(0, "/data/secret").unwrap().append_only);
    }
}

#[test]
fn a_faulting_program_fails_its_reader_while_another_slot_keeps_running() {
    let mut rt = small(BackingKind::DramEmulated, true, 5);
    let data = text(200_000, 6);
    rt.install_file(ALICE, "/data/x", 0o644, data.len() as u64, Some(&data))
        .unwrap();
    rt.reg_virt_file(ALICE, "/bad", "/data/x", "faulty")
        .unwrap();
    rt.reg_virt_file(BOB, "/good", "/data/x", "linegrep")
        .unwrap();
    let bad = rt.vopen(ALICE, "/bad", Direction::Read).unwrap();
    let good = rt.vopen(BOB, "/good", Direction::Read).unwrap();
    rt.send_params(good, b"needle").unwrap();
    let mut good_out = Vec::new();
    let mut bad_err = None;
    // Interleave the two readers.
    loop {
        if bad_err.is_none() {
            match rt.vread(bad, 8192) {
                Ok(_) => {}
                Err(e) => bad_err = Some(e),
            }
        }
        let (n, d) = rt.vread(good, 8192).unwrap();
        good_out.extend_from_slice(&d);
        if n == 0 && bad_err.is_some() {
            break;
        }
    }
    let e = bad_err.unwrap();
    assert!(
        matches!(&e, InsiderError::ProgramFault { program, .. } if program == "faulty"),
        "{e}"
    );
    assert!(e.to_string().contains("I/O error"), "{e}");
    assert_eq!(good_out, grep_reference(&data, b"needle"));
    assert!(rt.vclose(bad).is_err());
    assert_eq!(rt.vclose(good).unwrap(), 0);
}

#[test]
fn append_only_blocks_a_host_truncate_during_vread_and_is_cleared_by_vclose() {
    let mut rt = small(BackingKind::Flash, true, 8);
    let data = text(120_000, 9);
    rt.install_file(ALICE, "/data/f", 0o644, data.len() as u64, Some(&data))
        .unwrap();
    rt.reg_virt_file(ALICE, "/v", "/data/f", "echo").unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
    let (n, _) = rt.vread(fd, 10_000).unwrap();
    assert_eq!(n, 10_000);
    let e = rt.truncate(ALICE, "/data/f", 0).unwrap_err();
    assert!(matches!(e, InsiderError::AppendOnly { .. }), "{e}");
    let rest = vread_all(&mut rt, fd, 50_000).unwrap();
    assert_eq!(
        &rest[..],
        &data[10_000..],
        "the blocks were not released under the read"
    );
    rt.vclose(fd).unwrap();
    rt.truncate(ALICE, "/data/f", 0).unwrap();
    // A flag the user had set stays set after vclose.
    rt.install_file(ALICE, "/data/g", 0o644, 1000, Some(&data[..1000]))
        .unwrap();
    rt.set_append_only(ALICE, "/data/g", true).unwrap();
    rt.reg_virt_file(ALICE, "/w", "/data/g", "echo").unwrap();
    let fd = rt.vopen(ALICE, "/w", Direction::Read).unwrap();
    vread_all(&mut rt, fd, 4096).unwrap();
    rt.vclose(fd).unwrap();
    assert!(rt.truncate(ALICE, "/data/g", 0).is_err());
}

#[test]
fn api_misuse_is_a_clear_error() {
    let mut rt = small(BackingKind::DramEmulated, true, 2);
    let data = text(10_000, 1);
    rt.install_file(ALICE, "/data/f", 0o644, data.len() as u64, Some(&data))
        .unwrap();
    let e = rt.vopen(ALICE, "/nowhere", Direction::Read).unwrap_err();
    assert!(matches!(e, InsiderError::UnknownVirtualPath { .. }), "{e}");
    assert!(e.to_string().contains("/nowhere"));
    rt.reg_virt_file(ALICE, "/v", "/data/f", "echo").unwrap();
    assert!(matches!(
        rt.reg_virt_file(ALICE, "/v", "/data/f", "echo"),
        Err(InsiderError::VirtualExists { .. })
    ));
    assert!(matches!(
        rt.reg_virt_file(ALICE, "/u", "/data/f", "nosuch"),
        Err(InsiderError::UnknownProgram { .. })
    ));
    rt.fallocate(ALICE, "/data/f", 20_000).unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Write).unwrap();
    let e = rt.vread(fd, 100).unwrap_err();
    assert!(
        matches!(e, InsiderError::WrongMode { op: "vread", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("O_WRONLY"), "{e}");
    rt.vclose(fd).unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
    rt.vclose(fd).unwrap();
    let e = rt.send_params(fd, b"x").unwrap_err();
    assert!(matches!(e, InsiderError::BadDescriptor { .. }), "{e}");
    // The mapping file is the user's, mode 0640, and others cannot read it.
    let m = rt.stat(0, "/.alice.nearflash").unwrap();
    assert_eq!((m.uid, m.perm), (ALICE, 0o640));
    assert!(matches!(
        rt.vopen(BOB, "/v", Direction::Read),
        Err(InsiderError::UnknownVirtualPath { .. })
    ));
    assert!(rt.read_file(BOB, "/.alice.nearflash").is_err());
}

#[test]
fn virtual_write_materialises_the_output_and_reports_written_bytes() {
    for backing in BACKINGS {
        let mut rt = small(backing, true, 4);
        let input = text(50_000, 5);
        rt.create(ALICE, "/data/out", 0o644).unwrap();
        rt.fallocate(ALICE, "/data/out", 150_000).unwrap();
        // A host write before: flushed by vopen, so the drive's output lands after it.
        let fd = rt.open(ALICE, "/data/out", true).unwrap();
        rt.pwrite(fd, 0, b"stale").unwrap();
        rt.close(fd).unwrap();
        let stale = rt.read_file(ALICE, "/data/out").unwrap();
        assert_eq!(&stale[..5], b"stale");
        rt.reg_virt_file(ALICE, "/data/out.v", "/data/out", "doubler")
            .unwrap();
        let fd = rt.vopen(ALICE, "/data/out.v", Direction::Write).unwrap();
        rt.vwrite(fd, 30_000, &input[..30_000]).unwrap();
        rt.vsync(fd).unwrap();
        rt.vwrite(fd, 20_000, &input[30_000..]).unwrap();
        let written = rt.vclose(fd).unwrap();
        assert_eq!(written, 100_000);
        rt.truncate(ALICE, "/data/out", written).unwrap();
        let got = rt.read_file(ALICE, "/data/out").unwrap();
        let want: Vec<u8> = input.iter().flat_map(|&b| [b, b]).collect();
        assert_eq!(got, want, "{backing:?}: the host sees the drive's writes");
    }
}

#[test]
fn a_slow_reader_never_overflows_the_host_buffer() {
    let mut rt = small(BackingKind::DramEmulated, true, 1);
    let data = text(400_000, 2);
    rt.install_file(ALICE, "/data/f", 0o644, data.len() as u64, Some(&data))
        .unwrap();
    rt.reg_virt_file(ALICE, "/v", "/data/f", "echo").unwrap();
    let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
    let mut got = Vec::new();
    let cap = rt.config().host_buffer_bytes;
    loop {
        rt.host_compute(5e6).unwrap();
        let s = rt.machine().stream(fd).unwrap();
        assert!(s.host_buf_bytes + s.dma_inflight_bytes <= cap);
        assert!(s.fifo.len() as u32 + s.inflight_chunks <= rt.config().credits_initial);
        let (n, d) = rt.vread(fd, 4096).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&d);
    }
    rt.vclose(fd).unwrap();
    assert_eq!(got, data);
}

#[test]
fn same_seed_same_trace_and_pipelining_overlaps_host_and_drive() {
    let run = |seed: u64, pipelined: bool| {
        let mut rt = small(BackingKind::Flash, true, seed);
        rt.pipelined = pipelined;
        let data = text(200_000, 3);
        rt.install_file(ALICE, "/data/f", 0o644, data.len() as u64, Some(&data))
            .unwrap();
        rt.reg_virt_file(ALICE, "/v", "/data/f", "echo").unwrap();
        let start = rt.now();
        let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
        let mut got = Vec::new();
        loop {
            let (n, d) = rt.vread(fd, 16 << 10).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&d);
            rt.host_compute(2e6).unwrap();
        }
        rt.vclose(fd).unwrap();
        assert_eq!(got, data);
        (rt.now().since(start).as_ns(), rt.machine().trace_hash())
    };
    let a = run(11, true);
    assert_eq!(a, run(11, true), "same seed, same run");
    let naive = run(11, false);
    assert!(
        a.0 < naive.0,
        "pipelined {} ns vs naive {} ns",
        a.0,
        naive.0
    );
}
