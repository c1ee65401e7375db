//! Output files: checked for writability before any work starts (a typo in `--json` must not
//! cost a long run), and written atomically — to a temporary file in the same directory,
//! then renamed over the target — so a run killed half-way never leaves a truncated file or
//! a previous run's file looking current.

use crate::error::JobError;
use std::path::{Path, PathBuf};

fn io_error(what: String) -> impl FnOnce(std::io::Error) -> JobError {
    move |source| JobError::Io { what, source }
}

/// The directory a file path lives in (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary name beside `path`, unique to this process.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    parent_of(path).join(format!(".{name}.tmp-{}", std::process::id()))
}

/// Checks that `path` can be written: not a directory, and its directory takes a new file
/// (probed by creating and removing the temporary file a write would use).
pub fn check_file(flag: &str, path: &Path) -> Result<(), JobError> {
    if path.is_dir() {
        return Err(JobError::Workload(format!(
            "{flag} {}: is a directory, expected a file path",
            path.display()
        )));
    }
    let dir = parent_of(path);
    if !dir.is_dir() {
        return Err(JobError::Workload(format!(
            "{flag} {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    let probe = temp_beside(path);
    std::fs::write(&probe, b"").map_err(io_error(format!(
        "{flag} {}: cannot write in {}",
        path.display(),
        dir.display()
    )))?;
    std::fs::remove_file(&probe).map_err(io_error(format!("removing {}", probe.display())))
}

/// Creates `dir` if needed and checks a file can be written in it.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), JobError> {
    std::fs::create_dir_all(dir).map_err(io_error(format!(
        "{flag} {}: cannot create the directory",
        dir.display()
    )))?;
    check_file(flag, &dir.join("probe"))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, then a
/// rename over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), JobError> {
    let tmp = temp_beside(path);
    std::fs::write(&tmp, bytes).map_err(io_error(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io_error(format!(
        "renaming {} to {}",
        tmp.display(),
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_or_a_directory_path_is_refused_before_work() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_file("--json", &dir.path().join("nope/out.json")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let e = check_file("--json", dir.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        check_file("--json", &dir.path().join("out.json")).unwrap();
        // The probe leaves nothing behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
