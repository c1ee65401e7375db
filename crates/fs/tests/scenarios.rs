//! Scenario tests over a RAM disk: each tells one story of the file system's behaviour.

use nearflash_fs::ramdisk::RamDisk;
use nearflash_fs::{
    Caller, FileKind, FormatOptions, FsConfig, FsError, FsHost, FsOp, FsReply, HostError, OpenFlags,
};
use nearflash_sim::{Sim, SimDuration};

const ALICE: Caller = Caller {
    uid: 1000,
    gid: 100,
};
const BOB: Caller = Caller {
    uid: 1001,
    gid: 100,
};
const EVE: Caller = Caller {
    uid: 2000,
    gid: 200,
};

fn host() -> FsHost<RamDisk> {
    let dev = RamDisk::new(16 << 20, SimDuration::from_us(20));
    let mut h = FsHost::new(Sim::new(1), dev, FsConfig::default()).unwrap();
    h.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))
        .unwrap();
    h
}

/// A host with `/d`, a directory everyone may create files in.
fn host_with_shared_dir() -> FsHost<RamDisk> {
    let mut h = host();
    h.run(
        Caller::ROOT,
        FsOp::Mkdir {
            path: "/d".into(),
            perm: 0o777,
        },
    )
    .unwrap();
    h
}

fn fs_err(r: Result<FsReply, HostError>) -> FsError {
    match r {
        Err(HostError::Fs(e)) => e,
        other => panic!("expected an FS error, got {other:?}"),
    }
}

fn open(h: &mut FsHost<RamDisk>, who: Caller, path: &str, flags: OpenFlags) -> nearflash_fs::Fh {
    match h
        .run(
            who,
            FsOp::Open {
                path: path.into(),
                flags,
                perm: 0o644,
            },
        )
        .unwrap()
    {
        FsReply::Opened(fh) => fh,
        r => panic!("{r:?}"),
    }
}

fn write(h: &mut FsHost<RamDisk>, who: Caller, fh: nearflash_fs::Fh, at: u64, data: &[u8]) -> u64 {
    match h
        .run(
            who,
            FsOp::Write {
                fh,
                offset_bytes: at,
                data: data.to_vec(),
            },
        )
        .unwrap()
    {
        FsReply::Written(n) => n,
        r => panic!("{r:?}"),
    }
}

fn read_all(h: &mut FsHost<RamDisk>, who: Caller, path: &str) -> Vec<u8> {
    let fh = open(h, who, path, OpenFlags::READ);
    let r = h.run(
        who,
        FsOp::Read {
            fh,
            offset_bytes: 0,
            len_bytes: u64::MAX,
        },
    );
    h.run(who, FsOp::Close(fh)).unwrap();
    match r.unwrap() {
        FsReply::Data(d) => d,
        r => panic!("{r:?}"),
    }
}

