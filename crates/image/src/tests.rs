//! An image round trip (create, import, close, reopen, list, export, compare, fsck), and bad
//! image files refused with a typed error that names the problem.

use super::*;
use crate::store::HEADER_BYTES;
use std::os::unix::fs::FileExt;

fn preset() -> Preset {
    Preset::load("test-min", &[]).unwrap()
}

/// A fresh image of `test-min` in a temporary directory, closed.
fn fresh() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.img");
    Image::create(&preset(), &path).unwrap().close().unwrap();
    (dir, path)
}

#[test]
fn imported_bytes_come_back_after_reopening() {
    let (dir, path) = fresh();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    // More than one chunk, not a whole number of them.
    let big: Vec<u8> = (0..(CHUNK_BYTES as u32 * 3 / 2))
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    std::fs::write(src.join("big.bin"), &big).unwrap();
    std::fs::write(src.join("sub/small.txt"), b"hello").unwrap();

    let mut image = Image::open(&path).unwrap();
    assert_eq!(image.import(&[src], "/").unwrap().files, 2);
    image.close().unwrap();

    let mut image = Image::open(&path).unwrap();
    let listing = image.ls("/src").unwrap();
    let names: Vec<&str> = listing.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(&names[..2], [".", ".."]);
    let big_entry = listing.iter().find(|l| l.name == "big.bin").unwrap();
    assert_eq!(big_entry.stat.size_bytes, big.len() as u64);
    assert_eq!(
        listing.iter().find(|l| l.name == "sub").unwrap().stat.kind,
        FileKind::Dir
    );
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    image.export("/src", &out, Overwrite::Refuse).unwrap();
    assert!(image.fsck().unwrap().is_clean());
    image.close().unwrap();
    assert_eq!(std::fs::read(out.join("src/big.bin")).unwrap(), big);
    assert_eq!(
        std::fs::read(out.join("src/sub/small.txt")).unwrap(),
        b"hello"
    );
}

#[test]
fn an_image_dropped_without_close_keeps_what_was_fsynced() {
    let (dir, path) = fresh();
    let host_file = dir.path().join("notes.txt");
    std::fs::write(&host_file, b"durable").unwrap();
    let mut image = Image::open(&path).unwrap();
    image.import(&[host_file], "/").unwrap();
    drop(image); // as a killed process leaves it
    let mut image = Image::open(&path).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    image.export("/notes.txt", &out, Overwrite::Refuse).unwrap();
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"durable");
}

#[test]
fn the_image_layout_is_the_documented_one() {
    let (_dir, path) = fresh();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[0..8], b"NFIMAGE1");
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let text = std::str::from_utf8(&bytes[16..16 + len]).unwrap();
    let stored = Preset::parse("header", text, &[]).unwrap();
    assert_eq!(stored.name, preset().name);
    assert!(bytes[16 + len..HEADER_BYTES as usize]
        .iter()
        .all(|&b| b == 0));
    let p = preset();
    let pages = nearflash_flash::Geometry::from_config(&p.flash).page_count();
    let slot = u64::from(p.flash.page_size_bytes) + u64::from(p.flash.oob_size_bytes);
    assert_eq!(
        bytes.len() as u64,
        HEADER_BYTES + pages.div_ceil(8) + pages * slot
    );
    // mkfs programmed some pages, and the bitmap says so.
    let bitmap = &bytes[HEADER_BYTES as usize..(HEADER_BYTES + pages.div_ceil(8)) as usize];
    assert!(bitmap.iter().any(|&b| b != 0));
}

/// Writes `bytes` at `at` of the image.
fn patch(path: &Path, at: u64, bytes: &[u8]) {
    let f = File::options().write(true).open(path).unwrap();
    f.write_all_at(bytes, at).unwrap();
}

fn open_err(path: &Path) -> ImageError {
    match Image::open(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e,
    }
}

#[test]
fn a_file_that_is_not_an_image_is_refused_by_its_magic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.img");
    std::fs::write(&path, vec![0x5Au8; 4096]).unwrap();
    let e = open_err(&path);
    assert!(matches!(e, ImageError::BadMagic { .. }), "{e:?}");
    assert!(e.to_string().contains("garbage.img"), "{e}");
    assert!(e.to_string().contains("not a nearflash image"), "{e}");
}

/// Story: a 0-byte image was refused with "failed to fill whole buffer", which names
/// neither the file nor the problem.
#[test]
fn an_empty_or_short_file_is_not_an_image_and_the_error_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("empty.img", &b""[..]), ("short.img", &b"NFIMAGE1\x05"[..])] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = open_err(&path);
        assert!(
            matches!(&e, ImageError::TooShort { len_bytes, .. } if *len_bytes == bytes.len() as u64),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains(name) && msg.contains("not a nearflash image"),
            "{msg}"
        );
        assert!(!msg.contains("fill whole buffer"), "{msg}");
    }
}

#[test]
fn a_preset_length_past_the_header_is_a_corrupt_header() {
    let (_dir, path) = fresh();
    // The largest length: no overflow, no huge allocation.
    patch(&path, 8, &u64::MAX.to_le_bytes());
    let e = open_err(&path);
    assert!(
        matches!(
            e,
            ImageError::CorruptHeader {
                preset_len_bytes: u64::MAX,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn a_preset_that_is_not_utf8_or_not_a_preset_is_named() {
    let (_dir, path) = fresh();
    patch(&path, 16, &[0xFF, 0xFE]);
    let e = open_err(&path);
    assert!(matches!(e, ImageError::PresetNotUtf8 { .. }), "{e:?}");
    patch(&path, 16, b"[[");
    let e = open_err(&path);
    assert!(matches!(e, ImageError::Preset(_)), "{e:?}");
    assert!(e.to_string().contains("dev.img"), "{e}");
}

#[test]
fn a_truncated_image_is_refused_with_its_lengths() {
    let (_dir, path) = fresh();
    let full = std::fs::metadata(&path).unwrap().len();
    let cut = HEADER_BYTES + 100;
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(cut)
        .unwrap();
    let e = open_err(&path);
    let ImageError::Truncated {
        len_bytes,
        expected_bytes,
        ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!((len_bytes, expected_bytes), (cut, full));
    assert!(open_err(&path).to_string().contains("truncated image"));
}

#[test]
fn a_missing_image_names_its_path() {
    let e = open_err(Path::new("/nonexistent/dev.img"));
    assert!(
        matches!(&e, ImageError::Io { what, .. } if what == "image /nonexistent/dev.img"),
        "{e:?}"
    );
}

#[test]
fn operations_on_missing_paths_are_typed_fs_errors() {
    let (dir, path) = fresh();
    let mut image = Image::open(&path).unwrap();
    let e = image.ls("/nope").unwrap_err();
    assert!(matches!(e, ImageError::Op { .. }), "{e:?}");
    let e = image
        .export("/nope", dir.path(), Overwrite::Refuse)
        .unwrap_err();
    assert!(matches!(e, ImageError::Op { .. }), "{e:?}");
    let e = image
        .import(&[dir.path().join("no-such-host-file")], "/")
        .unwrap_err();
    assert!(matches!(e, ImageError::Io { .. }), "{e:?}");
}
