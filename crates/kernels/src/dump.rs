//! Writing live-out arrays as `<dir>/<array>.f64`: little-endian f64, row-major, no header
//! (every element type is widened to f64), and reading such a file back.

use crate::desc::KernelDesc;
use crate::error::KernelError;
use crate::state::State;
use std::fs;
use std::path::{Path, PathBuf};

fn io_err(path: &Path, e: std::io::Error) -> KernelError {
    KernelError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Write each live-out array of `state`; returns the paths written, in live-out order.
pub fn dump_live_out(
    desc: &KernelDesc,
    state: &State,
    dir: &Path,
) -> Result<Vec<PathBuf>, KernelError> {
    fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let mut written = Vec::new();
    for name in &desc.live_out {
        let a = state.get(name).ok_or_else(|| KernelError::MissingArray {
            kernel: desc.name.into(),
            array: name.to_string(),
            side: "run",
        })?;
        let mut bytes = Vec::with_capacity(a.data.len() * 8);
        for i in 0..a.data.len() {
            bytes.extend_from_slice(&a.data.get_f64(i).to_le_bytes());
        }
        let path = dir.join(format!("{name}.f64"));
        fs::write(&path, bytes).map_err(|e| io_err(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// Read a `.f64` dump back.
pub fn read_f64_file(path: &Path) -> Result<Vec<f64>, KernelError> {
    let bytes = fs::read(path).map_err(|e| io_err(path, e))?;
    if bytes.len() % 8 != 0 {
        return Err(KernelError::Io {
            path: path.display().to_string(),
            message: format!("length {} is not a multiple of 8", bytes.len()),
        });
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}
