//! Live mode with real, unmodified Debian programs on a served image (`nearflash serve`):
//! cp, cat, sha256sum and grep over a copied tree; sqlite3 transactions across a `kill -9` of
//! the server; a full device; permissions; INSIDER's virtual files (`nearflash vfile
//! register`, then `cat` and `cp`); and the bad starts. Each test skips, saying why,
//! only where the machine has no /dev/fuse. Every server runs inside a `Served` guard that
//! kills it and unmounts on drop, so a failing test never leaves a mount or a process.

mod common;

use common::{fails_naming, nearflash};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to mount or to stop.
const START_STOP_LIMIT: Duration = Duration::from_secs(20);

fn fuse_present() -> bool {
    if nearflash_live::mountpoint::fuse_device_present() {
        return true;
    }
    eprintln!("skipping: this machine has no /dev/fuse (FUSE tests need it)");
    false
}

/// A running `nearflash serve`; dropped: killed and unmounted.
struct Served {
    child: Option<Child>,
    mount: PathBuf,
    stderr_path: PathBuf,
}

impl Served {
    /// Starts a server with `args` (after `serve`) on `mount` and waits until it is mounted.
    fn start(mount: &Path, args: &[&str]) -> Served {
        std::fs::create_dir_all(mount).unwrap();
        let stderr_path = mount.with_extension("stderr");
        let err = std::fs::File::create(&stderr_path).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_nearflash"))
            .arg("serve")
            .arg("--mount")
            .arg(mount)
            .args(args)
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .expect("runs the binary");
        let mut s = Served {
            child: Some(child),
            mount: mount.canonicalize().unwrap(),
            stderr_path,
        };
        let t0 = Instant::now();
        while !nearflash_live::mountpoint::is_mounted(&s.mount) {
            if let Some(st) = s.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("serve exited ({st}) before mounting: {}", s.stderr());
            }
            assert!(
                t0.elapsed() < START_STOP_LIMIT,
                "not mounted: {}",
                s.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// SIGTERM, then waits for a clean exit; the server's exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.pid(), libc::SIGTERM) };
        let st = self.wait_exit();
        assert!(
            !nearflash_live::mountpoint::is_mounted(&self.mount),
            "still mounted"
        );
        st
    }

    /// kill -9: the mount is left dead, as a crashed server leaves it; the guard removes it.
    fn kill9(mut self) {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.pid(), libc::SIGKILL) };
        self.wait_exit();
        unmount(&self.mount);
    }

    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let t0 = Instant::now();
        let child = self.child.as_mut().unwrap();
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                self.child = None;
                return st;
            }
            assert!(t0.elapsed() < START_STOP_LIMIT, "server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        unmount(&self.mount);
    }
}

/// Removes whatever FUSE mount is at `dir` (a dead one included).
fn unmount(dir: &Path) {
    if nearflash_live::mountpoint::is_mounted(dir) {
        let _ = Command::new("fusermount3").arg("-uz").arg(dir).status();
    }
}

fn sh(dir: &Path, script: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("runs sh")
}

