//! Flits: the 64-byte words of the stream interface (INSIDER Fig. 6, `APP_Data`).

/// Payload bytes in one flit.
pub const FLIT_BYTES: usize = 64;

/// One flit: up to 64 payload bytes, `len` of them valid, `eop` on the last flit of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flit {
    data: [u8; FLIT_BYTES],
    len: u8,
    eop: bool,
}

impl Flit {
    /// A flit holding `bytes` (at most 64). A flit with `eop` may hold zero bytes (the end
    /// of an empty stream, or a stream whose length is a multiple of 64 closed late).
    pub fn new(bytes: &[u8], eop: bool) -> Flit {
        assert!(bytes.len() <= FLIT_BYTES, "a flit holds at most 64 bytes");
        assert!(eop || !bytes.is_empty(), "only the last flit may be empty");
        let mut data = [0u8; FLIT_BYTES];
        data[..bytes.len()].copy_from_slice(bytes);
        Flit {
            data,
            len: bytes.len() as u8,
            eop,
        }
    }

    /// The valid bytes.
    pub fn payload(&self) -> &[u8] {
        &self.data[..usize::from(self.len)]
    }

    /// Number of valid bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when the flit carries no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True on the last flit of a stream.
    pub fn eop(&self) -> bool {
        self.eop
    }
}

/// Splits `bytes` into flits; the last has `eop`. An empty input is one empty `eop` flit.
pub fn flits_of(bytes: &[u8]) -> Vec<Flit> {
    if bytes.is_empty() {
        return vec![Flit::new(&[], true)];
    }
    let n = bytes.len().div_ceil(FLIT_BYTES);
    bytes
        .chunks(FLIT_BYTES)
        .enumerate()
        .map(|(i, c)| Flit::new(c, i + 1 == n))
        .collect()
}

/// Packs a program's output bytes into flits: full flits as soon as 64 bytes are pending,
/// the remainder (and `eop`) on `end`.
#[derive(Debug, Default)]
pub struct FlitWriter {
    pending: Vec<u8>,
    flits: Vec<Flit>,
    ended: bool,
}

impl FlitWriter {
    pub fn new() -> FlitWriter {
        FlitWriter::default()
    }

    /// Appends output bytes: they fill the pending flit, which goes out once full (no
    /// allocation per flit: the drive programs' measured cost, crates/iscapps/src/measured.rs,
    /// includes this path).
    pub fn push(&mut self, mut bytes: &[u8]) {
        assert!(!self.ended, "output pushed after end of stream");
        while !bytes.is_empty() {
            let take = (FLIT_BYTES - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() == FLIT_BYTES {
                self.flits.push(Flit::new(&self.pending, false));
                self.pending.clear();
            }
        }
    }

    /// Closes the stream: the pending bytes go out in a last flit with `eop`.
    pub fn end(&mut self) {
        assert!(!self.ended, "stream ended twice");
        self.ended = true;
        let last = std::mem::take(&mut self.pending);
        self.flits.push(Flit::new(&last, true));
    }

    /// True once `end` was called.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Takes the flits completed so far (the output FIFO drains them).
    pub fn drain(&mut self) -> Vec<Flit> {
        std::mem::take(&mut self.flits)
    }
}

/// Reassembles a flit stream into bytes, checking the framing.
#[derive(Debug, Default)]
pub struct Reassembler {
    bytes: Vec<u8>,
    done: bool,
}

impl Reassembler {
    pub fn new() -> Reassembler {
        Reassembler::default()
    }

    /// Accepts one flit. Errors on a flit after `eop` or a short flit that is not the last.
    pub fn push(&mut self, flit: &Flit) -> Result<(), crate::ProgramError> {
        if self.done {
            return Err(crate::ProgramError::Framing("flit after end of stream"));
        }
        if !flit.eop() && flit.len() != FLIT_BYTES {
            return Err(crate::ProgramError::Framing(
                "short flit before end of stream",
            ));
        }
        self.bytes.extend_from_slice(flit.payload());
        self.done = flit.eop();
        Ok(())
    }

    /// True once the `eop` flit arrived.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The bytes received.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes_130_are_three_flits_the_last_with_len_2() {
        let f = flits_of(&[7u8; 130]);
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].len(), f[0].eop()), (64, false));
        assert_eq!((f[1].len(), f[1].eop()), (64, false));
        assert_eq!((f[2].len(), f[2].eop()), (2, true));
    }

    #[test]
    fn reassembler_rejects_short_flit_in_the_middle_and_flit_after_eop() {
        let mut r = Reassembler::new();
        assert!(r.push(&Flit::new(&[1, 2], false)).is_err());
        let mut r = Reassembler::new();
        r.push(&Flit::new(&[1], true)).unwrap();
        assert!(r.push(&Flit::new(&[1], true)).is_err());
    }

    proptest! {
        #[test]
        fn writer_and_reassembler_round_trip(chunks in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..200), 0..20)) {
            let mut w = FlitWriter::new();
            let mut all = Vec::new();
            for c in &chunks {
                w.push(c);
                all.extend_from_slice(c);
            }
            w.end();
            let flits = w.drain();
            prop_assert_eq!(flits.len(), all.len() / FLIT_BYTES + 1);
            let mut r = Reassembler::new();
            for f in &flits {
                r.push(f).unwrap();
            }
            prop_assert!(r.is_done());
            prop_assert_eq!(r.into_bytes(), all.clone());
            let mut r = Reassembler::new();
            for f in flits_of(&all) {
                r.push(&f).unwrap();
            }
            prop_assert_eq!(r.into_bytes(), all);
        }
    }
}
