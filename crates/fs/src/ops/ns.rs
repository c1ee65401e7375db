//! The namespace: mkdir, rmdir, unlink, rename, readdir, stat, chmod, chown, chattr +a. Each checks
//! everything first and then changes the cache; `ops::run` commits the journal before the
//! operation completes, so a namespace change is atomic and durable at completion.

use crate::error::{Corruption, FsError};
use crate::exec::Cx;
use crate::format::dir::RawEntry;
use crate::format::inode::{Inode, FLAG_APPEND_ONLY};
use crate::ops::path::require;
use crate::types::{Access, Caller, DirEntry, FileKind, Ino, Stat, PERM_MASK, ROOT_INO};

pub async fn mkdir(cx: &Cx, caller: Caller, path: &str, perm: u16) -> Result<(), FsError> {
    let (pino, mut parent, name) = cx.resolve_parent(caller, path).await?;
    if cx.lookup(pino, &parent, name).await?.is_some() {
        return Err(FsError::Exists(path.to_string()));
    }
    require(&parent, caller, Access::Write, path)?;
    if parent.link_count == u16::MAX {
        return Err(FsError::InvalidArgument("too many subdirectories"));
    }
    let need = cx.blocks_to_add_entry(pino, &parent).await?;
    cx.need_blocks(need)?;
    if cx.free_inodes() == 0 {
        return Err(FsError::NoSpace("inodes"));
    }
    let now = cx.now().as_ns();
    let (ino, generation) = cx.alloc_inode().await?;
    let mut inode = Inode::new(FileKind::Dir, perm, caller.uid, caller.gid, now);
    inode.generation = generation;
    inode.parent = pino;
    cx.write_inode(ino, &inode).await?;
    let entry = RawEntry {
        ino,
        kind: FileKind::Dir,
        name: name.as_bytes().to_vec(),
    };
    cx.dir_add(pino, &mut parent, &entry).await?;
    parent.link_count += 1;
    parent.mtime_ns = now;
    parent.ctime_ns = now;
    cx.write_inode(pino, &parent).await
}

/// Looks up `name` in a parent the caller may modify; returns the entry and its inode.
async fn removable(
    cx: &Cx,
    caller: Caller,
    path: &str,
) -> Result<(Ino, Inode, RawEntry, crate::ops::dir::Slot, Inode), FsError> {
    let (pino, parent, name) = cx.resolve_parent(caller, path).await?;
    let Some((e, slot)) = cx.lookup(pino, &parent, name).await? else {
        return Err(FsError::NotFound(path.to_string()));
    };
    require(&parent, caller, Access::Write, path)?;
    let inode = cx.read_inode(e.ino).await?;
    Ok((pino, parent, e, slot, inode))
}

pub async fn unlink(cx: &Cx, caller: Caller, path: &str) -> Result<(), FsError> {
    let (pino, mut parent, e, slot, inode) = removable(cx, caller, path).await?;
    if inode.kind() == FileKind::Dir {
        return Err(FsError::IsDir(path.to_string()));
    }
    if inode.append_only() {
        return Err(FsError::AppendOnly(path.to_string()));
    }
    cx.set_slot(slot, None).await?;
    cx.drop_inode(e.ino, &inode).await?;
    touch(&mut parent, cx);
    cx.write_inode(pino, &parent).await
}

async fn is_empty_dir(cx: &Cx, ino: Ino, inode: &Inode) -> Result<bool, FsError> {
    Ok(cx.dir_entries(ino, inode).await?.is_empty())
}

pub async fn rmdir(cx: &Cx, caller: Caller, path: &str) -> Result<(), FsError> {
    let (pino, mut parent, e, slot, inode) = removable(cx, caller, path).await?;
    if inode.kind() != FileKind::Dir {
        return Err(FsError::NotDir(path.to_string()));
    }
    if !is_empty_dir(cx, e.ino, &inode).await? {
        return Err(FsError::NotEmpty(path.to_string()));
    }
    cx.set_slot(slot, None).await?;
    cx.drop_inode(e.ino, &inode).await?;
    parent.link_count -= 1;
    touch(&mut parent, cx);
    cx.write_inode(pino, &parent).await
}

