//! The crash test's reference model: what the namespace and every file hold now, and what
//! the device must hold after a power cut.
//!
//! The file system commits everything at once (ordered mode): after a commit the device
//! holds exactly the current state. Between commits only writes happen (every other change
//! commits before it completes), and dirty data blocks of existing files may reach their
//! place early (cache eviction). So after a cut the recovered state must be the *committed*
//! state — or, if the operation in flight could commit, the state after it — except that a
//! byte of a file written since the last commit may hold any value written there since.
//! File data is random, so a byte from another file or from nowhere is caught.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileState {
    /// Identity across renames (the write history is kept per identity).
    pub id: u32,
    pub data: Vec<u8>,
}

/// A namespace with file contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    pub dirs: BTreeSet<String>,
    pub files: BTreeMap<String, FileState>,
}

impl Tree {
    pub fn write(&mut self, path: &str, at: u64, bytes: &[u8]) {
        let f = self.files.get_mut(path).expect("written file exists");
        let end = at as usize + bytes.len();
        if f.data.len() < end {
            f.data.resize(end, 0);
        }
        f.data[at as usize..end].copy_from_slice(bytes);
    }

    /// Files and directories directly in `dir`.
    pub fn children(&self, dir: &str) -> usize {
        let prefix = if dir == "/" {
            "/".to_string()
        } else {
            format!("{dir}/")
        };
        let direct = |p: &&String| p.starts_with(&prefix) && !p[prefix.len()..].contains('/');
        self.dirs.iter().filter(direct).count() + self.files.keys().filter(direct).count()
    }

    /// Renames a file or a directory (with everything below it).
    pub fn rename(&mut self, from: &str, to: &str) {
        if let Some(f) = self.files.remove(from) {
            self.files.insert(to.to_string(), f);
            return;
        }
        self.dirs.remove(to);
        let below = |p: &str| p == from || p.starts_with(&format!("{from}/"));
        let moved: Vec<String> = self.dirs.iter().filter(|p| below(p)).cloned().collect();
        for d in moved {
            self.dirs.remove(&d);
            self.dirs.insert(format!("{to}{}", &d[from.len()..]));
        }
        let moved: Vec<String> = self.files.keys().filter(|p| below(p)).cloned().collect();
        for p in moved {
            let f = self.files.remove(&p).expect("listed");
            self.files.insert(format!("{to}{}", &p[from.len()..]), f);
        }
    }
}

/// What a check after a cut found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Files not written since their last commit (their fsynced/committed content) checked.
    pub durable_files_checked: u64,
    /// Committed files or directories missing, or committed files whose size or bytes differ.
    pub lost: u64,
    /// Bytes that were never written to that file at that place (another file's, garbage),
    /// or files/directories that should not exist.
    pub wrong: u64,
    pub first: Option<String>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.lost == 0 && self.wrong == 0
    }

    fn note(&mut self, msg: String) {
        self.first.get_or_insert(msg);
    }
}

#[derive(Default)]
pub struct Reference {
    pub committed: Tree,
    pub current: Tree,
    /// The operation being settled committed (the FS's `syncs` counter moved).
    pub commit_pending: bool,
    /// Writes since the last commit, per file identity: (offset, bytes).
    since_commit: BTreeMap<u32, Vec<(u64, Vec<u8>)>>,
    next_id: u32,
}

impl Reference {
    pub fn new_id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    /// A write reached the cache (it may reach the device before the next commit).
    pub fn note_write(&mut self, id: u32, at: u64, bytes: &[u8]) {
        self.since_commit
            .entry(id)
            .or_default()
            .push((at, bytes.to_vec()));
    }

    /// After an operation's effect is in `current`: if it committed, that is durable now.
    pub fn settle_commit(&mut self) {
        if std::mem::take(&mut self.commit_pending) {
            self.commit();
        }
    }

    /// The device now holds the current state.
    pub fn commit(&mut self) {
        self.committed = self.current.clone();
        self.since_commit.clear();
    }

    /// Checks a recovered tree against `candidate` (committed state, or the state after the
    /// operation in flight).
    pub fn check(&self, candidate: &Tree, got: &Tree) -> Verdict {
        let mut v = Verdict::default();
        for d in candidate.dirs.difference(&got.dirs) {
            v.lost += 1;
            v.note(format!("directory {d} lost"));
        }
        for d in got.dirs.difference(&candidate.dirs) {
            v.wrong += 1;
            v.note(format!("directory {d} should not exist"));
        }
        for (path, want) in &candidate.files {
            let Some(have) = got.files.get(path) else {
                v.lost += 1;
                v.note(format!("file {path} lost"));
                continue;
            };
            let writes = self.since_commit.get(&want.id);
            if writes.is_none() {
                v.durable_files_checked += 1;
            }
            if have.data.len() != want.data.len() {
                v.lost += 1;
                v.note(format!(
                    "file {path}: {} bytes, expected {}",
                    have.data.len(),
                    want.data.len()
                ));
                continue;
            }
            let bad = (0..want.data.len()).find(|&i| {
                have.data[i] != want.data[i]
                    && !writes.is_some_and(|ws| {
                        ws.iter().any(|(at, b)| {
                            let at = *at as usize;
                            i >= at && i < at + b.len() && b[i - at] == have.data[i]
                        })
                    })
            });
            if let Some(i) = bad {
                if writes.is_none() {
                    v.lost += 1;
                } else {
                    v.wrong += 1;
                }
                v.note(format!(
                    "file {path}: byte {i} is {:#04x}, expected {:#04x}",
                    have.data[i], want.data[i]
                ));
            }
        }
        for path in got.files.keys() {
            if !candidate.files.contains_key(path) {
                v.wrong += 1;
                v.note(format!("file {path} should not exist"));
            }
        }
        v
    }

    /// After a cut was checked against `candidate`: that is what the device holds now, with
    /// the bytes actually read back.
    pub fn settle(&mut self, candidate: &Tree, got: &Tree) {
        let mut t = candidate.clone();
        for (path, f) in &mut t.files {
            f.data = got.files[path].data.clone();
        }
        self.current = t;
        self.commit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, u32, &[u8])]) -> Tree {
        Tree {
            dirs: BTreeSet::new(),
            files: files
                .iter()
                .map(|(p, id, d)| {
                    (
                        p.to_string(),
                        FileState {
                            id: *id,
                            data: d.to_vec(),
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_byte_written_since_the_commit_is_allowed_and_any_other_is_not() {
        let mut r = Reference {
            committed: tree(&[("/a", 1, b"aaaa"), ("/b", 2, b"bbbb")]),
            ..Reference::default()
        };
        r.note_write(1, 1, b"XY");
        let ok = tree(&[("/a", 1, b"aXaa"), ("/b", 2, b"bbbb")]);
        assert!(r.check(&r.committed, &ok).ok());
        let stolen = tree(&[("/a", 1, b"abaa"), ("/b", 2, b"bbbb")]);
        assert_eq!(r.check(&r.committed, &stolen).wrong, 1);
        let lost = tree(&[("/a", 1, b"aaaa"), ("/b", 2, b"bbzb")]);
        let v = r.check(&r.committed, &lost);
        assert_eq!((v.lost, v.durable_files_checked), (1, 1));
    }

    #[test]
    fn renaming_a_directory_moves_everything_below_it() {
        let mut t = tree(&[("/d/x", 1, b"1")]);
        t.dirs.extend(["/d".to_string(), "/d/e".to_string()]);
        t.rename("/d", "/z");
        assert!(t.files.contains_key("/z/x") && t.dirs.contains("/z/e"));
        assert_eq!(t.children("/z"), 2);
    }
}
