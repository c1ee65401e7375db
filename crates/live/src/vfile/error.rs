//! Why a control request was refused or a virtual file's run failed; each carries the errno
//! the program sees (`VfileError::errno`) and a message for the control file's answer and the
//! statistics.

use crate::op::Errno;
use nearflash_iscapps::AppError;
use nearflash_stream::ProgramError;
use nearflash_wasm::LoadError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VfileError {
    #[error(
        "bad virtual-file name {0:?}: 1-64 bytes of letters, digits, '.', '_' or '-', not \
         starting with '.'"
    )]
    BadName(String),
    #[error("a virtual file named {0:?} is registered already")]
    Exists(String),
    #[error("no virtual file named {0:?}")]
    NotFound(String),
    #[error("{registrations_max} virtual files are registered already (unregister one first)")]
    TooMany { registrations_max: usize },
    #[error("only its owner (uid {owner}) or root may unregister {name:?}")]
    NotOwner { name: String, owner: u32 },
    /// The file system refused the caller the real file (its own check, as for `open(2)`).
    #[error("{path}: {} (as uid {uid}, gid {gid})", std::io::Error::from_raw_os_error(*errno))]
    RealFile {
        path: String,
        uid: u32,
        gid: u32,
        errno: i32,
    },
    #[error("{0}")]
    App(#[from] AppError),
    #[error("{program} cannot run behind a virtual file: {reason}")]
    Unsupported {
        program: &'static str,
        reason: String,
    },
    #[error("argument {arg:?} of {program}: {reason}")]
    BadArg {
        program: &'static str,
        arg: String,
        reason: String,
    },
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("a request is one line of at most {bytes_max} bytes")]
    RequestTooLarge { bytes_max: u64 },
    #[error("{what} {value} is over the server's limit of {max}")]
    Limit {
        what: &'static str,
        value: u64,
        max: u64,
    },
    /// A built-in refused its parameters when registered (a trial over an empty input).
    #[error("{0}")]
    Params(ProgramError),
    /// The drive program's own error: bad parameters, a fault; for a WebAssembly program a
    /// trap, running out of fuel or memory, breaking its output limit or a non-zero exit.
    #[error(transparent)]
    Program(#[from] ProgramError),
    #[error("{program}: output over the limit of {bytes_max} bytes")]
    OutputLimit { program: String, bytes_max: u64 },
    #[error("{0} did not end its output at the end of its input")]
    NotEnded(String),
    /// The device failed under the request (an errno from the file system).
    #[error("{what}: {}", std::io::Error::from_raw_os_error(*errno))]
    Device { what: String, errno: i32 },
}

impl VfileError {
    /// What the program that wrote the request, or read the virtual file, sees.
    pub fn errno(&self) -> Errno {
        Errno(match self {
            VfileError::BadName(_)
            | VfileError::App(_)
            | VfileError::Unsupported { .. }
            | VfileError::BadArg { .. }
            | VfileError::Load(_)
            | VfileError::Params(_)
            | VfileError::BadRequest(_) => libc::EINVAL,
            VfileError::Exists(_) => libc::EEXIST,
            VfileError::NotFound(_) => libc::ENOENT,
            VfileError::TooMany { .. } => libc::ENOSPC,
            VfileError::NotOwner { .. } => libc::EPERM,
            VfileError::RealFile { errno, .. } | VfileError::Device { errno, .. } => *errno,
            VfileError::RequestTooLarge { .. } | VfileError::Limit { .. } => libc::E2BIG,
            VfileError::OutputLimit { .. } => libc::EFBIG,
            VfileError::Program(_) | VfileError::NotEnded(_) => libc::EIO,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_real_file_names_the_path_the_caller_and_the_reason() {
        let e = VfileError::RealFile {
            path: "/private/f".into(),
            uid: 65534,
            gid: 65534,
            errno: libc::EACCES,
        };
        assert_eq!(e.errno(), Errno(libc::EACCES));
        let m = e.to_string();
        assert!(m.contains("/private/f") && m.contains("Permission denied") && m.contains("65534"));
        let trap = VfileError::Program(ProgramError::Fault {
            program: "wasm",
            reason: "out of fuel".into(),
        });
        assert_eq!(trap.errno(), Errno(libc::EIO));
    }
}
