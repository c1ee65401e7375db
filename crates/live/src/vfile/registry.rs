//! The registered virtual files: name → the real file, the program, the owner; each with a
//! FUSE inode number of its own, never reused while the server runs (the kernel may still hold
//! an old one's). Bounded by `REGISTRATIONS_MAX`.

use crate::op::InodeNo;
use crate::vfile::control::{self, Listed};
use crate::vfile::program::VfileProgram;
use crate::vfile::{VfileError, REGISTRATIONS_MAX};
use nearflash_fs::Caller;
use std::collections::BTreeMap;

/// One virtual file.
#[derive(Debug)]
pub struct Entry {
    pub ino: InodeNo,
    /// As asked (and stored on the image).
    pub request: control::Registration,
    pub program: VfileProgram,
    pub owner: Caller,
    /// The simulated instant it was registered (its mtime).
    pub registered_ns: u64,
    /// Output bytes of its last run (its size until it is opened; 0 before any run).
    pub last_output_bytes: u64,
}

/// Every virtual file, by name.
#[derive(Debug)]
pub struct Registry {
    by_name: BTreeMap<String, Entry>,
    ino_base: InodeNo,
    next_id: u64,
}

impl Registry {
    /// A registry whose inode numbers start at `ino_base`.
    pub fn new(ino_base: InodeNo) -> Registry {
        Registry {
            by_name: BTreeMap::new(),
            ino_base,
            next_id: 0,
        }
    }

    /// Adds a virtual file; refused when the name is taken or the registry is full.
    pub fn insert(
        &mut self,
        request: control::Registration,
        program: VfileProgram,
        owner: Caller,
        registered_ns: u64,
    ) -> Result<InodeNo, VfileError> {
        self.check_free(&request.name)?;
        let ino = self.ino_base + self.next_id;
        self.next_id += 1;
        let name = request.name.clone();
        let e = Entry {
            ino,
            request,
            program,
            owner,
            registered_ns,
            last_output_bytes: 0,
        };
        assert!(self.by_name.insert(name, e).is_none(), "checked free");
        assert!(self.by_name.len() <= REGISTRATIONS_MAX);
        Ok(ino)
    }

    /// Whether `name` could be registered now.
    pub fn check_free(&self, name: &str) -> Result<(), VfileError> {
        crate::vfile::check_name(name)?;
        if self.by_name.contains_key(name) {
            return Err(VfileError::Exists(name.to_string()));
        }
        if self.by_name.len() >= REGISTRATIONS_MAX {
            return Err(VfileError::TooMany {
                registrations_max: REGISTRATIONS_MAX,
            });
        }
        Ok(())
    }

    /// Removes `name` for `caller` (its owner or root).
    pub fn remove(&mut self, name: &str, caller: Caller) -> Result<Entry, VfileError> {
        let e = self
            .by_name
            .get(name)
            .ok_or_else(|| VfileError::NotFound(name.to_string()))?;
        if !caller.is_root() && caller.uid != e.owner.uid {
            return Err(VfileError::NotOwner {
                name: name.to_string(),
                owner: e.owner.uid,
            });
        }
        Ok(self.by_name.remove(name).expect("found above"))
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name)
    }

    /// The virtual file with inode `ino`.
    pub fn by_ino(&self, ino: InodeNo) -> Option<&Entry> {
        self.by_name.values().find(|e| e.ino == ino)
    }

    pub fn by_ino_mut(&mut self, ino: InodeNo) -> Option<&mut Entry> {
        self.by_name.values_mut().find(|e| e.ino == ino)
    }

    /// Whether `ino` is in the range this registry hands out (registered now or not).
    pub fn owns_ino(&self, ino: InodeNo) -> bool {
        ino >= self.ino_base && ino < self.ino_base + (1 << 32)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.by_name.values()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The listing the control file answers, `dir` being the virtual files' directory
    /// relative to the mount point.
    pub fn listed(&self, dir: &str) -> Vec<Listed> {
        self.entries()
            .map(|e| Listed {
                name: e.request.name.clone(),
                path: format!("{dir}/{}", e.request.name),
                file: e.request.file.clone(),
                program: e.program.label.clone(),
                args: e.program.args.clone(),
                wasm: e.program.is_wasm(),
                owner_uid: e.owner.uid,
                owner_gid: e.owner.gid,
                last_output_bytes: e.last_output_bytes,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(name: &str) -> control::Registration {
        control::Registration {
            name: name.into(),
            file: "/f".into(),
            program: "passthrough".into(),
            args: vec![],
            module_hex: None,
            fuel_max: None,
            memory_max_mib: None,
        }
    }

    fn program() -> VfileProgram {
        VfileProgram::builtin("passthrough", vec![]).unwrap()
    }

    #[test]
    fn names_are_unique_inodes_are_never_reused_and_only_the_owner_or_root_removes() {
        let alice = Caller {
            uid: 1000,
            gid: 1000,
        };
        let bob = Caller {
            uid: 1001,
            gid: 1001,
        };
        let mut r = Registry::new(1 << 41);
        let a = r.insert(reg("a"), program(), alice, 0).unwrap();
        assert_eq!(
            r.insert(reg("a"), program(), bob, 0).unwrap_err(),
            VfileError::Exists("a".into())
        );
        assert!(matches!(
            r.remove("a", bob),
            Err(VfileError::NotOwner { .. })
        ));
        r.remove("a", alice).unwrap();
        let again = r.insert(reg("a"), program(), bob, 0).unwrap();
        assert_ne!(a, again, "a new registration gets a new inode");
        r.remove("a", Caller::ROOT).unwrap();
        assert!(r.is_empty() && r.owns_ino(a) && !r.owns_ino(7));
    }

    #[test]
    fn the_registry_is_bounded() {
        let mut r = Registry::new(1 << 41);
        for i in 0..REGISTRATIONS_MAX {
            r.insert(reg(&format!("v{i}")), program(), Caller::ROOT, 0)
                .unwrap();
        }
        assert!(matches!(
            r.insert(reg("one-more"), program(), Caller::ROOT, 0),
            Err(VfileError::TooMany { .. })
        ));
    }
}
