//! Bounded line reading shared by every format: gzip input is detected by its magic bytes
//! (1f 8b, RFC 1952 §2.3.1) and inflated as a stream (every member of a multi-member file),
//! lines are counted from 1, a line longer than the limit is refused after reading at most
//! one byte past it, a UTF-8 byte-order mark on line 1 is dropped and binary lines (a NUL
//! byte: a tar archive, a binary blktrace) are refused.

use crate::TraceError;
use std::io::{BufRead, BufReader, Read};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

pub struct LineReader<'a> {
    inner: Box<dyn BufRead + 'a>,
    line: u64,
    line_bytes_max: usize,
    buf: Vec<u8>,
    gzip: bool,
}

impl<'a> LineReader<'a> {
    pub fn new(mut reader: impl BufRead + 'a, line_bytes_max: usize) -> Result<Self, TraceError> {
        let head = reader.fill_buf().map_err(read_error)?;
        let gzip = head.starts_with(&GZIP_MAGIC);
        let inner: Box<dyn BufRead + 'a> = if gzip {
            Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(reader)))
        } else {
            Box::new(reader)
        };
        Ok(LineReader {
            inner,
            line: 0,
            line_bytes_max,
            buf: Vec::new(),
            gzip,
        })
    }

    /// Whether the input was gzip-compressed.
    pub fn gzip(&self) -> bool {
        self.gzip
    }

    /// The next line (without its `\n` or `\r\n`) and its number, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>, TraceError> {
        self.line += 1;
        let line = self.line;
        self.buf.clear();
        // At most one byte past the limit is read: enough to know the line is too long.
        let cap = self.line_bytes_max as u64 + 1;
        let n = self
            .inner
            .by_ref()
            .take(cap)
            .read_until(b'\n', &mut self.buf)
            .map_err(read_error)?;
        if n == 0 {
            return Ok(None);
        }
        let body = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        if body.len() > self.line_bytes_max {
            return Err(TraceError::LineTooLong {
                line,
                max: self.line_bytes_max,
            });
        }
        if body.contains(&0) {
            return Err(TraceError::Binary { line });
        }
        let text = std::str::from_utf8(body).map_err(|_| TraceError::NotText { line })?;
        let text = text.strip_suffix('\r').unwrap_or(text);
        let text = if line == 1 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        Ok(Some((line, text)))
    }
}

fn read_error(e: std::io::Error) -> TraceError {
    TraceError::Read(e.to_string())
}
