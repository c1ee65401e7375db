//! nearflash-live: live mode — a simulated device image served through FUSE, so unmodified
//! programs run on it (`nearflash serve`). Every file operation goes through the device's
//! file system, its FTL and its flash in functional fidelity (the same sans-IO components the
//! simulation drives), so the data lives on the simulated flash — the image file — and
//! survives restarts; what the device saw is readable at `MOUNT/.nearflash/stats.json`.
//! INSIDER's virtual files (`vfile`, `device::vfiles`) are registered through
//! `MOUNT/.nearflash/control` and read at `MOUNT/.nearflash/vfiles/NAME`: opening one runs its
//! drive program (a built-in INSIDER program or a user's WebAssembly module) over the real
//! file's bytes, read through the file system, on INSIDER's own ISC unit
//! (`nearflash_insider::isc::Unit`: its credits, its slots or cores; `device::vrun`).
//!
//! Threads: the FUSE thread (`adapter`) turns each kernel request into a `LiveOp` and sends
//! it, with its reply object, over a bounded channel; one device thread (`driver`) owns the
//! model, serves requests in arrival order on the device's simulated clock and answers
//! (at the simulated completion time under `--pace wall`: `pace`). The main thread waits for
//! SIGINT/SIGTERM or the end of the mount, then unmounts; the device thread then commits
//! everything (a `sync`) and hands back the final statistics.
//!
//! Tolerates: a missing or busy mount point, FUSE unavailable, a foreign or truncated image
//! (named errors before anything is mounted); `kill -9` of the server (the image is as a power
//! cut leaves it: opening it again runs recovery; the dead mount stays until
//! `fusermount3 -u DIR`, and `serve` says so).

pub mod adapter;
pub mod device;
pub mod driver;
pub mod errno;
pub mod error;
pub mod mountpoint;
pub mod names;
pub mod op;
pub mod pace;
pub mod raw;
pub mod stats;
pub mod vfile;

pub use error::LiveError;
pub use pace::Pace;
pub use stats::LiveStats;

use adapter::{Adapter, Envelope};
use device::FsDevice;
use nearflash_image::Image;
use nearflash_preset::Preset;
use pace::Clock;
use raw::RawDevice;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// Requests waiting for the device thread; a FUSE thread blocks beyond it.
pub const CHANNEL_DEPTH: usize = 64;

/// What `serve` serves and how.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub image: PathBuf,
    pub mount: PathBuf,
    /// Create (overwrite) the image with this preset and format its file system first.
    pub format: Option<Preset>,
    pub pace: Pace,
    pub expose: Expose,
}

/// What the mount shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expose {
    /// The device's file system.
    Fs,
    /// The device's logical space as one file, `MOUNT/device` (`raw`).
    Raw,
}

impl std::str::FromStr for Expose {
    type Err = String;
    fn from_str(s: &str) -> Result<Expose, String> {
        match s {
            "fs" => Ok(Expose::Fs),
            "raw" => Ok(Expose::Raw),
            _ => Err(format!("unknown exposure {s:?} (fs or raw)")),
        }
    }
}