fn touch(inode: &mut Inode, cx: &Cx) {
    let now = cx.now().as_ns();
    inode.mtime_ns = now;
    inode.ctime_ns = now;
}

/// True if `dir` is `ancestor` or lies below it (walking `..` up to the root).
async fn is_within(cx: &Cx, mut dir: Ino, ancestor: Ino) -> Result<bool, FsError> {
    let steps_max = cx.sb()?.inode_count;
    for _ in 0..=steps_max {
        if dir == ancestor {
            return Ok(true);
        }
        if dir == ROOT_INO {
            return Ok(false);
        }
        dir = cx.read_inode(dir).await?.parent;
    }
    Err(Corruption::Inode {
        ino: dir,
        what: "directory parents form a loop",
    }
    .into())
}

pub async fn rename(cx: &Cx, caller: Caller, from: &str, to: &str) -> Result<(), FsError> {
    let (fpino, fparent, fname) = cx.resolve_parent(caller, from).await?;
    let Some((fe, fslot)) = cx.lookup(fpino, &fparent, fname).await? else {
        return Err(FsError::NotFound(from.to_string()));
    };
    require(&fparent, caller, Access::Write, from)?;
    let (tpino, tparent, tname) = cx.resolve_parent(caller, to).await?;
    require(&tparent, caller, Access::Write, to)?;
    let moving_dir = fe.kind == FileKind::Dir;
    if !moving_dir && cx.read_inode(fe.ino).await?.append_only() {
        return Err(FsError::AppendOnly(from.to_string()));
    }
    if moving_dir && is_within(cx, tpino, fe.ino).await? {
        return Err(FsError::MoveIntoSelf(to.to_string()));
    }
    let target = cx.lookup(tpino, &tparent, tname).await?;
    if let Some((te, _)) = &target {
        if te.ino == fe.ino {
            return Ok(());
        }
        match (moving_dir, te.kind) {
            (true, FileKind::File) => return Err(FsError::NotDir(to.to_string())),
            (false, FileKind::Dir) => return Err(FsError::IsDir(to.to_string())),
            (true, FileKind::Dir) => {
                let tinode = cx.read_inode(te.ino).await?;
                if !is_empty_dir(cx, te.ino, &tinode).await? {
                    return Err(FsError::NotEmpty(to.to_string()));
                }
            }
            (false, FileKind::File) => {
                if cx.read_inode(te.ino).await?.append_only() {
                    return Err(FsError::AppendOnly(to.to_string()));
                }
            }
        }
    } else {
        let need = cx.blocks_to_add_entry(tpino, &tparent).await?;
        cx.need_blocks(need)?;
        if moving_dir && fpino != tpino && tparent.link_count == u16::MAX {
            return Err(FsError::InvalidArgument("too many subdirectories"));
        }
    }

    // Everything is checked; now change the cache. Parents are re-read after each step, so
    // a rename within one directory sees its own changes.
    let entry = RawEntry {
        ino: fe.ino,
        kind: fe.kind,
        name: tname.as_bytes().to_vec(),
    };
    match &target {
        Some((te, tslot)) => {
            cx.set_slot(*tslot, Some(&entry)).await?;
            let tinode = cx.read_inode(te.ino).await?;
            cx.drop_inode(te.ino, &tinode).await?;
            if te.kind == FileKind::Dir {
                let mut p = cx.read_inode(tpino).await?;
                p.link_count -= 1;
                cx.write_inode(tpino, &p).await?;
            }
        }
        None => {
            let mut p = cx.read_inode(tpino).await?;
            cx.dir_add(tpino, &mut p, &entry).await?;
            cx.write_inode(tpino, &p).await?;
        }
    }
    cx.set_slot(fslot, None).await?;
    if moving_dir && fpino != tpino {
        let mut moved = cx.read_inode(fe.ino).await?;
        moved.parent = tpino;
        touch(&mut moved, cx);
        cx.write_inode(fe.ino, &moved).await?;
        let mut old = cx.read_inode(fpino).await?;
        old.link_count -= 1;
        cx.write_inode(fpino, &old).await?;
        let mut new = cx.read_inode(tpino).await?;
        new.link_count += 1;
        cx.write_inode(tpino, &new).await?;
    }
    for p in [fpino, tpino] {
        let mut inode = cx.read_inode(p).await?;
        touch(&mut inode, cx);
        cx.write_inode(p, &inode).await?;
    }
    Ok(())
}

