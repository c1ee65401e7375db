//! The host-only baseline's data path is the shared host model (`nearflash_host::Host`, a
//! component of INSIDER's machine): `pread` of a real file pays the system call, the
//! per-request and per-page stack cost and the copy, reads ahead of a sequential reader,
//! and each block request crosses the drive's NVMe front end (`nearflash_nvme::Nvme`:
//! doorbell, SQE fetch, controller, data DMA, CQE and MSI-X, on the drive's one link) before
//! and after the drive serves it; the pages it reads stay in the host's bounded LRU page
//! cache.

use nearflash_host::{HostConfig, PageCacheConfig, PAGE_BYTES};
use nearflash_insider::config::{insider_host, Backing};
use nearflash_insider::runtime::{MachineSpec, Runtime};
use nearflash_insider::InsiderConfig;

const CACHE_BYTES: u64 = 1 << 20;

fn drive() -> InsiderConfig {
    InsiderConfig {
        backing: Backing::DramEmulated,
        emulated_capacity_bytes: 64 << 20,
        ..InsiderConfig::default()
    }
}

fn runtime(functional: bool) -> Runtime {
    let host = HostConfig {
        page_cache: PageCacheConfig {
            capacity_bytes: CACHE_BYTES,
            ..PageCacheConfig::default()
        },
        ..insider_host()
    };
    let mut rt = Runtime::new(&MachineSpec {
        insider: &drive(),
        host: &host,
        flash: None,
        functional,
        seed: 1,
    })
    .expect("a valid machine");
    rt.mkdir(0, "/data", 0o777).unwrap();
    rt
}

#[test]
fn a_host_read_miss_pays_an_nvme_command_on_top_of_the_storage_stack_and_reads_ahead() {
    let mut rt = runtime(false);
    rt.install_file(0, "/data/f", 0o644, 1 << 20, None).unwrap();
    let fd = rt.open(0, "/data/f", false).unwrap();

    let (commands, t) = (rt.machine().nvme_commands(), rt.now());
    assert_eq!(rt.pread(fd, 0, PAGE_BYTES).unwrap().0, PAGE_BYTES);
    let miss_ns = rt.now().since(t).as_ns();
    let host = rt.machine().host().stats();
    assert_eq!((host.misses, host.hits), (1, 0));
    assert_eq!(
        host.readahead_pages,
        (128 << 10) / PAGE_BYTES,
        "128 KiB read ahead"
    );
    assert_eq!(
        rt.machine().nvme_commands(),
        commands + 2,
        "one 4 KiB command, and the read-ahead in one 128 KiB command"
    );

    let t = rt.now();
    assert_eq!(rt.pread(fd, 0, PAGE_BYTES).unwrap().0, PAGE_BYTES);
    let hit_ns = rt.now().since(t).as_ns();
    assert_eq!(
        rt.machine().nvme_commands(),
        commands + 2,
        "a hit issues none"
    );
    // The next page was read ahead: a hit.
    rt.pread(fd, PAGE_BYTES, PAGE_BYTES).unwrap();
    let host = rt.machine().host().stats();
    assert_eq!((host.misses, host.hits), (1, 2));

    // Each command crossed the shared NVMe front end step by step: SQ tail doorbell, SQE
    // fetch, CQE and MSI-X, CQ head doorbell.
    let s = rt.machine().nvme_stats();
    assert_eq!(
        (s.sqe_fetches, s.cqes, s.interrupts),
        (s.commands, s.commands, s.commands)
    );
    // An SQ tail doorbell per command and a CQ head doorbell per completion the host saw
    // (the last read-ahead's may still be on its way).
    assert!(
        s.doorbells > s.commands + s.cqes - 2 && s.doorbells <= 2 * s.commands,
        "{s:?}"
    );
    assert_eq!(
        s.controller_busy_ns,
        s.commands * drive().nvme().controller_ns
    );

    // The miss costs at least the hit plus the stack's request and a QD1 4 KiB read's time
    // in the NVMe front end (doorbell, fetch, controller, data DMA, CQE and interrupt; the
    // drive's own time comes on top).
    let host_cfg = insider_host();
    let stack_ns = host_cfg.page_cache.request_stack_ns(&host_cfg, PAGE_BYTES);
    let command_ns = drive().nvme().qd1_read_overhead_ns(PAGE_BYTES);
    assert!(
        command_ns > 4_000,
        "doorbell, fetch, 2 µs controller, 2 µs interrupt"
    );
    assert!(
        miss_ns >= hit_ns + stack_ns + command_ns,
        "miss {miss_ns} ns, hit {hit_ns} ns, stack {stack_ns} ns, NVMe {command_ns} ns"
    );
}