/// Serves `cfg.image` at `cfg.mount` until SIGINT/SIGTERM or until the mount is removed
/// (`fusermount3 -u`); `ready` is called once the mount is up. Returns the final statistics
/// after unmounting and committing.
pub fn serve(cfg: &ServeConfig, ready: impl FnOnce()) -> Result<LiveStats, LiveError> {
    mountpoint::check_mount_point(&cfg.mount)?;
    mountpoint::check_fuse()?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(LiveError::Signal)?;
    }

    // The model is built on the device thread (it is not `Send`); startup errors come back
    // before anything is mounted.
    let (tx, rx) = mpsc::sync_channel::<Envelope>(CHANNEL_DEPTH);
    let (started_tx, started_rx) = mpsc::channel::<Result<(), LiveError>>();
    let dev_cfg = cfg.clone();
    let device = std::thread::Builder::new()
        .name("nearflash-device".into())
        .spawn(move || -> Result<LiveStats, LiveError> {
            if dev_cfg.expose == Expose::Raw {
                let mut dev =
                    match RawDevice::open(&dev_cfg.image, dev_cfg.format.as_ref(), dev_cfg.pace) {
                        Ok(d) => d,
                        Err(e) => {
                            let _ = started_tx.send(Err(e.into()));
                            return Err(LiveError::Thread("did not start".into()));
                        }
                    };
                let _ = started_tx.send(Ok(()));
                let clock = dev.clock();
                driver::run(&rx, &mut dev, &clock);
                return Ok(dev.close()?);
            }
            let opened = match &dev_cfg.format {
                Some(preset) => Image::create(preset, &dev_cfg.image),
                None => Image::open(&dev_cfg.image),
            };
            let image = match opened {
                Ok(i) => i,
                Err(e) => {
                    let _ = started_tx.send(Err(e.into()));
                    return Err(LiveError::Thread("did not start".into()));
                }
            };
            let preset = image.preset();
            let host = preset.host.clone().unwrap_or_default();
            let power_w = (host.ssd_active_power_w, host.ssd_idle_power_w);
            let name = preset.name.clone();
            let mut image = image;
            let clock = Clock::new(dev_cfg.pace, image.host_mut().now());
            let mut dev = match FsDevice::new(image, name, power_w, clock) {
                Ok(d) => d,
                Err(e) => {
                    let _ = started_tx.send(Err(e.into()));
                    return Err(LiveError::Thread("did not start".into()));
                }
            };
            let _ = started_tx.send(Ok(()));
            driver::run(&rx, &mut dev, &clock);
            Ok(dev.close()?)
        })
        .map_err(|e| LiveError::Thread(e.to_string()))?;
    if let Ok(Err(e)) | Err(e) = started_rx
        .recv()
        .map_err(|_| LiveError::Thread("the device thread ended at start".into()))
    {
        let _ = device.join();
        return Err(e);
    }

    let session = match mount(cfg, tx) {
        Ok(s) => s,
        Err(e) => {
            let _ = device.join();
            return Err(e);
        }
    };
    ready();
    while !stop.load(Ordering::Relaxed) && !session.guard.is_finished() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let unmounted = if session.guard.is_finished() {
        // Unmounted from outside (fusermount3 -u): nothing left to unmount.
        session.join().map_err(|source| LiveError::Unmount {
            path: cfg.mount.display().to_string(),
            source,
        })
    } else {
        session
            .umount_and_join()
            .map_err(|source| LiveError::Unmount {
                path: cfg.mount.display().to_string(),
                source,
            })
    };
    // The adapter (the last sender) is gone with the session: the device thread commits.
    let stats = device
        .join()
        .map_err(|_| LiveError::Thread("the device thread panicked".into()))??;
    unmounted?;
    Ok(stats)
}

fn mount(
    cfg: &ServeConfig,
    tx: mpsc::SyncSender<Envelope>,
) -> Result<fuser::BackgroundSession, LiveError> {
    use fuser::MountOption;
    let mut options = fuser::Config::default();
    options.mount_options = vec![
        MountOption::FSName(format!("nearflash:{}", cfg.image.display())),
        MountOption::Subtype("nearflash".into()),
        // The kernel checks owner and mode from the attributes we answer (for names it has
        // cached); the file system checks them again for every operation.
        MountOption::DefaultPermissions,
        MountOption::NoAtime,
    ];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Other users may use the mount (the file system enforces owner and mode). (Not
        // `auto_unmount`: fuser 0.18 leaves its fusermount3 watcher a zombie, and the mount
        // then outlives a clean stop.)
        options.acl = fuser::SessionACL::All;
    }
    fuser::spawn_mount(Adapter::new(tx), &cfg.mount, &options).map_err(|source| LiveError::Mount {
        path: cfg.mount.display().to_string(),
        source,
    })
}
