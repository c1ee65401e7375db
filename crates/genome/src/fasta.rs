//! A streaming FASTA parser: the caller hands the file over in chunks of any size (down to one
//! byte); the parser keeps only the current header line (capped) and the sequences parsed so
//! far. Sequence letters are IUPAC codes (A–Z, `*`, `-`), stored upper-case; `\r\n` is accepted.
//!
//! Malformed input is a `GenomeError::Fasta` with the 1-based line: sequence before the first
//! header, an empty identifier, a header over the cap, a character that is not a sequence
//! letter, or a file with no record.

use crate::error::GenomeError;

/// The longest header line kept, in bytes (bounded memory whatever the input).
pub const HEADER_LEN_MAX_BYTES: usize = 64 * 1024;

/// One FASTA record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastaRecord {
    /// The identifier: the header up to the first whitespace, without `>`.
    pub id: String,
    /// The sequence, upper-case, line breaks removed.
    pub seq: Vec<u8>,
}

/// Work done while parsing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseCounts {
    /// Bytes handed to the parser.
    pub bytes: u64,
    /// Sequence letters stored.
    pub bases: u64,
    /// Lines seen.
    pub lines: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the start of a line.
    LineStart,
    /// Inside a header line.
    Header,
    /// Inside a sequence line.
    Sequence,
    /// After a `\r` inside a sequence line (only `\n` may follow).
    CarriageReturn,
}

/// The parser's state between chunks.
#[derive(Debug)]
pub struct FastaParser {
    state: State,
    line: u64,
    header: Vec<u8>,
    records: Vec<FastaRecord>,
    counts: ParseCounts,
}

impl Default for FastaParser {
    fn default() -> Self {
        Self::new()
    }
}

fn is_sequence_letter(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'*' || b == b'-'
}

impl FastaParser {
    /// A parser at the start of a file.
    pub fn new() -> Self {
        Self {
            state: State::LineStart,
            line: 1,
            header: Vec::new(),
            records: Vec::new(),
            counts: ParseCounts::default(),
        }
    }

    fn error(&self, reason: &'static str) -> GenomeError {
        GenomeError::Fasta {
            line: self.line,
            reason,
        }
    }

    fn finish_header(&mut self) -> Result<(), GenomeError> {
        let id_end = self
            .header
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(self.header.len());
        if id_end == 0 {
            return Err(self.error("empty record identifier"));
        }
        let id = String::from_utf8_lossy(&self.header[..id_end]).into_owned();
        self.header.clear();
        self.records.push(FastaRecord {
            id,
            seq: Vec::new(),
        });
        Ok(())
    }

    /// Parses the next chunk.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), GenomeError> {
        self.counts.bytes += chunk.len() as u64;
        for &b in chunk {
            match (self.state, b) {
                (State::Header, b'\n') => {
                    // A header ending in '\r' keeps it only in the comment, never in the id.
                    if self.header.last() == Some(&b'\r') {
                        self.header.pop();
                    }
                    self.finish_header()?;
                    self.line += 1;
                    self.counts.lines += 1;
                    self.state = State::LineStart;
                }
                (State::Header, _) => {
                    if self.header.len() >= HEADER_LEN_MAX_BYTES {
                        return Err(self.error("header line too long"));
                    }
                    self.header.push(b);
                }
                (State::LineStart, b'>') => self.state = State::Header,
                (State::LineStart | State::Sequence | State::CarriageReturn, b'\n') => {
                    self.line += 1;
                    self.counts.lines += 1;
                    self.state = State::LineStart;
                }
                (State::CarriageReturn, _) => {
                    return Err(self.error("carriage return inside a line"))
                }
                (State::LineStart | State::Sequence, b'\r') => self.state = State::CarriageReturn,
                (State::LineStart | State::Sequence, _) => {
                    if !is_sequence_letter(b) {
                        return Err(self.error("not a sequence letter"));
                    }
                    let Some(record) = self.records.last_mut() else {
                        return Err(self.error("sequence before the first header"));
                    };
                    record.seq.push(b.to_ascii_uppercase());
                    self.counts.bases += 1;
                    self.state = State::Sequence;
                }
            }
        }
        Ok(())
    }

    /// Ends the file: a last header without a newline is accepted; no record is an error.
    pub fn finish(mut self) -> Result<(Vec<FastaRecord>, ParseCounts), GenomeError> {
        if self.state == State::Header {
            self.finish_header()?;
        }
        if self.records.is_empty() {
            return Err(self.error("no FASTA record"));
        }
        Ok((self.records, self.counts))
    }
}

/// Writes records as FASTA with lines of `line_width` letters.
pub fn write_fasta(records: &[FastaRecord], line_width: usize, out: &mut Vec<u8>) {
    assert!(line_width > 0);
    for r in records {
        out.push(b'>');
        out.extend_from_slice(r.id.as_bytes());
        out.push(b'\n');
        for line in r.seq.chunks(line_width) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(text: &[u8], chunk: usize) -> Result<Vec<FastaRecord>, GenomeError> {
        let mut p = FastaParser::new();
        for c in text.chunks(chunk) {
            p.push(c)?;
        }
        p.finish().map(|(r, _)| r)
    }

    #[test]
    fn records_parse_the_same_whatever_the_chunk_size() {
        let text = b">chr1 first one\r\nACGTn\r\nacgt\n\n>chr2\nNNAC\n>empty\n";
        let whole = parse_in_chunks(text, text.len()).unwrap();
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].id, "chr1");
        assert_eq!(whole[0].seq, b"ACGTNACGT");
        assert_eq!(whole[1].seq, b"NNAC");
        assert!(whole[2].seq.is_empty());
        for chunk in 1..text.len() {
            assert_eq!(parse_in_chunks(text, chunk).unwrap(), whole);
        }
    }

    #[test]
    fn malformed_fasta_names_the_line() {
        let err = |t: &[u8]| parse_in_chunks(t, 3).unwrap_err();
        assert_eq!(
            err(b"ACGT\n"),
            GenomeError::Fasta {
                line: 1,
                reason: "sequence before the first header"
            }
        );
        assert_eq!(
            err(b">a\nAC\nA1GT\n"),
            GenomeError::Fasta {
                line: 3,
                reason: "not a sequence letter"
            }
        );
        assert_eq!(
            err(b">a\n> x\n"),
            GenomeError::Fasta {
                line: 2,
                reason: "empty record identifier"
            }
        );
        assert_eq!(
            err(b""),
            GenomeError::Fasta {
                line: 1,
                reason: "no FASTA record"
            }
        );
        let long = [b">".as_slice(), &vec![b'x'; HEADER_LEN_MAX_BYTES + 1]].concat();
        assert!(matches!(
            err(&long),
            GenomeError::Fasta {
                reason: "header line too long",
                ..
            }
        ));
    }
}
