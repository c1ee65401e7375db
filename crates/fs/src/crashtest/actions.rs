//! The crash test's random actions: each picks a file system operation (create, write,
//! truncate, rename, mkdir, rmdir, unlink, fsync, sync), issues it with a power cut armed,
//! and advances the reference model by what its success would leave.

use super::reference::{FileState, Tree};
use super::{CrashError, CrashOutcome, CutPhase, Driver, Flow};
use crate::error::FsError;
use crate::ops::{FsOp, FsReply};
use crate::types::OpenFlags;

impl Driver<'_> {
    /// A name not used before in this run: `prefix` and a counter.
    fn fresh_name(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    /// One of `items` at random; `None` when there is none.
    fn pick<'t>(&mut self, items: &'t [String]) -> Option<&'t String> {
        (!items.is_empty()).then(|| &items[self.rng.below(items.len() as u64) as usize])
    }

    /// `n` random bytes (file data is random, so a misplaced byte is caught).
    fn random_bytes(&mut self, n: u64) -> Vec<u8> {
        let mut v = vec![0u8; n as usize];
        self.rng.fill_bytes(&mut v);
        v
    }

    /// Counts an operation's result; true if it succeeded.
    fn settle_result(
        &mut self,
        out: &mut CrashOutcome,
        what: &str,
        r: &Result<FsReply, FsError>,
    ) -> bool {
        match r {
            Ok(_) => {
                out.ops_completed += 1;
                true
            }
            Err(FsError::NoSpace(_)) => {
                out.no_space_errors += 1;
                false
            }
            Err(e) => {
                out.unexpected_errors += 1;
                out.note(|| format!("{what}: {e}"));
                false
            }
        }
    }

    /// One random action. Returns `Some(state after the operation in flight)` if power was
    /// cut during it.
    pub(super) fn action(
        &mut self,
        out: &mut CrashOutcome,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let files: Vec<String> = self.r.current.files.keys().cloned().collect();
        let mut dirs: Vec<String> = self.r.current.dirs.iter().cloned().collect();
        dirs.push(String::new());
        let free = self.host.fs().free_counts().map_or(0, |(b, _)| b);
        let crowded = free < 700;
        let roll = self.rng.below(100);
        let dir = self.pick(&dirs).cloned().unwrap_or_default();
        match roll {
            _ if crowded && roll < 40 && !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.unlink(out, &f, armed)
            }
            0..=19 => {
                let path = format!("{dir}/{}", self.fresh_name("f"));
                self.create(out, &path, armed)
            }
            20..=49 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                let append = roll >= 42;
                self.write(out, &f, append, armed)
            }
            50..=57 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.truncate(out, f, armed)
            }
            58..=65 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.rename_file(out, f, &files, &dir, armed)
            }
            66..=69 if dirs.len() > 1 => self.rename_dir(out, &dirs, armed),
            70..=75 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.unlink(out, &f, armed)
            }
            76..=80 if dirs.len() < 12 => {
                let path = format!("{dir}/{}", self.fresh_name("d"));
                let mut after = self.r.current.clone();
                after.dirs.insert(path.clone());
                self.simple(out, FsOp::Mkdir { path, perm: 0o755 }, after, armed)
            }
            81..=83 if dirs.len() > 1 => self.rmdir(out, &dirs, armed),
            84..=95 if !files.is_empty() => {
                let f = self.pick(&files).cloned().expect("files");
                self.fsync(out, &f, armed)
            }
            _ => {
                let after = self.r.current.clone();
                self.simple(out, FsOp::Sync, after, armed)
            }
        }
    }

    /// Truncates (or extends) file `f` to a random size up to 8 KiB past its end.
    fn truncate(
        &mut self,
        out: &mut CrashOutcome,
        f: String,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let size = self.r.current.files[&f].data.len() as u64;
        let to = self.rng.below(size + 8192);
        let after = {
            let mut t = self.r.current.clone();
            t.files
                .get_mut(&f)
                .expect("file")
                .data
                .resize(to as usize, 0);
            t
        };
        self.simple(
            out,
            FsOp::Truncate {
                path: f,
                size_bytes: to,
            },
            after,
            armed,
        )
    }

    /// Renames file `f` over another of `files` (40% of the time) or to a fresh name in
    /// `dir`.
    fn rename_file(
        &mut self,
        out: &mut CrashOutcome,
        f: String,
        files: &[String],
        dir: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let to = if self.rng.chance(0.4) {
            self.pick(files).cloned().expect("files")
        } else {
            format!("{dir}/{}", self.fresh_name("r"))
        };
        let mut after = self.r.current.clone();
        after.rename(&f, &to);
        self.simple(out, FsOp::Rename { from: f, to }, after, armed)
    }

    /// Renames a random directory of `dirs` (the last is the root) under one that is not
    /// below itself.
    fn rename_dir(
        &mut self,
        out: &mut CrashOutcome,
        dirs: &[String],
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let from = self.pick(&dirs[..dirs.len() - 1]).cloned().expect("dirs");
        let parent = dirs
            .iter()
            .filter(|d| **d != from && !d.starts_with(&format!("{from}/")))
            .cloned()
            .collect::<Vec<_>>();
        let parent = self.pick(&parent).cloned().unwrap_or_default();
        let to = format!("{parent}/{}", self.fresh_name("m"));
        let mut after = self.r.current.clone();
        after.rename(&from, &to);
        self.simple(out, FsOp::Rename { from, to }, after, armed)
    }

    /// Removes a random directory of `dirs` (the last is the root), if it is empty.
    fn rmdir(
        &mut self,
        out: &mut CrashOutcome,
        dirs: &[String],
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let d = self.pick(&dirs[..dirs.len() - 1]).cloned().expect("dirs");
        if self.r.current.children(&d) > 0 {
            return Ok(None);
        }
        let mut after = self.r.current.clone();
        after.dirs.remove(&d);
        self.simple(out, FsOp::Rmdir(d), after, armed)
    }

    /// A single operation whose success turns the current state into `after`.
    fn simple(
        &mut self,
        out: &mut CrashOutcome,
        op: FsOp,
        after: Tree,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let what = format!("{op:?}");
        match self.op(op, armed)? {
            Flow::Cut => Ok(Some(after)),
            Flow::Done(r) => {
                if self.settle_result(out, &what, &r) {
                    self.r.current = after;
                }
                self.r.settle_commit();
                Ok(None)
            }
        }
    }

    /// Opens `path` with `flags`; `Err(after)` when power was cut during the open.
    fn open(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        flags: OpenFlags,
        armed: Option<CutPhase>,
        after: Tree,
    ) -> Result<Result<Option<crate::Fh>, Tree>, CrashError> {
        let op = FsOp::Open {
            path: path.to_string(),
            flags,
            perm: 0o644,
        };
        match self.op(op, armed)? {
            Flow::Cut => Ok(Err(after)),
            Flow::Done(r) => {
                let ok = self.settle_result(out, &format!("open {path}"), &r);
                if ok {
                    self.r.current = after;
                }
                self.r.settle_commit();
                Ok(Ok(match r {
                    Ok(FsReply::Opened(fh)) => Some(fh),
                    _ => None,
                }))
            }
        }
    }

    /// Closes `fh`.
    fn close(
        &mut self,
        out: &mut CrashOutcome,
        fh: crate::Fh,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let after = self.r.current.clone();
        self.simple(out, FsOp::Close(fh), after, armed)
    }

    /// Creates the empty file `path`.
    fn create(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let id = self.r.new_id();
        let mut after = self.r.current.clone();
        after.files.insert(
            path.to_string(),
            FileState {
                id,
                data: Vec::new(),
            },
        );
        let flags = OpenFlags {
            write: true,
            create: true,
            excl: true,
            ..OpenFlags::default()
        };
        let fh = match self.open(out, path, flags, armed, after)? {
            Err(after) => return Ok(Some(after)),
            Ok(None) => return Ok(None),
            Ok(Some(fh)) => fh,
        };
        if let Some(t) = self.write_at(out, fh, path, 0, armed)? {
            return Ok(Some(t));
        }
        self.close(out, fh, armed)
    }

    /// Opens file `path`, writes to it (at its end when `append`) and closes it.
    fn write(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        append: bool,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let flags = OpenFlags {
            write: true,
            append,
            ..OpenFlags::default()
        };
        let after = self.r.current.clone();
        let fh = match self.open(out, path, flags, armed, after)? {
            Err(after) => return Ok(Some(after)),
            Ok(None) => return Ok(None),
            Ok(Some(fh)) => fh,
        };
        let size = self.r.current.files[path].data.len() as u64;
        let at = if append {
            size
        } else {
            self.rng.below(size + 4096)
        };
        if let Some(t) = self.write_at(out, fh, path, at, armed)? {
            return Ok(Some(t));
        }
        self.close(out, fh, armed)
    }

    /// Writes random bytes at `at` of the open file `path` (`fh`): one time in ten a big
    /// write (`big_write_bytes`), else up to `write_bytes_max`.
    fn write_at(
        &mut self,
        out: &mut CrashOutcome,
        fh: crate::Fh,
        path: &str,
        at: u64,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let len = if self.rng.chance(0.1) {
            self.cfg.big_write_bytes
        } else {
            1 + self.rng.below(self.cfg.write_bytes_max)
        };
        let data = self.random_bytes(len);
        let id = self.r.current.files[path].id;
        self.r.note_write(id, at, &data);
        let mut after = self.r.current.clone();
        after.write(path, at, &data);
        let op = FsOp::Write {
            fh,
            offset_bytes: at,
            data: data.clone(),
        };
        match self.op(op, armed)? {
            Flow::Cut => Ok(Some(after)),
            Flow::Done(r) => {
                if self.settle_result(out, &format!("write {path}"), &r) {
                    let Ok(FsReply::Written(n)) = r else {
                        unreachable!("a write answers Written")
                    };
                    self.r.current.write(path, at, &data[..n as usize]);
                }
                self.r.settle_commit();
                Ok(None)
            }
        }
    }

    /// Removes file `path`.
    fn unlink(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let mut after = self.r.current.clone();
        after.files.remove(path);
        self.simple(out, FsOp::Unlink(path.to_string()), after, armed)
    }

    /// Opens file `path`, syncs it and closes it.
    fn fsync(
        &mut self,
        out: &mut CrashOutcome,
        path: &str,
        armed: Option<CutPhase>,
    ) -> Result<Option<Tree>, CrashError> {
        let after = self.r.current.clone();
        let fh = match self.open(out, path, OpenFlags::WRITE, armed, after.clone())? {
            Err(after) => return Ok(Some(after)),
            Ok(None) => return Ok(None),
            Ok(Some(fh)) => fh,
        };
        if let Some(t) = self.simple(out, FsOp::Fsync(fh), after, armed)? {
            return Ok(Some(t));
        }
        self.close(out, fh, armed)
    }
}
