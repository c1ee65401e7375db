//! RLE's independent reference: the header's size, then every pair expanded with
//! `iter::repeat`, over the whole encoded buffer.

use super::program::HEADER_BYTES;

pub fn decode(encoded: &[u8]) -> Vec<u8> {
    let size = u64::from_le_bytes(encoded[8..HEADER_BYTES].try_into().expect("8 bytes"));
    let decoded: Vec<u8> = encoded[HEADER_BYTES..]
        .chunks_exact(2)
        .flat_map(|p| std::iter::repeat_n(p[1], usize::from(p[0])))
        .collect();
    assert_eq!(decoded.len() as u64, size, "generated header is consistent");
    decoded
}
