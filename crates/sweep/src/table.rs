//! The sweep's table, `DIR/results.csv`: a header (`point,seed,<swept>,<metrics>`) and one
//! row per finished point, appended (and flushed to the file system) as each finishes, so a
//! sweep killed at any moment keeps every finished row. Opening an existing table resumes it:
//! the header must match the spec's, a torn last line (a kill mid-write) is cut off, and rows
//! of points the spec does not have are refused (another sweep's table). When every point is
//! in, the table is rewritten atomically in the spec's point order, so the same spec gives
//! byte-identical tables whatever the backend or the order points finished in.

use crate::error::SweepError;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const TABLE_FILE: &str = "results.csv";
/// Longest row read back from a table.
const ROW_BYTES_MAX: usize = 1 << 20;

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
pub fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub struct Table {
    path: PathBuf,
    header: String,
    /// Rows by point hash.
    rows: BTreeMap<String, String>,
    file: std::fs::File,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> SweepError {
    move |source| SweepError::Io { what, source }
}

impl Table {
    /// Opens (resuming) or creates the table in `dir` for points `hashes`.
    pub fn open(dir: &Path, header: &str, hashes: &BTreeSet<String>) -> Result<Table, SweepError> {
        nearflash_jobs::output::check_dir("--out", dir)?;
        let path = dir.join(TABLE_FILE);
        let bad = |reason: String| SweepError::Table {
            path: path.display().to_string(),
            reason,
        };
        let mut rows = BTreeMap::new();
        match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::write(&path, format!("{header}\n"))
                    .map_err(io(format!("creating {}", path.display())))?;
            }
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
            Ok(bytes) => {
                let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                if whole < bytes.len() {
                    // A row torn by a kill: drop it (its point runs again).
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(io(format!("opening {}", path.display())))?;
                    f.set_len(whole as u64)
                        .map_err(io(format!("truncating {}", path.display())))?;
                }
                let text = std::str::from_utf8(&bytes[..whole])
                    .map_err(|_| bad("not UTF-8 text".into()))?;
                let mut lines = text.lines();
                match lines.next() {
                    Some(h) if h == header => {}
                    Some(h) => {
                        return Err(bad(format!(
                            "its columns ({h}) are not this sweep's ({header}); remove it or \
                             use another --out"
                        )))
                    }
                    None => {
                        std::fs::write(&path, format!("{header}\n"))
                            .map_err(io(format!("creating {}", path.display())))?;
                    }
                }
                for line in lines {
                    if line.len() > ROW_BYTES_MAX {
                        return Err(bad(format!("a row longer than {ROW_BYTES_MAX} bytes")));
                    }
                    let hash = line.split(',').next().unwrap_or("");
                    if !hashes.contains(hash) {
                        return Err(bad(format!(
                            "it holds point {hash}, which this sweep does not have (another \
                             sweep's table); remove it or use another --out"
                        )));
                    }
                    rows.insert(hash.to_string(), line.to_string());
                }
            }
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io(format!("opening {}", path.display())))?;
        Ok(Table {
            path,
            header: header.to_string(),
            rows,
            file,
        })
    }

    pub fn has(&self, hash: &str) -> bool {
        self.rows.contains_key(hash)
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Appends a finished point's row (one write, then flushed to the file system).
    pub fn append(&mut self, row: &str) -> Result<(), SweepError> {
        let hash = row.split(',').next().unwrap_or("").to_string();
        assert_eq!(hash.len(), 16, "a row starts with its point's hash: {row}");
        assert!(!row.contains('\n'), "one row per line");
        if self.rows.contains_key(&hash) {
            return Ok(());
        }
        self.file
            .write_all(format!("{row}\n").as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(io(format!("appending to {}", self.path.display())))?;
        self.rows.insert(hash, row.to_string());
        Ok(())
    }

    /// Rewrites the table atomically with its rows in `order` (every hash must have a row);
    /// returns the text.
    pub fn finish(&self, order: &[String]) -> Result<String, SweepError> {
        let mut text = format!("{}\n", self.header);
        for h in order {
            let row = self
                .rows
                .get(h)
                .expect("every point has its row when finishing");
            text.push_str(row);
            text.push('\n');
        }
        nearflash_jobs::output::write_atomic(&self.path, text.as_bytes())?;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_row_is_dropped_and_another_sweeps_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let hashes: BTreeSet<String> = ["00000000000000aa".to_string(), "00000000000000bb".into()]
            .into_iter()
            .collect();
        let mut t = Table::open(dir.path(), "point,seed,m", &hashes).unwrap();
        t.append("00000000000000aa,1,5").unwrap();
        drop(t);
        // A kill in the middle of the next row's write.
        let p = dir.path().join(TABLE_FILE);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"00000000000000bb,1,").unwrap();
        let t = Table::open(dir.path(), "point,seed,m", &hashes).unwrap();
        assert!(t.has("00000000000000aa") && !t.has("00000000000000bb"));
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "point,seed,m\n00000000000000aa,1,5\n"
        );
        let e = Table::open(dir.path(), "point,seed,x", &hashes)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not this sweep's"), "{e}");
        let other: BTreeSet<String> = ["00000000000000cc".to_string()].into_iter().collect();
        let e = Table::open(dir.path(), "point,seed,m", &other)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("another"), "{e}");
    }

    #[test]
    fn cells_with_commas_or_quotes_are_quoted() {
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_cell("plain"), "plain");
    }
}
