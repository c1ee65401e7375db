//! Checks before mounting, each a named error instead of a failure inside `fusermount3`: the
//! mount point must be an existing, empty directory that nothing is mounted on (a server
//! killed with `kill -9` leaves a dead mount: `fusermount3 -u DIR` removes it), and FUSE must be
//! usable (`/dev/fuse` present, Debian's `fuse3` installed for `fusermount3`).

use crate::error::LiveError;
use std::path::Path;

/// The FUSE device the kernel offers.
pub const FUSE_DEVICE: &str = "/dev/fuse";

/// Whether this machine offers FUSE at all (tests skip without it).
pub fn fuse_device_present() -> bool {
    Path::new(FUSE_DEVICE).exists()
}

/// `/dev/fuse` and `fusermount3` are there.
pub fn check_fuse() -> Result<(), LiveError> {
    if !fuse_device_present() {
        return Err(LiveError::FuseUnavailable(format!(
            "{FUSE_DEVICE} is missing (load the fuse kernel module: modprobe fuse; in a \
             container, pass --device /dev/fuse)"
        )));
    }
    if find_in_path("fusermount3").is_none() {
        return Err(LiveError::FuseUnavailable(
            "fusermount3 not found: install Debian's fuse3 (apt-get install fuse3, or \
             scripts/setup.sh)"
                .into(),
        ));
    }
    Ok(())
}

fn find_in_path(cmd: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// The mount point is a directory with nothing mounted on it.
pub fn check_mount_point(dir: &Path) -> Result<(), LiveError> {
    let name = dir.display().to_string();
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            return Err(LiveError::MountPointBusy {
                path: name.clone(),
                why: format!("a dead FUSE mount (a server was killed?): run fusermount3 -u {name}"),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LiveError::MountPointMissing(name))
        }
        Err(e) => {
            return Err(LiveError::MountPointBusy {
                path: name,
                why: e.to_string(),
            })
        }
    };
    if !meta.is_dir() {
        return Err(LiveError::MountPointNotDir(name));
    }
    let canon = std::fs::canonicalize(dir).map_err(|e| LiveError::MountPointBusy {
        path: name.clone(),
        why: e.to_string(),
    })?;
    if is_mounted(&canon) {
        return Err(LiveError::MountPointBusy {
            path: name,
            why: "something is already mounted there".into(),
        });
    }
    // Mounting over files hides them while the drive is mounted (and a user who did not
    // mean to is left wondering where they went), as fusermount3's `nonempty` check did.
    let occupied = std::fs::read_dir(dir)
        .map_err(|e| LiveError::MountPointBusy {
            path: name.clone(),
            why: e.to_string(),
        })?
        .next()
        .is_some();
    if occupied {
        return Err(LiveError::MountPointBusy {
            path: name,
            why: "the directory is not empty: mount on an empty directory".into(),
        });
    }
    Ok(())
}

/// Whether `dir` (canonical) is a mount point, from `/proc/self/mountinfo` (bounded read).
pub fn is_mounted(dir: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(f) = std::fs::File::open("/proc/self/mountinfo") else {
        return false;
    };
    let want = dir.to_string_lossy();
    std::io::BufReader::new(f.take(16 << 20))
        .lines()
        .map_while(Result::ok)
        .any(|l| l.split(' ').nth(4).map(unescape).as_deref() == Some(&*want))
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_mount_point_and_a_file_are_named() {
        let d = tempfile::tempdir().unwrap();
        let e = check_mount_point(&d.path().join("nope")).unwrap_err();
        assert!(e.to_string().contains("no such directory"), "{e}");
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let e = check_mount_point(&f).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        let empty = d.path().join("m");
        std::fs::create_dir(&empty).unwrap();
        check_mount_point(&empty).unwrap();
    }

    /// Story (issue 28): `serve` mounted over a directory holding files, hiding them.
    #[test]
    fn a_non_empty_directory_is_refused_as_a_mount_point() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("keep.txt"), b"mine").unwrap();
        let e = check_mount_point(d.path()).unwrap_err();
        assert!(e.to_string().contains("not empty"), "{e}");
    }

    #[test]
    fn the_root_is_a_mount_point() {
        assert!(is_mounted(Path::new("/")));
    }
}
