//! `nearflash cs run`: an eBPF and a WebAssembly filter offloaded through the Computational
//! Programs and SLM command sets, each command's latency printed, the output file equal to
//! grep's count, the host-only path beside it; a hostile program ends with a status and a
//! non-zero exit, a bad flag with a message naming it.

mod common;

use common::{fails_naming, nearflash};
use std::path::{Path, PathBuf};

fn compile(dir: &Path, args: &[&str], src: &str, out: &str) -> PathBuf {
    let src = format!("{}/../../examples/cs/{src}", env!("CARGO_MANIFEST_DIR"));
    let out = dir.join(out);
    let ok = std::process::Command::new("clang")
        .args(args)
        .arg(&out)
        .arg(&src)
        .status()
        .expect("clang runs (scripts/setup.sh installs it)")
        .success();
    assert!(ok, "clang {src}");
    out
}

fn lines(dir: &Path) -> (PathBuf, usize) {
    let mut text = String::new();
    let mut hits = 0;
    for i in 0..20_000u32 {
        let needle = i % 9 == 4;
        hits += usize::from(needle);
        text.push_str(&format!(
            "{i},{},{}\n",
            i % 17,
            if needle { "needle" } else { "hay" }
        ));
    }
    let p = dir.join("in.txt");
    std::fs::write(&p, text).unwrap();
    (p, hits)
}

#[test]
fn a_filter_offloaded_as_ebpf_and_as_webassembly_counts_what_grep_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (input, hits) = lines(dir.path());
    let ebpf = compile(
        dir.path(),
        &["-target", "bpf", "-O2", "-c", "-o"],
        "ebpf/filter.c",
        "filter.o",
    );
    let wasm = compile(
        dir.path(),
        &["--target=wasm32-wasi", "-O2", "-Wl,--strip-all", "-o"],
        "wasm/filter.c",
        "filter.wasm",
    );
    for (program, engine) in [
        (&ebpf, "drive-cores"),
        (&wasm, "controller"),
        (&ebpf, "fpga"),
    ] {
        let out = dir.path().join("out.txt");
        let o = nearflash(&[
            "cs",
            "run",
            "--preset",
            "test-min",
            "--program",
            program.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "--param",
            "str:needle",
            "--param",
            "6",
            "--engine",
            engine,
            "--output",
            out.to_str().unwrap(),
            "--trace-commands",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("{hits}\n"));
        for cmd in [
            "Load Program",
            "Memory Copy",
            "Execute Program",
            "Memory Read",
            "host only",
        ] {
            assert!(err.contains(cmd), "{cmd} missing from {err}");
        }
    }
}

