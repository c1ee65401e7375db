//! The SQL table's 32-byte ASCII record (INSIDER `sql/inc/const.h`):
//!
//! ```text
//! bytes  0..12  round name   (12 chars of {A–D}; 1,024 distinct names)
//! bytes 12..24  player name  (12 chars of {A–D})
//! bytes 24..26  score        2 digits, 00–99
//! bytes 26..28  month        2 digits, 01–12
//! bytes 28..30  day          2 digits, 01–30
//! bytes 30..32  year         2 digits, 00–99
//! ```

pub const RECORD_BYTES: usize = 32;
pub const ROUND_BYTES: usize = 12;
pub const SCORE_AT: usize = 24;
pub const YEAR_AT: usize = 30;

/// The two-digit number at `at`, or `None` if either byte is not an ASCII digit.
pub fn two_digits(record: &[u8], at: usize) -> Option<u8> {
    let (hi, lo) = (record[at], record[at + 1]);
    if hi.is_ascii_digit() && lo.is_ascii_digit() {
        Some((hi - b'0') * 10 + (lo - b'0'))
    } else {
        None
    }
}
