//! INSIDER's virtual files through the device thread, without a mount: requests written to
//! `/.nearflash/control` as a program writes them, the virtual file opened and read as `cat`
//! reads it, and what it reads compared with the program's own reference — the built-in's
//! (`nearflash_iscapps`) or the module's run directly (`nearflash_wasm::run_chunks`).

mod common;

use common::{call, device, reopen, ALICE, BOB};
use nearflash_fs::Caller;
use nearflash_insider::engine::Engines;
use nearflash_insider::InsiderConfig;
use nearflash_iscapps::apps::GrepApp;
use nearflash_iscapps::{Dataset, IscApp};
use nearflash_live::device::{
    FsDevice, CONTROL_FILE_INO, STATS_DIR_INO, VFILES_DIR_INO, VFILE_INO_BASE,
};
use nearflash_live::driver::LiveDevice;
use nearflash_live::names::ROOT;
use nearflash_live::op::{Answer, Attr, Errno, LiveOp};
use nearflash_live::vfile::control;
use nearflash_sim::SimTime;

const GREP_WAT: &[u8] = include_bytes!("../../../examples/programs/grep.wat");

/// A module that never ends: it burns its fuel.
const LOOP_WAT: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "_start") (loop $forever (br $forever))))"#;

/// grep's input: 200-char lines of {A-D} (`GrepApp`'s generator), about `bytes` of them.
fn grep_dataset(bytes: u64) -> Dataset {
    GrepApp::with_line_chars(200)
        .unwrap()
        .generate(7, bytes)
        .unwrap()
}

