//! Timing fidelity: the systems of §5.2 on a synthetic filter, and the limits that must emerge
//! from the mechanism (never above the drive, the link or the engine).

mod common;
use common::*;
use nearflash_insider::app::{AppProfile, Pass};
use nearflash_insider::experiment::{run_app, System};
use nearflash_insider::stream::Direction;
use nearflash_insider::InsiderConfig;

fn filter(gib: u64, ratio: f64, host_ipb: f64) -> AppProfile {
    AppProfile {
        name: "filter".into(),
        passes: vec![Pass {
            input_bytes: gib << 30,
            direction: Direction::Read,
            cost: nearflash_stream::StreamProgram::cost(&Echo),
            output_per_input: ratio,
            host_instructions_per_input_byte: host_ipb,
            host_instructions_per_output_byte: 4.0,
        }],
    }
}

#[test]
fn offload_is_bounded_by_the_drive_and_beats_the_baselines() {
    let cfg = InsiderConfig::default();
    let host = nearflash_insider::config::insider_host();
    let app = filter(4, 0.01, 8.0);
    let r: Vec<_> = System::ALL
        .iter()
        .map(|&s| run_app(s, &app, &cfg, &host, 1).unwrap())
        .collect();
    for x in &r {
        eprintln!(
            "{:>22} {:>9.0} MB/s  events {:>8}  pcie {:.2}",
            x.system.name(),
            x.throughput_mb_s,
            x.events,
            x.pcie_d2h_utilization
        );
        assert!(x.throughput_mb_s <= cfg.emulated_bandwidth_mb_s * 1.001);
    }
    let t = |s: System| r.iter().find(|x| x.system == s).unwrap().throughput_mb_s;
    assert!(t(System::Insider) > 0.9 * cfg.emulated_bandwidth_mb_s);
    assert!(t(System::HostBypass) <= cfg.pcie_mb_s());
    assert!(t(System::HostOnly) < t(System::HostBypass));
    assert!(t(System::HostBypass) < t(System::HostBypassPipeline));
    assert!(t(System::InsiderNoReduction) <= cfg.pcie_mb_s() * 1.001);
    // Without reduction the output is the input: the link, not the 16 GB/s storage, limits it,
    // and it streams at nearly the link's payload rate (TLP headers already taken off).
    assert!(
        t(System::InsiderNoReduction) > 0.9 * cfg.pcie_mb_s(),
        "{} MB/s on a {} MB/s link",
        t(System::InsiderNoReduction),
        cfg.pcie_mb_s()
    );
}

#[test]
fn paper_size_run_is_fast() {
    let cfg = InsiderConfig::default();
    let host = nearflash_insider::config::insider_host();
    let t0 = std::time::Instant::now();
    let r = run_app(System::Insider, &filter(60, 0.01, 8.0), &cfg, &host, 1).unwrap();
    let h = run_app(System::HostOnly, &filter(60, 0.01, 8.0), &cfg, &host, 1).unwrap();
    eprintln!(
        "60 GiB: insider {:.0} MB/s ({} events), host-only {:.0} MB/s ({} events), {:?}",
        r.throughput_mb_s,
        r.events,
        h.throughput_mb_s,
        h.events,
        t0.elapsed()
    );
}

/// Wall time of every paper-size run (`cargo test --release -p nearflash-insider --test timing
/// -- --ignored --nocapture`).
#[test]
#[ignore]
fn paper_size_runs_of_every_app() {
    use nearflash_insider::app::AppProfile;
    let cfg = InsiderConfig::default();
    let host = nearflash_insider::config::insider_host();
    for name in std::env::var("APPS")
        .unwrap_or("grep,knn,statistics,sql,integration,relief,rle".into())
        .split(",")
    {
        let app = nearflash_iscapps::app(name).unwrap();
        let p = AppProfile::from_app(app.as_ref()).unwrap();
        for s in System::ALL {
            let t0 = std::time::Instant::now();
            let r = run_app(s, &p, &cfg, &host, 1).unwrap();
            eprintln!(
                "{name:>12} {:>22} {:>8.0} MB/s {:>9} events {:?}",
                s.name(),
                r.throughput_mb_s,
                r.events,
                t0.elapsed()
            );
        }
    }
}

/// The `insider` preset's flash device (`configs/insider.toml`).
fn insider_flash() -> (nearflash_flash::FlashConfig, nearflash_ftl::FtlConfig) {
    let t: toml::Table = include_str!("../../../configs/insider.toml")
        .parse()
        .unwrap();
    (
        t["flash"].clone().try_into().unwrap(),
        t["ftl"].clone().try_into().unwrap(),
    )
}

#[test]
fn on_the_flash_drive_offload_approaches_and_never_exceeds_the_channel_limit() {
    use nearflash_insider::experiment::run_app_on;
    let (flash, ftl) = insider_flash();
    let cfg = InsiderConfig {
        backing: nearflash_insider::BackingKind::Flash,
        ..InsiderConfig::default()
    };
    let host = nearflash_insider::config::insider_host();
    let mut app = filter(1, 0.01, 8.0);
    app.passes[0].input_bytes = 512 << 20;
    let r = run_app_on(System::Insider, &app, &cfg, &host, Some((&flash, &ftl)), 1).unwrap();
    // Page data per channel: 1200 MB/s × 16384 / (16384 + 2048).
    let limit = f64::from(flash.channels) * flash.channel_rate_mb_s * 16384.0 / 18432.0;
    eprintln!("flash: {:.0} MB/s of {limit:.0}", r.throughput_mb_s);
    assert!(r.throughput_mb_s <= limit);
    assert!(
        r.throughput_mb_s > 0.7 * limit,
        "{} of {limit}",
        r.throughput_mb_s
    );
    assert_eq!(r.storage_read_bytes, 512 << 20);
}
