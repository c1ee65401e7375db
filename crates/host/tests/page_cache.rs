//! Scenarios of the host model over the conventional SSD path: the host's stack and page
//! cache, an NVMe front end, and a device (a fixed-latency one for exact figures, the FTL
//! for a realistic one). Every scenario checks the cache's byte limit at every event.

use nearflash_host::{
    Extent, FileId, Host, HostCompletion, HostConfig, HostError, HostEvent, OpFlags,
    PageCacheConfig, PageKey, PAGE_BYTES,
};
use nearflash_nvme::testing::{FixedDevice, FixedDone};
use nearflash_nvme::{Nvme, NvmeConfig, NvmeEvent};
use nearflash_sim::{Schedule, Sim, SimTime};

const MIB: u64 = 1 << 20;
const CACHE_BYTES: u64 = 4 * MIB;

type Dev = Nvme<FixedDevice>;
type Ev = HostEvent<NvmeEvent<FixedDone>>;

/// The default host with page cache `cache`.
fn with_cache(cache: PageCacheConfig) -> HostConfig {
    HostConfig {
        page_cache: cache,
        ..HostConfig::default()
    }
}

fn cache_cfg() -> PageCacheConfig {
    PageCacheConfig {
        capacity_bytes: CACHE_BYTES,
        ..PageCacheConfig::default()
    }
}

fn host() -> (Sim<Ev>, Host<Dev>, FileId) {
    host_over(FixedDevice::new(1 << 30, 50_000, 8))
}

fn host_over(dev: FixedDevice) -> (Sim<Ev>, Host<Dev>, FileId) {
    let nvme = Nvme::new(NvmeConfig::default(), dev).unwrap();
    let mut host = Host::new(with_cache(cache_cfg()), nvme).unwrap();
    // A 40 MiB file in two extents (ten times the cache).
    let file = host
        .add_file(vec![
            Extent {
                dev_offset: 100 * MIB,
                len: 24 * MIB,
            },
            Extent {
                dev_offset: 300 * MIB,
                len: 16 * MIB,
            },
        ])
        .unwrap();
    (Sim::new(1), host, file)
}

/// Runs until every operation has completed, checking the cache limit at every event.
fn run(sim: &mut Sim<Ev>, host: &mut Host<Dev>) -> Vec<HostCompletion> {
    let mut out = Vec::new();
    let mut steps = 0u64;
    while host.outstanding() > 0 {
        assert!(
            sim.step(host),
            "operations outstanding with no event pending"
        );
        assert!(host.cache().bytes() <= CACHE_BYTES, "cache over its limit");
        host.take_completions(&mut out);
        steps += 1;
        assert!(steps < 5_000_000, "no end in sight");
    }
    out
}

#[test]
fn reading_a_file_ten_times_the_cache_keeps_memory_at_its_limit() {
    let (mut sim, mut host, file) = host();
    let mut pos = 0;
    while pos < 40 * MIB {
        host.read(file, pos, MIB, OpFlags::default(), sim.queue())
            .unwrap();
        let done = run(&mut sim, &mut host);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].result, Ok(()));
        pos += MIB;
    }
    let s = host.stats();
    assert_eq!(
        s.cache_bytes_max, CACHE_BYTES,
        "the cache filled to its limit"
    );
    assert!(s.evictions > 0);
    let pages = 40 * MIB / PAGE_BYTES;
    assert_eq!(s.hits + s.misses, pages, "every page counted once");
    // Sequential: read-ahead brought in nearly everything ahead of need.
    assert!(s.readahead_pages > pages * 9 / 10, "{s:?}");
    assert!(s.misses < pages / 10, "{s:?}");
    assert_eq!(s.copy_bytes, 40 * MIB);
    assert_eq!(s.writeback_pages, 0);
    assert!(s.device_in_flight_max <= HostConfig::default().io_queue_depth);
}

