//! NVMe Computational Programs and SLM through the control file, without a mount: a `cs`
//! request written to `/.nearflash/control` as a program writes it — the commands of a
//! `nearflash cs script`, the files they name in hex — and the answer read back. The drive's
//! namespace is the image's: `copy_from_file` names a file written through the device.

mod common;

use common::{call, device, ALICE};
use nearflash_fs::Caller;
use nearflash_live::device::{FsDevice, CONTROL_FILE_INO};
use nearflash_live::driver::LiveDevice;
use nearflash_live::names::ROOT;
use nearflash_live::op::{Answer, Errno, LiveOp};
use nearflash_live::vfile::control::{self, hex_decode, hex_encode};

/// Writes `request` to the control file as `caller`: what the write answered, and the answer.
fn control(
    dev: &mut FsDevice,
    caller: Caller,
    request: serde_json::Value,
) -> (Result<Answer, Errno>, control::Answer) {
    let open = LiveOp::Open {
        ino: CONTROL_FILE_INO,
        flags: libc::O_RDWR,
    };
    let Ok(Answer::Opened { fh, .. }) = call(dev, caller, open) else {
        panic!("the control file opens for anyone")
    };
    let mut line = serde_json::to_vec(&request).unwrap();
    line.push(b'\n');
    let write = LiveOp::Write {
        ino: CONTROL_FILE_INO,
        fh,
        offset_bytes: 0,
        data: line,
    };
    let written = call(dev, caller, write);
    let read = LiveOp::Read {
        ino: CONTROL_FILE_INO,
        fh,
        offset_bytes: 0,
        len_bytes: 1 << 20,
    };
    let Ok(Answer::Data(bytes)) = call(dev, caller, read) else {
        panic!("the answer reads back")
    };
    call(dev, caller, LiveOp::Release { fh }).unwrap();
    (written, serde_json::from_slice(&bytes).unwrap())
}

/// examples/cs/ebpf/filter.c built by clang (scripts/setup.sh installs it).
fn filter_object(dir: &std::path::Path) -> Vec<u8> {
    let out = dir.join("filter.o");
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cs/ebpf/filter.c");
    let status = std::process::Command::new("clang")
        .args(["-target", "bpf", "-O2", "-c", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("clang runs (scripts/setup.sh installs it)");
    assert!(status.success(), "clang {}", src.display());
    std::fs::read(out).unwrap()
}

/// Makes `/data` (0777, as root) if needed and writes `data` to `/data/NAME` as `caller`
/// with `perm`, as a program writes through the mount (no fsync).
fn put_file(dev: &mut FsDevice, caller: Caller, name: &str, perm: u32, data: &[u8]) {
    let dir = match call(dev, Caller::ROOT, lookup(ROOT, "data")) {
        Ok(Answer::Entry(a)) => a,
        _ => {
            let op = LiveOp::Mkdir {
                parent: ROOT,
                name: "data".into(),
                mode: 0o777,
                umask: 0,
            };
            let Ok(Answer::Entry(a)) = call(dev, Caller::ROOT, op) else {
                panic!("mkdir /data")
            };
            a
        }
    };
    let op = LiveOp::Create {
        parent: dir.ino,
        name: name.into(),
        mode: perm,
        umask: 0,
        flags: libc::O_WRONLY | libc::O_CREAT,
    };
    let Ok(Answer::Created { attr, fh }) = call(dev, caller, op) else {
        panic!("create /data/{name}")
    };
    for (i, c) in data.chunks(1 << 20).enumerate() {
        let op = LiveOp::Write {
            ino: attr.ino,
            fh,
            offset_bytes: (i << 20) as u64,
            data: c.to_vec(),
        };
        assert_eq!(call(dev, caller, op), Ok(Answer::Written(c.len() as u32)));
    }
    call(dev, caller, LiveOp::Release { fh }).unwrap();
}

fn lookup(parent: u64, name: &str) -> LiveOp {
    LiveOp::Lookup {
        parent,
        name: name.into(),
    }
}

/// Lines of which every ninth holds "needle".
fn lines() -> String {
    (0..5000)
        .map(|i| {
            format!(
                "{i},{},{}\n",
                i % 17,
                if i % 9 == 4 { "needle" } else { "hay" }
            )
        })
        .collect()
}

/// The filter over the file at `path` of the image's file system, its count read back.
fn filter_commands(path: &str) -> serde_json::Value {
    serde_json::json!([
        {"op": "copy_from_file", "path": path},
        {"op": "load_program", "file": "filter.o"},
        {"op": "activate"},
        {"op": "create_range_set",
         "ranges": [{"start_bytes": 0}, {"start_bytes": 1048576, "len_bytes": 4096}]},
        {"op": "execute", "cparam": ["str:needle", 6]},
        {"op": "memory_read", "offset_bytes": 1048576, "output": "count"}
    ])
}

#[test]
fn a_program_offloaded_through_the_control_file_counts_the_lines_of_a_file_written_through_the_mount(
) {
    let dir = tempfile::tempdir().unwrap();
    let mut dev = device(dir.path());
    let lines = lines();
    put_file(&mut dev, ALICE, "lines.txt", 0o600, lines.as_bytes());
    let want = lines.lines().filter(|l| l.contains("needle")).count();
    let object = filter_object(dir.path());
    let read_before = dev.stats().device.host_read_bytes;
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "commands": filter_commands("/data/lines.txt"),
            "files": {"filter.o": hex_encode(&object)}}),
    );
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
    let cs = a.cs.expect("a cs answer");
    let count = hex_decode(&cs.outputs["count"]).unwrap();
    assert_eq!(String::from_utf8(count).unwrap(), format!("{want}\n"));
    // One Load Program chunk, and one NVMe command for each other.
    assert_eq!(cs.steps.len(), 6);
    assert!(
        cs.steps
            .iter()
            .all(|s| s.status == "SUCCESS" && s.latency_us > 0.0),
        "{:?}",
        cs.steps
    );
    assert!(
        cs.steps[0]
            .detail
            .starts_with(&format!("/data/lines.txt: {} bytes in ", lines.len())),
        "{}",
        cs.steps[0].detail
    );
    assert_eq!(cs.last_result, Some(format!("{want}\n").len() as u64));
    // Memory Copy read the file's blocks through the image's own FTL.
    let read = dev.stats().device.host_read_bytes - read_before;
    assert!(
        read >= lines.len() as u64,
        "the image's FTL served {read} bytes of reads"
    );
    // The drive is kept: the program stays loaded and activated for the next request.
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "commands": [
            {"op": "execute", "rsid": 0, "cparam": ["str:hay", 3]},
            {"op": "memory_read", "offset_bytes": 1048576, "output": "count"}]}),
    );
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
    let cs2 = a.cs.unwrap();
    let hay = lines.lines().filter(|l| l.contains("hay")).count();
    assert_eq!(
        hex_decode(&cs2.outputs["count"]).unwrap(),
        format!("{hay}\n").into_bytes()
    );
    assert!(cs2.now_us > cs.now_us);
}

