//! fio's job-file syntax, read into sections of raw options with their lines: `[global]` and
//! job sections, `key=value` and bare flags (`time_based`), whole-line comments (`;` or `#`),
//! `${VAR}` from the environment, and `include FILE` (relative to the including file, at most
//! `INCLUDE_DEPTH_MAX` deep). A `[global]` section applies to the jobs that follow it, as in
//! fio. What the options mean is `options`' business; this layer only knows lines.
//!
//! Tolerates: any text. A line it cannot read is an error naming its file and line; every
//! input is bounded (file size, line length, sections, options per section, include depth).

use crate::error::{FioError, Location};
use std::path::{Path, PathBuf};

/// Largest job file (or included file) read.
pub const FILE_BYTES_MAX: usize = 1 << 20;
/// Longest line.
pub const LINE_BYTES_MAX: usize = 4096;
/// Most job sections in a file, includes counted.
pub const SECTIONS_MAX: usize = 1024;
/// Most options in one section.
pub const ENTRIES_MAX: usize = 1024;
/// Deepest chain of includes (fio itself allows nesting without a stated bound).
pub const INCLUDE_DEPTH_MAX: u32 = 8;

/// One `key[=value]` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Lower-cased, as fio matches option names case-insensitively.
    pub key: String,
    /// `None` for a bare flag.
    pub value: Option<String>,
    pub at: Location,
}

/// A job section with the global options in force where it starts.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub at: Location,
    pub globals: Vec<Entry>,
    pub entries: Vec<Entry>,
}

/// A whole job file.
#[derive(Clone, Debug, Default)]
pub struct JobFile {
    /// Every `[global]` option of the file, in order (fio's `global options`).
    pub global: Vec<Entry>,
    pub jobs: Vec<Section>,
}

/// What the parser needs from outside: the environment and the files it includes.
pub trait Source {
    fn var(&self, name: &str) -> Option<String>;
    /// The text of `path` (bounded by [`FILE_BYTES_MAX`]).
    fn read(&self, path: &Path) -> Result<String, FioError>;
}

/// The process's environment and file system.
pub struct System;

impl Source for System {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn read(&self, path: &Path) -> Result<String, FioError> {
        use std::io::Read;
        let err = |source| FioError::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(err)?
            .take(FILE_BYTES_MAX as u64 + 1)
            .read_to_string(&mut text)
            .map_err(err)?;
        if text.len() > FILE_BYTES_MAX {
            return Err(err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("larger than {FILE_BYTES_MAX} bytes"),
            )));
        }
        Ok(text)
    }
}

/// Reads the job file at `path`.
pub fn parse_file(path: &Path, src: &dyn Source) -> Result<JobFile, FioError> {
    let mut p = Parser {
        file: JobFile::default(),
        current: None,
    };
    p.file_at(path, src, 0, None)?;
    p.close_section();
    Ok(p.file)
}

enum Current {
    Global,
    Job(Section),
}

struct Parser {
    file: JobFile,
    current: Option<Current>,
}

impl Parser {
    fn file_at(
        &mut self,
        path: &Path,
        src: &dyn Source,
        depth: u32,
        included_at: Option<&Location>,
    ) -> Result<(), FioError> {
        let text = src.read(path).map_err(|e| match (e, included_at) {
            (FioError::Read { path, source }, Some(at)) => FioError::Syntax {
                at: at.clone(),
                reason: format!("include {}: {source}", path.display()),
            },
            (e, _) => e,
        })?;
        for (i, raw) in text.lines().enumerate() {
            let at = Location {
                file: path.to_path_buf(),
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            };
            self.line(raw, at, src, depth)?;
        }
        Ok(())
    }

    fn line(
        &mut self,
        raw: &str,
        at: Location,
        src: &dyn Source,
        depth: u32,
    ) -> Result<(), FioError> {
        let syntax = |reason: String| FioError::Syntax {
            at: at.clone(),
            reason,
        };
        if raw.len() > LINE_BYTES_MAX {
            return Err(syntax(format!("line longer than {LINE_BYTES_MAX} bytes")));
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| syntax(format!("section header '{line}' lacks its ']'")))?
                .trim();
            if name.is_empty() {
                return Err(syntax("empty section name '[]'".into()));
            }
            self.close_section();
            if name == "global" {
                self.current = Some(Current::Global);
            } else {
                if self.file.jobs.len() == SECTIONS_MAX {
                    return Err(syntax(format!("more than {SECTIONS_MAX} job sections")));
                }
                self.current = Some(Current::Job(Section {
                    name: name.to_string(),
                    at: at.clone(),
                    globals: self.file.global.clone(),
                    entries: Vec::new(),
                }));
            }
            return Ok(());
        }
        if let Some(target) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            if depth + 1 > INCLUDE_DEPTH_MAX {
                return Err(syntax(format!(
                    "include nested deeper than {INCLUDE_DEPTH_MAX} files (a cycle?)"
                )));
            }
            let target = expand(target.trim(), src, &at)?;
            let dir = at.file.parent().unwrap_or(Path::new(""));
            let path: PathBuf = dir.join(target);
            return self.file_at(&path, src, depth + 1, Some(&at));
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand(v.trim(), src, &at)?)),
            None => (line, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(syntax(format!(
                "'{line}' is neither a section header, an option (key=value or a flag) nor \
                 an include"
            )));
        }
        let entry = Entry {
            key: key.to_ascii_lowercase(),
            value,
            at: at.clone(),
        };
        let entries = match &mut self.current {
            None => {
                return Err(syntax(format!(
                    "option '{key}' before any section ([global] or [jobname])"
                )))
            }
            Some(Current::Global) => &mut self.file.global,
            Some(Current::Job(s)) => &mut s.entries,
        };
        if entries.len() == ENTRIES_MAX {
            return Err(syntax(format!(
                "more than {ENTRIES_MAX} options in a section"
            )));
        }
        entries.push(entry);
        Ok(())
    }

    fn close_section(&mut self) {
        if let Some(Current::Job(s)) = self.current.take() {
            self.file.jobs.push(s);
        }
    }
}