fn ok(dir: &Path, script: &str) -> String {
    let out = sh(dir, script);
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A small tree: text files with a needle here and there, a binary file, a nested directory.
fn make_tree(root: &Path) {
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    for i in 0..12u32 {
        let mut text = String::new();
        for line in 0..(50 * (i + 1)) {
            if (line + i) % 37 == 0 {
                text.push_str(&format!("line {line} has the needle {i}\n"));
            } else {
                text.push_str(&format!("line {line} of file {i}: nothing here\n"));
            }
        }
        let dir = if i % 3 == 0 { "src/deep" } else { "src" };
        std::fs::write(root.join(dir).join(format!("f{i}.txt")), text).unwrap();
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let bin: Vec<u8> = (0..(1 << 20) + 123)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(root.join("blob.bin"), bin).unwrap();
}

#[test]
fn a_tree_copied_in_reads_back_identical_with_cp_cat_sha256sum_and_grep_and_survives_a_restart() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let m = d.path().join("m");
    make_tree(&d.path().join("tree"));
    let img_s = img.to_str().unwrap();
    let s = Served::start(&m, &["--image", img_s, "--format", "--preset", "test-min"]);
    ok(d.path(), "cp -r tree m/");
    let host_sums = ok(
        &d.path().join("tree"),
        "find . -type f | sort | xargs sha256sum",
    );
    let dev_sums = ok(&m.join("tree"), "find . -type f | sort | xargs sha256sum");
    assert_eq!(host_sums, dev_sums);
    let host_grep = ok(&d.path().join("tree"), "grep -rn needle . | sort");
    let dev_grep = ok(&m.join("tree"), "grep -rn needle . | sort");
    assert_eq!(host_grep, dev_grep);
    assert!(host_grep.lines().count() > 10);
    assert_eq!(
        ok(d.path(), "cat tree/src/f4.txt"),
        ok(d.path(), "cat m/tree/src/f4.txt")
    );
    // The device saw it: the statistics count the bytes written.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(d.path(), "cat m/.nearflash/stats.json")).unwrap();
    assert!(stats["write_bytes"].as_u64().unwrap() > 1 << 20, "{stats}");
    assert!(stats["device"]["flash_page_programs"].as_u64().unwrap() > 0);
    let table = nearflash(&["stats", "--mount", m.to_str().unwrap()]);
    assert!(table.status.success());
    assert!(String::from_utf8_lossy(&table.stdout).contains("WAF"));
    assert!(s.stop().success());
    assert!(img.with_extension("img.stats.json").exists());

    let fsck = nearflash(&["fs", "fsck", "--image", img_s]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    let s = Served::start(&m, &["--image", img_s]);
    assert_eq!(
        host_sums,
        ok(&m.join("tree"), "find . -type f | sort | xargs sha256sum")
    );
    ok(d.path(), "mv m/tree/src m/tree/moved && rm m/tree/blob.bin && rmdir m/tree/moved/deep 2>/dev/null || true");
    assert!(!m.join("tree/blob.bin").exists());
    assert!(m.join("tree/moved/f1.txt").exists());
    assert!(s.stop().success());
}

#[test]
fn sqlite_transactions_survive_a_kill_9_of_the_server_and_every_committed_one_is_there() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let m = d.path().join("m");
    let s = Served::start(&m, &["--image", img_s, "--format", "--preset", "test-min"]);
    let db = m.join("t.db");
    let db_s = db.to_str().unwrap().to_string();
    ok(
        d.path(),
        &format!("sqlite3 {db_s} 'CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);'"),
    );
    // Transactions one by one, each its own sqlite3 process; the server is killed while
    // they run. A transaction is committed when its sqlite3 exited 0.
    let pid = s.pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: signalling the server, our child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let mut committed = Vec::new();
    let t0 = Instant::now();
    for i in 1..=100_000u32 {
        let out = sh(
            d.path(),
            &format!(
                "sqlite3 {db_s} 'BEGIN; INSERT INTO t VALUES({i}, randomblob(3000)); \
                 UPDATE t SET v = randomblob(100) WHERE id = {i} - 1; COMMIT;'"
            ),
        );
        if !out.status.success() {
            break;
        }
        committed.push(i);
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the kill never landed"
        );
    }
    killer.join().unwrap();
    s.kill9();
    assert!(
        committed.len() >= 3,
        "too few transactions before the kill: {committed:?}"
    );

    let s = Served::start(&m, &["--image", img_s]);
    let check = ok(
        d.path(),
        &format!("sqlite3 {db_s} 'PRAGMA integrity_check;'"),
    );
    assert_eq!(check.trim(), "ok");
    let ids = ok(
        d.path(),
        &format!("sqlite3 {db_s} 'SELECT id FROM t ORDER BY id;'"),
    );
    let ids: Vec<u32> = ids.lines().map(|l| l.parse().unwrap()).collect();
    for c in &committed {
        assert!(
            ids.contains(c),
            "committed transaction {c} lost; present {ids:?}"
        );
    }
    assert!(s.stop().success());
    let fsck = nearflash(&["fs", "fsck", "--image", img_s]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    eprintln!(
        "sqlite: {} transactions committed before kill -9, all present after remount",
        committed.len()
    );
}

#[test]
fn a_full_device_answers_enospc_and_corrupts_nothing() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let m = d.path().join("m");
    let s = Served::start(&m, &["--image", img_s, "--format", "--preset", "test-min"]);
    ok(d.path(), "echo keep me > m/keep.txt && sync m/keep.txt");
    let out = sh(d.path(), "dd if=/dev/zero of=m/big bs=1M count=64 2>&1");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("No space left on device"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(ok(d.path(), "cat m/keep.txt"), "keep me\n");
    ok(d.path(), "rm m/big");
    ok(d.path(), "echo after > m/after.txt");
    assert!(s.stop().success());
    let fsck = nearflash(&["fs", "fsck", "--image", img_s]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );
}

#[test]
fn owner_and_mode_are_enforced_for_another_user() {
    if !fuse_present() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: acting as another user needs root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let m = d.path().join("m");
    let s = Served::start(
        &m,
        &[
            "--image",
            img.to_str().unwrap(),
            "--format",
            "--preset",
            "test-min",
        ],
    );
    ok(
        d.path(),
        "mkdir m/private && chmod 700 m/private && echo secret > m/private/f",
    );
    ok(d.path(), "echo public > m/pub.txt && chmod 644 m/pub.txt");
    let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    let out = sh(d.path(), &format!("{nobody} cat m/private/f"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
    assert_eq!(ok(d.path(), &format!("{nobody} cat m/pub.txt")), "public\n");
    let out = sh(d.path(), &format!("{nobody} sh -c 'echo x > m/pub.txt'"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
    let out = sh(d.path(), &format!("{nobody} touch m/new"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
    assert!(s.stop().success());
}

#[test]
fn bad_starts_are_named_errors_and_mount_nothing() {
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let m = d.path().join("m");
    std::fs::create_dir(&m).unwrap();
    let m_s = m.to_str().unwrap();
    let missing = d.path().join("nope");
    fails_naming(
        &[
            "serve",
            "--image",
            img_s,
            "--mount",
            missing.to_str().unwrap(),
        ],
        "no such directory",
    );
    std::fs::write(&img, vec![7u8; 4096]).unwrap();
    fails_naming(
        &["serve", "--image", img_s, "--mount", m_s],
        "not a nearflash image",
    );
    let made = nearflash(&["fs", "mkfs", "--preset", "test-min", "--image", img_s]);
    assert!(made.status.success());
    let f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
    f.set_len(2 << 20).unwrap();
    fails_naming(
        &["serve", "--image", img_s, "--mount", m_s],
        "truncated image",
    );
    fails_naming(
        &[
            "serve", "--image", img_s, "--mount", m_s, "--preset", "test-min",
        ],
        "--preset applies only with --format",
    );
    // FUSE unavailable: no fusermount3 on the PATH.
    let out = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args([
            "serve", "--image", img_s, "--mount", m_s, "--format", "--preset", "test-min",
        ])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("FUSE unavailable") && err.contains("fuse3"),
        "{err}"
    );
    assert!(!nearflash_live::mountpoint::is_mounted(
        &m.canonicalize().unwrap()
    ));
}

#[test]
fn a_busy_mount_point_is_refused_while_another_server_holds_it() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let m = d.path().join("m");
    let s = Served::start(&m, &["--image", img_s, "--format", "--preset", "test-min"]);
    let other = d.path().join("other.img");
    fails_naming(
        &[
            "serve",
            "--image",
            other.to_str().unwrap(),
            "--mount",
            m.to_str().unwrap(),
            "--format",
            "--preset",
            "test-min",
        ],
        "busy",
    );
    assert!(s.stop().success());
}

#[test]
fn fio_random_reads_on_the_raw_device_file_with_wall_pace_feel_the_device_latency() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("raw.img");
    let m = d.path().join("m");
    let s = Served::start(
        &m,
        &[
            "--image",
            img.to_str().unwrap(),
            "--format",
            "--preset",
            "test-min",
            "--set",
            "flash.blocks_per_plane=256",
            "--expose",
            "raw",
            "--pace",
            "wall",
        ],
    );
    // Write the span first (a never-written page costs no flash read), then check it reads
    // back, then fio: psync, 4 KiB random reads.
    ok(d.path(), "head -c 4194304 /dev/urandom > r && dd if=r of=m/device bs=64k conv=fsync,notrunc 2>/dev/null");
    ok(d.path(), "head -c 4194304 m/device | cmp - r");
    let json = ok(
        d.path(),
        "fio --name=rr --filename=m/device --rw=randread --bs=4k --ioengine=psync --size=4m \
         --runtime=2 --time_based --output-format=json",
    );
    let fio: serde_json::Value = serde_json::from_str(&json).unwrap();
    let fio_mean_us = fio["jobs"][0]["read"]["lat_ns"]["mean"].as_f64().unwrap() / 1e3;
    let stats: serde_json::Value =
        serde_json::from_str(&ok(d.path(), "cat m/.nearflash/stats.json")).unwrap();
    let dev_mean_us = stats["ops"]["read"]["latency_us"]["mean"].as_f64().unwrap();
    let reads = stats["ops"]["read"]["count"].as_u64().unwrap();
    eprintln!(
        "fio mean latency {fio_mean_us:.1} µs; the device's own {dev_mean_us:.1} µs over {reads} reads \
         (ratio {:.2})",
        fio_mean_us / dev_mean_us
    );
    // Each read costs the flash (tR 25 µs + 4 KiB at 400 MB/s): the device's latency is
    // that, and fio waits at least that long for every read (pace wall holds each answer).
    assert!(dev_mean_us > 25.0 && dev_mean_us < 100.0, "{dev_mean_us}");
    assert!(
        fio_mean_us >= dev_mean_us,
        "fio {fio_mean_us} < device {dev_mean_us}"
    );
    assert!(stats["device"]["flash_page_reads"].as_u64().unwrap() >= reads / 2);
    assert!(s.stop().success());
}

/// A module that never ends: it burns its fuel.
const LOOP_WAT: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "_start") (loop $forever (br $forever))))"#;

/// grep's drive output over `data` (the built-in INSIDER program, run directly).
fn grep_reference(data: &[u8], pattern: &str) -> Vec<u8> {
    use nearflash_iscapps::IscApp;
    let mut p = nearflash_iscapps::apps::GrepApp::default()
        .program(0)
        .unwrap();
    nearflash_iscapps::run_program(
        p.as_mut(),
        &[pattern.as_bytes().to_vec()],
        &nearflash_stream::flits_of(data),
    )
    .unwrap()
}

fn vfile_stats(m: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(m.join(".nearflash/stats.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["vfiles"].clone()
}

#[test]
fn virtual_files_registered_with_nearflash_vfile_read_their_references_with_cat_and_cp() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let m = d.path().join("m");
    let m_s = m.to_str().unwrap();
    let s = Served::start(
        &m,
        &[
            "--image",
            img_s,
            "--format",
            "--preset",
            "test-min",
            "--set",
            "flash.blocks_per_plane=256",
        ],
    );
    // 4 MiB of 200-char lines of {A-D}, copied in with cp.
    use nearflash_iscapps::IscApp;
    let ds = nearflash_iscapps::apps::GrepApp::with_line_chars(200)
        .unwrap()
        .generate(3, 4 << 20)
        .unwrap();
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    std::fs::write(d.path().join("lines.txt"), &ds.input).unwrap();
    ok(d.path(), "mkdir m/data && cp lines.txt m/data/");
    let want = grep_reference(&ds.input, &pattern);
    assert!(!want.is_empty());
    let lines_s = m.join("data/lines.txt").to_str().unwrap().to_string();

    let grep_wat = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/programs/grep.wat"
    );
    for (name, program) in [("matches", "grep"), ("wgrep", grep_wat)] {
        let out = nearflash(&[
            "vfile",
            "register",
            "--mount",
            m_s,
            "--name",
            name,
            "--file",
            &lines_s,
            "--program",
            program,
            "--arg",
            &pattern,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("registered"));
    }
    assert_eq!(ok(d.path(), "ls m/.nearflash/vfiles"), "matches\nwgrep\n");
    let t0 = Instant::now();
    ok(d.path(), "cat m/.nearflash/vfiles/matches > built-in.bin");
    let cat_wall = t0.elapsed();
    assert_eq!(std::fs::read(d.path().join("built-in.bin")).unwrap(), want);
    ok(d.path(), "cp m/.nearflash/vfiles/wgrep wasm.bin");
    assert_eq!(std::fs::read(d.path().join("wasm.bin")).unwrap(), want);
    let list = nearflash(&["vfile", "list", "--mount", m_s]);
    let list_text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success() && list_text.contains("wgrep") && list_text.contains("grep.wat"));
    let v = vfile_stats(&m);
    assert_eq!(v["runs"], 2, "{v}");
    assert_eq!(v["bytes_in"], 2 * ds.input.len() as u64, "{v}");
    eprintln!(
        "cat of a grep virtual file over {:.1} MiB: {:.0} ms wall (pace none); the ISC unit's \
         slot {:.1} ms simulated over both runs; runs took {:.1} ms simulated",
        ds.input.len() as f64 / (1 << 20) as f64,
        cat_wall.as_secs_f64() * 1e3,
        v["program_sim_s"].as_f64().unwrap() * 1e3,
        v["run_sim_s"].as_f64().unwrap() * 1e3
    );

    // A module that loops forever runs out of fuel: EIO to the reader; the mount serves on.
    let loop_wat = d.path().join("loop.wat");
    std::fs::write(&loop_wat, LOOP_WAT).unwrap();
    let out = nearflash(&[
        "vfile",
        "register",
        "--mount",
        m_s,
        "--name",
        "spin",
        "--file",
        &lines_s,
        "--program",
        loop_wat.to_str().unwrap(),
        "--fuel-max",
        "1000000",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spun = sh(d.path(), "cat m/.nearflash/vfiles/spin");
    assert!(!spun.status.success());
    assert!(
        String::from_utf8_lossy(&spun.stderr).contains("Input/output error"),
        "{}",
        String::from_utf8_lossy(&spun.stderr)
    );
    assert_eq!(
        ok(
            d.path(),
            "cmp m/data/lines.txt lines.txt && cat m/.nearflash/vfiles/matches | wc -c"
        ),
        format!("{}\n", want.len())
    );
    let v = vfile_stats(&m);
    assert_eq!(v["runs_failed"], 1, "{v}");
    assert!(
        v["last_error"].as_str().unwrap().contains("out of fuel"),
        "{v}"
    );
    // A refused request: a name taken.
    let out = nearflash(&[
        "vfile",
        "register",
        "--mount",
        m_s,
        "--name",
        "spin",
        "--file",
        &lines_s,
        "--program",
        "grep",
        "--arg",
        "AB",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("registered already"));

    // Registrations live on the image: after a restart the virtual file reads the same.
    assert!(s.stop().success());
    let s = Served::start(&m, &["--image", img_s]);
    assert_eq!(
        ok(d.path(), "ls m/.nearflash/vfiles"),
        "matches\nspin\nwgrep\n"
    );
    ok(d.path(), "cat m/.nearflash/vfiles/wgrep > again.bin");
    assert_eq!(std::fs::read(d.path().join("again.bin")).unwrap(), want);
    let out = nearflash(&["vfile", "unregister", "--mount", m_s, "--name", "spin"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!m.join(".nearflash/vfiles/spin").exists());
    assert!(s.stop().success());
    let fsck = nearflash(&["fs", "fsck", "--image", img_s]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );
}

#[test]
fn another_user_cannot_register_a_virtual_file_over_a_file_they_cannot_read() {
    if !fuse_present() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: acting as another user needs root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let m = d.path().join("m");
    let m_s = m.to_str().unwrap();
    let s = Served::start(
        &m,
        &[
            "--image",
            img.to_str().unwrap(),
            "--format",
            "--preset",
            "test-min",
        ],
    );
    ok(
        d.path(),
        "printf 'AB\\nCD\\n' > m/secret.txt && chmod 600 m/secret.txt && \
         printf 'AB\\nCD\\n' > m/open.txt && chmod 644 m/open.txt",
    );
    let bin = env!("CARGO_BIN_EXE_nearflash");
    let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    let register = |name: &str, file: &str| {
        sh(
            d.path(),
            &format!(
                "{nobody} {bin} vfile register --mount {m_s} --name {name} --file m/{file} \
                 --program grep --arg AB"
            ),
        )
    };
    let refused = register("peek", "secret.txt");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        err.contains("/secret.txt") && err.contains("Permission denied") && err.contains("65534"),
        "{err}"
    );
    assert!(!m.join(".nearflash/vfiles/peek").exists());
    // Over a file nobody may read: registered, and read by nobody.
    let out = register("mine", "open.txt");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = sh(
        d.path(),
        &format!("{nobody} cat m/.nearflash/vfiles/mine | wc -c"),
    );
    assert_eq!(String::from_utf8_lossy(&read.stdout).trim(), "8");
    // Root's virtual file over the secret: nobody's read of it is refused at open.
    let out = nearflash(&[
        "vfile",
        "register",
        "--mount",
        m_s,
        "--name",
        "roots",
        "--file",
        m.join("secret.txt").to_str().unwrap(),
        "--program",
        "grep",
        "--arg",
        "AB",
    ]);
    assert!(out.status.success());
    let denied = sh(d.path(), &format!("{nobody} cat m/.nearflash/vfiles/roots"));
    assert!(String::from_utf8_lossy(&denied.stderr).contains("Permission denied"));
    let v = vfile_stats(&m);
    assert_eq!(v["requests_refused"], 1, "{v}");
    assert!(s.stop().success());
}

#[test]
fn under_wall_pace_cat_of_a_virtual_file_waits_for_the_drive_core_of_the_images_preset() {
    if !fuse_present() {
        return;
    }
    // test-min's device with an `[insider]` table whose ISC unit runs programs on its drive
    // cores (`engine = "cores"`), at 10 MHz: grep over 256 KiB (one C-byte chunk) then takes
    // 256 Ki x (grep's measured instructions per byte, ~11.5) x CPI (1/3) / 10 MHz, about
    // 0.1 s of simulated core time.
    let configs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs");
    let test_min = std::fs::read_to_string(format!("{configs}/test-min.toml")).unwrap();
    let insider = std::fs::read_to_string(format!("{configs}/insider.toml")).unwrap();
    let table = &insider[insider.find("\n[insider]").unwrap()..];
    assert!(table.contains("core_clock_mhz = 2000.0") && table.contains("engine = \"slots\""));
    let d = tempfile::tempdir().unwrap();
    let preset = d.path().join("slow-core.toml");
    std::fs::write(
        &preset,
        test_min.replace("name = \"test-min\"", "name = \"slow-core\"")
            + &table
                .replace("core_clock_mhz = 2000.0", "core_clock_mhz = 10.0")
                .replace("engine = \"slots\"", "engine = \"cores\""),
    )
    .unwrap();
    let img = d.path().join("dev.img");
    let m = d.path().join("m");
    let m_s = m.to_str().unwrap();
    let s = Served::start(
        &m,
        &[
            "--image",
            img.to_str().unwrap(),
            "--format",
            "--preset",
            preset.to_str().unwrap(),
            "--pace",
            "wall",
        ],
    );
    use nearflash_iscapps::IscApp;
    let ds = nearflash_iscapps::apps::GrepApp::with_line_chars(200)
        .unwrap()
        .generate(5, 256 << 10)
        .unwrap();
    let pattern = String::from_utf8(ds.params[0].clone()).unwrap();
    std::fs::write(m.join("lines.txt"), &ds.input).unwrap();
    let file = m.join("lines.txt");
    let out = nearflash(&[
        "vfile",
        "register",
        "--mount",
        m_s,
        "--name",
        "slow",
        "--file",
        file.to_str().unwrap(),
        "--program",
        "grep",
        "--arg",
        &pattern,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t0 = Instant::now();
    let got = std::fs::read(m.join(".nearflash/vfiles/slow")).unwrap();
    let wall = t0.elapsed();
    assert_eq!(got, grep_reference(&ds.input, &pattern));
    let v = vfile_stats(&m);
    let core_s = v["program_sim_s"].as_f64().unwrap();
    let run_s = v["run_sim_s"].as_f64().unwrap();
    assert!(v["engine"].as_str().unwrap().contains("slow-core"), "{v}");
    let grep_cost = nearflash_iscapps::apps::GrepApp::with_line_chars(200)
        .unwrap()
        .program(0)
        .unwrap()
        .cost();
    let want_s = ds.input.len() as f64 * grep_cost.instructions_per_byte / 3.0 / 10e6;
    assert!(
        (core_s - want_s).abs() < 0.1 * want_s,
        "the 10 MHz core's time {core_s} s, expected {want_s} s: {v}"
    );
    assert!(run_s >= core_s, "{v}");
    assert!(
        wall.as_secs_f64() >= run_s,
        "the read returned after {wall:?}, before the run's {run_s} s of simulated time"
    );
    eprintln!(
        "wall pace: the virtual file read in {:.1} ms wall; its run {:.1} ms simulated, of which \
         the 10 MHz drive core {:.1} ms",
        wall.as_secs_f64() * 1e3,
        run_s * 1e3,
        core_s * 1e3
    );
    assert!(s.stop().success());
}

/// Story: two `serve` of one image at two mount points both mounted, and a file copied into
/// one was lost. The image's lock refuses the second, naming the first server's PID.
#[test]
fn a_second_server_of_one_image_is_refused_naming_the_first() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let img_s = img.to_str().unwrap();
    let s = Served::start(
        &d.path().join("m1"),
        &["--image", img_s, "--format", "--preset", "test-min"],
    );
    let m2 = d.path().join("m2");
    std::fs::create_dir_all(&m2).unwrap();
    fails_naming(
        &["serve", "--image", img_s, "--mount", m2.to_str().unwrap()],
        &format!("in use by PID {}", s.pid()),
    );
    assert!(!nearflash_live::mountpoint::is_mounted(&m2));
    assert!(s.stop().success());
}

/// Story: `fusermount3 -u` returned about 75 ms before the server had committed, so
/// `cp r.bin m/ && fusermount3 -u m && nearflash fs fsck --image z.img` ran recovery over a
/// half-committed image and silently corrupted the file just copied. The server holds the
/// image's lock until its last commit is on the image, and fsck waits for it.
#[test]
fn a_file_copied_in_then_unmounted_is_whole_for_the_next_fsck() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("z.img");
    let img_s = img.to_str().unwrap();
    let data: Vec<u8> = (0..(3u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect();
    std::fs::write(d.path().join("r.bin"), &data).unwrap();
    let m = d.path().join("m");
    let mut s = Served::start(&m, &["--image", img_s, "--format", "--preset", "test-min"]);
    let nf = env!("CARGO_BIN_EXE_nearflash");
    ok(
        d.path(),
        &format!("cp r.bin m/ && fusermount3 -u m && {nf} fs fsck --image z.img"),
    );
    ok(
        d.path(),
        &format!("mkdir out && {nf} fs export --image z.img /r.bin out"),
    );
    assert_eq!(std::fs::read(d.path().join("out/r.bin")).unwrap(), data);
    assert!(s.wait_exit().success());
}

/// NVMe Computational Programs and SLM through the mounted control file, as a program drives
/// it: one `cs` request (the commands of a `nearflash cs script`, the filter built by clang
/// and its input in hex) written to `m/.nearflash/control`, the answer read back from offset 0.
#[test]
fn a_program_offloaded_through_the_mounted_control_file_counts_the_lines_of_a_file_written_through_the_mount(
) {
    use std::io::Write as _;
    use std::os::unix::fs::FileExt as _;
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let m = d.path().join("m");
    let _s = Served::start(
        &m,
        &[
            "--image",
            img.to_str().unwrap(),
            "--format",
            "--preset",
            "test-min",
            "--set",
            "flash.blocks_per_plane=256",
        ],
    );
    let object = d.path().join("filter.o");
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cs/ebpf/filter.c"
    );
    let built = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-c", "-o"])
        .arg(&object)
        .arg(src)
        .status()
        .expect("clang runs (scripts/setup.sh installs it)");
    assert!(built.success());
    let lines: String = (0..20_000)
        .map(|i| {
            format!(
                "{i},{},{}\n",
                i % 17,
                if i % 9 == 4 { "needle" } else { "hay" }
            )
        })
        .collect();
    let want = lines.lines().filter(|l| l.contains("needle")).count();
    // The file is written through the mount; the request names it by its path.
    std::fs::write(m.join("lines.txt"), &lines).unwrap();
    let hex = nearflash_live::vfile::control::hex_encode;
    let request = serde_json::json!({"op": "cs",
        "files": {"filter.o": hex(&std::fs::read(&object).unwrap())},
        "commands": [
            {"op": "copy_from_file", "path": "/lines.txt"},
            {"op": "load_program", "file": "filter.o"},
            {"op": "activate"},
            {"op": "create_range_set",
             "ranges": [{"start_bytes": 0}, {"start_bytes": 1048576, "len_bytes": 4096}]},
            {"op": "execute", "cparam": ["str:needle", 6]},
            {"op": "memory_read", "offset_bytes": 1048576, "output": "count"}]});
    let mut control = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(m.join(".nearflash/control"))
        .unwrap();
    let mut line = serde_json::to_vec(&request).unwrap();
    line.push(b'\n');
    control.write_all(&line).unwrap();
    let mut answer = vec![0u8; 1 << 20];
    let n = control.read_at(&mut answer, 0).unwrap();
    let a: serde_json::Value = serde_json::from_slice(&answer[..n]).unwrap();
    assert_eq!(a["ok"], true, "{a}");
    let count =
        nearflash_live::vfile::control::hex_decode(a["cs"]["outputs"]["count"].as_str().unwrap())
            .unwrap();
    assert_eq!(String::from_utf8(count).unwrap(), format!("{want}\n"));
    let steps = a["cs"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    assert!(steps.iter().all(|s| s["status"] == "SUCCESS"), "{a}");
}

/// Story: a user copies a file into the mount and offloads a filter over it to the served
/// device's computational drive with `nearflash cs script --mount`: Memory Copy reads the
/// file's blocks through the image's FTL, the count is grep's, and under `--pace wall` the
/// request is held for the commands' simulated time.
#[test]
fn a_script_run_with_cs_mount_filters_a_file_copied_into_the_mount() {
    if !fuse_present() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("dev.img");
    let m = d.path().join("m");
    let s = Served::start(
        &m,
        &[
            "--image",
            img.to_str().unwrap(),
            "--format",
            "--preset",
            "test-min",
            "--pace",
            "wall",
            // SLM at 1 MB/s: Memory Copy and Execute take about a quarter of a second
            // of simulated time each, far more than simulating them takes.
            "--set",
            "cs.slm_bandwidth_mb_s=1",
        ],
    );
    let mut text = String::new();
    for i in 0..20_000u32 {
        let word = if i % 9 == 4 { "needle" } else { "hay" };
        text.push_str(&format!("{i},{},{word}\n", i % 17));
    }
    let hits = text.lines().filter(|l| l.contains("needle")).count();
    std::fs::write(d.path().join("lines.txt"), &text).unwrap();
    ok(d.path(), "mkdir m/data && cp lines.txt m/data/");
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cs/ebpf/filter.c"
    );
    let built = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-c", "-o"])
        .arg(d.path().join("filter.o"))
        .arg(src)
        .status()
        .expect("clang runs (scripts/setup.sh installs it)");
    assert!(built.success(), "clang {src}");
    std::fs::write(
        d.path().join("filter.toml"),
        r#"
[[command]]
op = "copy_from_file"
path = "/data/lines.txt"
[[command]]
op = "load_program"
file = "filter.o"
[[command]]
op = "activate"
[[command]]
op = "create_range_set"
ranges = [{ start_bytes = 0 }, { start_bytes = 1048576, len_bytes = 4096 }]
[[command]]
op = "execute"
cparam = ["str:needle", 6]
[[command]]
op = "memory_read"
offset_bytes = 1048576
output = "count.txt"
"#,
    )
    .unwrap();
    let t0 = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .args([
            "cs",
            "script",
            "--mount",
            "m",
            "filter.toml",
            "--json",
            "run.json",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    let wall_s = t0.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("Memory Copy") && err.contains("/data/lines.txt"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("count.txt")).unwrap(),
        format!("{hits}\n")
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("run.json")).unwrap()).unwrap();
    let steps = run["commands"].as_array().unwrap();
    assert_eq!(steps.len(), 6, "{run}");
    let commands_s: f64 = steps
        .iter()
        .map(|c| c["latency_us"].as_f64().unwrap())
        .sum::<f64>()
        / 1e6;
    // The write of the request was held for at least the commands' simulated time.
    assert!(commands_s > 0.3, "{commands_s} s of commands");
    assert!(
        wall_s >= commands_s,
        "{wall_s} s of wall time for {commands_s} s of commands"
    );
    // A file another user cannot read is refused with its errno, naming it: the request is
    // sent as nobody (which needs root).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        ok(
            d.path(),
            "echo secret > m/data/s.txt && chmod 600 m/data/s.txt && chmod 755 .",
        );
        std::fs::write(
            d.path().join("secret.toml"),
            "[[command]]\nop = \"copy_from_file\"\npath = \"/data/s.txt\"\n",
        )
        .unwrap();
        let out = sh(
            d.path(),
            &format!(
                "setpriv --reuid=65534 --regid=65534 --clear-groups {} cs script --mount m \
                 secret.toml",
                env!("CARGO_BIN_EXE_nearflash")
            ),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("/data/s.txt") && err.contains("Permission denied"),
            "{err}"
        );
    }
    assert_eq!(s.stop().code(), Some(0));
}
