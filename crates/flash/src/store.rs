//! Page stores: where the bytes of programmed pages (data + spare area) live. `MemoryStore`
//! keeps them in RAM, `SparseFileStore` in a sparse file (a device larger than RAM), and
//! `NoStore` keeps nothing (timing fidelity). Erased pages read as 0xFF. A store never
//! interprets the bytes: torn pages hold garbage and only the FTL's checksums expose them.
//!
//! File errors do not unwind through the model: the file store remembers the first one and
//! the driver checks `health()` after each event, failing the run with that error.

use crate::geometry::{BlockId, PageId};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use thiserror::Error;

/// Bytes of the spare area that nearflash's FTL uses for its per-page record.
pub const OOB_BYTES_MIN: u32 = 40;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("backing file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What a page physically holds (for diagnostics; firmware learns it only from checksums).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    Erased,
    Programmed,
}

/// `Send + Sync`: a preconditioned device (and its store) is shared by a reproduction's
/// worker threads, each starting its run from a copy.
pub trait PageStore: Send + Sync {
    /// Whether this store keeps data at all (false in timing fidelity).
    fn holds_data(&self) -> bool;
    /// Writes a page's data and spare bytes.
    fn program(&mut self, page: PageId, data: &[u8], oob: &[u8]);
    /// Reads a page into `data` and `oob`; erased pages read as 0xFF.
    fn read(&mut self, page: PageId, data: &mut [u8], oob: &mut [u8]) -> PageState;
    /// Erases every page of `block`.
    fn erase(&mut self, block: BlockId, pages_per_block: u32);
    /// The first environmental error, if any.
    fn health(&self) -> Result<(), &StoreError>;
    /// A copy holding the same pages, if this store can have one: a store in memory can, a
    /// store over a file cannot (two devices would write one file). Used to continue several
    /// runs from one snapshot of a device (`Backbone::try_clone`).
    fn try_clone(&self) -> Option<Box<dyn PageStore>>;
}

/// Keeps nothing: programs are dropped, reads see erased pages.
pub struct NoStore;

impl PageStore for NoStore {
    fn holds_data(&self) -> bool {
        false
    }
    fn program(&mut self, _: PageId, _: &[u8], _: &[u8]) {}
    fn read(&mut self, _: PageId, data: &mut [u8], oob: &mut [u8]) -> PageState {
        data.fill(0xFF);
        oob.fill(0xFF);
        PageState::Erased
    }
    fn erase(&mut self, _: BlockId, _: u32) {}
    fn health(&self) -> Result<(), &StoreError> {
        Ok(())
    }
    fn try_clone(&self) -> Option<Box<dyn PageStore>> {
        Some(Box::new(NoStore))
    }
}

/// Pages in RAM, allocated when first programmed and freed when erased: memory follows the
/// data written, not the device's size (a 1 TB device holding a few MB costs a few MB).
#[derive(Clone)]
pub struct MemoryStore {
    pages: HashMap<u64, Box<[u8]>>,
    page_count: u64,
    page_size: usize,
}

impl MemoryStore {
    pub fn new(page_count: u64, page_size_bytes: u32) -> Self {
        MemoryStore {
            pages: HashMap::new(),
            page_count,
            page_size: page_size_bytes as usize,
        }
    }

    /// Pages holding data now.
    pub fn programmed_pages(&self) -> usize {
        self.pages.len()
    }
}

impl PageStore for MemoryStore {
    fn holds_data(&self) -> bool {
        true
    }
    fn program(&mut self, page: PageId, data: &[u8], oob: &[u8]) {
        debug_assert_eq!(data.len(), self.page_size);
        assert!(
            page.0 < self.page_count,
            "page {} of {}",
            page.0,
            self.page_count
        );
        let mut buf = Vec::with_capacity(data.len() + oob.len());
        buf.extend_from_slice(data);
        buf.extend_from_slice(oob);
        self.pages.insert(page.0, buf.into_boxed_slice());
    }
    fn read(&mut self, page: PageId, data: &mut [u8], oob: &mut [u8]) -> PageState {
        match self.pages.get(&page.0) {
            None => {
                data.fill(0xFF);
                oob.fill(0xFF);
                PageState::Erased
            }
            Some(buf) => {
                data.copy_from_slice(&buf[..self.page_size]);
                let n = oob.len().min(buf.len() - self.page_size);
                oob[..n].copy_from_slice(&buf[self.page_size..self.page_size + n]);
                oob[n..].fill(0xFF);
                PageState::Programmed
            }
        }
    }
    fn erase(&mut self, block: BlockId, pages_per_block: u32) {
        let first = block.0 * u64::from(pages_per_block);
        for p in first..first + u64::from(pages_per_block) {
            self.pages.remove(&p);
        }
    }
    fn health(&self) -> Result<(), &StoreError> {
        Ok(())
    }
    fn try_clone(&self) -> Option<Box<dyn PageStore>> {
        Some(Box::new(self.clone()))
    }
}

