//! INSIDER's virtual files through the mount (seed 001 §3.3), the parts that do not touch the
//! device: what a virtual file runs (`program`: a built-in drive program of `nearflash-iscapps`
//! or a user's WebAssembly module of `nearflash-wasm`), which INSIDER drive's ISC unit runs it
//! (`drive`: the image's preset's `[insider]` table), the registrations (`registry`), the
//! control file's one-line JSON protocol (`control`) and the figures in the statistics
//! (`figures`). The run itself is INSIDER's: its ISC unit (`nearflash_insider::isc::Unit` —
//! credits, input FIFO, slots or cores) driven by the device thread, which reads the real
//! file through the file system as the unit issues requests (`device::vrun`); permission
//! checks and persistence on the image are `device::vfiles`.
//!
//! Where they appear: `MOUNT/.nearflash/vfiles/NAME`, beside the control file, not beside the
//! real file. The device's file system never holds a virtual file, so nothing can collide with
//! a real name, no real directory listing changes, and renaming or removing the real file's
//! directory needs no rule for the virtual one (INSIDER puts a virtual file at any path of the
//! user's choosing because its mapping lives in a host library; here the kernel would see a
//! file in a real directory that the file system does not know).
//!
//! Tolerates: hostile modules (fuel, memory and output limits; a trap is this run's error),
//! requests that are malformed, too large or refused (a typed error and an errno per request),
//! a registration file on the image that no longer loads (skipped, named in the statistics).

pub mod control;
pub mod drive;
pub mod error;
pub mod figures;
pub mod program;
pub mod registry;

pub use error::VfileError;

/// Longest virtual-file name.
pub const NAME_BYTES_MAX: usize = 64;
/// Registrations at once (each holds a compiled module at most `control::MODULE_BYTES_MAX`).
pub const REGISTRATIONS_MAX: usize = 64;
/// Output of one run, held for its readers until the handle is released.
pub const OUTPUT_BYTES_MAX: u64 = 16 << 20;
/// Runs' outputs held at once (open handles of virtual files): with `OUTPUT_BYTES_MAX`, at
/// most 256 MiB.
pub const OPEN_OUTPUTS_MAX: usize = 16;

/// Checks a virtual file's name: 1–64 bytes of `[A-Za-z0-9._-]`, not starting with a dot.
pub fn check_name(name: &str) -> Result<(), VfileError> {
    let ok = !name.is_empty()
        && name.len() <= NAME_BYTES_MAX
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(VfileError::BadName(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_plain_and_not_hidden() {
        assert!(check_name("matches.bin").is_ok());
        assert!(check_name("a-b_c.1").is_ok());
        for bad in ["", ".hidden", "a/b", "sp ace", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
    }
}