/// Makes directory `/data` (0755) and writes `data` to `/data/NAME` with `perm`, as root.
fn put_file(dev: &mut FsDevice, name: &str, perm: u32, data: &[u8]) {
    let dir = match call(dev, Caller::ROOT, lookup(ROOT, "data")) {
        Ok(Answer::Entry(a)) => a,
        _ => {
            let op = LiveOp::Mkdir {
                parent: ROOT,
                name: "data".into(),
                mode: 0o755,
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
    let Ok(Answer::Created { attr, fh }) = call(dev, Caller::ROOT, op) else {
        panic!("create /data/{name}")
    };
    for (i, c) in data.chunks(1 << 20).enumerate() {
        let op = LiveOp::Write {
            ino: attr.ino,
            fh,
            offset_bytes: (i << 20) as u64,
            data: c.to_vec(),
        };
        assert_eq!(
            call(dev, Caller::ROOT, op),
            Ok(Answer::Written(c.len() as u32))
        );
    }
    call(dev, Caller::ROOT, LiveOp::Release { fh }).unwrap();
}

fn lookup(parent: u64, name: &str) -> LiveOp {
    LiveOp::Lookup {
        parent,
        name: name.into(),
    }
}

/// Writes `request` (one JSON value) to the control file as `caller`: what the write
/// answered, and the answer read back.
fn control(
    dev: &mut FsDevice,
    caller: Caller,
    request: serde_json::Value,
) -> (Result<Answer, Errno>, control::Answer) {
    let open = LiveOp::Open {
        ino: CONTROL_FILE_INO,
        flags: libc::O_RDWR,
    };
    let Ok(Answer::Opened { fh, direct_io }) = call(dev, caller, open) else {
        panic!("the control file opens for anyone")
    };
    assert!(direct_io);
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

fn register_grep(dev: &mut FsDevice, caller: Caller, name: &str, pattern: &str) {
    let (w, a) = control(
        dev,
        caller,
        serde_json::json!({"op": "register", "name": name, "file": "/data/lines.txt",
                           "program": "grep", "args": [pattern]}),
    );
    assert!(matches!(w, Ok(Answer::Written(_))), "{w:?}: {}", a.message);
    assert!(a.ok, "{}", a.message);
}

fn register_module(
    dev: &mut FsDevice,
    name: &str,
    module_name: &str,
    module: &[u8],
    args: &[&str],
    fuel_max: u64,
) -> (Result<Answer, Errno>, control::Answer) {
    control(
        dev,
        ALICE,
        serde_json::json!({"op": "register", "name": name, "file": "/data/lines.txt",
                           "program": module_name, "args": args,
                           "module_hex": control::hex_encode(module), "fuel_max": fuel_max}),
    )
}

/// The virtual file `name`'s attributes, looked up as `caller`.
fn vfile(dev: &mut FsDevice, caller: Caller, name: &str) -> Result<Attr, Errno> {
    let Answer::Entry(dir) = call(dev, caller, lookup(STATS_DIR_INO, "vfiles"))? else {
        panic!()
    };
    assert_eq!(dir.ino, VFILES_DIR_INO);
    match call(dev, caller, lookup(VFILES_DIR_INO, name))? {
        Answer::Entry(a) => Ok(a),
        a => panic!("{a:?}"),
    }
}

/// Opens and reads virtual file `name` as `caller` the way `cat` does (4 KiB at a time until
/// an empty read); its bytes and the size `fstat` gave after the open.
fn cat(dev: &mut FsDevice, caller: Caller, name: &str) -> Result<(Vec<u8>, u64), Errno> {
    let a = vfile(dev, caller, name)?;
    let open = LiveOp::Open {
        ino: a.ino,
        flags: libc::O_RDONLY,
    };
    let Answer::Opened { fh, direct_io } = call(dev, caller, open)? else {
        panic!()
    };
    assert!(
        direct_io,
        "the kernel must not cache a virtual file's pages"
    );
    let Answer::Attr(st) = call(
        dev,
        caller,
        LiveOp::Getattr {
            ino: a.ino,
            fh: Some(fh),
        },
    )?
    else {
        panic!()
    };
    let mut out = Vec::new();
    loop {
        let read = LiveOp::Read {
            ino: a.ino,
            fh,
            offset_bytes: out.len() as u64,
            len_bytes: 4096,
        };
        let Answer::Data(d) = call(dev, caller, read)? else {
            panic!()
        };
        if d.is_empty() {
            break;
        }
        out.extend_from_slice(&d);
    }
    call(dev, caller, LiveOp::Release { fh })?;
    Ok((out, st.size_bytes))
}

/// The built-in grep's output over `data`, run directly.
fn grep_reference(data: &[u8], pattern: &[u8]) -> Vec<u8> {
    let mut p = GrepApp::default().program(0).unwrap();
    nearflash_iscapps::run_program(
        p.as_mut(),
        &[pattern.to_vec()],
        &nearflash_stream::flits_of(data),
    )
    .unwrap()
}

#[test]
fn a_grep_vfile_registered_through_the_control_file_reads_the_builtin_reference_on_a_drive_slot() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    let ds = grep_dataset(1 << 20);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    register_grep(&mut dev, ALICE, "matches", &pattern);

    // Listed beside the control file, owned by its registrant, empty before any run.
    let a = vfile(&mut dev, BOB, "matches").unwrap();
    assert!(a.ino >= VFILE_INO_BASE);
    assert_eq!((a.uid, a.perm, a.size_bytes), (ALICE.uid, 0o444, 0));
    let Ok(Answer::Opened { fh, .. }) = call(
        &mut dev,
        BOB,
        LiveOp::Opendir {
            ino: VFILES_DIR_INO,
        },
    ) else {
        panic!()
    };
    let Ok(Answer::Entries(items)) = call(&mut dev, BOB, LiveOp::Readdir { fh, offset: 0 }) else {
        panic!()
    };
    let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, [".", "..", "matches"]);

    let t0 = dev.now();
    let (out, fstat_bytes) = cat(&mut dev, BOB, "matches").unwrap();
    let took_ns = dev.now().since(t0).as_ns();
    assert!(
        out.len() > 4000 * 8,
        "about one (row, col) pair per line: {}",
        out.len()
    );
    assert_eq!(out, grep_reference(&ds.input, pattern.as_bytes()));
    assert_eq!(
        fstat_bytes,
        out.len() as u64,
        "fstat of the open handle gives the size"
    );
    // The host's remainder over the drive's pairs is grep's independent reference.
    let app = GrepApp::with_line_chars(200).unwrap();
    app.verify(
        &app.host_remainder(&ds, std::slice::from_ref(&out)).unwrap(),
        &app.reference(&ds).unwrap(),
    )
    .unwrap();
    assert_eq!(
        vfile(&mut dev, BOB, "matches").unwrap().size_bytes,
        out.len() as u64
    );

    // INSIDER's ISC unit ran it (test-min has no [insider]: the insider preset's, four slots
    // at 250 MHz): one request per C bytes, and grep's slot time per C-byte chunk as
    // INSIDER's engines charge it; the open lasts at least that long.
    let cfg = InsiderConfig::default();
    let c = cfg.credit_request_bytes;
    let cost = GrepApp::default().program(0).unwrap().cost();
    let mut engines = Engines::new(&cfg);
    for chunk in ds.input.chunks(c as usize) {
        engines.run(1, chunk.len() as u64, cost, None, SimTime::ZERO);
    }
    let want_ns: u64 = engines.busy_ns().iter().sum();
    let s = dev.stats();
    let v = s.vfiles.as_ref().unwrap();
    assert_eq!(
        (v.registered, v.registrations, v.runs, v.runs_failed),
        (1, 1, 1, 0)
    );
    assert_eq!(
        (v.bytes_in, v.bytes_out),
        (ds.input.len() as u64, out.len() as u64)
    );
    assert_eq!(v.isc_requests, (ds.input.len() as u64).div_ceil(c));
    assert!(
        (v.program_sim_s * 1e9 - want_ns as f64).abs() < 2.0,
        "{v:?} vs {want_ns} ns"
    );
    assert!(
        took_ns >= want_ns,
        "the open waits for the slot: {took_ns} < {want_ns}"
    );
    assert!(
        v.engine.contains("ISC unit") && v.engine.contains("preset insider"),
        "{}",
        v.engine
    );
    assert!(s.device.host_read_bytes > 0 || s.buffer_cache.unwrap().hits > 0);
}

#[test]
fn a_wasm_grep_vfile_reads_what_the_module_writes_run_directly_and_the_builtins_bytes() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    let ds = grep_dataset(600 << 10);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    let (w, a) = register_module(
        &mut dev,
        "wgrep",
        "grep.wat",
        GREP_WAT,
        &[&pattern],
        1 << 32,
    );
    assert!(matches!(w, Ok(Answer::Written(_))), "{}", a.message);
    assert!(a.vfiles.iter().any(|v| v.name == "wgrep" && v.wasm));

    let (out, _) = cat(&mut dev, ALICE, "wgrep").unwrap();
    let program =
        nearflash_wasm::Program::load("grep.wat", GREP_WAT, nearflash_wasm::Limits::default())
            .unwrap();
    let direct = nearflash_wasm::run_chunks(
        &program,
        std::slice::from_ref(&pattern),
        1,
        &ds.input,
        64 << 10,
    )
    .unwrap();
    assert_eq!(out, direct.output);
    assert_eq!(out, grep_reference(&ds.input, pattern.as_bytes()));
    // Charged by its fuel: one instruction per fuel unit on the soft core INSIDER builds in
    // a slot (its clock, CPI 1).
    let cfg = InsiderConfig::default();
    let v = dev.stats().vfiles.unwrap();
    let want_s = direct.fuel as f64 / (cfg.slot_clock_mhz * 1e6);
    assert!(
        (v.program_sim_s - want_s).abs() / want_s < 0.01,
        "{} vs {want_s}",
        v.program_sim_s
    );
}

#[test]
fn registering_a_file_the_writer_cannot_read_is_refused_with_eacces_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    put_file(&mut dev, "lines.txt", 0o600, b"AB\nCD\n");
    let req = serde_json::json!({"op": "register", "name": "peek", "file": "/data/lines.txt",
                                 "program": "grep", "args": ["AB"]});
    let (w, a) = control(&mut dev, ALICE, req.clone());
    assert_eq!(w, Err(Errno(libc::EACCES)));
    assert!(!a.ok && a.errno == Some(libc::EACCES));
    assert!(
        a.message.contains("/data/lines.txt") && a.message.contains("Permission denied"),
        "{}",
        a.message
    );
    assert_eq!(vfile(&mut dev, ALICE, "peek"), Err(Errno(libc::ENOENT)));
    // Root may; then a reader who may not read the real file may not read the virtual one.
    let (w, _) = control(&mut dev, Caller::ROOT, req);
    assert!(w.is_ok());
    assert_eq!(cat(&mut dev, ALICE, "peek"), Err(Errno(libc::EACCES)));
    assert_eq!(
        cat(&mut dev, Caller::ROOT, "peek").unwrap().0,
        grep_reference(b"AB\nCD\n", b"AB")
    );
    // Only the owner (or root) unregisters.
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "unregister", "name": "peek"}),
    );
    assert_eq!(w, Err(Errno(libc::EPERM)), "{}", a.message);
    let v = dev.stats().vfiles.unwrap();
    assert_eq!((v.requests_refused, v.runs), (2, 1), "{v:?}");
    // Refusals by kind: a bad name, an unknown program, a module without its bytes.
    for (req, errno) in [
        (
            serde_json::json!({"op": "register", "name": ".x", "file": "/data/lines.txt",
                            "program": "grep", "args": ["AB"]}),
            libc::EINVAL,
        ),
        (
            serde_json::json!({"op": "register", "name": "x", "file": "/data/lines.txt",
                            "program": "sort"}),
            libc::EINVAL,
        ),
        (
            serde_json::json!({"op": "register", "name": "x", "file": "/data/lines.txt",
                            "program": "grep.wasm"}),
            libc::EINVAL,
        ),
        (
            serde_json::json!({"op": "register", "name": "x", "file": "/data/none",
                            "program": "grep", "args": ["AB"]}),
            libc::ENOENT,
        ),
        (
            serde_json::json!({"op": "register", "name": "peek", "file": "/data/lines.txt",
                            "program": "grep", "args": ["AB"]}),
            libc::EEXIST,
        ),
    ] {
        let (w, a) = control(&mut dev, Caller::ROOT, req);
        assert_eq!(w, Err(Errno(errno)), "{}", a.message);
    }
}

