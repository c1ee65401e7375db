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