fn fsck_clean(h: &mut FsHost<RamDisk>) {
    match h.run(Caller::ROOT, FsOp::Fsck).unwrap() {
        FsReply::Fsck(r) => assert!(r.is_clean(), "{:#?}", r.problems),
        r => panic!("{r:?}"),
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn a_file_written_in_pieces_reads_back_with_zeros_in_its_hole() {
    let mut h = host();
    h.run(
        ALICE,
        FsOp::Chown {
            path: "/".into(),
            uid: 0,
            gid: 0,
        },
    )
    .unwrap_err();
    h.run(
        Caller::ROOT,
        FsOp::Mkdir {
            path: "/home".into(),
            perm: 0o777,
        },
    )
    .unwrap();
    let fh = open(&mut h, ALICE, "/home/a.bin", OpenFlags::CREATE_TRUNC);
    let head = pattern(10_000, 1);
    assert_eq!(write(&mut h, ALICE, fh, 0, &head), 10_000);
    let tail = pattern(5_000, 2);
    assert_eq!(write(&mut h, ALICE, fh, 30_000, &tail), 5_000);
    h.run(ALICE, FsOp::Fsync(fh)).unwrap();
    let got = read_all(&mut h, ALICE, "/home/a.bin");
    assert_eq!(got.len(), 35_000);
    assert_eq!(&got[..10_000], &head[..]);
    assert!(got[10_000..30_000].iter().all(|&b| b == 0));
    assert_eq!(&got[30_000..], &tail[..]);
    fsck_clean(&mut h);
}

#[test]
fn a_large_file_spills_its_extents_into_an_extent_block_and_truncate_takes_it_back() {
    let mut h = host();
    let fh = open(&mut h, Caller::ROOT, "/big", OpenFlags::CREATE_TRUNC);
    // Every other block of a second file between, so extents cannot merge.
    let gh = open(&mut h, Caller::ROOT, "/interleave", OpenFlags::CREATE_TRUNC);
    for k in 0..40u64 {
        write(&mut h, Caller::ROOT, fh, k * 4096, &pattern(4096, k as u8));
        write(&mut h, Caller::ROOT, gh, k * 4096, &pattern(4096, 99));
    }
    let FsReply::Stat(st) = h.run(Caller::ROOT, FsOp::Stat("/big".into())).unwrap() else {
        panic!()
    };
    assert_eq!((st.size_bytes, st.blocks), (40 * 4096, 40));
    fsck_clean(&mut h);
    let got = read_all(&mut h, Caller::ROOT, "/big");
    for k in 0..40usize {
        assert_eq!(
            &got[k * 4096..(k + 1) * 4096],
            &pattern(4096, k as u8)[..],
            "block {k}"
        );
    }
    h.run(
        Caller::ROOT,
        FsOp::Truncate {
            path: "/big".into(),
            size_bytes: 5000,
        },
    )
    .unwrap();
    h.run(
        Caller::ROOT,
        FsOp::Truncate {
            path: "/big".into(),
            size_bytes: 9000,
        },
    )
    .unwrap();
    let got = read_all(&mut h, Caller::ROOT, "/big");
    assert_eq!(got.len(), 9000);
    assert_eq!(&got[..4096], &pattern(4096, 0)[..]);
    assert_eq!(&got[4096..5000], &pattern(4096, 1)[..904]);
    assert!(
        got[5000..].iter().all(|&b| b == 0),
        "a regrown tail reads zeros"
    );
    fsck_clean(&mut h);
}

#[test]
fn rename_replaces_its_target_atomically_and_refuses_to_move_a_dir_into_itself() {
    let mut h = host();
    for (p, d) in [("/old", b"old".as_slice()), ("/new", b"newer")] {
        let fh = open(&mut h, Caller::ROOT, p, OpenFlags::CREATE_TRUNC);
        write(&mut h, Caller::ROOT, fh, 0, d);
    }
    h.run(
        Caller::ROOT,
        FsOp::Rename {
            from: "/new".into(),
            to: "/old".into(),
        },
    )
    .unwrap();
    assert_eq!(read_all(&mut h, Caller::ROOT, "/old"), b"newer");
    assert!(matches!(
        fs_err(h.run(Caller::ROOT, FsOp::Stat("/new".into()))),
        FsError::NotFound(_)
    ));
    h.run(
        Caller::ROOT,
        FsOp::Mkdir {
            path: "/d".into(),
            perm: 0o755,
        },
    )
    .unwrap();
    h.run(
        Caller::ROOT,
        FsOp::Mkdir {
            path: "/d/e".into(),
            perm: 0o755,
        },
    )
    .unwrap();
    let e = fs_err(h.run(
        Caller::ROOT,
        FsOp::Rename {
            from: "/d".into(),
            to: "/d/e/f".into(),
        },
    ));
    assert!(matches!(e, FsError::MoveIntoSelf(_)), "{e}");
    h.run(
        Caller::ROOT,
        FsOp::Rename {
            from: "/d/e".into(),
            to: "/e".into(),
        },
    )
    .unwrap();
    let FsReply::Entries(list) = h.run(Caller::ROOT, FsOp::Readdir("/".into())).unwrap() else {
        panic!()
    };
    let names: Vec<_> = list.iter().map(|e| (e.name.as_str(), e.kind)).collect();
    assert_eq!(
        names,
        vec![
            (".", FileKind::Dir),
            ("..", FileKind::Dir),
            ("old", FileKind::File),
            ("d", FileKind::Dir),
            ("e", FileKind::Dir)
        ]
    );
    let e = fs_err(h.run(Caller::ROOT, FsOp::Rmdir("/".into())));
    assert!(matches!(e, FsError::InvalidArgument(_)), "{e}");
    h.run(Caller::ROOT, FsOp::Rmdir("/d".into())).unwrap();
    fsck_clean(&mut h);
}

#[test]
fn permissions_keep_other_users_out_and_root_passes() {
    let mut h = host();
    h.run(
        Caller::ROOT,
        FsOp::Mkdir {
            path: "/alice".into(),
            perm: 0o750,
        },
    )
    .unwrap();
    h.run(
        Caller::ROOT,
        FsOp::Chown {
            path: "/alice".into(),
            uid: ALICE.uid,
            gid: ALICE.gid,
        },
    )
    .unwrap();
    let fh = open(&mut h, ALICE, "/alice/notes", OpenFlags::CREATE_TRUNC);
    write(&mut h, ALICE, fh, 0, b"secret");
    // Bob shares the group: may search and read (0644 file in a 0750 dir), not create.
    assert_eq!(read_all(&mut h, BOB, "/alice/notes"), b"secret");
    let e = fs_err(h.run(
        BOB,
        FsOp::Open {
            path: "/alice/x".into(),
            flags: OpenFlags::CREATE_TRUNC,
            perm: 0o644,
        },
    ));
    assert!(matches!(e, FsError::Permission(_)), "{e}");
    let e = fs_err(h.run(EVE, FsOp::Stat("/alice/notes".into())));
    assert!(matches!(e, FsError::Permission(_)), "{e}");
    let e = fs_err(h.run(
        BOB,
        FsOp::Chmod {
            path: "/alice/notes".into(),
            perm: 0o777,
        },
    ));
    assert!(matches!(e, FsError::Permission(_)), "{e}");
    assert_eq!(read_all(&mut h, Caller::ROOT, "/alice/notes"), b"secret");
    let e = fs_err(h.run(
        ALICE,
        FsOp::Open {
            path: "/alice/notes".into(),
            flags: OpenFlags {
                create: true,
                excl: true,
                write: true,
                ..OpenFlags::default()
            },
            perm: 0o600,
        },
    ));
    assert!(matches!(e, FsError::Exists(_)), "{e}");
}

#[test]
fn append_handles_write_at_the_end_and_a_removed_file_handle_goes_stale() {
    let mut h = host();
    let flags = OpenFlags {
        write: true,
        create: true,
        append: true,
        ..OpenFlags::default()
    };
    let fh = open(&mut h, Caller::ROOT, "/log", flags);
    write(&mut h, Caller::ROOT, fh, 0, b"one ");
    write(&mut h, Caller::ROOT, fh, 0, b"two");
    assert_eq!(read_all(&mut h, Caller::ROOT, "/log"), b"one two");
    h.run(Caller::ROOT, FsOp::Unlink("/log".into())).unwrap();
    let e = fs_err(h.run(
        Caller::ROOT,
        FsOp::Write {
            fh,
            offset_bytes: 0,
            data: b"x".to_vec(),
        },
    ));
    assert!(matches!(e, FsError::StaleHandle(_)), "{e}");
    fsck_clean(&mut h);
}

#[test]
fn filling_the_device_is_no_space_and_leaves_a_clean_file_system() {
    let mut h = host();
    let fh = open(&mut h, Caller::ROOT, "/fill", OpenFlags::CREATE_TRUNC);
    let chunk = vec![7u8; 1 << 20];
    let mut at = 0;
    let err = loop {
        match h.run(
            Caller::ROOT,
            FsOp::Write {
                fh,
                offset_bytes: at,
                data: chunk.clone(),
            },
        ) {
            Ok(FsReply::Written(n)) => at += n,
            Ok(r) => panic!("{r:?}"),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, HostError::Fs(FsError::NoSpace(_))), "{err}");
    assert!(at > 10 << 20, "wrote {at} bytes of a 16 MiB device");
    h.run(Caller::ROOT, FsOp::Sync).unwrap();
    fsck_clean(&mut h);
    h.run(Caller::ROOT, FsOp::Unlink("/fill".into())).unwrap();
    fsck_clean(&mut h);
}

#[test]
fn a_remount_sees_what_was_synced_and_the_cache_counts_hits() {
    let mut h = host();
    h.run(
        Caller::ROOT,
        FsOp::Mkdir {
            path: "/keep".into(),
            perm: 0o755,
        },
    )
    .unwrap();
    let fh = open(&mut h, Caller::ROOT, "/keep/f", OpenFlags::CREATE_TRUNC);
    write(&mut h, Caller::ROOT, fh, 0, &pattern(20_000, 5));
    h.run(Caller::ROOT, FsOp::Sync).unwrap();
    read_all(&mut h, Caller::ROOT, "/keep/f");
    let stats = h.fs().stats();
    assert!(stats.cache.hits > 0 && stats.commits > 0, "{stats:?}");
    let dev = h.into_device();
    let mut h2 = FsHost::new(Sim::new(2), dev, FsConfig::default()).unwrap();
    h2.run(Caller::ROOT, FsOp::Mount).unwrap();
    assert_eq!(
        read_all(&mut h2, Caller::ROOT, "/keep/f"),
        pattern(20_000, 5)
    );
    fsck_clean(&mut h2);
}

#[test]
fn fallocate_maps_a_large_range_in_one_extent_that_the_extent_list_reports_for_the_device() {
    let mut h = host_with_shared_dir();
    let fh = open(&mut h, ALICE, "/d/big", OpenFlags::CREATE_TRUNC);
    write(&mut h, ALICE, fh, 0, &pattern(100, 1));
    let len = 3 << 20;
    let covered = match h
        .run(
            ALICE,
            FsOp::Fallocate {
                fh,
                offset_bytes: 100,
                len_bytes: len,
            },
        )
        .unwrap()
    {
        FsReply::Written(n) => n,
        r => panic!("{r:?}"),
    };
    assert_eq!(covered, len, "3 MiB is below the per-call bound");
    let FsReply::Extents(ext) = h.run(ALICE, FsOp::Extents(fh)).unwrap() else {
        panic!("extents")
    };
    // The first block was written, the rest allocated right after it.
    assert_eq!(ext.len(), 1, "{ext:?}");
    assert_eq!(ext[0].file_offset_bytes, 0);
    assert_eq!(ext[0].len_bytes, (100 + len).div_ceil(4096) * 4096);
    let FsReply::Stat(st) = h.run(ALICE, FsOp::Stat("/d/big".into())).unwrap() else {
        panic!("stat")
    };
    assert_eq!(st.size_bytes, 100 + len);
    // The old tail past byte 100 was zeroed before the size grew.
    let data = read_all(&mut h, ALICE, "/d/big");
    assert_eq!(&data[..100], &pattern(100, 1)[..]);
    assert!(data[100..4096].iter().all(|&b| b == 0));
    // Fallocate over an allocated range changes nothing but may not shrink.
    h.run(
        ALICE,
        FsOp::Fallocate {
            fh,
            offset_bytes: 0,
            len_bytes: 10,
        },
    )
    .unwrap();
    let FsReply::Extents(again) = h.run(ALICE, FsOp::Extents(fh)).unwrap() else {
        panic!("extents")
    };
    assert_eq!(again, ext);
    h.run(ALICE, FsOp::Close(fh)).unwrap();
    fsck_clean(&mut h);
}

#[test]
fn set_size_of_a_device_written_file_zeroes_nothing_and_frees_blocks_past_a_smaller_size() {
    let mut h = host_with_shared_dir();
    let fh = open(&mut h, ALICE, "/d/owned", OpenFlags::CREATE_TRUNC);
    write(&mut h, ALICE, fh, 0, &pattern(6000, 3));
    // Cut to 100 bytes with SetSize, then grow back: the bytes past 100 in the first block
    // are the caller's and stay as they were (a truncate-and-grow would zero them).
    for size in [100, 6000] {
        h.run(
            ALICE,
            FsOp::SetSize {
                fh,
                size_bytes: size,
            },
        )
        .unwrap();
    }
    let data = read_all(&mut h, ALICE, "/d/owned");
    assert_eq!(&data[..4096], &pattern(6000, 3)[..4096]);
    // The second block was wholly past 100 bytes: freed, so it reads as zeros again.
    assert!(
        data[4096..].iter().all(|&b| b == 0),
        "freed block reads as a hole"
    );
    let FsReply::Extents(ext) = h.run(ALICE, FsOp::Extents(fh)).unwrap() else {
        panic!("extents")
    };
    assert_eq!(ext.iter().map(|e| e.len_bytes).sum::<u64>(), 4096);
    // A read-only handle may not set the size.
    let ro = open(&mut h, ALICE, "/d/owned", OpenFlags::READ);
    assert!(h
        .run(
            ALICE,
            FsOp::SetSize {
                fh: ro,
                size_bytes: 1
            }
        )
        .is_err());
    h.run(ALICE, FsOp::Close(fh)).unwrap();
    h.run(ALICE, FsOp::Close(ro)).unwrap();
    fsck_clean(&mut h);
}

#[test]
fn fallocate_beyond_the_free_space_is_no_space_and_changes_nothing() {
    let mut h = host_with_shared_dir();
    let fh = open(&mut h, ALICE, "/d/f", OpenFlags::CREATE_TRUNC);
    let before = h.fs().free_counts().unwrap();
    let e = fs_err(h.run(
        ALICE,
        FsOp::Fallocate {
            fh,
            offset_bytes: 0,
            len_bytes: 64 << 20,
        },
    ));
    assert!(matches!(e, FsError::NoSpace(_)), "{e}");
    assert_eq!(h.fs().free_counts().unwrap(), before);
    h.run(ALICE, FsOp::Close(fh)).unwrap();
    fsck_clean(&mut h);
}

#[test]
fn an_append_only_file_refuses_truncate_unlink_rename_and_overwrite_but_takes_appends() {
    let mut h = host_with_shared_dir();
    let fh = open(&mut h, ALICE, "/d/log", OpenFlags::CREATE_TRUNC);
    write(&mut h, ALICE, fh, 0, b"first\n");
    // Only the owner (or root) may set the flag.
    let e = fs_err(h.run(
        BOB,
        FsOp::SetAppendOnly {
            path: "/d/log".into(),
            on: true,
        },
    ));
    assert!(matches!(e, FsError::Permission(_)), "{e}");
    h.run(
        ALICE,
        FsOp::SetAppendOnly {
            path: "/d/log".into(),
            on: true,
        },
    )
    .unwrap();
    let FsReply::Stat(st) = h.run(ALICE, FsOp::Stat("/d/log".into())).unwrap() else {
        panic!("stat")
    };
    assert!(st.append_only);
    // The handle opened before the flag may still write at the end, nowhere else.
    let e = fs_err(h.run(
        ALICE,
        FsOp::Write {
            fh,
            offset_bytes: 0,
            data: b"X".to_vec(),
        },
    ));
    assert!(matches!(e, FsError::AppendOnly(_)), "{e}");
    write(&mut h, ALICE, fh, 6, b"second\n");
    for op in [
        FsOp::Truncate {
            path: "/d/log".into(),
            size_bytes: 0,
        },
        FsOp::Unlink("/d/log".into()),
        FsOp::Rename {
            from: "/d/log".into(),
            to: "/d/other".into(),
        },
        FsOp::Open {
            path: "/d/log".into(),
            flags: OpenFlags::WRITE,
            perm: 0,
        },
    ] {
        let e = fs_err(h.run(ALICE, op.clone()));
        assert!(matches!(e, FsError::AppendOnly(_)), "{op:?}: {e}");
    }
    let app = open(
        &mut h,
        ALICE,
        "/d/log",
        OpenFlags {
            append: true,
            ..OpenFlags::WRITE
        },
    );
    write(&mut h, ALICE, app, 0, b"third\n");
    assert_eq!(read_all(&mut h, ALICE, "/d/log"), b"first\nsecond\nthird\n");
    // The flag is on disk: it survives a commit and clears again.
    h.run(
        ALICE,
        FsOp::SetAppendOnly {
            path: "/d/log".into(),
            on: false,
        },
    )
    .unwrap();
    h.run(
        ALICE,
        FsOp::Truncate {
            path: "/d/log".into(),
            size_bytes: 0,
        },
    )
    .unwrap();
    fsck_clean(&mut h);
}

#[test]
fn with_a_stripe_a_large_fallocate_starts_on_a_stripe_boundary_and_small_files_do_not_waste_one() {
    let dev = RamDisk::new(16 << 20, SimDuration::from_us(20));
    let cfg = FsConfig {
        stripe_blocks: 64,
        ..FsConfig::default()
    };
    let mut h = FsHost::new(Sim::new(1), dev, cfg).unwrap();
    h.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))
        .unwrap();
    let small = open(&mut h, Caller::ROOT, "/small", OpenFlags::CREATE_TRUNC);
    write(&mut h, Caller::ROOT, small, 0, b"x");
    let big = open(&mut h, Caller::ROOT, "/big", OpenFlags::CREATE_TRUNC);
    h.run(
        Caller::ROOT,
        FsOp::Fallocate {
            fh: big,
            offset_bytes: 0,
            len_bytes: 1 << 20,
        },
    )
    .unwrap();
    let extents =
        |h: &mut FsHost<RamDisk>, fh| match h.run(Caller::ROOT, FsOp::Extents(fh)).unwrap() {
            FsReply::Extents(e) => e,
            r => panic!("{r:?}"),
        };
    let s = extents(&mut h, small);
    let b = extents(&mut h, big);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].device_offset_bytes % (64 * 4096), 0, "{b:?}");
    assert_ne!(
        s[0].device_offset_bytes % (64 * 4096),
        0,
        "the small file was not aligned: {s:?}"
    );
    fsck_clean(&mut h);
}

