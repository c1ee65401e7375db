//! The sweep's table, `DIR/results.csv`: a header (`point,seed,<swept>,<metrics>`) and one
//! row per finished point, appended (and flushed to the file system) as each finishes, so a
//! sweep killed at any moment keeps every finished row. Opening an existing table resumes it:
//! the header must match the spec's, a torn last line (a kill mid-write) is cut off, rows of
//! points the spec does not have are refused (another sweep's table), and a row that is not
//! what a run writes — a cell count other than the header's, or a metric cell that is not a
//! figure (a finite number, `true`/`false`, or empty where the job gave none; a trace hash in
//! a trace-hash column) — is not kept: its point runs again (`Table::rerun` names the row and
//! the column). When every point is
//! in, the table is rewritten atomically in the spec's point order, so the same spec gives
//! byte-identical tables whatever the backend or the order points finished in.

use crate::error::SweepError;
use crate::summary::parse_row;
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

/// What the table's columns hold: `point,seed,<swept>,<metrics>`, and which metrics are text
/// (trace hashes) rather than numbers.
#[derive(Clone, Debug)]
pub struct Columns {
    pub names: Vec<String>,
    /// Index of the first metric column.
    pub first_metric: usize,
    /// Per metric column: it holds a trace hash (16 hex digits), not a number.
    pub text: Vec<bool>,
}

impl Columns {
    /// The header line.
    pub fn header(&self) -> String {
        self.names.join(",")
    }

    /// Why `line` (a row read back from the table) is not what a run writes, if it is not.
    fn fault(&self, line: &str) -> Option<String> {
        let cells = parse_row(line);
        if cells.len() != self.names.len() {
            return Some(format!(
                "it has {} cells, the table {} columns",
                cells.len(),
                self.names.len()
            ));
        }
        let metrics = cells.iter().zip(&self.names).skip(self.first_metric);
        for ((cell, name), &text) in metrics.zip(&self.text) {
            let ok = if text {
                is_trace_hash(cell)
            } else {
                is_figure(cell)
            };
            if !ok {
                let expected = if text {
                    "a trace hash (16 hex digits)"
                } else {
                    "a figure (a number, or empty where the job gave none)"
                };
                return Some(format!(
                    "column {name} holds '{}', not {expected}",
                    cell.chars().take(40).collect::<String>()
                ));
            }
        }
        None
    }
}

/// A cell `Point::run` writes for a figure: a finite number, a boolean, or empty (null).
fn is_figure(cell: &str) -> bool {
    cell.is_empty()
        || cell == "true"
        || cell == "false"
        || cell.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A trace hash as the jobs write it (`TraceHasher::hex`).
pub fn is_trace_hash(cell: &str) -> bool {
    cell.len() == 16
        && cell
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A row read back from the table that was not kept: its point runs again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerun {
    pub point: String,
    pub reason: String,
}

impl std::fmt::Display for Rerun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the row of point {}: {}; not kept, the point runs again",
            self.point, self.reason
        )
    }
}