#[test]
fn a_second_read_of_a_cached_range_is_all_hits_and_faster() {
    let (mut sim, mut host, file) = host();
    host.read(file, 0, MIB, OpFlags::default(), sim.queue())
        .unwrap();
    let cold = run(&mut sim, &mut host);
    let before = host.stats();
    host.read(file, 0, MIB, OpFlags::default(), sim.queue())
        .unwrap();
    let warm = run(&mut sim, &mut host);
    let after = host.stats();
    assert_eq!(after.hits - before.hits, MIB / PAGE_BYTES);
    assert_eq!(after.misses, before.misses);
    assert_eq!(after.device_requests, before.device_requests);
    let took = |c: &[HostCompletion]| c[0].completed.since(c[0].submitted).as_ns();
    // Warm: a system call and 1 MiB of copies (256 × 1 µs), no device.
    assert_eq!(took(&warm), 500 + 256 * 1000);
    assert!(took(&cold) > 50_000 + took(&warm));
}

#[test]
fn dropped_pages_are_read_again_and_kept_ones_are_hits() {
    let (mut sim, mut host, file) = host();
    host.read(file, 0, MIB, OpFlags::default(), sim.queue())
        .unwrap();
    run(&mut sim, &mut host);
    // posix_fadvise(DONTNEED) over the first half of the range.
    let half = MIB / PAGE_BYTES / 2;
    assert_eq!(host.drop_cached(file, 0, half - 1), Ok(half));
    assert_eq!(host.drop_cached(file, 0, half - 1), Ok(0), "gone already");
    let before = host.stats();
    host.read(file, 0, MIB, OpFlags::default(), sim.queue())
        .unwrap();
    run(&mut sim, &mut host);
    let after = host.stats();
    assert_eq!(
        after.misses - before.misses,
        half,
        "the dropped half is read again"
    );
    assert_eq!(after.hits - before.hits, half, "the kept half is hit");
    assert_eq!(
        host.drop_cached(FileId(9), 0, 0),
        Err(HostError::NoSuchFile(9))
    );
}

/// Story: a block request of the page cache carries its pages compactly when they are
/// consecutive in the file; pages contiguous on the device with a gap in the file between
/// them still go in one request.
#[test]
fn pages_contiguous_on_the_device_across_a_gap_in_the_file_go_in_one_request() {
    let nvme = Nvme::new(NvmeConfig::default(), FixedDevice::new(1 << 30, 50_000, 8)).unwrap();
    let mut host = Host::new(with_cache(cache_cfg()), nvme).unwrap();
    let mut sim = Sim::new(1);
    // File pages 0, 1, 2 at device pages 0, 256, 1; page 3 at device page 2.
    let page = |dev_page: u64| Extent {
        dev_offset: dev_page * PAGE_BYTES,
        len: PAGE_BYTES,
    };
    let file = host
        .add_file(vec![page(0), page(256), page(1), page(2)])
        .unwrap();
    let flags = OpFlags::default();
    host.read(file, PAGE_BYTES, PAGE_BYTES, flags, sim.queue())
        .unwrap();
    run(&mut sim, &mut host);
    let before = host.stats();
    // Pages 0 and 2 are missing (device pages 0 and 1): one request reads both.
    host.read(file, 0, 3 * PAGE_BYTES, flags, sim.queue())
        .unwrap();
    let done = run(&mut sim, &mut host);
    assert_eq!(done[0].result, Ok(()));
    let after = host.stats();
    assert_eq!(
        (after.misses - before.misses, after.hits - before.hits),
        (2, 1)
    );
    assert_eq!(after.device_requests - before.device_requests, 1);
    for index in 0..3 {
        let key = PageKey {
            file: file.0,
            index,
        };
        assert!(host.cache().state(key).is_some_and(|s| s.uptodate));
    }
    // Pages 0, 2 and 3 written (device pages 0, 1, 2), page 1 clean: fsync writes them
    // back in one request, then flushes.
    for index in [0, 2, 3] {
        let offset = index * PAGE_BYTES;
        host.write(file, offset, PAGE_BYTES, flags, sim.queue())
            .unwrap();
        run(&mut sim, &mut host);
    }
    let before = host.stats();
    host.fsync(file, sim.queue()).unwrap();
    let done = run(&mut sim, &mut host);
    assert_eq!(done[0].result, Ok(()));
    let after = host.stats();
    assert_eq!(after.writeback_pages - before.writeback_pages, 3);
    assert_eq!(
        after.device_requests - before.device_requests,
        2,
        "a write and a flush"
    );
    assert_eq!(host.cache().unwritten_bytes(), 0);
}

