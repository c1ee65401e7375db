//! Regular files: open (create, truncate), close, read, write (append), truncate,
//! fallocate, extents (`FIEMAP`). The bytes
//! of the last block past the end of a file may hold stale data; every size increase zeroes
//! them first (`zero_tail`), so a hole or an extension reads as zeros. A truncate does *not*
//! zero them: that would change a committed block in place before the truncate commits, and
//! a cut in between would leave the old, longer file with zeros in it.

use crate::cache::BlockClass;
use crate::error::FsError;
use crate::exec::{Cx, Handle};
use crate::format::dir::RawEntry;
use crate::format::inode::{Inode, EXTENTS_MAX, INLINE_EXTENTS};
use crate::ops::path::require;
use crate::types::{
    Access, BlockNo, Caller, Fh, FileExtent, FileKind, Ino, OpenFlags, BLOCK_BYTES, BLOCK_BYTES_U64,
};

/// Largest file: the last file block number must fit in 32 bits.
pub const FILE_BYTES_MAX: u64 = u32::MAX as u64 * BLOCK_BYTES_U64;

pub async fn open(
    cx: &Cx,
    caller: Caller,
    path: &str,
    flags: OpenFlags,
    perm: u16,
) -> Result<Fh, FsError> {
    if !flags.read && !flags.write {
        return Err(FsError::InvalidArgument("open needs read or write"));
    }
    if flags.truncate && !flags.write {
        return Err(FsError::InvalidArgument("truncate needs write"));
    }
    let open_max = cx.cfg.open_files_max;
    if cx.st.borrow().handles.len() >= open_max {
        return Err(FsError::TooManyOpenFiles(open_max));
    }
    let (pino, mut parent, name) = cx.resolve_parent(caller, path).await?;
    let (ino, mut inode) = match cx.lookup(pino, &parent, name).await? {
        Some(_) if flags.create && flags.excl => return Err(FsError::Exists(path.to_string())),
        Some((e, _)) => {
            let inode = cx.read_inode(e.ino).await?;
            if inode.kind() == FileKind::Dir {
                return Err(FsError::IsDir(path.to_string()));
            }
            if flags.read {
                require(&inode, caller, Access::Read, path)?;
            }
            if flags.write {
                require(&inode, caller, Access::Write, path)?;
                if inode.append_only() && (!flags.append || flags.truncate) {
                    return Err(FsError::AppendOnly(path.to_string()));
                }
            }
            (e.ino, inode)
        }
        None if flags.create => {
            require(&parent, caller, Access::Write, path)?;
            let need = cx.blocks_to_add_entry(pino, &parent).await?;
            cx.need_blocks(need)?;
            if cx.free_inodes() == 0 {
                return Err(FsError::NoSpace("inodes"));
            }
            let now = cx.now().as_ns();
            let (ino, generation) = cx.alloc_inode().await?;
            let mut inode = Inode::new(FileKind::File, perm, caller.uid, caller.gid, now);
            inode.generation = generation;
            cx.write_inode(ino, &inode).await?;
            let entry = RawEntry {
                ino,
                kind: FileKind::File,
                name: name.as_bytes().to_vec(),
            };
            cx.dir_add(pino, &mut parent, &entry).await?;
            parent.mtime_ns = now;
            parent.ctime_ns = now;
            cx.write_inode(pino, &parent).await?;
            (ino, inode)
        }
        None => return Err(FsError::NotFound(path.to_string())),
    };
    if flags.truncate && inode.size_bytes > 0 {
        set_size(cx, ino, &mut inode, 0).await?;
    }
    let mut st = cx.st.borrow_mut();
    let fh = Fh(st.next_fh);
    st.next_fh = st.next_fh.wrapping_add(1).max(1);
    st.handles.insert(
        fh,
        Handle {
            ino,
            generation: inode.generation,
            read: flags.read,
            write: flags.write,
            append: flags.append,
            ra: Default::default(),
        },
    );
    Ok(fh)
}

pub fn close(cx: &Cx, fh: Fh) -> Result<(), FsError> {
    cx.st
        .borrow_mut()
        .handles
        .remove(&fh)
        .map(|_| ())
        .ok_or(FsError::BadHandle(fh.0))
}

/// The handle's file, checked to still be the file that was opened.
pub async fn handle_inode(cx: &Cx, fh: Fh) -> Result<(Handle, Inode), FsError> {
    let h = cx
        .st
        .borrow()
        .handles
        .get(&fh)
        .copied()
        .ok_or(FsError::BadHandle(fh.0))?;
    if !cx.inode_allocated(h.ino).await? {
        return Err(FsError::StaleHandle(fh.0));
    }
    let inode = cx.read_inode(h.ino).await?;
    if inode.generation != h.generation {
        return Err(FsError::StaleHandle(fh.0));
    }
    Ok((h, inode))
}

