//! Directory blocks: a 128-byte header (magic, owning directory, checksum) and 31 entries of
//! 128 bytes (inode, name length, kind, name). An entry with inode 0 is free. `.` and `..`
//! are not stored: `..` is the parent recorded in the directory's inode.

use super::{crc, get_u32, put_u32};
use crate::error::{Corruption, FsError};
use crate::types::{BlockNo, FileKind, Ino, BLOCK_BYTES};

pub const DIR_MAGIC: &[u8; 4] = b"NFDR";
pub const DIRENT_BYTES: usize = 128;
pub const DIRENTS_PER_BLOCK: usize = BLOCK_BYTES / DIRENT_BYTES - 1;
/// Longest name, in bytes (`NAME_MAX`).
pub const NAME_BYTES_MAX: usize = DIRENT_BYTES - 8;

/// One stored entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawEntry {
    pub ino: Ino,
    pub kind: FileKind,
    pub name: Vec<u8>,
}

/// Checks a single path component.
pub fn check_name(name: &str) -> Result<(), FsError> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(FsError::InvalidName(name.to_string()));
    }
    if name.len() > NAME_BYTES_MAX {
        return Err(FsError::NameTooLong {
            len: name.len(),
            max: NAME_BYTES_MAX,
        });
    }
    Ok(())
}

/// An empty directory block owned by `dir`.
pub fn empty_block(dir: Ino) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK_BYTES];
    b[0..4].copy_from_slice(DIR_MAGIC);
    put_u32(&mut b, 4, dir.0);
    seal(&mut b);
    b
}

/// Recomputes the block checksum after entries changed.
pub fn seal(b: &mut [u8]) {
    let c = crc(&[&b[0..8], &b[12..]]);
    put_u32(b, 8, c);
}

/// Checks a directory block's header and checksum.
pub fn check_block(dir: Ino, block: BlockNo, b: &[u8]) -> Result<(), Corruption> {
    let bad = |what| Corruption::DirBlock { dir, block, what };
    if &b[0..4] != DIR_MAGIC {
        return Err(bad("bad magic"));
    }
    if crc(&[&b[0..8], &b[12..]]) != get_u32(b, 8) {
        return Err(bad("checksum mismatch"));
    }
    if get_u32(b, 4) != dir.0 {
        return Err(bad("belongs to another directory"));
    }
    for slot in 0..DIRENTS_PER_BLOCK {
        let at = slot_at(slot);
        if get_u32(b, at) != 0 {
            let len = b[at + 4] as usize;
            if len == 0 || len > NAME_BYTES_MAX || kind_of(b[at + 5]).is_none() {
                return Err(bad("malformed entry"));
            }
        }
    }
    Ok(())
}

fn slot_at(slot: usize) -> usize {
    DIRENT_BYTES * (slot + 1)
}

fn kind_of(code: u8) -> Option<FileKind> {
    match code {
        1 => Some(FileKind::File),
        2 => Some(FileKind::Dir),
        _ => None,
    }
}

fn code_of(kind: FileKind) -> u8 {
    match kind {
        FileKind::File => 1,
        FileKind::Dir => 2,
    }
}

/// The entry in `slot`, if used (the block was checked by `check_block`).
pub fn entry(b: &[u8], slot: usize) -> Option<RawEntry> {
    let at = slot_at(slot);
    let ino = get_u32(b, at);
    if ino == 0 {
        return None;
    }
    let len = b[at + 4] as usize;
    Some(RawEntry {
        ino: Ino(ino),
        kind: kind_of(b[at + 5]).expect("checked block"),
        name: b[at + 8..at + 8 + len].to_vec(),
    })
}

/// Writes (or with `None`, clears) `slot` and reseals the block.
pub fn set_entry(b: &mut [u8], slot: usize, e: Option<&RawEntry>) {
    let at = slot_at(slot);
    b[at..at + DIRENT_BYTES].fill(0);
    if let Some(e) = e {
        debug_assert!(!e.name.is_empty() && e.name.len() <= NAME_BYTES_MAX);
        put_u32(b, at, e.ino.0);
        b[at + 4] = e.name.len() as u8;
        b[at + 5] = code_of(e.kind);
        b[at + 8..at + 8 + e.name.len()].copy_from_slice(&e.name);
    }
    seal(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_the_checksum_guards_them() {
        let mut b = empty_block(Ino(3));
        let e = RawEntry {
            ino: Ino(42),
            kind: FileKind::Dir,
            name: b"photos".to_vec(),
        };
        set_entry(&mut b, 30, Some(&e));
        check_block(Ino(3), BlockNo(9), &b).unwrap();
        assert_eq!(entry(&b, 30), Some(e));
        assert_eq!(entry(&b, 0), None);
        assert!(check_block(Ino(4), BlockNo(9), &b).is_err());
        b[DIRENT_BYTES * 31 + 9] ^= 1;
        let err = check_block(Ino(3), BlockNo(9), &b).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("a.txt").is_ok());
        for bad in ["", ".", "..", "a/b", "x\0"] {
            assert!(
                matches!(check_name(bad), Err(FsError::InvalidName(_))),
                "{bad:?}"
            );
        }
        let long = "n".repeat(NAME_BYTES_MAX + 1);
        assert!(matches!(
            check_name(&long),
            Err(FsError::NameTooLong { len: 121, max: 120 })
        ));
    }
}