#[test]
fn a_file_takes_a_new_layout_when_idle_and_shrinking_drops_its_pages_beyond() {
    let (mut sim, mut host, file) = host();
    host.read(file, 0, MIB, OpFlags::default(), sim.queue())
        .unwrap();
    assert_eq!(
        host.set_extents(file, vec![]),
        Err(HostError::FileBusy(file.0)),
        "an operation is in flight"
    );
    run(&mut sim, &mut host);
    assert_eq!(
        host.set_extents(file, vec![]),
        Err(HostError::FileBusy(file.0)),
        "the read-ahead beyond 512 KiB is in flight"
    );
    while sim.step(&mut host) {}
    assert_eq!(
        host.cache().bytes(),
        MIB + (128 << 10),
        "the refused change dropped nothing; 128 KiB were read ahead"
    );
    // Shrink to 512 KiB at a new place: every page beyond is dropped.
    host.set_extents(
        file,
        vec![Extent {
            dev_offset: 700 * MIB,
            len: MIB / 2,
        }],
    )
    .unwrap();
    assert_eq!(host.cache().bytes(), MIB / 2);
    let e = host
        .read(file, MIB / 2, 4096, OpFlags::default(), sim.queue())
        .unwrap_err();
    assert!(e.to_string().contains("beyond the file"), "{e}");
    // The kept pages were the caller's to drop; read again, they are misses.
    host.drop_cached(file, 0, u64::MAX).unwrap();
    let before = host.stats();
    host.read(file, 0, MIB / 2, OpFlags::default(), sim.queue())
        .unwrap();
    assert_eq!(run(&mut sim, &mut host)[0].result, Ok(()));
    assert_eq!(host.stats().misses - before.misses, MIB / 2 / PAGE_BYTES);
}

#[test]
fn buffered_writes_stay_under_the_dirty_limit_and_fsync_writes_them_back_and_waits() {
    // A slow device (one 128 KiB request per ms, 128 MB/s) behind 4 GB/s copies.
    let (mut sim, mut host, file) = host_over(FixedDevice::new(1 << 30, 1_000_000, 1));
    let limit = cache_cfg().dirty_limit_bytes();
    host.write(file, 0, 3 * MIB, OpFlags::default(), sim.queue())
        .unwrap();
    let w = run(&mut sim, &mut host);
    assert_eq!(w[0].result, Ok(()));
    let s = host.stats();
    assert!(s.dirty_bytes_max <= limit + HostConfig::default().io_request_bytes);
    assert!(
        s.throttled_writes > 0,
        "3 MiB over an 0.8 MiB dirty limit waits"
    );
    assert!(s.writeback_pages > 0);
    assert!(
        host.cache().dirty_bytes() > 0,
        "the tail stays dirty until fsync"
    );
    let flushes_before = host.device().stats().flushes;
    host.fsync(file, sim.queue()).unwrap();
    let f = run(&mut sim, &mut host);
    assert_eq!(f[0].result, Ok(()));
    assert_eq!(host.cache().dirty_bytes(), 0);
    assert_eq!(host.stats().writeback_pages, 3 * MIB / PAGE_BYTES);
    assert_eq!(host.device().stats().flushes, flushes_before + 1);
}

#[test]
fn o_direct_bypasses_the_cache_and_copies_nothing() {
    let (mut sim, mut host, file) = host();
    let direct = OpFlags { direct: true };
    host.read(file, 0, MIB, direct, sim.queue()).unwrap();
    let done = run(&mut sim, &mut host);
    assert_eq!(done[0].result, Ok(()));
    let s = host.stats();
    assert_eq!((s.hits, s.misses, s.copy_bytes), (0, 0, 0));
    assert_eq!(host.cache().bytes(), 0);
    assert_eq!(s.direct_bytes, MIB);
    assert_eq!(
        s.device_requests,
        MIB / HostConfig::default().io_request_bytes
    );
    let e = host.read(file, 1, 512, direct, sim.queue()).unwrap_err();
    assert_eq!(
        e,
        HostError::DirectUnaligned {
            offset: 1,
            len: 512
        }
    );
}