pub async fn read(cx: &Cx, fh: Fh, offset: u64, len: u64) -> Result<Vec<u8>, FsError> {
    let (h, inode) = handle_inode(cx, fh).await?;
    if !h.read {
        return Err(FsError::BadHandle(fh.0));
    }
    if offset >= inode.size_bytes || len == 0 {
        return Ok(Vec::new());
    }
    let end = inode
        .size_bytes
        .min(offset.saturating_add(len.min(cx.cfg.write_bytes_max)));
    let mut out = vec![0u8; (end - offset) as usize];
    if cx.read_ahead_blocks_max() > 0 {
        read_through_read_ahead(cx, fh, &inode, offset, &mut out).await?;
        cx.cpu(copy_ns(cx, out.len() as u64)).await;
        return Ok(out);
    }
    let first = (offset / BLOCK_BYTES_U64) as u32;
    let last = ((end - 1) / BLOCK_BYTES_U64) as u32;
    let fbs: Vec<u32> = (first..=last).collect();
    for chunk in fbs.chunks(cx.cfg.io_depth_max) {
        let mapped: Vec<_> = chunk.iter().filter_map(|&fb| inode.map(fb)).collect();
        cx.load_many(&mapped, BlockClass::Data).await?;
        for &fb in chunk {
            let Some(b) = inode.map(fb) else { continue };
            let bstart = u64::from(fb) * BLOCK_BYTES_U64;
            let lo = offset.max(bstart);
            let hi = end.min(bstart + BLOCK_BYTES_U64);
            cx.with(b, |d| {
                out[(lo - offset) as usize..(hi - offset) as usize]
                    .copy_from_slice(&d[(lo - bstart) as usize..(hi - bstart) as usize]);
            });
        }
    }
    cx.cpu(copy_ns(cx, out.len() as u64)).await;
    Ok(out)
}

/// A buffered read with read-ahead, block by block as Linux's `filemap_read` goes: a block
/// neither cached nor being read starts a synchronous window (`Cx::read_ahead`), a marked one
/// the next asynchronous window; the reader waits for the block (read ahead, or read alone
/// when read-ahead had no room for it) and copies it. Holes read as zeros.
async fn read_through_read_ahead(
    cx: &Cx,
    fh: Fh,
    inode: &Inode,
    offset: u64,
    out: &mut [u8],
) -> Result<(), FsError> {
    let end = offset + out.len() as u64;
    let last = end.div_ceil(BLOCK_BYTES_U64);
    let mut fb = offset / BLOCK_BYTES_U64;
    while fb < last {
        let Some(b) = inode.map(fb as u32) else {
            fb += 1;
            continue;
        };
        if !cx.cached_or_coming(b) {
            cx.read_ahead(fh, inode, fb, last - fb, false);
        }
        if cx.take_readahead_mark(b) {
            cx.read_ahead(fh, inode, fb, last - fb, true);
        }
        cx.load(b, BlockClass::Data).await?;
        let bstart = fb * BLOCK_BYTES_U64;
        let (lo, hi) = (offset.max(bstart), end.min(bstart + BLOCK_BYTES_U64));
        cx.with(b, |d| {
            out[(lo - offset) as usize..(hi - offset) as usize]
                .copy_from_slice(&d[(lo - bstart) as usize..(hi - bstart) as usize]);
        });
        fb += 1;
    }
    if let Some(h) = cx.st.borrow_mut().handles.get_mut(&fh) {
        h.ra.prev_pos = Some(end);
    }
    Ok(())
}

fn copy_ns(cx: &Cx, bytes: u64) -> u64 {
    bytes.div_ceil(BLOCK_BYTES_U64) * cx.cfg.copy_ns_per_4k
}