#[test]
fn a_program_over_the_devices_limit_exits_non_zero_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let (input, _) = lines(dir.path());
    let big = dir.path().join("big.o");
    std::fs::write(&big, vec![0u8; 10 << 20]).unwrap();
    let out = dir.path().join("out.txt");
    fails_naming(
        &[
            "cs",
            "run",
            "--preset",
            "test-min",
            "--program",
            big.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
        "PROGRAM_TOO_BIG",
    );
    assert!(!out.exists(), "no output is written for a failed run");
    fails_naming(
        &[
            "cs",
            "run",
            "--preset",
            "test-min",
            "--program",
            big.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
            "--engine",
            "gpu",
        ],
        "--engine gpu",
    );
    fails_naming(
        &[
            "cs",
            "run",
            "--preset",
            "test-min",
            "--program",
            "prog.exe",
            "--input",
            input.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
        "name it .o",
    );
}

/// The same filter as a command script: the program loaded once and run over two range sets
/// (the whole file, then its first 4 KiB copied to a second SLM place), each count read back
/// into its own file and equal to grep's.
#[test]
fn a_command_script_loads_a_filter_once_and_runs_it_over_two_range_sets() {
    let dir = tempfile::tempdir().unwrap();
    let (input, hits) = lines(dir.path());
    let text = std::fs::read_to_string(&input).unwrap();
    let head = &text[..4096];
    let head_hits = head.split('\n').filter(|l| l.contains("needle")).count();
    compile(
        dir.path(),
        &["-target", "bpf", "-O2", "-c", "-o"],
        "ebpf/filter.c",
        "filter.o",
    );
    let script = dir.path().join("filter.toml");
    std::fs::write(
        &script,
        r#"
[[command]]
op = "write_nvm"
file = "in.txt"
[[command]]
op = "load_program"
file = "filter.o"
chunk_bytes = 4096
[[command]]
op = "activate"
[[command]]
op = "create_range_set"
ranges = [{ start_bytes = 0 }, { start_bytes = 1048576, len_bytes = 4096 }]
[[command]]
op = "copy_from_nvm"
[[command]]
op = "execute"
cparam = ["str:needle", 6]
[[command]]
op = "memory_read"
offset_bytes = 1048576
output = "all.txt"
[[command]]
op = "copy_within_slm"
dest_bytes = 2097152
sources = [[0, 4096]]
[[command]]
op = "create_range_set"
ranges = [{ start_bytes = 2097152, len_bytes = 4096 }, { start_bytes = 3145728, len_bytes = 4096 }]
[[command]]
op = "execute"
cparam = ["str:needle", 6]
[[command]]
op = "memory_read"
offset_bytes = 3145728
output = "head.txt"
"#,
    )
    .unwrap();
    let json = dir.path().join("steps.json");
    // The script's files are relative to the working directory, as fio's are.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nearflash"))
        .current_dir(dir.path())
        .args([
            "cs",
            "script",
            "filter.toml",
            "--preset",
            "test-min",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("all.txt")).unwrap(),
        format!("{hits}\n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("head.txt")).unwrap(),
        format!("{head_hits}\n")
    );
    for cmd in [
        "Load Program",
        "Memory Copy",
        "Execute Program",
        "Memory Read",
    ] {
        assert!(err.contains(cmd), "{cmd} missing from {err}");
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let commands = doc["commands"].as_array().unwrap();
    assert!(commands.len() > 10, "{doc}");
    assert!(commands
        .iter()
        .all(|c| c["status"] == "SUCCESS" && c["latency_us"].as_f64().unwrap() > 0.0));
}

/// A script's mistakes are named: an unknown field with its file and its command, a command whose
/// default needs an earlier one, a missing file; a command the device refuses exits non-zero
/// with its status.
#[test]
fn a_bad_command_script_is_refused_naming_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, body: &str, needle: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        fails_naming(
            &["cs", "script", p.to_str().unwrap(), "--preset", "test-min"],
            needle,
        );
    };
    run(
        "field.toml",
        "[[command]]\nop = \"activate\"\npnid = 3\n",
        "command 0: unknown field `pnid`",
    );
    run(
        "default.toml",
        "[[command]]\nop = \"copy_from_nvm\"\n",
        "command 0 (copy_from_nvm): no lbas and no write_nvm or copy_from_file before",
    );
    run(
        "missing.toml",
        "[[command]]\nop = \"write_nvm\"\nfile = \"nope.txt\"\n",
        "command 0 (write_nvm)",
    );
    run(
        "inactive.toml",
        "[[command]]\nop = \"create_range_set\"\nranges = [{ start_bytes = 0, len_bytes = 4096 }]\n[[command]]\nop = \"execute\"\n",
        "command 1 (Execute Program) failed",
    );
}

#[test]
fn copy_from_file_outside_a_served_drive_and_a_mount_that_serves_nothing_are_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("file.toml");
    std::fs::write(
        &script,
        "[[command]]\nop = \"copy_from_file\"\npath = \"/data/lines.txt\"\n",
    )
    .unwrap();
    let s = script.to_str().unwrap();
    // The script's own drive has no file system.
    let out = nearflash(&["cs", "script", s]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("copy_from_file names a file of a file system"),
        "{err}"
    );
    // A directory where no server runs.
    let m = dir.path().to_str().unwrap();
    fails_naming(&["cs", "script", "--mount", m, s], ".nearflash/control");
    // A mount and a preset are two different drives.
    fails_naming(
        &["cs", "script", "--mount", m, "--preset", "test-min", s],
        "--preset",
    );
}
