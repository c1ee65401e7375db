//! fsck: checks the image on the device (read raw, past the cache) and names every problem:
//! the superblock and journal records decode; every inode reachable from the root decodes
//! (checksum, mode, extents) and is allocated; directory blocks decode, names are unique,
//! entry kinds match inodes, every directory is reached once and records its parent; link
//! counts match the references; no block is owned twice, lies outside the data area, or is
//! owned but marked free; no allocated inode is unreachable and no block is leaked.
//! Memory is bounded by two bitsets over the device's blocks plus the directory queue.

use crate::error::FsError;
use crate::exec::Cx;
use crate::format::dir::{self, DIRENTS_PER_BLOCK};
use crate::format::inode::{Inode, INODE_BYTES};
use crate::format::journal::Descriptor;
use crate::format::superblock::{Superblock, BITS_PER_BLOCK};
use crate::types::{BlockNo, FileKind, Ino, BLOCK_BYTES_U64, ROOT_INO};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FsckProblem {
    /// A stable short name (`block-owned-twice`, `link-count`, ...).
    pub code: &'static str,
    pub detail: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FsckReport {
    pub problems: Vec<FsckProblem>,
    pub files: u64,
    pub dirs: u64,
    /// Blocks owned by files and directories (data, directory and extent blocks).
    pub blocks_owned: u64,
}

impl FsckReport {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    fn note(&mut self, code: &'static str, detail: String) {
        self.problems.push(FsckProblem { code, detail });
    }
}

struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u32) -> Bits {
        Bits(vec![0; (n as usize).div_ceil(64)])
    }
    fn get(&self, i: u32) -> bool {
        self.0[(i / 64) as usize] & (1 << (i % 64)) != 0
    }
    /// Sets bit `i`; returns whether it was set before.
    fn set(&mut self, i: u32) -> bool {
        let was = self.get(i);
        self.0[(i / 64) as usize] |= 1 << (i % 64);
        was
    }
}

fn bitmap_bit(blocks: &[Vec<u8>], i: u32) -> bool {
    let b = &blocks[(i / BITS_PER_BLOCK) as usize];
    let bit = (i % BITS_PER_BLOCK) as usize;
    b[bit / 8] & (1 << (bit % 8)) != 0
}

struct Walk<'a> {
    cx: &'a Cx,
    sb: Superblock,
    inode_bm: Vec<Vec<u8>>,
    block_bm: Vec<Vec<u8>>,
    owned: Bits,
    reached: Bits,
    report: FsckReport,
}

/// Checks the on-device image. I/O errors end the check with the error.
pub(crate) async fn check(cx: &Cx) -> Result<FsckReport, FsError> {
    let mut report = FsckReport::default();
    let sb = match Superblock::decode(&cx.read_raw(BlockNo(0)).await?, cx.capacity_bytes) {
        Ok(sb) => sb,
        Err(e) => {
            report.note("superblock", e.to_string());
            return Ok(report);
        }
    };
    if let Err(e) = Descriptor::decode(&cx.read_raw(sb.journal_block(0)).await?) {
        report.note("journal", e.to_string());
    }
    let ibm: Vec<BlockNo> = (0..sb.inode_bitmap_blocks)
        .map(|i| BlockNo(sb.inode_bitmap_start.0 + i))
        .collect();
    let bbm: Vec<BlockNo> = (0..sb.block_bitmap_blocks)
        .map(|i| BlockNo(sb.block_bitmap_start.0 + i))
        .collect();
    let mut w = Walk {
        cx,
        sb,
        inode_bm: cx.read_raw_many(&ibm).await?,
        block_bm: cx.read_raw_many(&bbm).await?,
        owned: Bits::new(sb.total_blocks),
        reached: Bits::new(sb.inode_count + 1),
        report,
    };
    for b in 0..sb.data_start.0 {
        if !bitmap_bit(&w.block_bm, b) {
            w.report.note(
                "bitmap-metadata",
                format!("metadata block {b} is marked free"),
            );
        }
    }
    w.walk().await?;
    w.unreached();
    Ok(w.report)
}

