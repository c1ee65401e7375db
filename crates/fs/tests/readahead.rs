//! Read-ahead (`fs.read_ahead_bytes`, Linux's on-demand read-ahead): scenario tests over a
//! RAM disk with a fixed latency, each telling one story.

use nearflash_fs::ramdisk::RamDisk;
use nearflash_fs::{Caller, Fh, FormatOptions, FsConfig, FsHost, FsOp, FsReply, OpenFlags};
use nearflash_sim::{Sim, SimDuration};

const LATENCY_US: u64 = 50;
const FILE_BYTES: usize = 1 << 20;

fn host(read_ahead_bytes: u64) -> FsHost<RamDisk> {
    let dev = RamDisk::new(32 << 20, SimDuration::from_us(LATENCY_US));
    let cfg = FsConfig {
        read_ahead_bytes,
        ..FsConfig::default()
    };
    let mut h = FsHost::new(Sim::new(1), dev, cfg).unwrap();
    h.run(Caller::ROOT, FsOp::Format(FormatOptions::default()))
        .unwrap();
    h
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i / 4096 * 7 + i) as u8).collect()
}

fn open(h: &mut FsHost<RamDisk>, path: &str, flags: OpenFlags) -> Fh {
    match h
        .run(
            Caller::ROOT,
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

/// A synced 1 MiB file, its blocks dropped from the cache, opened for reading and writing.
fn cold_file(h: &mut FsHost<RamDisk>) -> Fh {
    let rw = OpenFlags {
        read: true,
        ..OpenFlags::CREATE_TRUNC
    };
    let fh = open(h, "/f", rw);
    let data = pattern(FILE_BYTES);
    let mut at = 0;
    while at < data.len() {
        let FsReply::Written(n) = h
            .run(
                Caller::ROOT,
                FsOp::Write {
                    fh,
                    offset_bytes: at as u64,
                    data: data[at..].to_vec(),
                },
            )
            .unwrap()
        else {
            panic!()
        };
        at += n as usize;
    }
    h.run(Caller::ROOT, FsOp::Fsync(fh)).unwrap();
    h.run(Caller::ROOT, FsOp::DropCaches).unwrap();
    fh
}

/// Reads `len` at `at`; answers the bytes and the read's time in µs.
fn read(h: &mut FsHost<RamDisk>, fh: Fh, at: u64, len: u64) -> (Vec<u8>, u64) {
    let id = h
        .submit(
            Caller::ROOT,
            FsOp::Read {
                fh,
                offset_bytes: at,
                len_bytes: len,
            },
        )
        .unwrap();
    let c = h.wait(id).unwrap();
    let FsReply::Data(d) = c.result.unwrap() else {
        panic!()
    };
    (d, (c.finished.as_ns() - c.submitted.as_ns()) / 1000)
}

/// A program reading a file 4 KiB at a time (a C library's stream buffer), spending 20 µs
/// on each piece: with Linux's 128 KiB read-ahead, the windows grow to 32 blocks, are read in
/// a request each, and arrive before the reader reaches them — only the first reads wait for
/// the device; without read-ahead every read waits for its block.
#[test]
fn a_page_by_page_reader_finds_its_next_pages_already_read_ahead() {
    let mut times = Vec::new();
    for ra in [0, 128 << 10] {
        let mut h = host(ra);
        let fh = cold_file(&mut h);
        let mut reads_before = h.fs().stats();
        let mut waited = 0;
        let mut got = Vec::new();
        let start = h.now();
        for i in 0..(FILE_BYTES / 4096) as u64 {
            let (d, us) = read(&mut h, fh, i * 4096, 4096);
            got.extend_from_slice(&d);
            if i == 0 {
                // The first read brought the file's metadata in.
                reads_before = h.fs().stats();
            }
            waited += u64::from(us >= LATENCY_US);
            let t = h.now() + SimDuration::from_us(20);
            h.advance_to(t);
        }
        assert!(
            got == pattern(FILE_BYTES),
            "read-ahead {ra}: the bytes read back"
        );
        let s = h.fs().stats();
        if ra == 0 {
            assert_eq!(
                waited, 256,
                "without read-ahead every read waits for the device"
            );
            assert_eq!(s.readahead_requests, 0);
        } else {
            assert!(waited <= 3, "only the first windows' reads wait: {waited}");
            assert_eq!(s.readahead_blocks, 256, "every block read ahead, once");
            assert!(
                s.readahead_requests <= 256 / 32 + 4,
                "one request per window: {}",
                s.readahead_requests
            );
            assert_eq!(
                s.block_reads, reads_before.block_reads,
                "no block of the file read alone after the first"
            );
        }
        times.push((h.now().as_ns() - start.as_ns()) / 1000);
    }
    assert!(
        times[1] + 256 * LATENCY_US * 9 / 10 < times[0],
        "read-ahead hides the device's latency: {times:?} µs"
    );
}

/// Reads scattered over the file (a database's point lookups) read what they ask for and
/// nothing more: no window grows, no block is read that nobody asked for.
#[test]
fn scattered_reads_read_only_what_they_ask_for() {
    let mut h = host(128 << 10);
    let fh = cold_file(&mut h);
    for i in [200u64, 17, 120, 3, 250, 64] {
        let (d, _) = read(&mut h, fh, i * 4096 + 100, 200);
        assert_eq!(d, pattern(FILE_BYTES)[(i * 4096 + 100) as usize..][..200]);
    }
    let s = h.fs().stats();
    assert_eq!(s.readahead_blocks, 6, "{s:?}");
}

/// A write landing on a block while a read-ahead of it is in flight: the read-ahead's (older)
/// bytes must not replace the written ones when they arrive.
#[test]
fn a_write_during_a_read_ahead_of_its_block_is_not_undone_by_the_read() {
    let mut h = host(128 << 10);
    let fh = cold_file(&mut h);
    // Block 0 starts a window of 4 (marker at 1); block 1 starts the next, 4..12, in flight
    // when the read returns.
    read(&mut h, fh, 0, 4096);
    read(&mut h, fh, 4096, 4096);
    assert_eq!(h.fs().readahead_in_flight(), 1);
    for (at, data) in [
        (6 * 4096, vec![0xAB; 4096]),
        (8 * 4096 + 10, vec![0xCD; 10]),
    ] {
        let id = h
            .submit(
                Caller::ROOT,
                FsOp::Write {
                    fh,
                    offset_bytes: at,
                    data,
                },
            )
            .unwrap();
        h.wait(id).unwrap().result.unwrap();
    }
    let (d, _) = read(&mut h, fh, 6 * 4096, 4096);
    assert_eq!(d, vec![0xAB; 4096], "the full-block write stands");
    let (d, _) = read(&mut h, fh, 8 * 4096, 30);
    let mut want = pattern(FILE_BYTES)[8 * 4096..][..30].to_vec();
    want[10..20].fill(0xCD);
    assert_eq!(
        d, want,
        "the partial write stands on the read-ahead's bytes"
    );
}
