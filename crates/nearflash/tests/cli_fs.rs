//! `nearflash fs` through the real binary: an image is formatted, files go in and come back
//! byte for byte, `ls` shows them, `fsck` is clean, and the crash test ends with its pass
//! line; a missing image is named.

mod common;
use common::{fails_naming, nearflash};

fn ok(args: &[&str]) -> String {
    let out = nearflash(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn files_imported_into_an_image_come_back_byte_for_byte_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("dev.img");
    let img = image.to_str().unwrap();
    ok(&["fs", "mkfs", "--preset", "test-min", "--image", img]);
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(src.join("big.bin"), &big).unwrap();
    std::fs::write(src.join("sub/small.txt"), b"hello").unwrap();
    ok(&["fs", "import", "--image", img, src.to_str().unwrap(), "/"]);
    let listing = ok(&["fs", "ls", "--image", img, "/src"]);
    assert!(
        listing.contains("big.bin") && listing.contains("3000000"),
        "{listing}"
    );
    ok(&["fs", "fsck", "--image", img]);
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    ok(&[
        "fs",
        "export",
        "--image",
        img,
        "/src",
        out.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read(out.join("src/big.bin")).unwrap(), big);
    assert_eq!(
        std::fs::read(out.join("src/sub/small.txt")).unwrap(),
        b"hello"
    );
}

#[test]
fn the_fs_crash_test_ends_with_its_pass_line() {
    let out = ok(&["fs", "crashtest", "--preset", "test-min", "--seeds", "4"]);
    assert_eq!(out.lines().last(), Some("4 passed, 0 failed"));
}

#[test]
fn a_missing_image_is_named() {
    fails_naming(
        &["fs", "ls", "--image", "/nonexistent/dev.img"],
        "/nonexistent/dev.img",
    );
}

fn mkfs_with(dir: &std::path::Path, files: &[(&str, &[u8])]) -> std::path::PathBuf {
    let image = dir.join("dev.img");
    let img = image.to_str().unwrap();
    ok(&["fs", "mkfs", "--preset", "test-min", "--image", img]);
    for (name, bytes) in files {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        ok(&["fs", "import", "--image", img, p.to_str().unwrap(), "/"]);
    }
    image
}

fn seeded(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

/// Exports `/name` from `img` into a fresh directory and reads it back.
fn exported(img: &str, name: &str) -> Vec<u8> {
    let out = tempfile::tempdir().unwrap();
    ok(&[
        "fs",
        "export",
        "--image",
        img,
        &format!("/{name}"),
        out.path().to_str().unwrap(),
    ]);
    std::fs::read(out.path().join(name)).unwrap()
}

/// Story: two `fs import` into one image at once both exited 0; one file came out 0 bytes
/// and the other failed its checksums after 20 MiB, with fsck clean. Now the second writer
/// waits for the first and is refused "in use by PID N" if it is still busy: whatever
/// either reports imported reads back whole, and fsck is clean.
#[test]
fn two_imports_at_once_never_lose_or_mix_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let image = mkfs_with(dir.path(), &[]);
    let img = image.to_str().unwrap();
    let (a, b) = (seeded(3 << 20, 1), seeded(3 << 20, 2));
    std::fs::write(dir.path().join("a.bin"), &a).unwrap();
    std::fs::write(dir.path().join("b.bin"), &b).unwrap();
    let spawn = |name: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_nearflash"))
            .args(["fs", "import", "--image", img])
            .arg(dir.path().join(name))
            .arg("/")
            .output()
    };
    let (oa, ob) = std::thread::scope(|s| {
        let ta = s.spawn(|| spawn("a.bin").unwrap());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let tb = s.spawn(|| spawn("b.bin").unwrap());
        (ta.join().unwrap(), tb.join().unwrap())
    });
    assert!(
        oa.status.success(),
        "{}",
        String::from_utf8_lossy(&oa.stderr)
    );
    if ob.status.success() {
        assert_eq!(exported(img, "b.bin"), b);
    } else {
        let err = String::from_utf8_lossy(&ob.stderr);
        assert!(err.contains("in use by PID"), "{err}");
    }
    assert_eq!(exported(img, "a.bin"), a);
    ok(&["fs", "fsck", "--image", img]);
}

/// Story: `fs fsck` run while an import was writing destroyed the file being written. A
/// reader now waits for the writer (or is refused naming it) and changes nothing.
#[test]
fn fsck_during_an_import_destroys_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let image = mkfs_with(dir.path(), &[]);
    let img = image.to_str().unwrap();
    let a = seeded(6 << 20, 3);
    std::fs::write(dir.path().join("a.bin"), &a).unwrap();
    let mut import = std::process::Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args(["fs", "import", "--image", img])
        .arg(dir.path().join("a.bin"))
        .arg("/")
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let f = nearflash(&["fs", "fsck", "--image", img]);
    let err = String::from_utf8_lossy(&f.stderr);
    assert!(f.status.success() || err.contains("in use by PID"), "{err}");
    assert!(import.wait().unwrap().success());
    assert_eq!(exported(img, "a.bin"), a);
    ok(&["fs", "fsck", "--image", img]);
}

/// Story: `fs ls`, `fs fsck` and `fs export` opened the image read-write, ran recovery and
/// synced: the image's checksum changed on every `ls`. They now open it read-only.
#[test]
fn ls_fsck_and_export_leave_the_image_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let a = seeded(200_000, 4);
    let image = mkfs_with(dir.path(), &[("a.bin", &a)]);
    let img = image.to_str().unwrap();
    let before = std::fs::read(&image).unwrap();
    ok(&["fs", "ls", "--image", img]);
    ok(&["fs", "fsck", "--image", img]);
    assert_eq!(exported(img, "a.bin"), a);
    assert!(
        std::fs::read(&image).unwrap() == before,
        "the image changed"
    );
}

