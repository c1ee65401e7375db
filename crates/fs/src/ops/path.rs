//! Path resolution and permission checks. A path is absolute; each directory walked needs
//! search (x) permission; root (uid 0) passes every check, as in POSIX.

use crate::error::FsError;
use crate::exec::Cx;
use crate::format::dir::check_name;
use crate::format::inode::Inode;
use crate::types::{Access, Caller, FileKind, Ino, ROOT_INO};

/// The components of an absolute path (`/` alone has none).
pub fn components(path: &str) -> Result<Vec<&str>, FsError> {
    if !path.starts_with('/') {
        return Err(FsError::InvalidName(path.to_string()));
    }
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    for c in &comps {
        check_name(c)?;
    }
    Ok(comps)
}

/// Whether `caller` may `access` an inode.
pub fn permits(inode: &Inode, caller: Caller, access: Access) -> bool {
    if caller.is_root() {
        return true;
    }
    let perm = inode.perm();
    let bits = if caller.uid == inode.uid {
        perm >> 6
    } else if caller.gid == inode.gid {
        perm >> 3
    } else {
        perm
    } & 0o7;
    let want = match access {
        Access::Read => 0o4,
        Access::Write => 0o2,
        Access::Search => 0o1,
    };
    bits & want != 0
}

pub fn require(inode: &Inode, caller: Caller, access: Access, path: &str) -> Result<(), FsError> {
    if permits(inode, caller, access) {
        Ok(())
    } else {
        Err(FsError::Permission(
            format!("{access:?} on {path}").to_lowercase(),
        ))
    }
}

impl Cx {
    /// Resolves `comps` from the root.
    pub async fn walk(
        &self,
        caller: Caller,
        comps: &[&str],
        path: &str,
    ) -> Result<(Ino, Inode), FsError> {
        let mut ino = ROOT_INO;
        let mut inode = self.read_inode(ino).await?;
        for c in comps {
            if inode.kind() != FileKind::Dir {
                return Err(FsError::NotDir(path.to_string()));
            }
            require(&inode, caller, Access::Search, path)?;
            match self.lookup(ino, &inode, c).await? {
                Some((e, _)) => {
                    ino = e.ino;
                    inode = self.read_inode(ino).await?;
                }
                None => return Err(FsError::NotFound(path.to_string())),
            }
        }
        Ok((ino, inode))
    }

    pub async fn resolve(&self, caller: Caller, path: &str) -> Result<(Ino, Inode), FsError> {
        let comps = components(path)?;
        self.walk(caller, &comps, path).await
    }

    /// Resolves the parent directory of `path` and checks it may be searched; returns it
    /// with the last component.
    pub async fn resolve_parent<'p>(
        &self,
        caller: Caller,
        path: &'p str,
    ) -> Result<(Ino, Inode, &'p str), FsError> {
        let comps = components(path)?;
        let Some((name, dirs)) = comps.split_last() else {
            return Err(FsError::InvalidArgument("the root directory has no name"));
        };
        let (ino, inode) = self.walk(caller, dirs, path).await?;
        if inode.kind() != FileKind::Dir {
            return Err(FsError::NotDir(path.to_string()));
        }
        require(&inode, caller, Access::Search, path)?;
        Ok((ino, inode, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_group_and_other_bits_apply_in_that_order_and_root_bypasses() {
        let i = Inode::new(FileKind::File, 0o640, 10, 20, 0);
        let owner = Caller { uid: 10, gid: 99 };
        let group = Caller { uid: 11, gid: 20 };
        let other = Caller { uid: 12, gid: 21 };
        assert!(permits(&i, owner, Access::Write));
        assert!(permits(&i, group, Access::Read) && !permits(&i, group, Access::Write));
        assert!(!permits(&i, other, Access::Read));
        assert!(permits(&i, Caller::ROOT, Access::Write));
        // The owner class is chosen even when it grants less than the group's.
        let j = Inode::new(FileKind::File, 0o070, 10, 20, 0);
        assert!(!permits(&j, Caller { uid: 10, gid: 20 }, Access::Read));
    }

    #[test]
    fn paths_must_be_absolute_and_clean() {
        assert_eq!(components("/a//b/").unwrap(), vec!["a", "b"]);
        assert!(components("/").unwrap().is_empty());
        assert!(matches!(components("a/b"), Err(FsError::InvalidName(_))));
        assert!(matches!(
            components("/a/../b"),
            Err(FsError::InvalidName(_))
        ));
    }
}
