//! After a power cut: the drive recovered and the file system remounted, then the tree it
//! holds read whole and checked against the reference model.

use super::reference::{FileState, Tree};
use super::{drive_event, CrashError, CrashOutcome, Driver, Holdup, FSCK_PROBLEMS_SHOWN};
use crate::fsck::FsckReport;
use crate::host::{FsHost, HostEvent};
use crate::ops::{FsOp, FsReply};
use crate::types::{Caller, FileKind, OpenFlags};
use nearflash_ftl::recovery::recover;
use nearflash_ftl::FtlConfig;
use nearflash_sim::{Schedule, Sim};
use nearflash_wcache::WriteCache;

impl Driver<'_> {
    /// Power is cut now: the FS's memory is dropped; the write buffer's contents are lost
    /// (with power-loss protection it first destages for at most its hold-up); every pending
    /// event is dropped, the flash tears what it was doing, the FTL recovers from the flash
    /// behind a fresh, empty buffer, and the FS is mounted.
    pub(super) fn crash(self, ftl: &FtlConfig, out: &mut CrashOutcome) -> Result<Self, CrashError> {
        let Driver {
            cfg,
            host,
            mut rng,
            r,
            names,
            ..
        } = self;
        let stats = host.fs().stats();
        out.fs_flushes += stats.block_flushes;
        out.fs_fua_writes += stats.block_fua_writes;
        let (mut sim, mut drive) = host.into_parts();
        let buffered = drive.occupied_units();
        out.cuts_with_buffered_data += u64::from(buffered > 0);
        out.buffered_units_at_cuts += buffered;
        if let Some(deadline) = drive.power_loss(&mut sim.queue().map(HostEvent::Dev)) {
            let mut holdup = Holdup(&mut drive);
            sim.run_until_by(deadline, &mut holdup, |h| h.0.holdup_done());
        }
        let mut bb = drive.into_device().into_backbone();
        bb.power_cut(&mut rng);
        let mut sim = Sim::new(rng.next_u64());
        let (dev, _) = recover(bb, ftl, &mut sim.queue().map(drive_event))?;
        let drive = WriteCache::new(cfg.write_cache.clone(), dev)?;
        let mut host = FsHost::new(sim, drive, cfg.fs.clone())?;
        host.run(Caller::ROOT, FsOp::Mount)?;
        match host.run(Caller::ROOT, FsOp::Fsck)? {
            FsReply::Fsck(FsckReport { problems, .. }) if !problems.is_empty() => {
                out.fsck_problems += problems.len() as u64;
                out.note(|| {
                    let shown: Vec<String> = problems
                        .iter()
                        .take(FSCK_PROBLEMS_SHOWN)
                        .map(|p| format!("{}: {}", p.code, p.detail))
                        .collect();
                    let more = problems.len().saturating_sub(FSCK_PROBLEMS_SHOWN);
                    let tail = if more > 0 {
                        format!("; and {more} more")
                    } else {
                        String::new()
                    };
                    format!(
                        "fsck after a cut: {} problem(s): {}{tail}",
                        problems.len(),
                        shown.join("; ")
                    )
                });
            }
            _ => {}
        }
        Ok(Driver {
            cfg,
            host,
            rng,
            r,
            names,
            cut_skip: 0,
        })
    }

    /// Reads the whole tree back and checks it; false if the seed failed.
    pub(super) fn verify(
        &mut self,
        out: &mut CrashOutcome,
        after: Option<Tree>,
    ) -> Result<bool, CrashError> {
        let got = self.read_tree()?;
        let committed = self.r.committed.clone();
        let v = self.r.check(&committed, &got);
        if v.ok() {
            out.durable_files_checked += v.durable_files_checked;
            self.r.settle(&committed, &got);
            return Ok(true);
        }
        if let Some(after) = &after {
            let v2 = self.r.check(after, &got);
            if v2.ok() {
                out.durable_files_checked += v2.durable_files_checked;
                self.r.settle(after, &got);
                return Ok(true);
            }
        }
        out.lost += v.lost;
        out.wrong += v.wrong;
        out.note(|| v.first.clone().unwrap_or_default());
        Ok(false)
    }

    /// The whole tree the file system holds: every directory and every file's bytes.
    fn read_tree(&mut self) -> Result<Tree, CrashError> {
        let mut t = Tree::default();
        let mut queue = vec![String::new()];
        while let Some(dir) = queue.pop() {
            let listing = if dir.is_empty() {
                "/".to_string()
            } else {
                dir.clone()
            };
            let FsReply::Entries(entries) = self.host.run(Caller::ROOT, FsOp::Readdir(listing))?
            else {
                unreachable!("readdir answers Entries")
            };
            for e in entries.into_iter().skip(2) {
                let path = format!("{dir}/{}", e.name);
                match e.kind {
                    FileKind::Dir => {
                        t.dirs.insert(path.clone());
                        queue.push(path);
                    }
                    FileKind::File => {
                        let data = self.read_file(&path)?;
                        t.files.insert(path, FileState { id: 0, data });
                    }
                }
            }
        }
        Ok(t)
    }

    /// The bytes of file `path`.
    fn read_file(&mut self, path: &str) -> Result<Vec<u8>, CrashError> {
        let FsReply::Opened(fh) = self.host.run(
            Caller::ROOT,
            FsOp::Open {
                path: path.to_string(),
                flags: OpenFlags::READ,
                perm: 0,
            },
        )?
        else {
            unreachable!("open answers Opened")
        };
        let mut data = Vec::new();
        loop {
            let FsReply::Data(d) = self.host.run(
                Caller::ROOT,
                FsOp::Read {
                    fh,
                    offset_bytes: data.len() as u64,
                    len_bytes: u64::MAX,
                },
            )?
            else {
                unreachable!("read answers Data")
            };
            if d.is_empty() {
                break;
            }
            data.extend_from_slice(&d);
        }
        self.host.run(Caller::ROOT, FsOp::Close(fh))?;
        Ok(data)
    }
}
