use super::*;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn a_regular_file_is_replaced_whole_and_no_temporary_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.json");
    write(&p, b"old").unwrap();
    write(&p, b"new").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new");
    assert_eq!(entries(dir.path()), 1);
}

/// Story: `--output /dev/null`, run as root, renamed a temporary over `/dev/null` and left
/// the system a regular file there. A device is written in place and stays a device.
#[test]
fn writing_to_dev_null_leaves_it_a_character_device() {
    write(Path::new("/dev/null"), b"discarded").unwrap();
    let ft = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(ft.is_char_device(), "/dev/null is no longer a device");
    assert!(std::fs::read_dir("/dev").unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".null.tmp-")));
}

#[test]
fn a_fifo_is_written_in_place_and_stays_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            File::open(&fifo).unwrap().read_to_string(&mut s).unwrap();
            s
        })
    };
    write(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), "through the pipe");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(entries(dir.path()), 1);
}

#[test]
fn a_symbolic_link_stays_a_link_and_its_target_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&real, b"old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    write(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), b"new");
}

#[test]
fn an_output_dropped_before_its_commit_leaves_nothing_under_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("export.bin");
    std::fs::write(&p, b"the complete old copy").unwrap();
    {
        let mut f = OutFile::create(&p, Overwrite::Replace).unwrap();
        f.write_all(b"half of the new").unwrap();
        // dropped: the write failed half-way
    }
    assert_eq!(std::fs::read(&p).unwrap(), b"the complete old copy");
    assert_eq!(entries(dir.path()), 1);
}

#[test]
fn refusing_to_overwrite_fails_on_an_existing_file_at_create_and_at_commit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x");
    std::fs::write(&p, b"mine").unwrap();
    let e = OutFile::create(&p, Overwrite::Refuse).err().unwrap();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    // The name is taken between create and commit: the commit refuses too.
    let q = dir.path().join("y");
    let mut f = OutFile::create(&q, Overwrite::Refuse).unwrap();
    f.write_all(b"theirs").unwrap();
    std::fs::write(&q, b"mine").unwrap();
    let e = f.commit().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&q).unwrap(), b"mine");
    assert_eq!(entries(dir.path()), 2);
    // A new name is taken.
    let r = dir.path().join("z");
    let mut f = OutFile::create(&r, Overwrite::Refuse).unwrap();
    f.write_all(b"new").unwrap();
    f.commit().unwrap();
    assert_eq!(std::fs::read(&r).unwrap(), b"new");
    assert_eq!(entries(dir.path()), 3);
}

#[test]
fn a_bounded_read_takes_a_file_up_to_its_limit_and_refuses_one_byte_more() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in");
    std::fs::write(&p, vec![7u8; 100]).unwrap();
    assert_eq!(crate::read_bounded(&p, 100).unwrap(), vec![7u8; 100]);
    let e = crate::read_bounded(&p, 99).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("larger than 99 bytes"), "{e}");
    // An endless stream is refused after the limit, not read forever.
    let e = crate::read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(
        crate::read_bounded(&dir.path().join("missing"), 1)
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::NotFound
    );
}