#[test]
fn an_o_direct_write_goes_through_the_host_and_drops_its_cached_pages() {
    let mut rt = runtime(false);
    rt.install_file(0, "/data/f", 0o644, 256 << 10, None)
        .unwrap();
    let fd = rt.open(0, "/data/f", true).unwrap();
    rt.pread(fd, 0, 256 << 10).unwrap();
    let before = rt.machine().host().stats();
    assert_eq!(rt.page_cache().bytes(), 256 << 10);
    // 1000 bytes at 5000: whole sectors 4608..6144 go to the drive, page 1 goes stale.
    rt.pwrite_direct(fd, 5000, 1000).unwrap();
    let after = rt.machine().host().stats();
    assert_eq!(after.syscalls, before.syscalls + 1);
    assert_eq!(after.direct_bytes - before.direct_bytes, 6144 - 4608);
    assert_eq!(
        after.copy_bytes, before.copy_bytes,
        "O_DIRECT copies nothing"
    );
    assert_eq!(rt.page_cache().bytes(), (256 << 10) - PAGE_BYTES);
    let misses = rt.machine().host().stats().misses;
    rt.pread(fd, PAGE_BYTES, 10).unwrap();
    assert_eq!(rt.machine().host().stats().misses, misses + 1, "read again");
}

#[test]
fn reading_a_file_eight_times_the_page_cache_keeps_the_cache_within_its_limit() {
    let mut rt = runtime(false);
    let size = 8 * CACHE_BYTES;
    rt.install_file(0, "/data/big", 0o644, size, None).unwrap();
    let fd = rt.open(0, "/data/big", false).unwrap();
    let commands = rt.machine().nvme_commands();
    let mut at = 0;
    while at < size {
        // 2 MiB reads, twice the cache: the read itself must go in cache-sized batches.
        let (n, _) = rt.pread(fd, at, 2 << 20).unwrap();
        at += n;
        let cache = rt.page_cache();
        assert!(cache.bytes() <= cache.capacity_bytes());
    }
    let cache = rt.page_cache();
    assert_eq!(cache.bytes(), CACHE_BYTES, "full, never beyond");
    assert_eq!(cache.evictions(), (size - CACHE_BYTES) / PAGE_BYTES);
    // Every byte came through the NVMe front end in requests of at most 128 KiB.
    assert!(rt.machine().nvme_commands() - commands >= size / (128 << 10));
    // The file's first page was evicted long ago: reading it again is a miss.
    let before = rt.machine().nvme_commands();
    rt.pread(fd, 0, PAGE_BYTES).unwrap();
    assert_eq!(rt.machine().nvme_commands(), before + 1);
}

#[test]
fn a_read_larger_than_the_page_cache_returns_the_files_bytes() {
    let mut rt = runtime(true);
    let size = 3 * CACHE_BYTES + 1234;
    let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
    rt.install_file(0, "/data/f", 0o644, size, Some(&data))
        .unwrap();
    let fd = rt.open(0, "/data/f", false).unwrap();
    let (n, got) = rt.pread(fd, 100, size).unwrap();
    assert_eq!(n, size - 100);
    assert!(got == data[100..], "the bytes of the file, in order");
    // Again, from a cache holding only its last megabyte.
    let (_, again) = rt.pread(fd, size - 5000, 5000).unwrap();
    assert!(again == data[(size - 5000) as usize..]);
    assert!(rt.page_cache().bytes() <= CACHE_BYTES);
}
