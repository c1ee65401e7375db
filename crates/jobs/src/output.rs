//! Output files: checked for writability before any work starts (a typo in `--json` must not
//! cost a long run), and written atomically — to a temporary file in the same directory,
//! then renamed over the target — so a run killed half-way never leaves a truncated file or
//! a previous run's file looking current. A device or FIFO (`--json /dev/null`) is written
//! in place: renaming over it would destroy it.

use crate::error::JobError;
use nearflash_outfile::{is_special, parent_of, resolve, temp_beside};
use std::path::Path;

fn io_error(what: String) -> impl FnOnce(std::io::Error) -> JobError {
    move |source| JobError::Io { what, source }
}

/// Checks that `path` can be written: not a directory, and its directory takes a new file
/// (probed by creating and removing the temporary file a write would use). A special file
/// (a device such as `/dev/null`, a FIFO) is written in place, so nothing is probed beside it.
pub fn check_file(flag: &str, path: &Path) -> Result<(), JobError> {
    if path.is_dir() {
        return Err(JobError::Workload(format!(
            "{flag} {}: is a directory, expected a file path",
            path.display()
        )));
    }
    if is_special(path) {
        return Ok(());
    }
    let target = resolve(path);
    let dir = parent_of(&target);
    if !dir.is_dir() {
        return Err(JobError::Workload(format!(
            "{flag} {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    let probe = temp_beside(&target);
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

/// Writes `bytes` to `path`: a regular file atomically (a temporary in the same directory,
/// fsynced, then renamed over it), a special file (`/dev/null`, a FIFO) in place — never
/// renamed over (see `nearflash_outfile`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), JobError> {
    nearflash_outfile::write(path, bytes).map_err(io_error(format!("writing {}", path.display())))
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

    /// Story: `--json /dev/null` probed `/dev/.null.tmp-PID` and then renamed a temporary
    /// over `/dev/null`; as root that left a regular file where the null device was.
    #[test]
    fn dev_null_is_checked_and_written_in_place_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        check_file("--json", Path::new("/dev/null")).unwrap();
        write_atomic(Path::new("/dev/null"), b"{}").unwrap();
        let ft = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(ft.is_char_device());
    }
}
