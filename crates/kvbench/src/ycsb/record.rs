//! How a YCSB record (a key and its named fields) is stored as one LevelDB value.
//!
//! Format, little-endian:
//! ```text
//! field_count: u16
//! field_count × { name_len: u8, name: name_len bytes, value_len: u32, value: value_len bytes }
//! ```
//! Fields appear in the order field0, field1, … Decoding checks every length against the
//! bytes left and rejects trailing bytes.

use crate::error::KvBenchError;

/// Encodes `fields` (values of field0..field{n−1}) under `names`.
pub fn encode_record(names: &[String], fields: &[Vec<u8>], out: &mut Vec<u8>) {
    assert_eq!(names.len(), fields.len(), "one value per field name");
    out.clear();
    out.extend_from_slice(&(fields.len() as u16).to_le_bytes());
    for (name, value) in names.iter().zip(fields) {
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(value.len() as u32).to_le_bytes());
        out.extend_from_slice(value);
    }
}

/// Decodes a record, checking its field names against `names`.
pub fn decode_record(
    key: &[u8],
    names: &[String],
    bytes: &[u8],
) -> Result<Vec<Vec<u8>>, KvBenchError> {
    let corrupt = |reason| KvBenchError::CorruptRecord {
        key: String::from_utf8_lossy(key).into_owned(),
        reason,
    };
    let mut rest = bytes;
    let mut take = |n: usize| -> Result<&[u8], KvBenchError> {
        if rest.len() < n {
            return Err(corrupt("truncated"));
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Ok(head)
    };
    let count = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
    if count != names.len() {
        return Err(corrupt("wrong field count"));
    }
    let mut fields = Vec::with_capacity(count);
    for name in names {
        let name_len = take(1)?[0] as usize;
        if take(name_len)? != name.as_bytes() {
            return Err(corrupt("unexpected field name"));
        }
        let value_len = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
        fields.push(take(value_len)?.to_vec());
    }
    if !rest.is_empty() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_truncation_is_refused() {
        let names: Vec<String> = (0..3).map(|i| format!("field{i}")).collect();
        let fields = vec![b"a".to_vec(), vec![], vec![7; 300]];
        let mut buf = Vec::new();
        encode_record(&names, &fields, &mut buf);
        assert_eq!(decode_record(b"k", &names, &buf).unwrap(), fields);
        for cut in 0..buf.len() {
            assert!(decode_record(b"k", &names, &buf[..cut]).is_err());
        }
        buf.push(0);
        assert!(decode_record(b"k", &names, &buf).is_err());
    }
}