pub struct Table {
    path: PathBuf,
    header: String,
    /// Rows by point hash.
    rows: BTreeMap<String, String>,
    /// Rows read back and not kept (their points are missing again).
    rerun: Vec<Rerun>,
    file: std::fs::File,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> SweepError {
    move |source| SweepError::Io { what, source }
}

impl Table {
    /// Opens (resuming) or creates the table in `dir` with `columns` for points `hashes`.
    pub fn open(
        dir: &Path,
        columns: &Columns,
        hashes: &BTreeSet<String>,
    ) -> Result<Table, SweepError> {
        nearflash_jobs::output::check_dir("--out", dir)?;
        let header = &columns.header();
        let path = dir.join(TABLE_FILE);
        let bad = |reason: String| SweepError::Table {
            path: path.display().to_string(),
            reason,
        };
        let mut rows = BTreeMap::new();
        let mut rerun = Vec::new();
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
                    match columns.fault(line) {
                        Some(reason) => rerun.push(Rerun {
                            point: hash.to_string(),
                            reason,
                        }),
                        None => {
                            rows.insert(hash.to_string(), line.to_string());
                        }
                    }
                }
            }
        }
        // A bad row followed by its point's good one (a rerun before a kill) is settled.
        rerun.retain(|r| !rows.contains_key(&r.point));
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io(format!("opening {}", path.display())))?;
        Ok(Table {
            path,
            header: header.to_string(),
            rows,
            rerun,
            file,
        })
    }

    /// The rows read back that were not kept, in table order.
    pub fn rerun(&self) -> &[Rerun] {
        &self.rerun
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

    fn columns(names: &str, text: &[bool]) -> Columns {
        let names: Vec<String> = names.split(',').map(String::from).collect();
        Columns {
            first_metric: names.len() - text.len(),
            names,
            text: text.to_vec(),
        }
    }

    #[test]
    fn a_torn_last_row_is_dropped_and_another_sweeps_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let hashes: BTreeSet<String> = ["00000000000000aa".to_string(), "00000000000000bb".into()]
            .into_iter()
            .collect();
        let m = columns("point,seed,m", &[false]);
        let mut t = Table::open(dir.path(), &m, &hashes).unwrap();
        t.append("00000000000000aa,1,5").unwrap();
        drop(t);
        // A kill in the middle of the next row's write.
        let p = dir.path().join(TABLE_FILE);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"00000000000000bb,1,").unwrap();
        let t = Table::open(dir.path(), &m, &hashes).unwrap();
        assert!(t.has("00000000000000aa") && !t.has("00000000000000bb"));
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "point,seed,m\n00000000000000aa,1,5\n"
        );
        let e = Table::open(dir.path(), &columns("point,seed,x", &[false]), &hashes)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not this sweep's"), "{e}");
        let other: BTreeSet<String> = ["00000000000000cc".to_string()].into_iter().collect();
        let e = Table::open(dir.path(), &m, &other)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("another"), "{e}");
    }

    /// Story (issue 28): a sweep resume kept a row whose metric cell was not a number (an
    /// edited or damaged table) as if it were the point's result.
    #[test]
    fn a_resumed_row_whose_metric_cell_is_not_a_figure_is_not_kept_and_its_point_runs_again() {
        let dir = tempfile::tempdir().unwrap();
        let hashes: BTreeSet<String> = ["00000000000000aa", "00000000000000bb", "00000000000000cc"]
            .map(String::from)
            .into_iter()
            .collect();
        let c = columns("point,seed,qd,iops,trace_hash", &[false, true]);
        std::fs::write(
            dir.path().join(TABLE_FILE),
            "point,seed,qd,iops,trace_hash\n\
             00000000000000aa,1,4,1234.5,0123456789abcdef\n\
             00000000000000bb,1,8,abc,0123456789abcdef\n\
             00000000000000cc,1,16,77,not-a-hash\n",
        )
        .unwrap();
        let mut t = Table::open(dir.path(), &c, &hashes).unwrap();
        assert!(t.has("00000000000000aa"));
        assert!(!t.has("00000000000000bb") && !t.has("00000000000000cc"));
        let why: Vec<String> = t.rerun().iter().map(ToString::to_string).collect();
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(
            why[0].contains("00000000000000bb") && why[0].contains("column iops holds 'abc'"),
            "{why:?}"
        );
        assert!(
            why[1].contains("00000000000000cc") && why[1].contains("column trace_hash"),
            "{why:?}"
        );
        // The rerun's row is appended; read back, it settles the point.
        t.append("00000000000000bb,1,8,99,0123456789abcdef")
            .unwrap();
        drop(t);
        let t = Table::open(dir.path(), &c, &hashes).unwrap();
        assert!(t.has("00000000000000bb"));
        assert_eq!(t.rerun().len(), 1);
        // Empty (no figure), booleans, exponents are figures; NaN, inf and short rows are not.
        for (cell, ok) in [("", true), ("true", true), ("1e21", true), ("-3.5", true)]
            .into_iter()
            .chain([("NaN", false), ("inf", false), ("1,2", false)])
        {
            let row = format!("00000000000000aa,1,4,{cell},0123456789abcdef");
            assert_eq!(c.fault(&row).is_none(), ok, "{row}");
        }
        assert!(c
            .fault("00000000000000aa,1,4,5")
            .unwrap()
            .contains("4 cells, the table 5 columns"));
    }

    #[test]
    fn cells_with_commas_or_quotes_are_quoted() {
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_cell("plain"), "plain");
    }
}
