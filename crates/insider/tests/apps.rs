//! Every application of `nearflash-iscapps` runs functionally through the runtime — its file
//! on the drive, its program in a slot, its output through vread (RLE: through the virtual
//! write path into a real file) — and its result matches the independent reference.

mod common;
use common::*;
use nearflash_insider::functional::run_verified;
use nearflash_insider::BackingKind;

#[test]
fn every_app_verifies_through_the_runtime_on_emulated_storage() {
    for &name in nearflash_iscapps::APPS {
        let mut rt = small(BackingKind::DramEmulated, true, 1);
        let r = run_verified(&mut rt, name, 3 << 20, 42).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.input_bytes > 0 && r.sim_ns > 0, "{name}: {r:?}");
    }
}

#[test]
fn every_app_verifies_on_the_flash_device() {
    for &name in nearflash_iscapps::APPS {
        let mut rt = small(BackingKind::Flash, true, 2);
        let t = std::time::Instant::now();
        run_verified(&mut rt, name, 1 << 20, 7).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {:?}", t.elapsed());
    }
}
