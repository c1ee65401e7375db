//! The control file, `MOUNT/.nearflash/control` (mode 0666): a program opens it for reading
//! and writing, writes one request — a line of JSON — and reads the answer from offset 0.
//! The request runs as the writer (the uid and gid of its `write`), when its newline arrives;
//! that `write` fails with the request's errno when it is refused, and the answer (JSON, with
//! the message) is readable either way. One request per open.
//!
//! ```text
//! {"op":"register","name":"m","file":"/data/lines.txt","program":"grep","args":["AB"]}
//! {"op":"register","name":"w","file":"/data/lines.txt","program":"grep.wat",
//!  "module_hex":"28…","args":["AB"],"fuel_max":1000000,"memory_max_mib":16}
//! {"op":"unregister","name":"m"}
//! {"op":"list"}
//! {"op":"cs","files":{"in":"6e656564…","filter.o":"7f454c46…"},"commands":[
//!  {"op":"write_nvm","file":"in"},{"op":"load_program","file":"filter.o"},{"op":"activate"},
//!  {"op":"create_range_set","ranges":[{"start_bytes":0},{"start_bytes":1048576,"len_bytes":4096}]},
//!  {"op":"copy_from_nvm"},{"op":"execute","cparam":["str:needle",6]},
//!  {"op":"memory_read","offset_bytes":1048576,"output":"count"}]}
//! ```
//!
//! `cs` runs NVMe Computational Programs and Subsystem Local Memory commands: the very command
//! values of `nearflash cs script`'s TOML (`nearflash_cs::script::ScriptCommand`), run by its
//! runner, on the device's computational drive (`device::cs`). Files the commands name travel
//! in `files` (hex); `memory_read` outputs come back in the answer's `cs.outputs` (hex, at most
//! `CS_OUTPUT_BYTES_MAX` in all).
//!
//! A module travels inside the request (hex), so the server never opens a path of the
//! caller's host; `nearflash vfile register` builds the request. Bounds: a request is at most
//! `REQUEST_BYTES_MAX` bytes (a module at most `MODULE_BYTES_MAX`); writes must come in order.

use crate::op::Errno;
use crate::vfile::VfileError;
use nearflash_cs::script::ScriptCommand;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The control file's name inside `/.nearflash`.
pub const CONTROL_FILE_NAME: &str = "control";
/// Largest module a request carries.
pub const MODULE_BYTES_MAX: u64 = 4 << 20;
/// Largest request: the module in hex and room for the rest.
pub const REQUEST_BYTES_MAX: u64 = 2 * MODULE_BYTES_MAX + (64 << 10);
/// Commands one `cs` request may hold (the request's bytes bound them too).
pub const CS_COMMANDS_MAX: usize = 1000;
/// Bytes of `memory_read` outputs one `cs` answer carries (before hex): the answer is read
/// back through the control file, so it stays of the order of a request.
pub const CS_OUTPUT_BYTES_MAX: u64 = 1 << 20;

/// One request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum Request {
    Register(Registration),
    Unregister { name: String },
    List,
    Cs(CsRequest),
}

/// A `cs` request: commands, and the files they name (hex), all within `REQUEST_BYTES_MAX`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsRequest {
    pub commands: Vec<ScriptCommand>,
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// What a `cs` request did: each command (the script runner's steps) and the outputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CsAnswer {
    pub steps: Vec<CsStep>,
    /// `memory_read` outputs by the name given as `output`, hex.
    pub outputs: BTreeMap<String, String>,
    /// The last Execute's 64-bit return.
    pub last_result: Option<u64>,
    /// The computational drive's simulated time after the request, µs.
    pub now_us: f64,
}

/// One NVMe command of a `cs` request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsStep {
    pub command: String,
    pub detail: String,
    pub latency_us: f64,
    pub status: String,
}

/// What a registration asks for (also how it is stored on the image).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    /// The virtual file's name under `/.nearflash/vfiles/`.
    pub name: String,
    /// The real file's absolute path in the device's file system.
    pub file: String,
    /// A built-in's name (grep, statistics, …) or, with `module_hex`, the module's file name.
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// The module's bytes (binary or WAT text), hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max_mib: Option<u64>,
}

/// One registered virtual file as listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub name: String,
    /// Where it is read, relative to the mount point.
    pub path: String,
    pub file: String,
    pub program: String,
    pub args: Vec<String>,
    pub wasm: bool,
    pub owner_uid: u32,
    pub owner_gid: u32,
    /// Output bytes of its last run (0 before any).
    pub last_output_bytes: u64,
}

/// The answer to a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub ok: bool,
    /// The errno of a refused request.
    #[serde(default)]
    pub errno: Option<i32>,
    pub message: String,
    /// The virtual files after the request (register, unregister, list: the ones the caller
    /// may see — all of them; reading one still needs read permission on its real file).
    #[serde(default)]
    pub vfiles: Vec<Listed>,
    /// A `cs` request's steps and outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cs: Option<CsAnswer>,
}

