//! The drive's file system is `nearflash-fs` on the drive itself: its metadata and journal
//! writes are drive requests that take simulated time, in either fidelity.

mod common;
use common::*;
use nearflash_insider::stream::Direction;
use nearflash_insider::BackingKind;

#[test]
fn creating_a_file_commits_its_metadata_through_the_drive_in_timing_fidelity_too() {
    for functional in [true, false] {
        let mut rt = small(BackingKind::DramEmulated, functional, 1);
        let writes = rt.machine().backing_stats().writes;
        let commits = rt.fs().stats().commits;
        let t0 = rt.now();
        rt.create(ALICE, "/data/x", 0o640).unwrap();
        assert_eq!(rt.fs().stats().commits, commits + 1, "create commits");
        let journal_writes = rt.machine().backing_stats().writes - writes;
        // Descriptor + images, commit record, checkpoint of the images.
        assert!(journal_writes >= 4, "{journal_writes} drive writes");
        assert!(rt.now() > t0);
        // What it wrote reads back (timing fidelity: from the driver's copy).
        let st = rt.stat(0, "/data/x").unwrap();
        assert_eq!((st.uid, st.perm, st.size_bytes), (ALICE, 0o640, 0));
    }
}

#[test]
fn a_vopen_and_its_vclose_each_commit_the_append_only_flag_on_the_drive() {
    for backing in [BackingKind::DramEmulated, BackingKind::Flash] {
        let mut rt = small(backing, false, 2);
        rt.install_file(ALICE, "/data/f", 0o644, 1 << 20, None)
            .unwrap();
        rt.reg_virt_file(ALICE, "/v", "/data/f", "echo").unwrap();
        let (c0, w0, t0) = (
            rt.fs().stats().commits,
            rt.machine().backing_stats().writes,
            rt.now(),
        );
        let fd = rt.vopen(ALICE, "/v", Direction::Read).unwrap();
        assert!(rt.stat(0, "/data/f").unwrap().append_only);
        let (c1, w1, t1) = (
            rt.fs().stats().commits,
            rt.machine().backing_stats().writes,
            rt.now(),
        );
        assert_eq!(c1, c0 + 1, "{backing:?}: chattr +a commits");
        vread_all(&mut rt, fd, 256 << 10).unwrap();
        let t2 = rt.now();
        rt.vclose(fd).unwrap();
        assert!(!rt.stat(0, "/data/f").unwrap().append_only);
        let (c3, w3, t3) = (
            rt.fs().stats().commits,
            rt.machine().backing_stats().writes,
            rt.now(),
        );
        assert_eq!(c3, c1 + 1, "{backing:?}: chattr -a commits");
        eprintln!(
            "{backing:?}: vopen {} drive writes in {} ns; vclose {} in {} ns",
            w1 - w0,
            t1.since(t0).as_ns(),
            w3 - w1,
            t3.since(t2).as_ns()
        );
        assert!(
            w1 > w0 && w3 > w1,
            "{backing:?}: the commits are drive writes"
        );
    }
}