/// Story: `fs export` overwrote an existing host file without a word, and a failed export
/// left a partial file under the target's name.
#[test]
fn export_refuses_an_existing_host_file_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let image = mkfs_with(dir.path(), &[("a.bin", b"image copy")]);
    let img = image.to_str().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("a.bin"), b"mine").unwrap();
    let o = out.to_str().unwrap();
    fails_naming(
        &["fs", "export", "--image", img, "/a.bin", o],
        "exists: not overwritten (use --force",
    );
    assert_eq!(std::fs::read(out.join("a.bin")).unwrap(), b"mine");
    ok(&["fs", "export", "--image", img, "/a.bin", o, "--force"]);
    assert_eq!(std::fs::read(out.join("a.bin")).unwrap(), b"image copy");
    fails_naming(
        &["fs", "export", "--image", img, "/missing", o],
        "no such file",
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}

/// Story: a killed tree import could not be cleaned up: there was no `fs mkdir`, `fs rm`
/// or `fs rmdir`, and importing into a missing directory failed instead of creating it.
#[test]
fn mkdir_rm_and_import_into_a_missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let image = mkfs_with(dir.path(), &[]);
    let img = image.to_str().unwrap();
    let f = dir.path().join("f.txt");
    std::fs::write(&f, b"f").unwrap();
    ok(&["fs", "import", "--image", img, f.to_str().unwrap(), "/x/y"]);
    ok(&["fs", "mkdir", "--image", img, "-p", "/x/z/w"]);
    ok(&["fs", "mkdir", "--image", img, "/e"]);
    ok(&["fs", "rmdir", "--image", img, "/e"]);
    fails_naming(&["fs", "rm", "--image", img, "/x"], "use rm -r");
    let out = ok(&["fs", "rm", "--image", img, "-r", "/x"]);
    assert!(out.contains("removed 5 entries"), "{out}");
    let listing = ok(&["fs", "ls", "--image", img]);
    assert_eq!(listing.lines().count(), 2, "{listing}");
}

/// Story: importing a tree holding a FIFO hung forever. It is skipped with a warning.
#[test]
fn a_fifo_in_an_imported_tree_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let image = mkfs_with(dir.path(), &[]);
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("f.txt"), b"f").unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(tree.join("pipe"))
        .status()
        .unwrap()
        .success());
    let out = nearflash(&[
        "fs",
        "import",
        "--image",
        image.to_str().unwrap(),
        tree.to_str().unwrap(),
        "/",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: skipped") && err.contains("FIFO"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 1 file(s)"));
}

/// Story: `fs mkfs` with a geometry too small for a file system truncated the old image
/// before refusing, leaving it FTL-only. The old image is now untouched.
#[test]
fn a_refused_mkfs_leaves_the_old_image_whole() {
    let dir = tempfile::tempdir().unwrap();
    let a = seeded(100_000, 5);
    let image = mkfs_with(dir.path(), &[("a.bin", &a)]);
    let img = image.to_str().unwrap();
    let before = std::fs::read(&image).unwrap();
    let mut args = vec!["fs", "mkfs", "--preset", "test-min", "--image", img];
    for s in [
        "flash.channels=1",
        "flash.dies_per_package=1",
        "flash.planes_per_die=1",
        "flash.pages_per_block=3",
    ] {
        args.extend(["--set", s]);
    }
    fails_naming(&args, "too small for a file system");
    assert!(
        std::fs::read(&image).unwrap() == before,
        "the old image changed"
    );
    assert_eq!(exported(img, "a.bin"), a);
}

/// Story: a 0-byte image failed with "failed to fill whole buffer".
#[test]
fn an_empty_image_file_is_named_as_not_an_image() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("empty.img");
    std::fs::write(&image, b"").unwrap();
    fails_naming(
        &["fs", "ls", "--image", image.to_str().unwrap()],
        "not a nearflash image (0 bytes",
    );
}

/// Bytes that never repeat a 64-byte window (xorshift64).
fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Story (issue 28): `fs fsck` reads no file data, so an image with a flipped bit in a file's
/// data passed it with "0 problem(s)". `fs fsck --data` reads every block back, each page
/// checked against its spare-area CRC, and names the damaged range with exit 1; plain fsck
/// stays a metadata check.
#[test]
fn fsck_data_reports_a_flipped_bit_in_a_files_data_that_plain_fsck_does_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(300_000);
    let image = mkfs_with(dir.path(), &[("a.bin", &a)]);
    let img = image.to_str().unwrap();
    let clean = ok(&["fs", "fsck", "--data", "--image", img]);
    assert!(
        clean.contains("1 file(s) read, 300000 byte(s) read back intact, 0 damaged range(s)"),
        "{clean}"
    );
    // Flip one bit of file byte 150,010 wherever the image holds it (block 36 of the file).
    let mut bytes = std::fs::read(&image).unwrap();
    let needle = &a[150_000..150_064];
    let hits: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert!(!hits.is_empty(), "the image holds the file's bytes");
    for h in hits {
        bytes[h + 10] ^= 0x10;
    }
    std::fs::write(&image, &bytes).unwrap();

    let meta = ok(&["fs", "fsck", "--image", img]);
    assert!(meta.contains("0 problem(s)"), "{meta}");
    let out = nearflash(&["fs", "fsck", "--data", "--image", img]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("data-unreadable: /a.bin: bytes 147456..151552 do not read back"),
        "{stdout}"
    );
    assert!(stdout.contains("1 problem(s)"), "{stdout}");
}