#[test]
fn the_devices_clock_advances_by_the_commands_simulated_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut dev = device(dir.path());
    put_file(&mut dev, ALICE, "lines.txt", 0o600, lines().as_bytes());
    let object = filter_object(dir.path());
    let before = dev.now();
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "commands": filter_commands("/data/lines.txt"),
            "files": {"filter.o": hex_encode(&object)}}),
    );
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
    let cs = a.cs.unwrap();
    let elapsed_us = dev.now().since(before).as_ns() as f64 / 1e3;
    let commands_us: f64 = cs.steps.iter().map(|s| s.latency_us).sum();
    // The commands ran one after another on the device's clock: it moved by at least their
    // time (plus the control file's own operations, the path's lookup and fsync).
    assert!(
        elapsed_us >= commands_us,
        "the clock moved {elapsed_us} µs for {commands_us} µs of commands"
    );
    // The drive's clock is the device's: the answer's now is the device's now after the
    // last command (the read of the answer follows it).
    assert!(
        cs.now_us * 1e3 <= dev.now().as_ns() as f64 && cs.now_us * 1e3 > before.as_ns() as f64,
        "the drive's now {} µs lies in the request",
        cs.now_us
    );
    let (_, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "commands": [
            {"op": "execute", "rsid": 0, "cparam": ["str:hay", 3]}]}),
    );
    let execute_us = a.cs.unwrap().steps[0].latency_us;
    assert!(execute_us > 0.0);
}

#[test]
fn a_path_that_is_missing_a_directory_or_unreadable_is_refused_with_its_errno() {
    let dir = tempfile::tempdir().unwrap();
    let mut dev = device(dir.path());
    put_file(&mut dev, Caller::ROOT, "secret.txt", 0o600, b"root only\n");
    let copy = |path: &str| serde_json::json!({"op": "cs", "commands": [{"op": "copy_from_file", "path": path}]});
    for (path, errno) in [
        ("/data/none.txt", libc::ENOENT),
        ("/data", libc::EISDIR),
        ("/data/secret.txt", libc::EACCES),
    ] {
        let (w, a) = control(&mut dev, ALICE, copy(path));
        assert_eq!(w, Err(Errno(errno)), "{path}: {}", a.message);
        assert!(!a.ok && a.errno == Some(errno));
        assert!(
            a.message.starts_with(path) && a.message.contains("as uid 1000"),
            "{}",
            a.message
        );
    }
    // Root reads it.
    let (w, a) = control(&mut dev, Caller::ROOT, copy("/data/secret.txt"));
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
    // Raw blocks of the image: write_nvm never, copy_from_nvm's LBAs root only.
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "files": {"x": hex_encode(b"x")},
            "commands": [{"op": "write_nvm", "file": "x"}]}),
    );
    assert_eq!(w, Err(Errno(libc::EINVAL)));
    assert!(
        a.message.contains("write_nvm on the served image"),
        "{}",
        a.message
    );
    let raw = serde_json::json!({"op": "cs", "commands": [
        {"op": "copy_from_nvm", "lbas": [[0, 1]]}]});
    let (w, a) = control(&mut dev, ALICE, raw.clone());
    assert_eq!(w, Err(Errno(libc::EINVAL)));
    assert!(a.message.contains("root"), "{}", a.message);
    let (w, a) = control(&mut dev, Caller::ROOT, raw);
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
}

#[test]
fn a_cs_command_the_device_refuses_fails_the_write_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut dev = device(dir.path());
    let object = filter_object(dir.path());
    // Executing a program that was loaded but not activated.
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "files": {"filter.o": hex_encode(&object)}, "commands": [
            {"op": "load_program", "file": "filter.o"},
            {"op": "create_range_set", "ranges": [{"start_bytes": 0, "len_bytes": 4096}]},
            {"op": "execute"}]}),
    );
    assert_eq!(w, Err(Errno(libc::EINVAL)));
    assert!(!a.ok);
    assert!(
        a.message.contains("cs command 2 (Execute Program)"),
        "{}",
        a.message
    );
    assert!(a.message.contains("PROGRAM_NOT_ACTIVATED"), "{}", a.message);
    // A file the request does not carry.
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "commands": [{"op": "load_program", "file": "x.o"}]}),
    );
    assert_eq!(w, Err(Errno(libc::EINVAL)));
    assert!(
        a.message.contains("not among the request's files"),
        "{}",
        a.message
    );
}