#[test]
fn an_endless_module_runs_out_of_fuel_as_eio_and_the_device_keeps_serving() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    let ds = grep_dataset(64 << 10);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    let (w, a) = register_module(
        &mut dev,
        "spin",
        "loop.wat",
        LOOP_WAT.as_bytes(),
        &[],
        1_000_000,
    );
    assert!(w.is_ok(), "{}", a.message);
    register_grep(&mut dev, ALICE, "matches", &pattern);

    assert_eq!(cat(&mut dev, ALICE, "spin"), Err(Errno(libc::EIO)));
    let v = dev.stats().vfiles.unwrap();
    assert_eq!((v.runs, v.runs_failed), (1, 1));
    assert!(
        v.last_error.as_deref().unwrap().contains("out of fuel"),
        "{v:?}"
    );
    // The device serves on: another virtual file, and the real file.
    let (out, _) = cat(&mut dev, ALICE, "matches").unwrap();
    assert_eq!(out, grep_reference(&ds.input, pattern.as_bytes()));
    assert_eq!(
        cat(&mut dev, ALICE, "spin"),
        Err(Errno(libc::EIO)),
        "fails the same again"
    );
    // A limit over the server's is refused when registering.
    let (w, _) = register_module(
        &mut dev,
        "greedy",
        "loop.wat",
        LOOP_WAT.as_bytes(),
        &[],
        u64::MAX,
    );
    assert_eq!(w, Err(Errno(libc::E2BIG)));
}

