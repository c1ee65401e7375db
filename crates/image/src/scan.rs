//! `fs fsck --data`: reads every block of every file through the file system, as `export`
//! does, and names each range of a file that does not read back. Every page the device reads
//! from an image is checked against the CRC in its spare area (recovery's frontier rule keeps
//! a damaged page's version, so it is an integrity error, never zeros), so a flipped bit in a
//! file's data, which metadata-only fsck never reads, shows up here. The scan goes on past a
//! damaged block (a failed read does not stop the file system), so one report names every
//! damaged range of every file.
//!
//! Tolerates damage anywhere in file data or in what leads to it (an inode or extent block
//! that fails its checksum makes the file a problem, not the scan's end); a failing image
//! file (the host's I/O) ends the scan with that error. Memory: one chunk of `CHUNK_BYTES`
//! and the directory stack.

use crate::{join, Image, ImageError, CHUNK_BYTES};
use nearflash_fs::{
    Caller, Fh, FileKind, FsError, FsOp, FsReply, FsckProblem, HostError, OpenFlags, BLOCK_BYTES,
};
use std::collections::BTreeSet;

/// The problem code of a file range that does not read back.
pub const DATA_UNREADABLE: &str = "data-unreadable";

/// What the data scan read, and every range that did not read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataScan {
    /// Regular files read (a file with several names once).
    pub files: u64,
    /// Bytes read back intact.
    pub bytes_read: u64,
    /// One `data-unreadable` problem per damaged range of a file (or per file that could not
    /// be opened).
    pub problems: Vec<FsckProblem>,
}

/// Whether a file-system error is damage of what is being read (an integrity error, an
/// uncorrectable page, a structure failing its checks) rather than a failure of the scan.
fn is_damage(e: &HostError) -> bool {
    matches!(e, HostError::Fs(FsError::Io(_) | FsError::Corrupt(_)))
}

impl Image {
    /// Reads every file of the image through the file system (as root), block by block where
    /// a chunk fails, and names each range that does not read back.
    pub fn scan_data(&mut self) -> Result<DataScan, ImageError> {
        let mut scan = DataScan::default();
        let mut seen = BTreeSet::new();
        let mut dirs = vec!["/".to_string()];
        while let Some(dir) = dirs.pop() {
            let FsReply::Entries(list) = self.root(FsOp::Readdir(dir.clone()))? else {
                return Err(ImageError::UnexpectedReply("readdir did not answer"));
            };
            for e in list.into_iter().skip(2) {
                let path = join(&dir, &e.name);
                let FsReply::Stat(st) = self.root(FsOp::Stat(path.clone()))? else {
                    return Err(ImageError::UnexpectedReply("stat did not answer"));
                };
                match st.kind {
                    FileKind::Dir => dirs.push(path),
                    FileKind::File if seen.insert(st.ino) => {
                        self.scan_file(&path, st.size_bytes, &mut scan)?;
                        scan.files += 1;
                    }
                    FileKind::File => {}
                }
            }
        }
        Ok(scan)
    }

    fn scan_file(
        &mut self,
        path: &str,
        size_bytes: u64,
        scan: &mut DataScan,
    ) -> Result<(), ImageError> {
        let open = FsOp::Open {
            path: path.to_string(),
            flags: OpenFlags::READ,
            perm: 0,
        };
        let fh = match self.host.run(Caller::ROOT, open) {
            Ok(FsReply::Opened(fh)) => fh,
            Ok(_) => return Err(ImageError::UnexpectedReply("open did not answer a handle")),
            Err(e) if is_damage(&e) => {
                scan.problems.push(FsckProblem {
                    code: DATA_UNREADABLE,
                    detail: format!("{path}: cannot be opened: {e}"),
                });
                return Ok(());
            }
            Err(source) => return Err(self.op_error(source)),
        };
        self.check_store()?;
        let mut damaged: Option<(u64, u64, HostError)> = None;
        let mut at = 0u64;
        while at < size_bytes {
            let len = (CHUNK_BYTES as u64).min(size_bytes - at);
            match self.read_at(fh, at, len)? {
                Ok(n) => {
                    assert_eq!(n, len, "a read inside the file answers its length");
                    scan.bytes_read += n;
                }
                // Again block by block, to name the damaged blocks and read the rest.
                Err(_) => {
                    let block = BLOCK_BYTES as u64;
                    for off in (at..at + len).step_by(BLOCK_BYTES) {
                        let want = block.min(at + len - off);
                        match self.read_at(fh, off, want)? {
                            Ok(n) => scan.bytes_read += n,
                            Err(e) => match &mut damaged {
                                Some((_, end, _)) if *end == off => *end = off + want,
                                _ => {
                                    flush(path, damaged.take(), scan);
                                    damaged = Some((off, off + want, e));
                                }
                            },
                        }
                    }
                }
            }
            at += len;
        }
        flush(path, damaged, scan);
        assert!(at >= size_bytes, "the whole file was read");
        self.root(FsOp::Close(fh))?;
        Ok(())
    }

    /// Reads `len` bytes of open file `fh` at `at`: the bytes read, or the damage that stopped
    /// the read; any other failure is the scan's error.
    fn read_at(&mut self, fh: Fh, at: u64, len: u64) -> Result<Result<u64, HostError>, ImageError> {
        let op = FsOp::Read {
            fh,
            offset_bytes: at,
            len_bytes: len,
        };
        let reply = self.host.run(Caller::ROOT, op);
        self.check_store()?;
        match reply {
            Ok(FsReply::Data(d)) => Ok(Ok(d.len() as u64)),
            Ok(_) => Err(ImageError::UnexpectedReply("read did not answer data")),
            Err(e) if is_damage(&e) => Ok(Err(e)),
            Err(source) => Err(self.op_error(source)),
        }
    }

    fn op_error(&self, source: HostError) -> ImageError {
        ImageError::Op {
            image: self.name.clone(),
            source,
        }
    }
}

/// Records a damaged range `[start, end)` of `path`, if any.
fn flush(path: &str, range: Option<(u64, u64, HostError)>, scan: &mut DataScan) {
    if let Some((start, end, e)) = range {
        assert!(start < end, "a damaged range holds a block");
        scan.problems.push(FsckProblem {
            code: DATA_UNREADABLE,
            detail: format!("{path}: bytes {start}..{end} do not read back: {e}"),
        });
    }
}
