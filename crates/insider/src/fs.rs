//! The device file system's metadata, kept by the host (INSIDER §3.3 mounts an ordinary file
//! system on the drive): users, directories, inodes with owner, group, mode bits, size, the
//! append-only attribute and the file's extents in the device's logical byte space (which the
//! FTL maps to flash). Pure bookkeeping: the runtime (`runtime.rs`) moves the data.
//!
//! Tolerates: bad paths, missing parents, permission failures and a full device, each as an
//! `InsiderError`. Not modelled: crash consistency of the metadata (§3.3 does not promise it
//! either), hard links, renames.

use crate::error::InsiderError;
use std::collections::BTreeMap;

/// The superuser passes every permission check.
pub const ROOT_UID: u32 = 0;

/// One row of the host's user table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
    pub login: String,
}

/// A run of the file's bytes in the device's logical space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub device_offset_bytes: u64,
    pub len_bytes: u64,
}

/// What a caller wants to do with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    fn bit(self) -> u16 {
        match self {
            Access::Read => 4,
            Access::Write => 2,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Inode {
    pub uid: u32,
    pub gid: u32,
    /// Permission bits, e.g. 0o640.
    pub mode: u16,
    pub size_bytes: u64,
    /// Blocks may not be released or replaced (truncate fails) while set (§3.3.1).
    pub append_only: bool,
    /// The file's allocated blocks in file order, covering at least `size_bytes`.
    pub extents: Vec<Extent>,
    /// `Some` for a directory.
    pub entries: Option<BTreeMap<String, u64>>,
}

impl Inode {
    pub fn allocated_bytes(&self) -> u64 {
        self.extents.iter().map(|e| e.len_bytes).sum()
    }
}

pub struct FileSystem {
    block_bytes: u64,
    inodes: BTreeMap<u64, Inode>,
    next_ino: u64,
    users: BTreeMap<u32, User>,
    /// Free block runs: first block → block count.
    free: BTreeMap<u64, u64>,
    capacity_blocks: u64,
}

/// Inode number of `/`.
pub const ROOT_INO: u64 = 1;

impl FileSystem {
    /// An empty file system (root directory `/`, mode 0755, owned by root) over
    /// `capacity_bytes` of the device's logical space.
    pub fn new(capacity_bytes: u64, block_bytes: u64) -> FileSystem {
        assert!(block_bytes.is_power_of_two() && block_bytes >= 512);
        let capacity_blocks = capacity_bytes / block_bytes;
        let mut inodes = BTreeMap::new();
        inodes.insert(
            ROOT_INO,
            Inode {
                uid: ROOT_UID,
                gid: 0,
                mode: 0o755,
                size_bytes: 0,
                append_only: false,
                extents: Vec::new(),
                entries: Some(BTreeMap::new()),
            },
        );
        let mut users = BTreeMap::new();
        users.insert(
            ROOT_UID,
            User {
                uid: ROOT_UID,
                gid: 0,
                login: "root".into(),
            },
        );
        FileSystem {
            block_bytes,
            inodes,
            next_ino: ROOT_INO + 1,
            users,
            free: BTreeMap::from([(0, capacity_blocks)]),
            capacity_blocks,
        }
    }

    pub fn block_bytes(&self) -> u64 {
        self.block_bytes
    }

    pub fn add_user(&mut self, uid: u32, gid: u32, login: &str) {
        self.users.insert(
            uid,
            User {
                uid,
                gid,
                login: login.to_string(),
            },
        );
    }

    pub fn user(&self, uid: u32) -> Result<&User, InsiderError> {
        self.users
            .get(&uid)
            .ok_or(InsiderError::UnknownUser { uid })
    }

    pub fn users(&self) -> impl Iterator<Item = &User> {
        self.users.values()
    }

    pub fn inode(&self, ino: u64) -> &Inode {
        self.inodes.get(&ino).expect("a live inode number")
    }

    pub fn inode_mut(&mut self, ino: u64) -> &mut Inode {
        self.inodes.get_mut(&ino).expect("a live inode number")
    }

    /// Free bytes left on the device.
    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum::<u64>() * self.block_bytes
    }

    fn split(path: &str) -> Result<Vec<&str>, InsiderError> {
        if !path.starts_with('/') {
            return Err(InsiderError::NotFound {
                path: path.to_string(),
            });
        }
        Ok(path.split('/').filter(|c| !c.is_empty()).collect())
    }

    /// The inode of `path`.
    pub fn lookup(&self, path: &str) -> Result<u64, InsiderError> {
        let mut ino = ROOT_INO;
        for c in Self::split(path)? {
            let entries =
                self.inode(ino)
                    .entries
                    .as_ref()
                    .ok_or_else(|| InsiderError::NotADirectory {
                        path: path.to_string(),
                    })?;
            ino = *entries.get(c).ok_or_else(|| InsiderError::NotFound {
                path: path.to_string(),
            })?;
        }
        Ok(ino)
    }

    /// May `uid` access `ino` as `access`? Classic owner / group / other bits.
    pub fn permits(&self, uid: u32, ino: u64, access: Access) -> Result<bool, InsiderError> {
        let user = self.user(uid)?;
        if uid == ROOT_UID {
            return Ok(true);
        }
        let n = self.inode(ino);
        let shift = if n.uid == uid {
            6
        } else if n.gid == user.gid {
            3
        } else {
            0
        };
        Ok((n.mode >> shift) & access.bit() != 0)
    }

    /// `permits` as an error naming the path.
    pub fn check(
        &self,
        uid: u32,
        ino: u64,
        path: &str,
        access: Access,
    ) -> Result<(), InsiderError> {
        if self.permits(uid, ino, access)? {
            return Ok(());
        }
        Err(InsiderError::PermissionDenied {
            path: path.to_string(),
            login: self.user(uid)?.login.clone(),
            needed: access.name(),
        })
    }

    /// Creates a file (or directory) at `path` owned by `uid`; the caller needs write
    /// permission on the parent directory.
    pub fn create(
        &mut self,
        uid: u32,
        path: &str,
        mode: u16,
        dir: bool,
    ) -> Result<u64, InsiderError> {
        let parts = Self::split(path)?;
        let (name, parent_parts) = parts.split_last().ok_or_else(|| InsiderError::Exists {
            path: path.to_string(),
        })?;
        let parent_path = format!("/{}", parent_parts.join("/"));
        let parent = self.lookup(&parent_path)?;
        if self.inode(parent).entries.is_none() {
            return Err(InsiderError::NotADirectory { path: parent_path });
        }
        self.check(uid, parent, &parent_path, Access::Write)?;
        if self
            .inode(parent)
            .entries
            .as_ref()
            .is_some_and(|e| e.contains_key(*name))
        {
            return Err(InsiderError::Exists {
                path: path.to_string(),
            });
        }
        let gid = self.user(uid)?.gid;
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(
            ino,
            Inode {
                uid,
                gid,
                mode: mode & 0o777,
                size_bytes: 0,
                append_only: false,
                extents: Vec::new(),
                entries: dir.then(BTreeMap::new),
            },
        );
        self.inode_mut(parent)
            .entries
            .as_mut()
            .expect("checked a directory")
            .insert((*name).to_string(), ino);
        Ok(ino)
    }

    /// Allocates blocks so that `ino` covers at least `bytes` (first fit, extents merged when
    /// contiguous). Never releases blocks.
    pub fn reserve(&mut self, ino: u64, bytes: u64) -> Result<(), InsiderError> {
        let have = self.inode(ino).allocated_bytes();
        if bytes <= have {
            return Ok(());
        }
        let mut need_blocks = (bytes - have).div_ceil(self.block_bytes);
        if need_blocks > self.free.values().sum::<u64>() {
            return Err(InsiderError::NoSpace {
                needed_bytes: bytes - have,
            });
        }
        let mut got = Vec::new();
        while need_blocks > 0 {
            let (&start, &len) = self.free.iter().next().expect("free space was counted");
            let take = len.min(need_blocks);
            self.free.remove(&start);
            if take < len {
                self.free.insert(start + take, len - take);
            }
            got.push(Extent {
                device_offset_bytes: start * self.block_bytes,
                len_bytes: take * self.block_bytes,
            });
            need_blocks -= take;
        }
        let extents = &mut self.inode_mut(ino).extents;
        for e in got {
            match extents.last_mut() {
                Some(l) if l.device_offset_bytes + l.len_bytes == e.device_offset_bytes => {
                    l.len_bytes += e.len_bytes
                }
                _ => extents.push(e),
            }
        }
        Ok(())
    }

    /// Sets the size to `bytes`, releasing whole blocks past it. Fails on an append-only file.
    pub fn truncate(&mut self, ino: u64, path: &str, bytes: u64) -> Result<(), InsiderError> {
        if self.inode(ino).append_only {
            return Err(InsiderError::AppendOnly {
                path: path.to_string(),
            });
        }
        let keep = bytes.div_ceil(self.block_bytes) * self.block_bytes;
        let block = self.block_bytes;
        let n = self.inode_mut(ino);
        n.size_bytes = bytes;
        let mut kept = 0u64;
        let mut released = Vec::new();
        n.extents.retain_mut(|e| {
            if kept >= keep {
                released.push(*e);
                return false;
            }
            if kept + e.len_bytes > keep {
                let cut = keep - kept;
                released.push(Extent {
                    device_offset_bytes: e.device_offset_bytes + cut,
                    len_bytes: e.len_bytes - cut,
                });
                e.len_bytes = cut;
            }
            kept += e.len_bytes;
            true
        });
        for e in released {
            self.free
                .insert(e.device_offset_bytes / block, e.len_bytes / block);
        }
        debug_assert!(self.free.values().sum::<u64>() <= self.capacity_blocks);
        Ok(())
    }

    /// The device ranges holding file bytes `offset .. offset + len` (which must be allocated).
    pub fn map(&self, ino: u64, offset: u64, len: u64) -> Vec<Extent> {
        let mut out = Vec::new();
        let mut file_at = 0u64;
        let end = offset + len;
        for e in &self.inode(ino).extents {
            let (s, t) = (file_at, file_at + e.len_bytes);
            file_at = t;
            if t <= offset || s >= end {
                continue;
            }
            let a = offset.max(s);
            let b = end.min(t);
            out.push(Extent {
                device_offset_bytes: e.device_offset_bytes + (a - s),
                len_bytes: b - a,
            });
        }
        assert_eq!(
            out.iter().map(|e| e.len_bytes).sum::<u64>(),
            len,
            "mapped range must be allocated"
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs() -> FileSystem {
        let mut fs = FileSystem::new(1 << 20, 4096);
        fs.add_user(1000, 100, "alice");
        fs.add_user(1001, 101, "bob");
        fs.create(ROOT_UID, "/data", 0o777, true).unwrap();
        fs
    }

    #[test]
    fn mode_bits_decide_owner_group_and_other() {
        let mut fs = fs();
        let f = fs.create(1000, "/data/a", 0o640, false).unwrap();
        assert!(fs.permits(1000, f, Access::Write).unwrap());
        assert!(!fs.permits(1001, f, Access::Read).unwrap());
        fs.add_user(1002, 100, "carol");
        assert!(fs.permits(1002, f, Access::Read).unwrap());
        assert!(!fs.permits(1002, f, Access::Write).unwrap());
        assert!(fs.permits(ROOT_UID, f, Access::Write).unwrap());
    }

    #[test]
    fn reserve_and_truncate_keep_free_space_balanced() {
        let mut fs = fs();
        let total = fs.free_bytes();
        let f = fs.create(1000, "/data/a", 0o644, false).unwrap();
        fs.reserve(f, 10_000).unwrap();
        assert_eq!(fs.inode(f).allocated_bytes(), 12_288);
        assert_eq!(fs.map(f, 4000, 200)[0].device_offset_bytes, 4000);
        fs.truncate(f, "/data/a", 100).unwrap();
        assert_eq!(fs.free_bytes(), total - 4096);
        assert!(matches!(
            fs.reserve(f, 2 << 20),
            Err(InsiderError::NoSpace { .. })
        ));
    }

    #[test]
    fn append_only_blocks_truncate_and_bad_paths_are_named() {
        let mut fs = fs();
        let f = fs.create(1000, "/data/a", 0o644, false).unwrap();
        fs.inode_mut(f).append_only = true;
        assert!(matches!(
            fs.truncate(f, "/data/a", 0),
            Err(InsiderError::AppendOnly { .. })
        ));
        assert!(matches!(
            fs.lookup("/nope"),
            Err(InsiderError::NotFound { .. })
        ));
        assert!(matches!(
            fs.create(1001, "/x", 0o644, false),
            Err(InsiderError::PermissionDenied { .. })
        ));
    }
}