impl Answer {
    pub fn refused(e: &VfileError) -> Answer {
        Answer {
            ok: false,
            errno: Some(e.errno().0),
            message: e.to_string(),
            vfiles: Vec::new(),
            cs: None,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec(self).expect("an answer serializes");
        v.push(b'\n');
        v
    }
}

/// One open control handle: the request as it arrives, then the answer.
#[derive(Debug, Default)]
pub struct ControlHandle {
    request: Vec<u8>,
    answer: Option<(Result<(), Errno>, Vec<u8>)>,
}

/// What a write to a control handle did.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    /// Bytes taken; the request is not complete yet.
    Partial,
    /// The request's line is complete: run it.
    Complete(Request),
}

impl ControlHandle {
    /// Takes `data` written at `offset`; a complete line is parsed.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<Written, VfileError> {
        if let Some((result, _)) = &self.answer {
            // A retried remainder of a refused request sees the same refusal.
            return Err(match result {
                Err(e) => VfileError::BadRequest(format!(
                    "the request was answered ({}); one request per open",
                    std::io::Error::from_raw_os_error(e.0)
                )),
                Ok(()) => VfileError::BadRequest("one request per open".into()),
            });
        }
        if offset != self.request.len() as u64 {
            return Err(VfileError::BadRequest(format!(
                "write at offset {offset}: the request so far has {} bytes (write it in order)",
                self.request.len()
            )));
        }
        if (self.request.len() + data.len()) as u64 > REQUEST_BYTES_MAX {
            return Err(VfileError::RequestTooLarge {
                bytes_max: REQUEST_BYTES_MAX,
            });
        }
        self.request.extend_from_slice(data);
        let Some(nl) = self.request.iter().position(|&b| b == b'\n') else {
            return Ok(Written::Partial);
        };
        if nl + 1 != self.request.len() {
            return Err(VfileError::BadRequest(
                "bytes after the request's newline (one request per open)".into(),
            ));
        }
        let line = std::mem::take(&mut self.request);
        serde_json::from_slice(&line[..nl])
            .map(Written::Complete)
            .map_err(|e| VfileError::BadRequest(e.to_string()))
    }

    /// Records the answer (readable from offset 0).
    pub fn answer(&mut self, result: Result<(), Errno>, answer: &Answer) {
        assert!(self.answer.is_none(), "one answer per request");
        self.answer = Some((result, answer.to_bytes()));
    }

    /// Records a refusal (readable from offset 0).
    pub fn refused(&mut self, errno: Errno, answer: &Answer) {
        assert_ne!(errno.0, 0, "a refusal has an errno");
        assert!(!answer.ok, "a refusal's answer says so");
        self.answer(Err(errno), answer);
    }

    /// Whether the request was answered (a later write is refused and leaves the answer).
    pub fn is_answered(&self) -> bool {
        self.answer.is_some()
    }

    /// The answer's bytes from `offset` (none before the request is answered).
    pub fn read(&self, offset: u64, len: u32) -> Vec<u8> {
        let Some((_, a)) = &self.answer else {
            return Vec::new();
        };
        let from = (offset as usize).min(a.len());
        let to = from.saturating_add(len as usize).min(a.len());
        a[from..to].to_vec()
    }
}

/// Lower-case hex of `bytes`.
pub fn hex_encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The bytes of hex `s` (either case).
pub fn hex_decode(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("hex of odd length {}", s.len()));
    }
    let digit = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("{:?} is not a hex digit", char::from(c))),
        }
    };
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_split_over_writes_completes_at_its_newline() {
        let mut h = ControlHandle::default();
        let line = b"{\"op\":\"unregister\",\"name\":\"m\"}\n";
        assert_eq!(h.write(0, &line[..10]), Ok(Written::Partial));
        assert_eq!(
            h.write(10, &line[10..]),
            Ok(Written::Complete(Request::Unregister { name: "m".into() }))
        );
        assert!(h.read(0, 100).is_empty(), "no answer yet");
        h.answer(
            Err(Errno(libc::ENOENT)),
            &Answer::refused(&VfileError::NotFound("m".into())),
        );
        let a: Answer = serde_json::from_slice(&h.read(0, 4096)).unwrap();
        assert_eq!((a.ok, a.errno), (false, Some(libc::ENOENT)));
        assert!(
            h.write(line.len() as u64, b"x").is_err(),
            "one request per open"
        );
    }

    #[test]
    fn out_of_order_oversized_and_malformed_requests_are_refused() {
        let mut h = ControlHandle::default();
        assert!(h.write(5, b"{}").is_err());
        let big = vec![b' '; REQUEST_BYTES_MAX as usize + 1];
        assert_eq!(
            ControlHandle::default().write(0, &big).unwrap_err().errno(),
            Errno(libc::E2BIG)
        );
        let bad = ControlHandle::default().write(0, b"{\"op\":\"format\"}\n");
        assert_eq!(bad.unwrap_err().errno(), Errno(libc::EINVAL));
        let two = ControlHandle::default().write(0, b"{\"op\":\"list\"}\n{\"op\":\"list\"}\n");
        assert!(two.is_err());
        assert_eq!(
            ControlHandle::default().write(0, b"{\"op\":\"list\"}\n"),
            Ok(Written::Complete(Request::List))
        );
    }

    #[test]
    fn hex_round_trips_and_refuses_odd_or_foreign_digits() {
        let b: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_decode(&hex_encode(&b)).unwrap(), b);
        assert_eq!(hex_decode("4A4b").unwrap(), b"JK");
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
    }
}
