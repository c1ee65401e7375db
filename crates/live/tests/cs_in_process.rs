//! NVMe Computational Programs and SLM through the control file, without a mount: a `cs`
//! request written to `/.nearflash/control` as a program writes it — the commands of a
//! `nearflash cs script`, the files they name in hex — and the answer read back.

mod common;

use common::{call, device, ALICE};
use nearflash_fs::Caller;
use nearflash_live::device::{FsDevice, CONTROL_FILE_INO};
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

fn filter_commands() -> serde_json::Value {
    serde_json::json!([
        {"op": "write_nvm", "file": "lines.txt"},
        {"op": "load_program", "file": "filter.o"},
        {"op": "activate"},
        {"op": "create_range_set",
         "ranges": [{"start_bytes": 0}, {"start_bytes": 1048576, "len_bytes": 4096}]},
        {"op": "copy_from_nvm"},
        {"op": "execute", "cparam": ["str:needle", 6]},
        {"op": "memory_read", "offset_bytes": 1048576, "output": "count"}
    ])
}

#[test]
fn a_program_offloaded_through_the_control_file_counts_the_lines_the_host_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut dev = device(dir.path());
    let lines: String = (0..5000)
        .map(|i| {
            format!(
                "{i},{},{}\n",
                i % 17,
                if i % 9 == 4 { "needle" } else { "hay" }
            )
        })
        .collect();
    let want = lines.lines().filter(|l| l.contains("needle")).count();
    let object = filter_object(dir.path());
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "cs", "commands": filter_commands(),
            "files": {"lines.txt": hex_encode(lines.as_bytes()), "filter.o": hex_encode(&object)}}),
    );
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
    let cs = a.cs.expect("a cs answer");
    let count = hex_decode(&cs.outputs["count"]).unwrap();
    assert_eq!(String::from_utf8(count).unwrap(), format!("{want}\n"));
    // write_nvm, one Load Program chunk, and one NVMe command for each other.
    assert_eq!(cs.steps.len(), 7);
    assert!(
        cs.steps
            .iter()
            .all(|s| s.status == "SUCCESS" && s.latency_us > 0.0),
        "{:?}",
        cs.steps
    );
    assert_eq!(cs.last_result, Some(format!("{want}\n").len() as u64));
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
