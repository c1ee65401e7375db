//! Output files: checked for writability before any work starts (a typo in `--json` must not
//! cost a long run), and written atomically — to a temporary file in the same directory,
//! then renamed over the target — so a run killed half-way never leaves a truncated file or
//! a previous run's file looking current. The helpers live in `nearflash_jobs::output`
//! (shared with the Python package and the sweeps); these wrap them for the commands.

use crate::error::CliError;
use std::path::Path;

/// Checks that `path` can be written: not a directory, and its directory takes a new file.
pub fn check_file(flag: &str, path: &Path) -> Result<(), CliError> {
    Ok(nearflash_jobs::output::check_file(flag, path)?)
}

/// Creates `dir` if needed and checks a file can be written in it.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), CliError> {
    Ok(nearflash_jobs::output::check_dir(flag, dir)?)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, then a
/// rename over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    Ok(nearflash_jobs::output::write_atomic(path, bytes)?)
}