/// Pages in a sparse file, one slot of `page + oob` bytes per page; a bit per page says
/// whether the slot holds a programmed page. Unwritten slots stay holes on disk.
pub struct SparseFileStore {
    file: File,
    path: String,
    programmed: Vec<u64>,
    page_size: usize,
    slot_bytes: u64,
    error: Option<StoreError>,
}

impl SparseFileStore {
    pub fn create(
        path: &Path,
        page_count: u64,
        page_size_bytes: u32,
        oob_size_bytes: u32,
    ) -> Result<Self, StoreError> {
        let path_s = path.display().to_string();
        let io = |source| StoreError::Io {
            path: path_s.clone(),
            source,
        };
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io)?;
        let slot_bytes = u64::from(page_size_bytes) + u64::from(oob_size_bytes);
        file.set_len(page_count * slot_bytes).map_err(io)?;
        Ok(SparseFileStore {
            file,
            path: path_s,
            programmed: vec![0; page_count.div_ceil(64) as usize],
            page_size: page_size_bytes as usize,
            slot_bytes,
            error: None,
        })
    }

    fn note(&mut self, r: std::io::Result<()>) {
        if let (Err(source), None) = (r, &self.error) {
            self.error = Some(StoreError::Io {
                path: self.path.clone(),
                source,
            });
        }
    }

    fn is_programmed(&self, page: PageId) -> bool {
        self.programmed[(page.0 / 64) as usize] & (1 << (page.0 % 64)) != 0
    }
}

impl PageStore for SparseFileStore {
    fn holds_data(&self) -> bool {
        true
    }
    fn program(&mut self, page: PageId, data: &[u8], oob: &[u8]) {
        debug_assert_eq!(data.len(), self.page_size);
        let at = page.0 * self.slot_bytes;
        let r = self
            .file
            .write_all_at(data, at)
            .and_then(|_| self.file.write_all_at(oob, at + self.page_size as u64));
        self.note(r);
        self.programmed[(page.0 / 64) as usize] |= 1 << (page.0 % 64);
    }
    fn read(&mut self, page: PageId, data: &mut [u8], oob: &mut [u8]) -> PageState {
        if !self.is_programmed(page) {
            data.fill(0xFF);
            oob.fill(0xFF);
            return PageState::Erased;
        }
        let at = page.0 * self.slot_bytes;
        let r = self
            .file
            .read_exact_at(data, at)
            .and_then(|_| self.file.read_exact_at(oob, at + self.page_size as u64));
        self.note(r);
        PageState::Programmed
    }
    fn erase(&mut self, block: BlockId, pages_per_block: u32) {
        let first = block.0 * u64::from(pages_per_block);
        for p in first..first + u64::from(pages_per_block) {
            self.programmed[(p / 64) as usize] &= !(1 << (p % 64));
        }
    }
    fn health(&self) -> Result<(), &StoreError> {
        match &self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
    /// A file cannot back two devices.
    fn try_clone(&self) -> Option<Box<dyn PageStore>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(store: &mut dyn PageStore) {
        let data = vec![7u8; 16];
        let oob = vec![9u8; 40];
        let (mut d, mut o) = (vec![0u8; 16], vec![0u8; 40]);
        assert_eq!(store.read(PageId(5), &mut d, &mut o), PageState::Erased);
        assert!(d.iter().all(|&b| b == 0xFF));
        store.program(PageId(5), &data, &oob);
        assert_eq!(store.read(PageId(5), &mut d, &mut o), PageState::Programmed);
        assert_eq!(
            (d.as_slice(), o.as_slice()),
            (data.as_slice(), oob.as_slice())
        );
        store.erase(BlockId(1), 4);
        assert_eq!(store.read(PageId(5), &mut d, &mut o), PageState::Erased);
        assert!(store.health().is_ok());
    }

    #[test]
    fn memory_store_round_trips_and_erases() {
        round_trip(&mut MemoryStore::new(16, 16));
    }

    #[test]
    fn sparse_file_store_round_trips_and_erases() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SparseFileStore::create(&dir.path().join("dev.img"), 16, 16, 40).unwrap();
        round_trip(&mut s);
    }

    #[test]
    fn sparse_file_in_missing_directory_is_a_clear_error() {
        let e = SparseFileStore::create(Path::new("/nonexistent/dir/dev.img"), 16, 16, 40)
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/dir/dev.img"), "{e}");
    }
}
