//! The host link on the benchmark's path (issue 27, item 5). `nearflash io` used to drive the
//! FTL bare, so 32 MiB random reads on the 970 EVO reported 5,392 MiB/s — more than the
//! drive's PCIe 3.0 ×4 link can carry. Requests now cross the NVMe front end and the link by
//! default; these tests pin that the link bounds large reads, that bare runs still exceed it
//! (the link is what bounds them), and that at queue depth 1 the front end adds exactly the
//! unloaded path the NVMe crate documents.

use nearflash_iobench::workload::{Amount, Pattern, SyntheticSpec};
use nearflash_iobench::{Bench, Interface, IoReport, Plan, StoreSpec};
use nearflash_preset::Preset;

/// The 970 EVO scaled down to 40 blocks per plane (27 GiB raw) with a 512 MiB SLC cache, as
/// the preset's header suggests: the channels, dies, timing and link are the drive's.
fn evo_scaled() -> Preset {
    let sb = 64u64 << 20;
    Preset::load(
        "ssd-970evo",
        &[
            "flash.blocks_per_plane=40".into(),
            "ftl.spare_blocks_per_plane=2".into(),
            // The DRAM write buffer is not on the bare path: without it, both paths serve the
            // same reads from flash and differ by the front end and link alone.
            "write_cache.enabled=false".into(),
            format!("ftl.slc_cache.static_capacity_bytes={}", 4 * sb),
            format!("ftl.slc_cache.dynamic_capacity_max_bytes={}", 4 * sb),
        ],
    )
    .unwrap()
}

/// Random reads of `request_bytes` at `queue_depth` over a preconditioned 1 GiB span.
fn rand_read(
    preset: &Preset,
    interface: Interface,
    request_bytes: u64,
    queue_depth: u32,
    requests: u64,
) -> IoReport {
    let plan = Plan::Synthetic(SyntheticSpec {
        pattern: Pattern::RandRead,
        request_bytes,
        queue_depth,
        amount: Amount::Requests(requests),
        read_percent: 100,
        span_bytes: 1 << 30,
    });
    let report = Bench {
        preset,
        plan: &plan,
        interface,
        store: StoreSpec::None,
        seed: 1,
        precondition: Some(true),
        placement_handles: None,
        placement_rule: Default::default(),
    }
    .run(&mut |_, _, _| {})
    .unwrap();
    assert_eq!(report.requests, requests);
    assert_eq!(report.requests_failed, 0);
    report
}

#[test]
fn large_reads_on_the_970evo_are_bounded_by_its_link_and_exceed_it_only_bare() {
    let preset = evo_scaled();
    let nvme = rand_read(&preset, Interface::Nvme, 32 << 20, 16, 64);
    let bare = rand_read(&preset, Interface::Bare, 32 << 20, 16, 64);
    let lim = &nvme.analytic_limits;
    let link_mb_s = lim.link_up_payload_mb_s.expect("the NVMe path has a link");
    // PCIe 3.0 ×4, 256 B payloads, 24 B per TLP.
    assert!((link_mb_s - 3600.9).abs() < 0.1, "{link_mb_s}");
    assert!(link_mb_s < lim.backbone_read_bandwidth_mb_s);
    assert_eq!(
        lim.read_bandwidth_mb_s, link_mb_s,
        "the link is the ceiling"
    );
    let bw = nvme.read_bandwidth_mb_s;
    assert!(bw <= link_mb_s, "{bw} MB/s exceeds the link's {link_mb_s}");
    assert!(bw >= 0.9 * link_mb_s, "{bw} MB/s is not link-bound");
    let link = nvme.link.as_ref().expect("the NVMe path reports its link");
    assert!(link.up.utilization > 0.9 && link.up.utilization <= 1.0 + 1e-6);
    assert!(link.up.payload_bytes >= 64 * (32 << 20));
    assert!(link.up.wire_bytes > link.up.payload_bytes, "TLP headers");
    // Bare, nothing but the channels bounds the same reads: above what the link carries.
    assert_eq!(bare.interface, "bare");
    assert!(bare.link.is_none() && bare.analytic_limits.link_up_payload_mb_s.is_none());
    let bare_bw = bare.read_bandwidth_mb_s;
    assert!(bare_bw > link_mb_s, "bare {bare_bw} MB/s under the link");
    assert!(bare_bw <= bare.analytic_limits.read_bandwidth_mb_s);
}

#[test]
fn a_qd1_4kib_read_over_nvme_costs_the_bare_read_plus_the_documented_nvme_path() {
    let preset = evo_scaled();
    let requests = 2000;
    let nvme = rand_read(&preset, Interface::Nvme, 4096, 1, requests);
    let bare = rand_read(&preset, Interface::Bare, 4096, 1, requests);
    // Doorbell, SQE fetch, controller, the 4 KiB DMA up and the CQE with its interrupt:
    // 6,587 ns on the defaults (docs/design.md, "The NVMe path").
    let overhead_ns = preset.nvme.qd1_read_overhead_ns(4096);
    assert_eq!(overhead_ns, 6_587);
    // At QD1 nothing queues but one thing: the closed loop submits the next command the
    // instant the last one completes, when the host is writing that one's CQ head doorbell
    // (4 B down), so every command but the first rings its SQ tail doorbell behind it. The
    // device sees the same requests in the same order (the workload draws the same offsets)
    // on an identically preconditioned drive. So each read costs its bare time + 6,587 ns,
    // + 8 ns after the first: the model leaves no other slack.
    let doorbell_ns = preset.nvme.link.wire_time(4).as_ns();
    assert_eq!(doorbell_ns, 8);
    let us = |ns: f64| ns / 1000.0;
    let (n, b) = (&nvme.latency_us, &bare.latency_us);
    let later = (requests - 1) as f64 / requests as f64;
    let expect_mean = b.mean + us(overhead_ns as f64 + doorbell_ns as f64 * later);
    assert!(
        (n.mean - expect_mean).abs() < 1e-6,
        "mean {} vs bare {} + the NVMe path",
        n.mean,
        b.mean
    );
    for (over_bare, what) in [(n.min - b.min, "min"), (n.max - b.max, "max")] {
        let lo = us(overhead_ns as f64) - 1e-9;
        let hi = us((overhead_ns + doorbell_ns) as f64) + 1e-9;
        assert!(
            (lo..=hi).contains(&over_bare),
            "{what}: {over_bare} us over bare"
        );
    }
}
