//! Little-endian words on the wire: parameter messages and drive output tuples.

use crate::AppError;

/// Appends `v` as 4 little-endian bytes.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 4 little-endian bytes.
pub fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 8 little-endian bytes.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The little-endian u32 at `bytes[0..4]` (the caller checked the length).
pub fn u32_at(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The little-endian i32 at `bytes[0..4]` (the caller checked the length).
pub fn i32_at(bytes: &[u8]) -> i32 {
    i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The little-endian u64 at `bytes[0..8]` (the caller checked the length).
pub fn u64_at(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(b)
}

/// Splits a drive output into `tuple_bytes`-sized tuples, or says why it cannot.
pub fn tuples<'a>(
    app: &'static str,
    output: &'a [u8],
    tuple_bytes: usize,
) -> Result<std::slice::ChunksExact<'a, u8>, AppError> {
    if !output.len().is_multiple_of(tuple_bytes) {
        return Err(AppError::DriveOutput {
            app,
            reason: format!(
                "{} bytes is not a whole number of {tuple_bytes}-byte tuples",
                output.len()
            ),
        });
    }
    Ok(output.chunks_exact(tuple_bytes))
}
