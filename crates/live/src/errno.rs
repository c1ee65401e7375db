//! The file system's typed errors as the errno a program sees — the one place this mapping
//! lives. Device-side failures (I/O, corruption, a stuck operation) are `EIO`.

use crate::op::Errno;
use nearflash_fs::{FsError, HostError};

/// The errno for a failed file-system operation.
pub fn of_fs(e: &FsError) -> Errno {
    Errno(match e {
        FsError::NotFound(_) => libc::ENOENT,
        FsError::Exists(_) => libc::EEXIST,
        FsError::NotDir(_) => libc::ENOTDIR,
        FsError::IsDir(_) => libc::EISDIR,
        FsError::NotEmpty(_) => libc::ENOTEMPTY,
        FsError::NoSpace(_) => libc::ENOSPC,
        FsError::Permission(_) => libc::EACCES,
        FsError::AppendOnly(_) => libc::EPERM,
        FsError::NameTooLong { .. } => libc::ENAMETOOLONG,
        FsError::InvalidName(_) | FsError::InvalidArgument(_) | FsError::MoveIntoSelf(_) => {
            libc::EINVAL
        }
        FsError::BadHandle(_) => libc::EBADF,
        FsError::StaleHandle(_) => libc::ESTALE,
        FsError::TooManyOpenFiles(_) => libc::EMFILE,
        FsError::TooManyExtents(_) => libc::EFBIG,
        FsError::Busy(_) => libc::EAGAIN,
        FsError::NotMounted
        | FsError::AlreadyMounted
        | FsError::NeedsFunctionalDevice
        | FsError::DeviceTooSmall { .. }
        | FsError::Io(_)
        | FsError::Corrupt(_) => libc::EIO,
    })
}

/// The errno for a failed operation of the synchronous driver.
pub fn of_host(e: &HostError) -> Errno {
    match e {
        HostError::Fs(e) => of_fs(e),
        HostError::Config(_) | HostError::Stall(_) => Errno(libc::EIO),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_device_is_enospc_and_a_refused_caller_is_eacces() {
        assert_eq!(of_fs(&FsError::NoSpace("data blocks")), Errno(libc::ENOSPC));
        assert_eq!(
            of_fs(&FsError::Permission("/a".into())),
            Errno(libc::EACCES)
        );
        assert_eq!(of_fs(&FsError::NotFound("/a".into())), Errno(libc::ENOENT));
    }
}
