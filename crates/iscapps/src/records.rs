//! Fixed-size records cut out of a flit stream. A record may straddle any number of flits
//! (flits of any length, not only 64): the framer keeps the partial record between calls.

use nearflash_stream::{Flit, ProgramError};

/// Reassembles fixed-size records from arbitrary byte chunks.
#[derive(Debug)]
pub struct RecordFramer {
    record_bytes: usize,
    pending: Vec<u8>,
}

impl RecordFramer {
    pub fn new(record_bytes: usize) -> RecordFramer {
        assert!(record_bytes > 0, "a record has at least one byte");
        RecordFramer {
            record_bytes,
            pending: Vec::with_capacity(record_bytes),
        }
    }

    /// Feeds `bytes`, calling `each` on every record completed, in order.
    pub fn feed<E>(
        &mut self,
        mut bytes: &[u8],
        mut each: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.pending.is_empty() {
            let take = (self.record_bytes - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() < self.record_bytes {
                return Ok(());
            }
            each(&self.pending)?;
            self.pending.clear();
        }
        let mut whole = bytes.chunks_exact(self.record_bytes);
        for record in whole.by_ref() {
            each(record)?;
        }
        self.pending.extend_from_slice(whole.remainder());
        debug_assert!(self.pending.len() < self.record_bytes);
        Ok(())
    }

    /// At the end of the stream: a partial record left over is a framing error.
    pub fn finish(&self) -> Result<(), ProgramError> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(ProgramError::Framing(
                "stream ends inside a record (length is not a whole number of records)",
            ))
        }
    }
}

/// Remembers whether the input stream ended, so that a flit after `eop` is a clean error
/// (and a program never writes output after closing it).
#[derive(Debug, Default)]
pub struct EndGuard {
    ended: bool,
}

impl EndGuard {
    /// Accepts `flit`; errors if the stream already ended.
    pub fn accept(&mut self, flit: &Flit) -> Result<(), ProgramError> {
        if self.ended {
            return Err(ProgramError::Framing("flit after end of stream"));
        }
        self.ended = flit.eop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_straddling_chunks_come_out_whole_and_in_order() {
        let data: Vec<u8> = (0..100u8).collect();
        let mut f = RecordFramer::new(7);
        let mut got = Vec::new();
        for chunk in [&data[..3], &data[3..4], &data[4..50], &data[50..98]] {
            f.feed(chunk, |r| {
                got.push(r.to_vec());
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        assert_eq!(got.len(), 14);
        assert_eq!(got[13], data[91..98].to_vec());
        assert!(f.finish().is_ok());
        f.feed(&data[98..], |_| Ok::<(), ()>(())).unwrap();
        assert!(f.finish().is_err());
    }
}