impl Walk<'_> {
    fn claim(&mut self, ino: Ino, b: BlockNo) {
        if !self.sb.is_data_block(b) {
            self.report
                .note("block-out-of-range", format!("{ino} points at {b}"));
            return;
        }
        if self.owned.set(b.0) {
            self.report
                .note("block-owned-twice", format!("{b} (again by {ino})"));
        }
        if !bitmap_bit(&self.block_bm, b.0) {
            self.report.note(
                "block-marked-free",
                format!("{b} of {ino} is free in the bitmap"),
            );
        }
        self.report.blocks_owned += 1;
    }

    /// Reads and checks an inode; claims its blocks.
    async fn inode(&mut self, ino: Ino) -> Result<Option<Inode>, FsError> {
        if !self.sb.valid_ino(ino) {
            self.report
                .note("inode-range", format!("{ino} out of range"));
            return Ok(None);
        }
        if !bitmap_bit(&self.inode_bm, ino.0 - 1) {
            self.report.note(
                "inode-not-allocated",
                format!("{ino} is reachable but free"),
            );
        }
        let (blk, off) = self.sb.inode_location(ino);
        let raw = self.cx.read_raw(blk).await?;
        let slot = &raw[off..off + INODE_BYTES];
        let mut inode = match Inode::decode(ino, slot) {
            Ok(i) => i,
            Err(e) => {
                self.report.note("inode", e.to_string());
                return Ok(None);
            }
        };
        if let Some(xb) = inode.extent_block {
            self.claim(ino, xb);
            if self.sb.is_data_block(xb) {
                let data = self.cx.read_raw(xb).await?;
                if let Err(e) =
                    inode.decode_extent_block(ino, xb, &data, Inode::recorded_extents(slot))
                {
                    self.report.note("extent-block", e.to_string());
                    return Ok(None);
                }
            }
        }
        if !inode.extents_well_formed() {
            self.report
                .note("extents", format!("{ino}: extents overlap or are empty"));
            return Ok(None);
        }
        for e in inode.extents.clone() {
            for k in 0..e.len {
                self.claim(ino, BlockNo(e.start.0.saturating_add(k)));
            }
        }
        Ok(Some(inode))
    }

    async fn walk(&mut self) -> Result<(), FsError> {
        let mut refs: BTreeMap<Ino, (u16, Option<u16>)> = BTreeMap::new();
        let mut queue = VecDeque::from([(ROOT_INO, ROOT_INO)]);
        self.reached.set(ROOT_INO.0);
        while let Some((dino, parent)) = queue.pop_front() {
            let Some(d) = self.inode(dino).await? else {
                continue;
            };
            self.report.dirs += 1;
            if d.kind() != FileKind::Dir {
                self.report
                    .note("not-a-dir", format!("{dino} is listed as a directory"));
                continue;
            }
            if d.parent != parent {
                self.report.note(
                    "dir-parent",
                    format!(
                        "{dino} records parent {} but is listed in {}",
                        d.parent.0, parent.0
                    ),
                );
            }
            let nblocks = d.size_bytes / BLOCK_BYTES_U64;
            if !d.size_bytes.is_multiple_of(BLOCK_BYTES_U64) || nblocks != d.mapped_blocks() {
                self.report.note(
                    "dir-size",
                    format!("{dino}: size does not match its blocks"),
                );
                continue;
            }
            let mut names = BTreeSet::new();
            let mut subdirs = 0u64;
            for fb in 0..nblocks as u32 {
                let Some(b) = d.map(fb) else {
                    self.report.note("dir-hole", format!("{dino} block {fb}"));
                    continue;
                };
                let data = self.cx.read_raw(b).await?;
                if let Err(e) = dir::check_block(dino, b, &data) {
                    self.report.note("dir-block", e.to_string());
                    continue;
                }
                for slot in 0..DIRENTS_PER_BLOCK {
                    let Some(e) = dir::entry(&data, slot) else {
                        continue;
                    };
                    if !names.insert(e.name.clone()) {
                        self.report.note(
                            "dir-duplicate-name",
                            format!("{dino}: {}", String::from_utf8_lossy(&e.name)),
                        );
                    }
                    if !self.sb.valid_ino(e.ino) || e.ino == ROOT_INO {
                        self.report
                            .note("dirent-inode", format!("{dino} lists {}", e.ino));
                        continue;
                    }
                    let r = refs.entry(e.ino).or_insert((0, None));
                    r.0 = r.0.saturating_add(1);
                    match e.kind {
                        FileKind::Dir => {
                            subdirs += 1;
                            if self.reached.set(e.ino.0) {
                                self.report.note(
                                    "dir-linked-twice",
                                    format!("{} (again in {dino})", e.ino),
                                );
                            } else {
                                queue.push_back((e.ino, dino));
                            }
                        }
                        FileKind::File => {
                            if self.reached.set(e.ino.0) {
                                // A second name for a file: counted, checked by link counts.
                                continue;
                            }
                            self.file(e.ino, &mut refs).await?;
                        }
                    }
                }
            }
            if u64::from(d.link_count) != 2 + subdirs {
                self.report.note(
                    "link-count",
                    format!(
                        "directory {dino}: link count {} but {subdirs} subdirectories",
                        d.link_count
                    ),
                );
            }
        }
        for (ino, (n, links)) in refs {
            if let Some(file_links) = links.filter(|&l| l != n) {
                self.report.note(
                    "link-count",
                    format!("file {ino}: link count {file_links} but {n} names"),
                );
            }
        }
        Ok(())
    }

    async fn file(
        &mut self,
        ino: Ino,
        refs: &mut BTreeMap<Ino, (u16, Option<u16>)>,
    ) -> Result<(), FsError> {
        let Some(f) = self.inode(ino).await? else {
            return Ok(());
        };
        self.report.files += 1;
        if f.kind() != FileKind::File {
            self.report.note(
                "dirent-kind",
                format!("{ino} is listed as a file but is a directory"),
            );
            return Ok(());
        }
        let eof_block = f.size_bytes.div_ceil(BLOCK_BYTES_U64);
        if f.extents
            .last()
            .is_some_and(|e| u64::from(e.file_end()) > eof_block)
        {
            self.report.note(
                "blocks-past-eof",
                format!("{ino}: blocks mapped past its size"),
            );
        }
        refs.entry(ino).or_insert((0, None)).1 = Some(f.link_count);
        Ok(())
    }

    fn unreached(&mut self) {
        for i in 1..=self.sb.inode_count {
            if bitmap_bit(&self.inode_bm, i - 1) && !self.reached.get(i) {
                self.report.note(
                    "orphan-inode",
                    format!("inode {i} is allocated but unreachable"),
                );
            }
        }
        for b in self.sb.data_start.0..self.sb.total_blocks {
            if bitmap_bit(&self.block_bm, b) && !self.owned.get(b) {
                self.report.note(
                    "block-leaked",
                    format!("block {b} is in use but owned by nothing"),
                );
            }
        }
    }
}