/// A module that never ends and burns fuel fast (a 64 KiB `memory.fill` costs 8,193 fuel in
/// a few microseconds of host time), so a test can exhaust the default fuel quickly.
const FILL_FOREVER_WAT: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (memory.fill (i32.const 0) (i32.const 0) (i32.const 65536)) (br $forever))))"#;

/// Story (issue 28): a module registered without `fuel_max` ran with 10^10 fuel, five times
/// `program run`'s default: a runaway held the device thread (and every request of the
/// mount) for half a minute or more. Its default is now `program run`'s, 2 × 10^9 + 100 per
/// byte of the real file: the open fails with EIO, the error names that fuel, and the mount
/// serves on.
#[test]
fn a_runaway_module_without_fuel_max_fails_its_open_under_the_program_default_and_the_mount_serves_on(
) {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    let ds = grep_dataset(64 << 10);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "register", "name": "spin", "file": "/data/lines.txt",
                           "program": "fill.wat",
                           "module_hex": control::hex_encode(FILL_FOREVER_WAT.as_bytes())}),
    );
    assert!(w.is_ok() && a.ok, "{}", a.message);
    register_grep(&mut dev, ALICE, "matches", &pattern);

    let t0 = std::time::Instant::now();
    assert_eq!(cat(&mut dev, ALICE, "spin"), Err(Errno(libc::EIO)));
    let wall = t0.elapsed();
    let fuel = nearflash_wasm::limits::default_fuel(ds.input.len() as u64);
    assert_eq!(fuel, 2_000_000_000 + 100 * ds.input.len() as u64);
    let v = dev.stats().vfiles.unwrap();
    let e = v.last_error.as_deref().unwrap();
    assert!(
        e.contains(&format!("out of fuel after {fuel} units")),
        "{e}"
    );
    assert!(
        wall < std::time::Duration::from_secs(30),
        "the runaway held the device {wall:?}"
    );
    // The mount serves on: another virtual file.
    let (out, _) = cat(&mut dev, ALICE, "matches").unwrap();
    assert_eq!(out, grep_reference(&ds.input, pattern.as_bytes()));
}