pub async fn readdir(cx: &Cx, caller: Caller, path: &str) -> Result<Vec<DirEntry>, FsError> {
    let (ino, inode) = cx.resolve(caller, path).await?;
    if inode.kind() != FileKind::Dir {
        return Err(FsError::NotDir(path.to_string()));
    }
    require(&inode, caller, Access::Read, path)?;
    let mut out = vec![
        DirEntry {
            name: ".".into(),
            ino,
            kind: FileKind::Dir,
        },
        DirEntry {
            name: "..".into(),
            ino: inode.parent,
            kind: FileKind::Dir,
        },
    ];
    for (e, _) in cx.dir_entries(ino, &inode).await? {
        out.push(DirEntry {
            name: String::from_utf8_lossy(&e.name).into_owned(),
            ino: e.ino,
            kind: e.kind,
        });
    }
    Ok(out)
}

pub async fn stat(cx: &Cx, caller: Caller, path: &str) -> Result<Stat, FsError> {
    let (ino, inode) = cx.resolve(caller, path).await?;
    Ok(Stat {
        ino,
        kind: inode.kind(),
        perm: inode.perm(),
        uid: inode.uid,
        gid: inode.gid,
        size_bytes: inode.size_bytes,
        link_count: inode.link_count,
        blocks: inode.mapped_blocks(),
        mtime_ns: inode.mtime_ns,
        ctime_ns: inode.ctime_ns,
        append_only: inode.append_only(),
    })
}

/// Sets or clears the append-only attribute (owner or root; Linux asks for
/// `CAP_LINUX_IMMUTABLE`, which this model has no notion of).
pub async fn set_append_only(cx: &Cx, caller: Caller, path: &str, on: bool) -> Result<(), FsError> {
    let (ino, mut inode) = cx.resolve(caller, path).await?;
    if !caller.is_root() && caller.uid != inode.uid {
        return Err(FsError::Permission(format!(
            "chattr on {path}: not the owner"
        )));
    }
    if on {
        inode.flags |= FLAG_APPEND_ONLY;
    } else {
        inode.flags &= !FLAG_APPEND_ONLY;
    }
    inode.ctime_ns = cx.now().as_ns();
    cx.write_inode(ino, &inode).await
}

pub async fn chmod(cx: &Cx, caller: Caller, path: &str, perm: u16) -> Result<(), FsError> {
    let (ino, mut inode) = cx.resolve(caller, path).await?;
    if !caller.is_root() && caller.uid != inode.uid {
        return Err(FsError::Permission(format!(
            "chmod on {path}: not the owner"
        )));
    }
    inode.mode = inode.kind().type_bits() | (perm & PERM_MASK);
    inode.ctime_ns = cx.now().as_ns();
    cx.write_inode(ino, &inode).await
}

pub async fn chown(cx: &Cx, caller: Caller, path: &str, uid: u32, gid: u32) -> Result<(), FsError> {
    let (ino, mut inode) = cx.resolve(caller, path).await?;
    if !caller.is_root() {
        return Err(FsError::Permission(format!("chown on {path}: only root")));
    }
    inode.uid = uid;
    inode.gid = gid;
    inode.ctime_ns = cx.now().as_ns();
    cx.write_inode(ino, &inode).await
}
