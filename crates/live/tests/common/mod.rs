//! Helpers shared by the in-process tests: a formatted `test-min` image served by an
//! `FsDevice` without a mount, and requests sent to it as the kernel would send them.

#![allow(dead_code)] // each test file uses its own subset

use nearflash_fs::Caller;
use nearflash_image::Image;
use nearflash_live::device::FsDevice;
use nearflash_live::driver::LiveDevice;
use nearflash_live::op::{Answer, Call, Errno, LiveOp};
use nearflash_live::pace::{Clock, Pace};
use nearflash_preset::Preset;
use std::path::Path;

pub const ALICE: Caller = Caller {
    uid: 1000,
    gid: 1000,
};
pub const BOB: Caller = Caller {
    uid: 1001,
    gid: 1001,
};

pub fn call(dev: &mut FsDevice, caller: Caller, op: LiveOp) -> Result<Answer, Errno> {
    dev.execute(Call { caller, op })
}

/// A fresh `test-min` image at `dir/dev.img`, served.
pub fn device(dir: &Path) -> FsDevice {
    let preset = Preset::load("test-min", &[]).unwrap();
    let image = Image::create(&preset, &dir.join("dev.img")).unwrap();
    serve(image)
}

/// The image at `dir/dev.img` served again (as after a restart).
pub fn reopen(dir: &Path) -> FsDevice {
    serve(Image::open(&dir.join("dev.img")).unwrap())
}

fn serve(mut image: Image) -> FsDevice {
    let clock = Clock::new(Pace::None, image.host_mut().now());
    FsDevice::new(image, "test-min".into(), (22.0, 4.0), clock).unwrap()
}