#[test]
fn registrations_persist_on_the_image_across_a_restart_until_unregistered() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    let ds = grep_dataset(100 << 10);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    register_grep(&mut dev, ALICE, "matches", &pattern);
    let (w, a) = register_module(
        &mut dev,
        "wgrep",
        "grep.wat",
        GREP_WAT,
        &[&pattern],
        1 << 32,
    );
    assert!(w.is_ok(), "{}", a.message);
    let want = cat(&mut dev, ALICE, "matches").unwrap().0;
    dev.close().unwrap();

    let mut dev = reopen(d.path());
    let v = dev.stats().vfiles.unwrap();
    assert_eq!(
        (v.loaded_at_start, v.load_errors, v.registered),
        (2, 0, 2),
        "{v:?}"
    );
    assert_eq!(cat(&mut dev, BOB, "matches").unwrap().0, want);
    assert_eq!(cat(&mut dev, BOB, "wgrep").unwrap().0, want);
    assert_eq!(
        vfile(&mut dev, BOB, "matches").unwrap().uid,
        ALICE.uid,
        "the owner is kept"
    );
    // The store is hidden: the root lists no second `.nearflash`.
    let Ok(Answer::Opened { fh, .. }) = call(&mut dev, ALICE, LiveOp::Opendir { ino: ROOT }) else {
        panic!()
    };
    let Ok(Answer::Entries(items)) = call(&mut dev, ALICE, LiveOp::Readdir { fh, offset: 0 })
    else {
        panic!()
    };
    assert_eq!(items.iter().filter(|i| i.name == ".nearflash").count(), 1);
    let (w, a) = control(
        &mut dev,
        ALICE,
        serde_json::json!({"op": "unregister", "name": "matches"}),
    );
    assert!(w.is_ok(), "{}", a.message);
    assert_eq!(a.vfiles.len(), 1);
    dev.close().unwrap();

    let mut dev = reopen(d.path());
    assert_eq!(vfile(&mut dev, ALICE, "matches"), Err(Errno(libc::ENOENT)));
    assert!(vfile(&mut dev, ALICE, "wgrep").is_ok());
    dev.close().unwrap();
    let mut image = nearflash_image::Image::open(&d.path().join("dev.img")).unwrap();
    assert!(image.fsck().unwrap().problems.is_empty());
}

