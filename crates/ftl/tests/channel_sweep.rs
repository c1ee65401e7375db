//! Every channel count validation accepts must work. Story: `nearflash io --preset
//! flashabacus --set flash.channels=64` deadlocked — a group of 64 channels × 2 planes has
//! 128 pages, the page masks were one `u64`, a whole-group mask came out empty and a write
//! waited forever for flash operations it never submitted (32 channels overflowed the GC's
//! mask the same way). Each channel count here formats the preset's device with that many
//! channels, writes, overwrites and reads back a span functionally, and checks every read.

use nearflash_flash::FlashConfig;
use nearflash_ftl::testing::{run_checked_io, CheckedIo};
use nearflash_ftl::FtlConfig;

fn preset(name: &str) -> (FlashConfig, FtlConfig) {
    let text = match name {
        "test-min" => include_str!("../../../configs/test-min.toml"),
        "flashabacus" => include_str!("../../../configs/flashabacus.toml"),
        _ => unreachable!(),
    };
    let v: toml::Value = toml::from_str(text).expect("preset parses");
    let flash = v["flash"].clone().try_into().expect("flash table");
    let ftl = v["ftl"].clone().try_into().expect("ftl table");
    (flash, ftl)
}

fn sweep(name: &str, channels: impl Iterator<Item = u32>) {
    let (base, ftl) = preset(name);
    let mut failures = Vec::new();
    for ch in channels {
        let flash = FlashConfig {
            channels: ch,
            ..base.clone()
        };
        let io = CheckedIo {
            requests: 40,
            queue_depth: 16,
            max_request_sectors: 128,
            // Two groups' worth: partial and whole-group writes, read-modify-writes.
            span_sectors: 2 * u64::from(ch) * u64::from(base.planes_per_die) * 16,
            write_percent: 60,
            check_every_event: false,
        };
        match run_checked_io(&flash, &ftl, &io, u64::from(ch)) {
            Ok(o) if o.wrong_reads == 0 && o.failed.is_empty() && o.completed > 0 => {}
            other => failures.push(format!("{name} channels={ch}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Around every word boundary of a page set, and the counts the issue named.
const FAST: [u32; 14] = [1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129];

#[test]
fn channel_counts_around_every_page_set_boundary_work_on_test_min() {
    sweep("test-min", FAST.into_iter().chain([200]));
}

#[test]
fn channel_counts_around_every_page_set_boundary_work_on_flashabacus() {
    sweep("flashabacus", FAST.into_iter().chain([130]));
}

#[test]
#[ignore = "long: every channel count (cargo test -p nearflash-ftl --test channel_sweep -- --ignored)"]
fn every_channel_count_from_1_to_200_works_on_test_min() {
    sweep("test-min", 1..=200);
}

#[test]
#[ignore = "long: every channel count (cargo test -p nearflash-ftl --test channel_sweep -- --ignored)"]
fn every_channel_count_from_1_to_130_works_on_flashabacus() {
    sweep("flashabacus", 1..=130);
}