pub async fn write(cx: &Cx, fh: Fh, offset: u64, data: &[u8]) -> Result<u64, FsError> {
    let (h, mut inode) = handle_inode(cx, fh).await?;
    if !h.write {
        return Err(FsError::BadHandle(fh.0));
    }
    let off = if h.append { inode.size_bytes } else { offset };
    if inode.append_only() && off != inode.size_bytes {
        // A handle opened before the flag was set: its blocks may not be replaced.
        return Err(FsError::AppendOnly(format!("{}", h.ino)));
    }
    let len = (data.len() as u64).min(cx.cfg.write_bytes_max);
    if len == 0 {
        return Ok(0);
    }
    if off.checked_add(len).is_none_or(|e| e > FILE_BYTES_MAX) {
        return Err(FsError::InvalidArgument(
            "write beyond the largest file size",
        ));
    }
    if off > inode.size_bytes {
        zero_tail(cx, &inode, inode.size_bytes).await?;
    }
    let mut written = 0u64;
    let mut failure = None;
    while written < len {
        let pos = off + written;
        let fb = (pos / BLOCK_BYTES_U64) as u32;
        let within = (pos % BLOCK_BYTES_U64) as usize;
        let n = ((BLOCK_BYTES - within) as u64).min(len - written) as usize;
        let src = &data[written as usize..written as usize + n];
        match inode.map(fb) {
            Some(b) if n == BLOCK_BYTES => cx.install(b, BlockClass::Data, src.to_vec()).await?,
            Some(b) => {
                cx.load(b, BlockClass::Data).await?;
                cx.with_mut(b, |d| d[within..within + n].copy_from_slice(src));
            }
            None => match cx.grow(&mut inode, fb).await {
                Ok(b) => {
                    let mut block = vec![0u8; BLOCK_BYTES];
                    block[within..within + n].copy_from_slice(src);
                    cx.install(b, BlockClass::Data, block).await?;
                }
                Err(e @ (FsError::NoSpace(_) | FsError::TooManyExtents(_))) => {
                    failure = Some(e);
                    break;
                }
                Err(e) => return Err(e),
            },
        }
        written += n as u64;
    }
    if written == 0 {
        return Err(failure.expect("a write that wrote nothing failed"));
    }
    inode.size_bytes = inode.size_bytes.max(off + written);
    let now = cx.now().as_ns();
    inode.mtime_ns = now;
    inode.ctime_ns = now;
    cx.write_inode(h.ino, &inode).await?;
    cx.cpu(copy_ns(cx, written)).await;
    Ok(written)
}

/// Zeroes the bytes of the block holding byte `from` that lie at or after it (no-op at a
/// block boundary or in a hole), so a later extension reads zeros there.
async fn zero_tail(cx: &Cx, inode: &Inode, from: u64) -> Result<(), FsError> {
    let within = (from % BLOCK_BYTES_U64) as usize;
    if within == 0 {
        return Ok(());
    }
    if let Some(b) = inode.map((from / BLOCK_BYTES_U64) as u32) {
        cx.load(b, BlockClass::Data).await?;
        cx.with_mut(b, |d| d[within..].fill(0));
    }
    Ok(())
}

/// Sets a file's size: frees blocks past a smaller size; zeroes the stale tail before growing.
async fn set_size(cx: &Cx, ino: Ino, inode: &mut Inode, size: u64) -> Result<(), FsError> {
    resize(cx, ino, inode, size, true).await
}

/// [`set_size`], zeroing the tail before growing only when `zero_tail_on_grow`.
async fn resize(
    cx: &Cx,
    ino: Ino,
    inode: &mut Inode,
    size: u64,
    zero_tail_on_grow: bool,
) -> Result<(), FsError> {
    if size < inode.size_bytes {
        let keep = size.div_ceil(BLOCK_BYTES_U64) as u32;
        for (start, len) in inode.cut_from(keep) {
            cx.free_blocks(start, len).await?;
        }
        cx.shrink_extent_block(inode).await?;
    } else if zero_tail_on_grow {
        zero_tail(cx, inode, inode.size_bytes).await?;
    }
    inode.size_bytes = size;
    let now = cx.now().as_ns();
    inode.mtime_ns = now;
    inode.ctime_ns = now;
    cx.write_inode(ino, inode).await
}

pub async fn truncate_path(cx: &Cx, caller: Caller, path: &str, size: u64) -> Result<(), FsError> {
    if size > FILE_BYTES_MAX {
        return Err(FsError::InvalidArgument(
            "size beyond the largest file size",
        ));
    }
    let (ino, mut inode) = cx.resolve(caller, path).await?;
    if inode.kind() == FileKind::Dir {
        return Err(FsError::IsDir(path.to_string()));
    }
    require(&inode, caller, Access::Write, path)?;
    if inode.append_only() {
        return Err(FsError::AppendOnly(path.to_string()));
    }
    set_size(cx, ino, &mut inode, size).await
}

/// `SetSize`: the size of a file whose bytes its caller writes to the file's blocks itself
/// (a device's own data path, as AccelFS's). Nothing is zeroed — the caller owns every byte
/// of the mapped blocks, and zeroing a tail here would put a stale copy of the caller's
/// block in the cache, to be written over the caller's newer data at the next commit; blocks
/// wholly past a smaller size are freed as by truncate. Commits with the next commit.
pub async fn set_size_owned(cx: &Cx, fh: Fh, size: u64) -> Result<(), FsError> {
    let (h, mut inode) = handle_inode(cx, fh).await?;
    if !h.write {
        return Err(FsError::BadHandle(fh.0));
    }
    if size > FILE_BYTES_MAX {
        return Err(FsError::InvalidArgument(
            "size beyond the largest file size",
        ));
    }
    if inode.append_only() && size < inode.size_bytes {
        return Err(FsError::InvalidArgument("shrinking an append-only file"));
    }
    resize(cx, h.ino, &mut inode, size, false).await
}

