//! The storage the pipeline runs over, supplied by the caller: a simulator maps each call to
//! its device file system and charges time; `MemIo` keeps files in memory for tests.

use crate::error::GenomeError;
use std::collections::BTreeMap;

/// Files by path. Reads are positional and may return fewer bytes than asked (0 at the end).
pub trait GenomeIo {
    /// The file's length in bytes.
    fn file_len_bytes(&mut self, path: &str) -> Result<u64, GenomeError>;
    /// Reads into `buf` from `offset`; returns the bytes read (0 at or past the end).
    fn read_at(&mut self, path: &str, offset: u64, buf: &mut [u8]) -> Result<usize, GenomeError>;
    /// Creates `path` empty, replacing any file there.
    fn create(&mut self, path: &str) -> Result<(), GenomeError>;
    /// Appends `data` to `path`, which must exist.
    fn append(&mut self, path: &str, data: &[u8]) -> Result<(), GenomeError>;
}

/// Files kept in memory.
#[derive(Debug, Default, Clone)]
pub struct MemIo {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemIo {
    /// No files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts a whole file.
    pub fn insert(&mut self, path: &str, data: Vec<u8>) {
        self.files.insert(path.to_string(), data);
    }

    /// A file's bytes.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    fn file(&self, path: &str) -> Result<&Vec<u8>, GenomeError> {
        self.files.get(path).ok_or_else(|| GenomeError::Io {
            path: path.to_string(),
            reason: "no such file".to_string(),
        })
    }
}

impl GenomeIo for MemIo {
    fn file_len_bytes(&mut self, path: &str) -> Result<u64, GenomeError> {
        Ok(self.file(path)?.len() as u64)
    }

    fn read_at(&mut self, path: &str, offset: u64, buf: &mut [u8]) -> Result<usize, GenomeError> {
        let f = self.file(path)?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(f.len());
        let n = buf.len().min(f.len() - start);
        buf[..n].copy_from_slice(&f[start..start + n]);
        Ok(n)
    }

    fn create(&mut self, path: &str) -> Result<(), GenomeError> {
        self.files.insert(path.to_string(), Vec::new());
        Ok(())
    }

    fn append(&mut self, path: &str, data: &[u8]) -> Result<(), GenomeError> {
        let f = self.files.get_mut(path).ok_or_else(|| GenomeError::Io {
            path: path.to_string(),
            reason: "append to a missing file".to_string(),
        })?;
        f.extend_from_slice(data);
        Ok(())
    }
}