/// Story: a second initiator (live mode's computational drive) reads a file's blocks straight
/// from the device beside the file system: after an fsync its extents hold the bytes written,
/// the raw reads' completions never reach the file system, and it serves on.
#[test]
fn raw_reads_of_a_files_extents_see_what_the_file_system_wrote_and_leave_it_serving() {
    use nearflash_blockdev::{BlockOp, BlockRequest};
    use nearflash_fs::host::RAW_ID_BIT;
    let mut h = host();
    let data: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i % 251) as u8).collect();
    let fh = open(&mut h, Caller::ROOT, "/f", OpenFlags::CREATE_TRUNC);
    h.run(
        Caller::ROOT,
        FsOp::Write {
            fh,
            offset_bytes: 0,
            data: data.clone(),
        },
    )
    .unwrap();
    h.run(Caller::ROOT, FsOp::Fsync(fh)).unwrap();
    let FsReply::Extents(ext) = h.run(Caller::ROOT, FsOp::Extents(fh)).unwrap() else {
        panic!("extents")
    };
    let mut got = Vec::new();
    for (i, e) in ext.iter().enumerate() {
        h.submit_raw(BlockRequest {
            id: RAW_ID_BIT | i as u64,
            op: BlockOp::Read,
            offset_bytes: e.device_offset_bytes,
            len_bytes: e.len_bytes,
            data: Vec::new(),
        });
    }
    assert_eq!(h.raw_outstanding(), ext.len() as u64);
    let mut done = Vec::new();
    while h.raw_outstanding() > 0 {
        assert!(h.run_until_raw_done(None).unwrap());
        h.take_raw_completions(&mut done);
    }
    done.sort_by_key(|c| c.id);
    for c in &done {
        assert!(c.result.is_ok() && c.id & RAW_ID_BIT != 0);
        got.extend_from_slice(&c.data);
    }
    assert_eq!(&got[..data.len()], &data[..]);
    // Nothing of the raw reads reached the file system: it still answers.
    h.run(Caller::ROOT, FsOp::Close(fh)).unwrap();
    assert_eq!(read_all(&mut h, Caller::ROOT, "/f"), data);
}
