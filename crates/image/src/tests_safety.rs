//! Nothing lost, nothing clobbered (issue 28): one writer per image, inspection that never
//! writes, a refused mkfs that leaves the old image, imports and exports that never leave a
//! partial file under a real name, special host files skipped, mkdir and rm.

use super::*;
use std::time::Instant;

fn preset() -> Preset {
    Preset::load("test-min", &[]).unwrap()
}

/// An image of `test-min` holding `/a.bin` (`bytes`), closed.
fn image_with(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.img");
    let host = dir.path().join("a.bin");
    std::fs::write(&host, bytes).unwrap();
    let mut image = Image::create(&preset(), &path).unwrap();
    image.import(&[host], "/").unwrap();
    image.close().unwrap();
    (dir, path)
}

fn seeded(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

fn read_back(image: &mut Image, path: &str) -> Vec<u8> {
    let out = tempfile::tempdir().unwrap();
    image.export(path, out.path(), Overwrite::Refuse).unwrap();
    let name = path.rsplit('/').next().unwrap();
    std::fs::read(out.path().join(name)).unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Story: two `fs import` into one image at once both exited 0; one file came out 0 bytes,
/// the other failed its checksums. The second writer is now refused, naming the holder.
#[test]
fn a_second_writer_is_refused_with_the_holders_pid() {
    let (_dir, path) = image_with(b"x");
    let first = Image::open(&path).unwrap();
    let start = Instant::now();
    let e = Image::open(&path)
        .err()
        .expect("a second writer is refused");
    assert!(
        start.elapsed() >= LOCK_WAIT,
        "the holder is waited for first"
    );
    assert!(
        matches!(e, ImageError::InUse { holder: Some(pid), writing: false, .. } if pid == std::process::id()),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains(&format!("in use by PID {}", std::process::id())),
        "{e}"
    );
    // A mkfs over it is refused too, and leaves it whole.
    let e = Image::create(&preset(), &path).err().unwrap();
    assert!(matches!(e, ImageError::InUse { .. }), "{e:?}");
    first.close().unwrap();
    Image::open(&path).unwrap().close().unwrap();
}

/// Story: `fs fsck` during an import destroyed the file being written. A reader waits for
/// the writer's lock and is refused while it is held; it never opens the image to write.
#[test]
fn a_reader_during_a_write_is_refused_and_a_writer_during_a_read_too() {
    let (_dir, path) = image_with(b"x");
    let writer = Image::open(&path).unwrap();
    let e = Image::open_read_only(&path).err().unwrap();
    assert!(
        matches!(e, ImageError::InUse { writing: true, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("another command is writing it"),
        "{e}"
    );
    writer.close().unwrap();
    // Readers share; a writer waits for them.
    let r1 = Image::open_read_only(&path).unwrap();
    let r2 = Image::open_read_only(&path).unwrap();
    assert!(matches!(
        Image::open(&path).err().unwrap(),
        ImageError::InUse { .. }
    ));
    drop((r1, r2));
    Image::open(&path).unwrap().close().unwrap();
}

/// Story: `fs ls` opened the image read-write, ran recovery and synced: the image's
/// checksum changed on every `ls`, and an image the user could only read could not be
/// listed. Inspection now opens it read-only and keeps recovery in memory.
#[test]
fn listing_checking_and_exporting_leave_the_image_byte_identical() {
    let data = seeded(300_000, 7);
    let (dir, path) = image_with(&data);
    // Leave recovery and journal replay work to do: an import dropped without close.
    let mut image = Image::open(&path).unwrap();
    let host = dir.path().join("b.bin");
    std::fs::write(&host, seeded(50_000, 9)).unwrap();
    image.import(&[host], "/").unwrap();
    drop(image);
    let before = std::fs::read(&path).unwrap();
    // A file only readable: opened read-only, it can be inspected.
    let mut perm = std::fs::metadata(&path).unwrap().permissions();
    perm.set_readonly(true);
    std::fs::set_permissions(&path, perm).unwrap();
    let mut image = Image::open_read_only(&path).unwrap();
    assert_eq!(image.ls("/").unwrap().len(), 4);
    assert!(image.fsck().unwrap().is_clean());
    assert_eq!(read_back(&mut image, "/a.bin"), data);
    assert_eq!(read_back(&mut image, "/b.bin"), seeded(50_000, 9));
    image.close().unwrap();
    assert!(std::fs::read(&path).unwrap() == before, "the image changed");
}

/// Story: `fs mkfs` truncated the image before its last checks: a preset too large for
/// the header, or a geometry too small for a file system, left the old image 0 bytes or
/// FTL-only. The new image is now built beside the old one and renamed only when done.
#[test]
fn a_refused_mkfs_leaves_the_old_image_as_it_was() {
    let (dir, path) = image_with(b"precious");
    let before = std::fs::read(&path).unwrap();
    let mut too_large = preset();
    too_large.description = "x".repeat(HEADER_BYTES_FOR_TESTS);
    let e = Image::create(&too_large, &path).err().unwrap();
    assert!(matches!(e, ImageError::PresetTooLarge), "{e:?}");
    let too_small: Vec<String> = [
        "flash.channels=1",
        "flash.dies_per_package=1",
        "flash.planes_per_die=1",
        "flash.pages_per_block=3",
    ]
    .map(String::from)
    .to_vec();
    let too_small = Preset::load("test-min", &too_small).unwrap();
    let e = Image::create(&too_small, &path).err().unwrap();
    assert!(e.to_string().contains("too small for a file system"), "{e}");
    assert!(
        std::fs::read(&path).unwrap() == before,
        "the old image changed"
    );
    assert_eq!(entries(dir.path()), ["a.bin", "dev.img"]);
    let mut image = Image::open(&path).unwrap();
    assert_eq!(read_back(&mut image, "/a.bin"), b"precious");
}

const HEADER_BYTES_FOR_TESTS: usize = store::HEADER_BYTES as usize;

/// Story: a re-import killed half-way left 0 bytes where a complete copy was. A re-import
/// that fails (here: the device fills up) now leaves the complete old copy, and no
/// temporary behind.
#[test]
fn a_failed_reimport_keeps_the_complete_old_copy() {
    let old = seeded(100_000, 1);
    let (dir, path) = image_with(&old);
    let mut image = Image::open(&path).unwrap();
    let cap = image.capacity_bytes() as usize;
    let host = dir.path().join("a.bin");
    std::fs::write(&host, seeded(cap + (1 << 20), 2)).unwrap();
    let e = image.import(std::slice::from_ref(&host), "/").unwrap_err();
    assert!(e.to_string().contains("space"), "{e}");
    image.close().unwrap();
    let mut image = Image::open(&path).unwrap();
    assert_eq!(read_back(&mut image, "/a.bin"), old);
    let names: Vec<String> = image.ls("/").unwrap().into_iter().map(|l| l.name).collect();
    assert_eq!(names, [".", "..", "a.bin"]);
    assert!(image.fsck().unwrap().is_clean());
}

/// Story: `fs import --image x.img dir /x` failed with "no such file or directory" instead
/// of creating `/x` as `cp -r` would, and a killed tree import could not be run again
/// ("already exists").
#[test]
fn import_creates_missing_directories_and_a_tree_import_runs_again() {
    let (dir, path) = image_with(b"x");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("sub/f.txt"), b"one").unwrap();
    let mut image = Image::open(&path).unwrap();
    let r = image.import(std::slice::from_ref(&tree), "/x/y").unwrap();
    assert_eq!(r.files, 1);
    std::fs::write(tree.join("sub/f.txt"), b"two").unwrap();
    std::fs::write(tree.join("g.txt"), b"three").unwrap();
    let r = image.import(std::slice::from_ref(&tree), "/x/y").unwrap();
    assert_eq!(r.files, 2);
    assert_eq!(read_back(&mut image, "/x/y/tree/sub/f.txt"), b"two");
    assert_eq!(read_back(&mut image, "/x/y/tree/g.txt"), b"three");
    assert!(image.fsck().unwrap().is_clean());
}

/// Story: importing a tree that held a FIFO hung forever (and a socket left a 0-byte
/// entry). Special files are skipped, each named in the report.
#[test]
fn special_files_in_a_tree_are_skipped_and_named() {
    let (dir, path) = image_with(b"x");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("plain.txt"), b"plain").unwrap();
    let fifo = tree.join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let _sock = std::os::unix::net::UnixListener::bind(tree.join("sock")).unwrap();
    std::os::unix::fs::symlink(&tree, tree.join("loop")).unwrap();
    let mut image = Image::open(&path).unwrap();
    let r = image.import(std::slice::from_ref(&tree), "/").unwrap();
    assert_eq!(r.files, 1);
    let mut kinds: Vec<&str> = r.skipped.iter().map(|s| s.kind).collect();
    kinds.sort();
    assert_eq!(kinds, ["FIFO", "socket", "symbolic link to a directory"]);
    let names: Vec<String> = image
        .ls("/tree")
        .unwrap()
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(names, [".", "..", "plain.txt"]);
}

/// Story: there was no `fs mkdir`, `fs rm` or `fs rmdir`: a half-imported tree could not be
/// removed.
#[test]
fn mkdir_rm_and_rm_r_shape_the_tree() {
    let (dir, path) = image_with(b"x");
    let mut image = Image::open(&path).unwrap();
    image.mkdir("/p/q/r", true).unwrap();
    image.mkdir("/p/q/r", true).unwrap();
    assert!(image.mkdir("/p/q/r", false).is_err());
    let host = dir.path().join("f");
    std::fs::write(&host, b"f").unwrap();
    image.import(std::slice::from_ref(&host), "/p/q/r").unwrap();
    image.import(std::slice::from_ref(&host), "/p").unwrap();
    let e = image.rm("/p", false).unwrap_err();
    assert!(matches!(e, ImageError::IsDirectory { .. }), "{e:?}");
    assert_eq!(image.rm("/p/f", false).unwrap(), 1);
    assert_eq!(image.rm("/p", true).unwrap(), 4);
    image.mkdir("/e", false).unwrap();
    image.rmdir("/e").unwrap();
    let names: Vec<String> = image.ls("/").unwrap().into_iter().map(|l| l.name).collect();
    assert_eq!(names, [".", "..", "a.bin"]);
    assert!(image.fsck().unwrap().is_clean());
}

/// Story: a failed `fs export` left a partial (or 0-byte) file under the target's name, and
/// export overwrote a host file without a word.
#[test]
fn an_export_refuses_to_overwrite_without_force_and_replaces_with_it() {
    let (dir, path) = image_with(b"from the image");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("a.bin"), b"the user's own file").unwrap();
    let mut image = Image::open_read_only(&path).unwrap();
    let e = image.export("/a.bin", &out, Overwrite::Refuse).unwrap_err();
    assert!(matches!(e, ImageError::HostExists { .. }), "{e:?}");
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(
        std::fs::read(out.join("a.bin")).unwrap(),
        b"the user's own file"
    );
    image.export("/a.bin", &out, Overwrite::Replace).unwrap();
    assert_eq!(std::fs::read(out.join("a.bin")).unwrap(), b"from the image");
    assert_eq!(entries(&out), ["a.bin"]);
    // A failed export (a missing source) leaves nothing behind.
    assert!(image.export("/nope", &out, Overwrite::Refuse).is_err());
    assert_eq!(entries(&out), ["a.bin"]);
}
