//! `--expose raw` without a mount: block requests on the device file, each run to completion
//! on the device's simulation loop (a `sim::Driver` the raw front end holds).

use nearflash_fs::Caller;
use nearflash_live::driver::LiveDevice;
use nearflash_live::op::{Answer, Call, Errno, LiveOp};
use nearflash_live::raw::{RawDevice, DEVICE_INO};
use nearflash_live::Pace;
use nearflash_preset::Preset;

fn call(dev: &mut RawDevice, op: LiveOp) -> Result<Answer, Errno> {
    dev.execute(Call {
        caller: Caller::ROOT,
        op,
    })
}

/// A sector-aligned write reaches the FTL device and reads back after a flush and a reopen
/// (the image recovered); the simulated clock moved while the device served it; a misaligned
/// request is `EINVAL` and issues nothing.
#[test]
fn a_written_block_reads_back_after_a_flush_and_a_reopen_and_a_misaligned_one_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("raw.img");
    let preset = Preset::load("test-min", &[]).unwrap();
    let data: Vec<u8> = (0..8192u32).map(|i| (i % 253) as u8).collect();
    {
        let mut dev = RawDevice::open(&path, Some(&preset), Pace::None).unwrap();
        let t0 = dev.now();
        let Answer::Written(n) = call(
            &mut dev,
            LiveOp::Write {
                ino: DEVICE_INO,
                fh: 1,
                offset_bytes: 4096,
                data: data.clone(),
            },
        )
        .unwrap() else {
            panic!("a write answers the bytes written")
        };
        assert_eq!(n as usize, data.len());
        assert!(dev.now() > t0, "the write took simulated time");
        let misaligned = call(
            &mut dev,
            LiveOp::Write {
                ino: DEVICE_INO,
                fh: 1,
                offset_bytes: 100,
                data: vec![1; 512],
            },
        );
        assert_eq!(misaligned.unwrap_err(), Errno(libc::EINVAL));
        call(&mut dev, LiveOp::Fsync { fh: 1 }).unwrap();
        let stats = dev.close().unwrap();
        assert_eq!(stats.device_error, None);
    }
    let mut dev = RawDevice::open(&path, None, Pace::None).unwrap();
    let Answer::Data(got) = call(
        &mut dev,
        LiveOp::Read {
            ino: DEVICE_INO,
            fh: 1,
            offset_bytes: 4096,
            len_bytes: data.len() as u32,
        },
    )
    .unwrap() else {
        panic!("a read answers data")
    };
    assert_eq!(got, data);
}