/// A fresh image at `dir/dev.img` of `test-min` with INSIDER's `[insider]` table
/// (configs/insider.toml's) and `overrides` of it, served.
fn device_with_insider(dir: &std::path::Path, overrides: &[&str]) -> FsDevice {
    let insider = include_str!("../../../configs/insider.toml");
    let table = &insider[insider.find("\n[insider]").expect("the [insider] table")..];
    assert!(
        !table[1..].contains("\n["),
        "[insider] is the file's last table"
    );
    let text = format!(
        "{}\n{table}",
        include_str!("../../../configs/test-min.toml")
    );
    let path = dir.join("test-min-insider.toml");
    std::fs::write(&path, text).unwrap();
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let preset = nearflash_preset::Preset::load(path.to_str().unwrap(), &overrides).unwrap();
    let mut image = nearflash_image::Image::create(&preset, &dir.join("dev.img")).unwrap();
    let clock =
        nearflash_live::pace::Clock::new(nearflash_live::pace::Pace::None, image.host_mut().now());
    FsDevice::new(image, "test-min-insider".into(), (22.0, 4.0), clock).unwrap()
}

/// One grep run over 4 MiB of lines on a device of `overrides`: its output and figures.
fn grep_run_on(overrides: &[&str]) -> (Vec<u8>, nearflash_live::vfile::figures::VfileFigures) {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device_with_insider(d.path(), overrides);
    let ds = grep_dataset(4 << 20);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    register_grep(&mut dev, ALICE, "matches", &pattern);
    let (out, _) = cat(&mut dev, ALICE, "matches").unwrap();
    assert_eq!(out, grep_reference(&ds.input, pattern.as_bytes()));
    (out, dev.stats().vfiles.unwrap())
}

/// Story (issue 30, item 3): live mode's virtual files were a second, simplified INSIDER —
/// the real file read back to back in 256 KiB pieces and charged on one drive core of its
/// own. Now opening a virtual file through the mount runs it on INSIDER's own ISC unit: the
/// unit issues the reads its credits allow (R ahead of the program, C bytes each), its slot
/// or core takes each chunk, and the time is what INSIDER's engines charge — so the image's
/// `[insider]` table steers a live run exactly as it steers INSIDER's drive.
#[test]
fn a_virtual_file_opened_through_the_mount_runs_on_insiders_isc_unit() {
    let cfg = InsiderConfig::default();
    let c = cfg.credit_request_bytes;
    let cost = GrepApp::default().program(0).unwrap().cost();
    let input_bytes = grep_dataset(4 << 20).input.len() as u64;
    let chunks = input_bytes.div_ceil(c);
    // INSIDER's engines of `cfg`, charged chunk by chunk: what the unit must have spent.
    let charged_ns = |cfg: &InsiderConfig| {
        let mut e = Engines::new(cfg);
        for i in 0..chunks {
            let bytes = c.min(input_bytes - i * c);
            e.run(1, bytes, cost, None, SimTime::ZERO);
        }
        e.busy_ns().iter().sum::<u64>() as f64 / 1e9
    };

    // Slots (the preset's): one request per C bytes, every credit that went out came back
    // when the slot took its chunk, and the slot's time is INSIDER's.
    let (out, slots) = grep_run_on(&[]);
    assert!(!out.is_empty());
    assert!(slots.engine.contains("engine = slots"), "{}", slots.engine);
    assert_eq!((slots.runs, slots.runs_failed), (1, 0));
    assert_eq!(slots.isc_requests, chunks);
    assert_eq!(
        slots.credits_returned, chunks,
        "each chunk's slot start frees a credit"
    );
    let want = charged_ns(&cfg);
    assert!(
        (slots.program_sim_s - want).abs() < 1e-8,
        "{slots:?} vs {want}"
    );

    // One time-shared core instead: grep is compute-bound there, so the run takes the
    // core's time per chunk as INSIDER's cores model says — far longer than the slot's.
    let (out_core, core) = grep_run_on(&["insider.engine=\"cores\"", "insider.core_count=1"]);
    assert_eq!(
        out_core, out,
        "the engine changes the time, never the bytes"
    );
    assert!(
        core.engine.contains("engine = cores, 1 cores"),
        "{}",
        core.engine
    );
    let one_core = InsiderConfig {
        engine: nearflash_insider::EngineKind::Cores,
        core_count: 1,
        ..cfg.clone()
    };
    let want = charged_ns(&one_core);
    assert!(
        (core.program_sim_s - want).abs() < 1e-8,
        "{core:?} vs {want}"
    );
    assert!(core.program_sim_s > 2.0 * slots.program_sim_s);
    assert!(
        core.run_sim_s >= core.program_sim_s,
        "the open waits for the core"
    );

    // Slower slots (25 MHz instead of 250): a slot streams a tenth as fast, so grep's slot
    // time is ten times as long, to the nanosecond INSIDER's engines charge.
    let (out_slow, slow) = grep_run_on(&["insider.slot_clock_mhz=25.0"]);
    assert_eq!(out_slow, out);
    assert!(slow.engine.contains("slots at 25 MHz"), "{}", slow.engine);
    let slow_cfg = InsiderConfig {
        slot_clock_mhz: 25.0,
        ..cfg.clone()
    };
    let want = charged_ns(&slow_cfg);
    assert!(
        (slow.program_sim_s - want).abs() < 1e-8,
        "{slow:?} vs {want}"
    );
    let ratio = slow.program_sim_s / slots.program_sim_s;
    assert!((ratio - 10.0).abs() < 0.01, "{ratio}");
    assert!(
        slow.run_sim_s >= slow.program_sim_s,
        "the open waits for the slot"
    );
    eprintln!(
        "grep over {input_bytes} B: run {:.6} s (slot {:.6} s) on 250 MHz slots; \
         {:.6} s (core {:.6} s) on one 2 GHz core; {:.6} s (slot {:.6} s) on 25 MHz slots",
        slots.run_sim_s,
        slots.program_sim_s,
        core.run_sim_s,
        core.program_sim_s,
        slow.run_sim_s,
        slow.program_sim_s
    );
}

