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