/// Replaces every `${NAME}` in `value` by the environment variable NAME; an unset one is an
/// error (fio would pass the text on, to fail later in a less telling place).
fn expand(value: &str, src: &dyn Source, at: &Location) -> Result<String, FioError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| FioError::Syntax {
            at: at.clone(),
            reason: format!("'${{' without its '}}' in '{value}'"),
        })?;
        let name = &after[..end];
        let v = src.var(name).ok_or_else(|| FioError::Syntax {
            at: at.clone(),
            reason: format!("environment variable '{name}' (in '{value}') is not set"),
        })?;
        out.push_str(&v);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Files and variables in memory.
    #[derive(Default)]
    pub struct Memory {
        pub files: BTreeMap<PathBuf, String>,
        pub vars: BTreeMap<String, String>,
    }

    impl Source for Memory {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).cloned()
        }
        fn read(&self, path: &Path) -> Result<String, FioError> {
            self.files.get(path).cloned().ok_or_else(|| FioError::Read {
                path: path.to_path_buf(),
                source: std::io::ErrorKind::NotFound.into(),
            })
        }
    }

    pub fn one(text: &str) -> Result<JobFile, FioError> {
        let mut m = Memory::default();
        m.files.insert("job.fio".into(), text.into());
        m.vars.insert("BS".into(), "8k".into());
        parse_file(Path::new("job.fio"), &m)
    }

    fn err(text: &str) -> String {
        one(text).unwrap_err().to_string()
    }

    #[test]
    fn sections_options_flags_comments_and_globals_that_follow() {
        let f = one(
            "; a comment\n# another\n[global]\nrw=randread\n\n[a]\nbs = ${BS}\n\
             time_based\n[global]\niodepth=4\n[b]\nNAME=x\n",
        )
        .unwrap();
        assert_eq!(f.jobs.len(), 2);
        let a = &f.jobs[0];
        assert_eq!(a.name, "a");
        assert_eq!(a.globals.len(), 1, "the later [global] does not reach back");
        assert_eq!(a.entries[0].key, "bs");
        assert_eq!(a.entries[0].value.as_deref(), Some("8k"));
        assert_eq!(a.entries[0].at.line, 7);
        assert_eq!(a.entries[1].value, None);
        let b = &f.jobs[1];
        assert_eq!(b.globals.len(), 2);
        assert_eq!(
            b.entries[0].key, "name",
            "keys are matched case-insensitively"
        );
        assert_eq!(f.global.len(), 2);
    }

    #[test]
    fn include_reads_a_file_beside_the_including_one() {
        let mut m = Memory::default();
        m.files.insert(
            "d/job.fio".into(),
            "[global]\ninclude common.fio\n[j]\n".into(),
        );
        m.files.insert("d/common.fio".into(), "bs=4k\n".into());
        let f = parse_file(Path::new("d/job.fio"), &m).unwrap();
        assert_eq!(f.jobs[0].globals[0].key, "bs");
        assert_eq!(f.jobs[0].globals[0].at.file, PathBuf::from("d/common.fio"));
        assert_eq!(f.jobs[0].globals[0].at.line, 1);
    }

    #[test]
    fn an_include_cycle_stops_at_the_depth_bound_with_the_line() {
        let mut m = Memory::default();
        m.files
            .insert("a.fio".into(), "[j]\n\ninclude a.fio\n".into());
        let e = parse_file(Path::new("a.fio"), &m).unwrap_err().to_string();
        assert!(e.contains("a.fio:3") && e.contains("deeper than 8"), "{e}");
    }

    #[test]
    fn a_missing_include_names_the_including_line() {
        let e = err("[j]\ninclude nothere.fio\n");
        assert!(
            e.starts_with("job.fio:2:") && e.contains("nothere.fio"),
            "{e}"
        );
    }

    #[test]
    fn every_syntax_error_names_its_line() {
        for (text, line, what) in [
            ("[j]\nbs=${NOPE}\n", 2, "'NOPE'"),
            ("[j]\nbs=${BS\n", 2, "without its"),
            ("rw=read\n", 1, "before any section"),
            ("[j]\n\n[broken\n", 3, "lacks its ']'"),
            ("[j]\n[]\n", 2, "empty section"),
            ("[j]\nfoo bar\n", 2, "neither"),
            ("[j]\n=4k\n", 2, "neither"),
        ] {
            let e = err(text);
            assert!(
                e.starts_with(&format!("job.fio:{line}:")) && e.contains(what),
                "{text:?}: {e}"
            );
        }
        let long = format!("[j]\nbs={}\n", "1".repeat(LINE_BYTES_MAX));
        assert!(err(&long).starts_with("job.fio:2:"));
    }
}