/// A module that reads all its input, then writes 257 × 64 KiB (16 MiB + 64 KiB) to stdout.
const FLOOD_WAT: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "_start")
    (local $i i32)
    (i32.store (i32.const 65552) (i32.const 0))
    (i32.store (i32.const 65556) (i32.const 65536))
    (block $eof
      (loop $read
        (drop (call $fd_read (i32.const 0) (i32.const 65552) (i32.const 1) (i32.const 65560)))
        (br_if $eof (i32.eqz (i32.load (i32.const 65560))))
        (br $read)))
    (i32.store (i32.const 65536) (i32.const 0))
    (i32.store (i32.const 65540) (i32.const 65536))
    (loop $again
      (drop (call $fd_write (i32.const 1) (i32.const 65536) (i32.const 1) (i32.const 65544)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 257))))))"#;

#[test]
fn output_over_sixteen_mib_fails_the_open_with_efbig_and_the_mount_serves_on() {
    let d = tempfile::tempdir().unwrap();
    let mut dev = device(d.path());
    // 4 MiB of input: the module's own output limit (1 MiB + 4 per input byte) lets it write
    // past the 16 MiB a run's output may hold on the device thread.
    let ds = grep_dataset(4 << 20);
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    put_file(&mut dev, "lines.txt", 0o644, &ds.input);
    let (w, a) = register_module(
        &mut dev,
        "flood",
        "flood.wat",
        FLOOD_WAT.as_bytes(),
        &[],
        1 << 32,
    );
    assert!(w.is_ok(), "{}", a.message);
    register_grep(&mut dev, ALICE, "matches", &pattern);

    assert_eq!(cat(&mut dev, ALICE, "flood"), Err(Errno(libc::EFBIG)));
    let v = dev.stats().vfiles.unwrap();
    assert_eq!((v.runs, v.runs_failed), (1, 1));
    assert!(
        v.last_error.as_deref().unwrap().contains("over the limit"),
        "{v:?}"
    );
    let (out, _) = cat(&mut dev, ALICE, "matches").unwrap();
    assert_eq!(out, grep_reference(&ds.input, pattern.as_bytes()));
}
