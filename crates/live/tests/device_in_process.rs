//! The device thread's logic without a mount (no FUSE needed): kernel requests as `LiveOp`s
//! against a formatted image, answered as a program would see them.

mod common;

use common::{call, device};
use nearflash_fs::Caller;
use nearflash_image::Image;
use nearflash_live::device::{STATS_DIR_INO, STATS_FILE_INO};
use nearflash_live::names::ROOT;
use nearflash_live::op::{Answer, Errno, LiveOp};

#[test]
fn create_write_rename_and_read_back_through_the_requests_a_kernel_sends() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    let user = Caller {
        uid: 1000,
        gid: 1000,
    };
    let root = Caller::ROOT;
    let Answer::Entry(dir) = call(
        &mut dev,
        root,
        LiveOp::Mkdir {
            parent: ROOT,
            name: "d".into(),
            mode: 0o777,
            umask: 0o022,
        },
    )
    .unwrap() else {
        panic!("mkdir answers an entry")
    };
    assert_eq!(dir.perm, 0o755);
    let Answer::Created { attr, fh } = call(
        &mut dev,
        root,
        LiveOp::Create {
            parent: dir.ino,
            name: "f".into(),
            mode: 0o644,
            umask: 0,
            flags: libc::O_RDWR | libc::O_CREAT,
        },
    )
    .unwrap() else {
        panic!("create answers an entry and a handle")
    };
    let data = b"hello, device".to_vec();
    let w = call(
        &mut dev,
        root,
        LiveOp::Write {
            ino: attr.ino,
            fh,
            offset_bytes: 0,
            data: data.clone(),
        },
    );
    assert_eq!(w, Ok(Answer::Written(data.len() as u32)));
    call(&mut dev, root, LiveOp::Fsync { fh }).unwrap();
    call(&mut dev, root, LiveOp::Release { fh }).unwrap();
    call(
        &mut dev,
        root,
        LiveOp::Rename {
            parent: dir.ino,
            name: "f".into(),
            new_parent: ROOT,
            new_name: "g".into(),
            noreplace: false,
        },
    )
    .unwrap();
    // The inode keeps its number and now answers at its new path.
    let Answer::Attr(a) = call(
        &mut dev,
        root,
        LiveOp::Getattr {
            ino: attr.ino,
            fh: None,
        },
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(a.size_bytes, data.len() as u64);
    let Answer::Opened { fh, .. } = call(
        &mut dev,
        user,
        LiveOp::Open {
            ino: attr.ino,
            flags: libc::O_RDONLY,
        },
    )
    .unwrap() else {
        panic!()
    };
    let r = call(
        &mut dev,
        user,
        LiveOp::Read {
            ino: attr.ino,
            fh,
            offset_bytes: 7,
            len_bytes: 100,
        },
    );
    assert_eq!(r, Ok(Answer::Data(b"device".to_vec())));
    // Another user may not write a 0644 file of root's.
    let e = call(
        &mut dev,
        user,
        LiveOp::Open {
            ino: attr.ino,
            flags: libc::O_WRONLY,
        },
    );
    assert_eq!(e, Err(Errno(libc::EACCES)));
    // The root lists the file and the virtual directory; the stats count what happened.
    let Answer::Opened { fh: dfh, .. } =
        call(&mut dev, root, LiveOp::Opendir { ino: ROOT }).unwrap()
    else {
        panic!()
    };
    let Answer::Entries(items) =
        call(&mut dev, root, LiveOp::Readdir { fh: dfh, offset: 0 }).unwrap()
    else {
        panic!()
    };
    let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, [".", "..", "d", "g", ".nearflash"]);
    let Answer::Entries(rest) =
        call(&mut dev, root, LiveOp::Readdir { fh: dfh, offset: 3 }).unwrap()
    else {
        panic!()
    };
    assert_eq!(rest.len(), 2, "readdir resumes from its offset");
    let Answer::Entry(s) = call(
        &mut dev,
        user,
        LiveOp::Lookup {
            parent: STATS_DIR_INO,
            name: "stats.json".into(),
        },
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(s.ino, STATS_FILE_INO);
    assert_eq!(
        call(
            &mut dev,
            root,
            LiveOp::Open {
                ino: STATS_FILE_INO,
                flags: libc::O_WRONLY
            }
        ),
        Err(Errno(libc::EACCES))
    );
    assert_eq!(
        call(
            &mut dev,
            root,
            LiveOp::Mkdir {
                parent: ROOT,
                name: ".nearflash".into(),
                mode: 0o755,
                umask: 0
            }
        ),
        Err(Errno(libc::EPERM))
    );
    let stats = dev.stats();
    assert!(stats.device.host_writes > 0);
    let Answer::Space(sp) = call(&mut dev, root, LiveOp::Statfs).unwrap() else {
        panic!()
    };
    assert!(sp.free_blocks > 0 && sp.free_blocks < sp.blocks);
    let done = dev.close().unwrap();
    assert!(done.sim_time_s > 0.0);
    let mut image = Image::open(&d.path().join("dev.img")).unwrap();
    assert!(image.fsck().unwrap().problems.is_empty());
}
