//! The kernel names files by inode number; the device's file system by absolute path. `Names`
//! maps each inode the kernel has been told of to its one path (the file system has no hard
//! links, so a path per inode is exact), kept true across rename and unlink. It holds at
//! most one entry per inode of the file system, so its size is bounded by the inode count.
//! `Handles` is a bounded table of per-open state (directory listings, stats snapshots,
//! control requests, virtual files' outputs).

use crate::op::{Errno, InodeNo};
use std::collections::{BTreeMap, HashMap};

/// The root directory's inode (the file system's root is inode 1, as FUSE's).
pub const ROOT: InodeNo = 1;

/// Inode number → absolute path.
pub struct Names {
    paths: HashMap<InodeNo, String>,
}

impl Default for Names {
    fn default() -> Self {
        let mut paths = HashMap::new();
        paths.insert(ROOT, "/".to_string());
        Names { paths }
    }
}

impl Names {
    /// The path of `ino`, if the kernel was told of it.
    pub fn path(&self, ino: InodeNo) -> Result<&str, Errno> {
        self.paths
            .get(&ino)
            .map(String::as_str)
            .ok_or(Errno(libc::ESTALE))
    }

    /// `name` inside directory `parent`.
    pub fn child(&self, parent: InodeNo, name: &str) -> Result<String, Errno> {
        if name.contains('/') || name == "." || name == ".." || name.is_empty() {
            return Err(Errno(libc::EINVAL));
        }
        Ok(join(self.path(parent)?, name))
    }

    /// Records that `ino` is at `path` (a lookup, a create, a reused inode number).
    pub fn set(&mut self, ino: InodeNo, path: String) {
        assert!(path.starts_with('/'), "paths are absolute: {path}");
        self.paths.insert(ino, path);
    }

    /// Forgets `ino` (unlinked or removed).
    pub fn remove(&mut self, ino: InodeNo) {
        assert_ne!(ino, ROOT, "the root is never removed");
        self.paths.remove(&ino);
    }

    /// After `from` was renamed to `to`: every path at or under `from` moves, and whatever
    /// was at `to` (replaced) is forgotten.
    pub fn renamed(&mut self, from: &str, to: &str) {
        let under_from = format!("{from}/");
        let under_to = format!("{to}/");
        self.paths
            .retain(|_, p| p.as_str() != to && !p.starts_with(&under_to));
        for p in self.paths.values_mut() {
            if p.as_str() == from {
                *p = to.to_string();
            } else if let Some(rest) = p.strip_prefix(&under_from) {
                *p = format!("{to}/{rest}");
            }
        }
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

/// `dir/name` with one slash.
pub fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// A bounded table of open-handle state; handle numbers carry a tag in their high bits so
/// the kinds of handle never collide with each other or with the file system's own.
pub struct Handles<T> {
    tag: u64,
    max: usize,
    next: u64,
    open: BTreeMap<u64, T>,
}

impl<T> Handles<T> {
    /// A table whose handles are `tag << 40 | n`, at most `max` open at once.
    pub fn new(tag: u64, max: usize) -> Self {
        assert!(tag > 0 && tag < (1 << 23), "tag must fit above bit 40");
        assert!(max > 0);
        Handles {
            tag,
            max,
            next: 0,
            open: BTreeMap::new(),
        }
    }

    /// Whether `fh` is one of this table's handles (open or not).
    pub fn owns(&self, fh: u64) -> bool {
        fh >> 40 == self.tag
    }

    /// Opens a handle holding `value`; `EMFILE` when `max` are open.
    pub fn insert(&mut self, value: T) -> Result<u64, Errno> {
        if self.open.len() >= self.max {
            return Err(Errno(libc::EMFILE));
        }
        self.next = (self.next + 1) & ((1 << 40) - 1);
        let fh = (self.tag << 40) | self.next;
        assert!(
            self.open.insert(fh, value).is_none(),
            "handle {fh} reused while open"
        );
        Ok(fh)
    }

    pub fn get(&self, fh: u64) -> Result<&T, Errno> {
        self.open.get(&fh).ok_or(Errno(libc::EBADF))
    }

    pub fn get_mut(&mut self, fh: u64) -> Result<&mut T, Errno> {
        self.open.get_mut(&fh).ok_or(Errno(libc::EBADF))
    }

    pub fn remove(&mut self, fh: u64) -> Result<T, Errno> {
        self.open.remove(&fh).ok_or(Errno(libc::EBADF))
    }

    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_a_directory_moves_every_path_under_it_and_drops_the_replaced_target() {
        let mut n = Names::default();
        n.set(2, "/a".into());
        n.set(3, "/a/b".into());
        n.set(4, "/a/b/c".into());
        n.set(5, "/ab".into());
        n.set(6, "/z".into());
        n.set(7, "/z/old".into());
        n.renamed("/a", "/z");
        assert_eq!(n.path(2), Ok("/z"));
        assert_eq!(n.path(3), Ok("/z/b"));
        assert_eq!(n.path(4), Ok("/z/b/c"));
        assert_eq!(n.path(5), Ok("/ab"), "a sibling sharing the prefix stays");
        assert_eq!(
            n.path(6),
            Err(Errno(libc::ESTALE)),
            "the replaced target is gone"
        );
        assert_eq!(n.path(7), Err(Errno(libc::ESTALE)));
    }

    #[test]
    fn handles_are_bounded_and_tagged() {
        let mut h = Handles::new(3, 2);
        let a = h.insert("a").unwrap();
        let _b = h.insert("b").unwrap();
        assert_eq!(h.insert("c"), Err(Errno(libc::EMFILE)));
        assert!(h.owns(a) && !h.owns(7));
        assert_eq!(h.remove(a), Ok("a"));
        assert_eq!(h.get(a), Err(Errno(libc::EBADF)));
        h.insert("c").unwrap();
    }

    #[test]
    fn a_name_with_a_slash_or_a_dot_entry_is_refused() {
        let n = Names::default();
        assert_eq!(n.child(ROOT, "x"), Ok("/x".to_string()));
        assert_eq!(n.child(ROOT, "a/b"), Err(Errno(libc::EINVAL)));
        assert_eq!(n.child(ROOT, ".."), Err(Errno(libc::EINVAL)));
        assert_eq!(n.child(9, "x"), Err(Errno(libc::ESTALE)));
    }
}