#[test]
fn an_o_direct_write_over_dirty_cached_pages_writes_them_back_first_and_drops_them() {
    let (mut sim, mut host, file) = host();
    host.write(file, 0, 64 << 10, OpFlags::default(), sim.queue())
        .unwrap();
    run(&mut sim, &mut host);
    assert_eq!(host.cache().dirty_bytes(), 64 << 10);
    host.write(file, 0, 64 << 10, OpFlags { direct: true }, sim.queue())
        .unwrap();
    run(&mut sim, &mut host);
    assert_eq!(host.stats().writeback_pages, 16);
    assert_eq!(host.cache().bytes(), 0, "stale pages dropped");
}

#[test]
fn bad_operations_are_named_errors() {
    let (mut sim, mut host, file) = host();
    let e = host
        .read(file, 40 * MIB - 4096, 8192, OpFlags::default(), sim.queue())
        .unwrap_err();
    assert!(e.to_string().contains("beyond the file"));
    assert_eq!(
        host.read(FileId(9), 0, 1, OpFlags::default(), sim.queue()),
        Err(HostError::NoSuchFile(9))
    );
    let e = host
        .add_file(vec![Extent {
            dev_offset: 1 << 30,
            len: 4096,
        }])
        .unwrap_err();
    assert!(e.to_string().contains("extent 0"));
    let small = PageCacheConfig {
        capacity_bytes: 64 << 10,
        ..PageCacheConfig::default()
    };
    let dev = Nvme::new(NvmeConfig::default(), FixedDevice::new(1 << 20, 1, 1)).unwrap();
    let e = Host::new(with_cache(small), dev).err().unwrap();
    assert!(e.to_string().contains("host.page_cache.capacity_bytes"));
    assert_eq!(sim.now(), SimTime::ZERO);
}

mod over_the_ftl {
    use super::*;
    use nearflash_flash::NoStore;
    use nearflash_ftl::testing::{tiny_flash, tiny_ftl};
    use nearflash_ftl::Device;

    #[test]
    fn a_file_written_fsynced_and_read_back_through_nvme_and_the_ftl() {
        type E = HostEvent<NvmeEvent<nearflash_ftl::Event>>;
        let mut sim: Sim<E> = Sim::new(5);
        let dev = Device::format(
            &tiny_flash(),
            &tiny_ftl(),
            Box::new(NoStore),
            &mut sim.queue().map(|e| HostEvent::Device(NvmeEvent::Device(e))),
        )
        .unwrap();
        let nvme = Nvme::new(NvmeConfig::default(), dev).unwrap();
        let cfg = PageCacheConfig {
            capacity_bytes: MIB,
            ..PageCacheConfig::default()
        };
        let mut host = Host::new(with_cache(cfg), nvme).unwrap();
        let file = host
            .add_file(vec![Extent {
                dev_offset: 0,
                len: 4 * MIB,
            }])
            .unwrap();
        let mut out = Vec::new();
        let mut drive = |sim: &mut Sim<E>, host: &mut Host<Nvme<Device>>| {
            while host.outstanding() > 0 {
                assert!(sim.step(host));
                assert!(host.cache().bytes() <= MIB);
                host.take_completions(&mut out);
            }
            out.drain(..).map(|c| c.result).collect::<Vec<_>>()
        };
        host.write(file, 0, 4 * MIB, OpFlags::default(), sim.queue())
            .unwrap();
        host.fsync(file, sim.queue()).unwrap();
        assert_eq!(drive(&mut sim, &mut host), vec![Ok(()), Ok(())]);
        let ftl = host.device().device().stats();
        assert_eq!(
            ftl.host_write_bytes,
            4 * MIB,
            "every page written back once"
        );
        assert_eq!(ftl.host_flushes, 1);
        host.read(file, 0, 4 * MIB, OpFlags::default(), sim.queue())
            .unwrap();
        assert_eq!(drive(&mut sim, &mut host), vec![Ok(())]);
        assert!(host.stats().misses + host.stats().readahead_pages > 0);
        assert_eq!(host.cache().dirty_bytes(), 0);
    }
}
