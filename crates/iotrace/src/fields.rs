//! Field helpers every format shares: splitting a line into exactly N fields, integers with
//! a reason for each way they can be wrong, sector counts as bytes, decimal seconds as exact
//! nanoseconds.

use crate::TraceError;

/// The bytes of one sector in every sector-addressed format (blkparse, Tencent, FIU, SPC's
/// LBA, MQSim's `SECTOR_SIZE_IN_BYTE`).
pub const SECTOR_BYTES: u64 = 512;

/// Splits `text` at `sep` into exactly `N` trimmed fields.
pub fn split_exact<const N: usize>(
    line: u64,
    text: &str,
    sep: char,
) -> Result<[&str; N], TraceError> {
    let mut fields = [""; N];
    let mut found = 0;
    for field in text.split(sep) {
        if let Some(slot) = fields.get_mut(found) {
            *slot = field.trim();
        }
        found += 1;
    }
    if found != N {
        return Err(field_count(line, N, found, sep));
    }
    Ok(fields)
}

/// Splits `text` at runs of whitespace into exactly `N` fields.
pub fn split_whitespace_exact<const N: usize>(
    line: u64,
    text: &str,
) -> Result<[&str; N], TraceError> {
    let mut fields = [""; N];
    let mut found = 0;
    for field in text.split_whitespace() {
        if let Some(slot) = fields.get_mut(found) {
            *slot = field;
        }
        found += 1;
    }
    if found != N {
        return Err(field_count(line, N, found, ' '));
    }
    Ok(fields)
}

pub fn field_count(line: u64, expected: usize, found: usize, sep: char) -> TraceError {
    TraceError::FieldCount {
        line,
        expected,
        found,
        separator: if sep == ',' { "comma" } else { "space" },
    }
}

/// An unsigned integer; a negative, too large or non-numeric value is named as such.
pub fn parse_uint(line: u64, field: &'static str, value: &str) -> Result<u64, TraceError> {
    value.parse().map_err(|_| {
        let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
        let numeric = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if numeric && value.starts_with('-') && digits.bytes().any(|b| b != b'0') {
            TraceError::Negative {
                line,
                field,
                value: value.to_string(),
            }
        } else if numeric {
            TraceError::OutOfRange {
                line,
                field,
                value: value.to_string(),
                max: u64::MAX,
            }
        } else {
            TraceError::NotInteger {
                line,
                field,
                value: value.to_string(),
            }
        }
    })
}

/// An unsigned integer that must fit in `u32`.
pub fn parse_u32(line: u64, field: &'static str, value: &str) -> Result<u32, TraceError> {
    let n = parse_uint(line, field, value)?;
    u32::try_from(n).map_err(|_| TraceError::OutOfRange {
        line,
        field,
        value: value.to_string(),
        max: u32::MAX.into(),
    })
}

/// A count of 512-byte sectors, as bytes.
pub fn parse_sectors(line: u64, field: &'static str, value: &str) -> Result<u64, TraceError> {
    let sectors = parse_uint(line, field, value)?;
    sectors
        .checked_mul(SECTOR_BYTES)
        .ok_or_else(|| TraceError::OutOfRange {
            line,
            field,
            value: value.to_string(),
            max: u64::MAX / SECTOR_BYTES,
        })
}

/// Decimal seconds (`1487024047.045166963`, `0.551706`, `12`) as exact nanoseconds: digits
/// past the ninth decimal are dropped (below a nanosecond), no float is involved.
pub fn parse_seconds_ns(line: u64, field: &'static str, value: &str) -> Result<u128, TraceError> {
    let bad = || {
        if value.starts_with('-') {
            TraceError::Negative {
                line,
                field,
                value: value.to_string(),
            }
        } else {
            TraceError::NotSeconds {
                line,
                field,
                value: value.to_string(),
            }
        }
    };
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return Err(bad());
    }
    // 20 digits of seconds keep the product below 2^128 with room to spare.
    if whole.len() > 20 {
        return Err(bad());
    }
    let seconds: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let mut nanos: u128 = 0;
    for i in 0..9 {
        let digit = fraction.as_bytes().get(i).map_or(0, |b| b - b'0');
        nanos = nanos * 10 + u128::from(digit);
    }
    Ok(seconds * 1_000_000_000 + nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_seconds_are_exact_nanoseconds() {
        let ns = |v| parse_seconds_ns(1, "t", v);
        assert_eq!(ns("1487024047.045166963"), Ok(1_487_024_047_045_166_963));
        assert_eq!(ns("0.551706"), Ok(551_706_000));
        assert_eq!(ns("12"), Ok(12_000_000_000));
        assert_eq!(ns(".5"), Ok(500_000_000));
        assert_eq!(ns("3."), Ok(3_000_000_000));
        assert_eq!(ns("0.0000000019"), Ok(1));
        for bad in ["", ".", "1e3", "1.2.3", "abc", " 1"] {
            assert!(
                matches!(ns(bad), Err(TraceError::NotSeconds { .. })),
                "{bad}"
            );
        }
        assert!(matches!(ns("-1.5"), Err(TraceError::Negative { .. })));
    }

    #[test]
    fn integers_name_how_they_are_wrong() {
        assert!(matches!(
            parse_uint(3, "Size", "-8"),
            Err(TraceError::Negative { line: 3, .. })
        ));
        assert!(matches!(
            parse_uint(3, "Size", "18446744073709551616"),
            Err(TraceError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_uint(3, "Size", "4k"),
            Err(TraceError::NotInteger { .. })
        ));
        assert_eq!(parse_sectors(1, "LBA", "8"), Ok(4096));
        assert!(matches!(
            parse_sectors(1, "LBA", &u64::MAX.to_string()),
            Err(TraceError::OutOfRange { .. })
        ));
    }
}