/// Blocks one `Fallocate` allocates at most: eight bitmap blocks' worth (1 GiB), so the
/// metadata it dirties (those bitmap blocks, the inode's table and extent blocks) stays far
/// below half of the smallest journal (`JOURNAL_BLOCKS_MIN`).
pub const FALLOCATE_BLOCKS_MAX: u32 = 8 * crate::format::superblock::BITS_PER_BLOCK;

/// `fallocate(fh, 0, offset, len)`: maps every unmapped block of the range to newly
/// allocated, contiguous where possible, blocks and raises the size to the range's end.
/// At most [`FALLOCATE_BLOCKS_MAX`] blocks per call: answers how many bytes of the range
/// (from `offset`) are now covered, like a short write; the caller continues from there.
/// The new blocks are not zeroed: they read as whatever the device holds (this file system
/// has no unwritten-extent flag; INSIDER §3.3.2 asks the users of virtual writes to clear
/// it anyway).
pub async fn fallocate(cx: &Cx, fh: Fh, offset: u64, len: u64) -> Result<u64, FsError> {
    let (h, mut inode) = handle_inode(cx, fh).await?;
    if !h.write {
        return Err(FsError::BadHandle(fh.0));
    }
    if len == 0 {
        return Err(FsError::InvalidArgument("fallocate of zero bytes"));
    }
    let end = offset
        .checked_add(len)
        .filter(|&e| e <= FILE_BYTES_MAX)
        .ok_or(FsError::InvalidArgument(
            "fallocate beyond the largest file size",
        ))?;
    let first = (offset / BLOCK_BYTES_U64) as u32;
    let end_fb = end.div_ceil(BLOCK_BYTES_U64) as u32;
    let stop = end_fb.min(first.saturating_add(FALLOCATE_BLOCKS_MAX));
    let unmapped = u64::from(stop - first)
        - inode
            .extents
            .iter()
            .map(|e| {
                u64::from(
                    e.file_end()
                        .min(stop)
                        .saturating_sub(e.file_block.max(first)),
                )
            })
            .sum::<u64>();
    // One more for an extent block the new extents may need.
    cx.need_blocks(unmapped + 1)?;
    let old_size = inode.size_bytes;
    let mut fb = first;
    while fb < stop {
        if inode.map(fb).is_some() {
            fb += 1;
            continue;
        }
        let next_mapped = inode
            .extents
            .iter()
            .map(|e| e.file_block)
            .find(|&s| s > fb)
            .unwrap_or(stop)
            .min(stop);
        let goal = fb
            .checked_sub(1)
            .and_then(|p| inode.map(p))
            .map(|b| BlockNo(b.0 + 1));
        let (start, n) = cx.alloc_run(goal, next_mapped - fb).await?;
        let merges = goal == Some(start);
        if !merges {
            if inode.extents.len() >= EXTENTS_MAX {
                cx.free_blocks(start, n).await?;
                break;
            }
            if inode.extents.len() == INLINE_EXTENTS && inode.extent_block.is_none() {
                inode.extent_block = Some(cx.alloc_block(None).await?);
            }
        }
        inode.add_run(fb, start, n);
        fb += n;
    }
    if fb == first {
        return Err(FsError::TooManyExtents(EXTENTS_MAX));
    }
    let covered_end = (u64::from(fb) * BLOCK_BYTES_U64).min(end);
    if covered_end > old_size {
        zero_tail(cx, &inode, old_size).await?;
        inode.size_bytes = covered_end;
    }
    let now = cx.now().as_ns();
    inode.mtime_ns = now;
    inode.ctime_ns = now;
    cx.write_inode(h.ino, &inode).await?;
    Ok(covered_end - offset)
}

/// The handle's file's extents in file order, as device byte ranges.
pub async fn extents(cx: &Cx, fh: Fh) -> Result<Vec<FileExtent>, FsError> {
    let (_, inode) = handle_inode(cx, fh).await?;
    Ok(inode
        .extents
        .iter()
        .map(|e| FileExtent {
            file_offset_bytes: u64::from(e.file_block) * BLOCK_BYTES_U64,
            device_offset_bytes: e.start.offset_bytes(),
            len_bytes: u64::from(e.len) * BLOCK_BYTES_U64,
        })
        .collect())
}
