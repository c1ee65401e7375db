//! The stories of the command sets on a small drive (configs/test-min.toml's flash, FTL and
//! write cache; the NVMe crate's default front end): the C examples offloaded as eBPF and as
//! WebAssembly on every engine, each output equal to a host computation in Rust; a status
//! per cause; hostile programs stopped with a status and a message in under 10 s; the timing
//! and determinism of the model.

use nearflash_cs::device::{Command, Completion, Identify, LBA_BYTES};
use nearflash_cs::program::Chunk;
use nearflash_cs::rangeset::{RangeDescriptor, NSID_COMPUTE_FIRST, NSID_NVM, NSID_SLM};
use nearflash_cs::sequence::{
    host_only, host_run, known_run, offload, offload_with, Offload, OffloadError,
};
use nearflash_cs::session::{DriveConfig, Session};
use nearflash_cs::{CsConfig, ProgramType, Status};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn drive() -> DriveConfig {
    let text = std::fs::read_to_string(root().join("configs/test-min.toml")).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    DriveConfig {
        flash: doc["flash"].clone().try_into().unwrap(),
        ftl: doc["ftl"].clone().try_into().unwrap(),
        write_cache: doc["write_cache"].clone().try_into().unwrap(),
        nvme: Default::default(),
    }
}

fn session() -> Session {
    Session::new(&drive(), CsConfig::default(), 7).unwrap()
}

/// Compiles examples/cs/{ebpf,wasm}/NAME.c with clang (scripts/setup.sh installs it).
fn compile(ptype: ProgramType, name: &str, dir: &Path) -> Vec<u8> {
    let (sub, out, args): (&str, PathBuf, &[&str]) = match ptype {
        ProgramType::Ebpf => (
            "ebpf",
            dir.join(format!("{name}.o")),
            &["-target", "bpf", "-O2", "-c", "-o"],
        ),
        ProgramType::Wasm => (
            "wasm",
            dir.join(format!("{name}.wasm")),
            &["--target=wasm32-wasi", "-O2", "-Wl,--strip-all", "-o"],
        ),
    };
    let src = root().join(format!("examples/cs/{sub}/{name}.c"));
    let status = std::process::Command::new("clang")
        .args(args)
        .arg(&out)
        .arg(&src)
        .status()
        .expect("clang runs (scripts/setup.sh installs clang, lld, wasi-libc)");
    assert!(status.success(), "clang {}", src.display());
    std::fs::read(out).unwrap()
}

/// Lines of text with numbers in three columns, some containing "needle".
fn input(bytes: usize, seed: u64) -> Vec<u8> {
    let mut s = String::new();
    let mut x = seed;
    while s.len() < bytes {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = (x >> 33) % 100_000;
        let tag = if v.is_multiple_of(7) { "needle" } else { "hay" };
        s.push_str(&format!("{v},{},{tag}{}\n", v % 13, v % 3));
    }
    s.truncate(bytes);
    s.into_bytes()
}

fn pattern(p: &[u8]) -> [u64; 2] {
    let mut w = [0u8; 8];
    w[..p.len()].copy_from_slice(p);
    [u64::from_le_bytes(w), p.len() as u64]
}

fn host_filter(data: &[u8], p: &[u8]) -> String {
    let n = data
        .split(|&b| b == b'\n')
        .filter(|l| l.windows(p.len()).any(|w| w == p))
        .count();
    format!("{n}\n")
}

fn host_aggregate(data: &[u8], column: usize) -> String {
    let (mut count, mut sum) = (0u64, 0u64);
    for line in data.split(|&b| b == b'\n') {
        if let Some(field) = line.split(|&b| b == b',').nth(column) {
            let digits: Vec<u8> = field.iter().copied().filter(u8::is_ascii_digit).collect();
            if !digits.is_empty() {
                count += 1;
                sum += std::str::from_utf8(&digits)
                    .unwrap()
                    .parse::<u64>()
                    .unwrap();
            }
        }
    }
    format!("{count} {sum}\n")
}

fn host_adler32(data: &[u8]) -> String {
    let (mut a, mut b) = (1u64, 0u64);
    for &x in data {
        a = (a + u64::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    format!("{}\n", b << 16 | a)
}

fn spec(
    ptype: ProgramType,
    program: Vec<u8>,
    input_bytes: u64,
    params: [u64; 2],
    engine: usize,
) -> Offload {
    Offload {
        ptype,
        program,
        input_bytes,
        params,
        engine,
        output_bytes: 256,
        chunk_bytes: 4096,
    }
}

#[test]
fn each_example_offloaded_on_each_engine_computes_what_the_host_computes() {
    let dir = tempfile::tempdir().unwrap();
    // An odd length: range 0 ends where the data does (a padded range once changed the
    // checksum of inputs whose length was not a multiple of 4).
    let data = input((48 << 10) + 3, 3);
    let examples: [(&str, [u64; 2], String); 3] = [
        ("filter", pattern(b"needle"), host_filter(&data, b"needle")),
        ("aggregate", [0, 0], host_aggregate(&data, 0)),
        ("checksum", [0, 0], host_adler32(&data)),
    ];
    let engines = CsConfig::default().engines.len();
    for ptype in [ProgramType::Ebpf, ProgramType::Wasm] {
        for (name, params, want) in &examples {
            let program = compile(ptype, name, dir.path());
            for engine in 0..engines {
                let mut s = session();
                s.write_nvm(0, &data, 128 << 10, 32).unwrap();
                let o = spec(ptype, program.clone(), data.len() as u64, *params, engine);
                let got = offload(&mut s, &o).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&got.output),
                    *want,
                    "{name} as {} on engine {engine}",
                    ptype.name()
                );
                assert!(got.steps.iter().all(|st| st.latency.as_ns() > 0));
                let host = host_only(&mut s, &o, &Default::default(), None).unwrap();
                assert_eq!(host.output, got.output, "{name}: host-only path");
            }
        }
    }
}

/// `nearflash cs run` computes the host's program run ahead, on another core: host_only takes
/// it only when the host read exactly the bytes it was computed over, and computes the run
/// itself otherwise — the outcome equal to computing it there.
#[test]
fn a_host_run_computed_ahead_is_used_only_over_the_bytes_the_host_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = input(64 << 10, 3);
    let other = input(64 << 10, 4);
    let program = compile(ProgramType::Ebpf, "checksum", dir.path());
    let o = spec(ProgramType::Ebpf, program, data.len() as u64, [0, 0], 0);
    let cfg = CsConfig::default();
    let outcome = |ahead| {
        let mut s = session();
        s.write_nvm(0, &data, 128 << 10, 32).unwrap();
        host_only(&mut s, &o, &Default::default(), ahead).unwrap()
    };
    let inline = outcome(None);
    assert_eq!(String::from_utf8_lossy(&inline.output), host_adler32(&data));
    // Computed ahead over the same bytes: the same outcome.
    assert_eq!(outcome(Some((&data, host_run(&cfg, &o, &data)))), inline);
    // A run claimed over the bytes the host reads is used as it is (here: another input's).
    let used = outcome(Some((&data, host_run(&cfg, &o, &other))));
    assert_eq!(String::from_utf8_lossy(&used.output), host_adler32(&other));
    // A run over other bytes is not used.
    assert_eq!(outcome(Some((&other, host_run(&cfg, &o, &other)))), inline);
}

/// `nearflash cs run` offers the host's run, computed ahead, to the offload's Execute: the
/// device answers with it when its own run would be the same run, and the offload's outcome —
/// every command's latency, the result, the work, the output — is the one interpreting gives.
#[test]
fn the_host_run_offered_to_execute_leaves_the_offload_as_interpreting_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = input(64 << 10, 3);
    let cfg = CsConfig::default();
    for ptype in [ProgramType::Ebpf, ProgramType::Wasm] {
        let program = compile(ptype, "filter", dir.path());
        let o = spec(ptype, program, data.len() as u64, pattern(b"needle"), 0);
        let run = |offer: Option<&[u8]>| {
            let mut s = session();
            s.write_nvm(0, &data, 128 << 10, 32).unwrap();
            let over = std::sync::Arc::new(offer.unwrap_or(&data).to_vec());
            let ahead = host_run(&cfg, &o, &over);
            let k = known_run(&cfg, &o, &over, &ahead).expect("the filter leaves its input");
            offload_with(&mut s, &o, &mut |s| {
                if offer.is_some() {
                    s.expect_run(k.clone());
                }
            })
            .unwrap()
        };
        let interpreted = run(None);
        assert_eq!(
            String::from_utf8_lossy(&interpreted.output),
            host_filter(&data, b"needle")
        );
        assert_eq!(run(Some(&data)), interpreted, "{}", ptype.name());
        // A run over other bytes is not the device's run: the device interprets.
        let other = input(64 << 10, 4);
        assert_eq!(run(Some(&other)), interpreted, "{}", ptype.name());
    }
}

/// A session holding an activated eBPF program in slot 0 and the input on the drive.
fn ready(program: &[u8], data: &[u8]) -> Session {
    let mut s = session();
    s.write_nvm(0, data, 128 << 10, 32).unwrap();
    load(&mut s, 0, ProgramType::Ebpf, program).result.unwrap();
    s.call(Command::ActivateProgram {
        pind: 0,
        activate: true,
    })
    .unwrap()
    .result
    .unwrap();
    s
}

fn load(s: &mut Session, pind: u16, ptype: ProgramType, program: &[u8]) -> Completion {
    s.call(Command::LoadProgram(Chunk {
        pind,
        ptype,
        puid: 1,
        size_bytes: program.len() as u64,
        offset_bytes: 0,
        data: program.to_vec(),
    }))
    .unwrap()
}

fn status(c: &Completion) -> Status {
    c.result
        .as_ref()
        .map_or_else(|e| e.status(), |_| Status::Success)
}

#[test]
fn each_refused_command_completes_with_the_status_of_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile(ProgramType::Ebpf, "checksum", dir.path());
    let mut s = ready(&program, &input(4096, 1));
    // Bad index.
    assert_eq!(
        status(&load(&mut s, 999, ProgramType::Ebpf, &program)),
        Status::InvalidProgramIndex
    );
    // Not activated.
    load(&mut s, 1, ProgramType::Ebpf, &program).result.unwrap();
    let rs = s
        .call(Command::CreateRangeSet {
            nsid: NSID_COMPUTE_FIRST,
            ranges: vec![RangeDescriptor {
                nsid: NSID_SLM,
                len_bytes: 4096,
                start_bytes: 0,
            }],
        })
        .unwrap()
        .result
        .unwrap() as u16;
    let exec = |pind| Command::Execute {
        nsid: NSID_COMPUTE_FIRST,
        pind,
        rsid: rs,
        cparam: [0, 0],
    };
    assert_eq!(
        status(&s.call(exec(1)).unwrap()),
        Status::ProgramNotActivated
    );
    // Too many active: fill MAXACT.
    let maxact = CsConfig::default().activated_max;
    for pind in 1..maxact {
        load(&mut s, pind, ProgramType::Ebpf, &program);
        s.call(Command::ActivateProgram {
            pind,
            activate: true,
        })
        .unwrap()
        .result
        .unwrap();
    }
    load(&mut s, maxact, ProgramType::Ebpf, &program);
    let c = s
        .call(Command::ActivateProgram {
            pind: maxact,
            activate: true,
        })
        .unwrap();
    assert_eq!(status(&c), Status::MaxProgramsActivated);
    // Unreachable range: the NVM namespace is not reachable from a compute namespace.
    let c = s
        .call(Command::CreateRangeSet {
            nsid: NSID_COMPUTE_FIRST,
            ranges: vec![RangeDescriptor {
                nsid: NSID_NVM,
                len_bytes: 4096,
                start_bytes: 0,
            }],
        })
        .unwrap();
    assert_eq!(status(&c), Status::MemoryRangeNotReachable);
    // Range set too large: MAXMEMR + 1 ranges.
    let too_many = (0..=CsConfig::default().ranges_per_set_max)
        .map(|i| RangeDescriptor {
            nsid: NSID_SLM,
            len_bytes: 4,
            start_bytes: 4 * u64::from(i),
        })
        .collect();
    let c = s
        .call(Command::CreateRangeSet {
            nsid: NSID_COMPUTE_FIRST,
            ranges: too_many,
        })
        .unwrap();
    assert_eq!(status(&c), Status::MaxMemoryRangesExceeded);
    // Program too big: over MAXPB.
    let huge = vec![0u8; (CsConfig::default().program_bytes_max() + 4) as usize];
    let c = s
        .call(Command::LoadProgram(Chunk {
            pind: 31,
            ptype: ProgramType::Ebpf,
            puid: 2,
            size_bytes: huge.len() as u64,
            offset_bytes: 0,
            data: huge[..4096].to_vec(),
        }))
        .unwrap();
    assert_eq!(status(&c), Status::ProgramTooBig);
    // The bad range set id.
    let c = s
        .call(Command::Execute {
            nsid: NSID_COMPUTE_FIRST,
            pind: 0,
            rsid: 200,
            cparam: [0, 0],
        })
        .unwrap();
    assert_eq!(status(&c), Status::InvalidMemoryRangeSetId);
    // Identify reports the limits the device enforces.
    let id = Identify::decode(&s.call(Command::Identify).unwrap().data).unwrap();
    assert_eq!(
        (id.maxact, id.maxmemr),
        (maxact, CsConfig::default().ranges_per_set_max)
    );
}

/// Compiles a hostile eBPF program from C text.
fn hostile(dir: &Path, name: &str, body: &str) -> Vec<u8> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(
        &src,
        format!(
            "#include \"{}\"\n{body}\n",
            root().join("examples/cs/cs_helpers.h").display()
        ),
    )
    .unwrap();
    let out = dir.join(format!("{name}.o"));
    let ok = std::process::Command::new("clang")
        .args(["-target", "bpf", "-O2", "-c", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap()
        .success();
    assert!(ok, "clang {name}");
    std::fs::read(out).unwrap()
}

/// Runs `program` over a small input; the failing step's status and message, with the wall
/// time it took.
fn attempt(program: &[u8]) -> (Status, String) {
    let data = input(8192, 5);
    let mut s = session();
    s.write_nvm(0, &data, 128 << 10, 32).unwrap();
    let t = Instant::now();
    let e = offload(
        &mut s,
        &spec(
            ProgramType::Ebpf,
            program.to_vec(),
            data.len() as u64,
            [0, 0],
            0,
        ),
    )
    .unwrap_err();
    let wall = t.elapsed();
    eprintln!("stopped in {wall:?}");
    assert!(wall.as_secs_f64() < 10.0, "stopped in {wall:?}");
    match e {
        OffloadError::Command { status, source, .. } => (status, source.to_string()),
        other => panic!("{other}"),
    }
}

#[test]
fn a_runaway_ebpf_loop_stops_at_its_budget_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let p = hostile(
        dir.path(),
        "spin",
        "CS_PROGRAM u64 spin(struct cs_ctx *ctx) { volatile u64 n = 0; for (;;) n++; return n; }",
    );
    let (status, msg) = attempt(&p);
    assert_eq!(status, Status::ProgramTimeExceeded);
    assert!(msg.contains("budget"), "{msg}");
}

#[test]
fn an_access_past_the_range_set_stops_with_a_memory_violation() {
    let dir = tempfile::tempdir().unwrap();
    let p = hostile(
        dir.path(),
        "oob",
        "CS_PROGRAM u64 oob(struct cs_ctx *ctx) { const u8 *in = (const u8 *)ctx->range[0].addr; return in[ctx->range[0].len + 4096]; }",
    );
    let (status, msg) = attempt(&p);
    assert_eq!(status, Status::ProgramMemoryViolation);
    assert!(msg.contains("outside"), "{msg}");
}

#[test]
fn an_unknown_helper_stops_the_program_and_names_the_helper() {
    let dir = tempfile::tempdir().unwrap();
    let p = hostile(
        dir.path(),
        "helper",
        "static long (*nope)(void) = (void *)77;\nCS_PROGRAM u64 helper(struct cs_ctx *ctx) { return nope(); }",
    );
    let (status, msg) = attempt(&p);
    assert_eq!(status, Status::ProgramFault);
    assert!(msg.contains("helper 77"), "{msg}");
}

#[test]
fn a_truncated_object_is_refused_at_activation() {
    let dir = tempfile::tempdir().unwrap();
    let p = compile(ProgramType::Ebpf, "filter", dir.path());
    let (status, msg) = attempt(&p[..p.len() / 2]);
    assert_eq!(status, Status::InvalidProgramData);
    assert!(msg.contains("truncated"), "{msg}");
}

#[test]
fn a_ten_megabyte_program_is_refused_at_load() {
    let (status, msg) = attempt(&vec![0x95; 10 << 20]);
    assert_eq!(status, Status::ProgramTooBig);
    assert!(msg.contains("MAXPB"), "{msg}");
}

#[test]
fn a_memory_copy_takes_longer_beside_ordinary_reads_and_longer_for_more_data() {
    let data = input(2 << 20, 9);
    let copy = |s: &mut Session, lbas: u64| {
        let c = s
            .call(Command::CopyFromNvm {
                dest_bytes: 0,
                sources: vec![(0, lbas)],
            })
            .unwrap();
        c.result.unwrap();
        c.completed.since(c.submitted).as_ns()
    };
    let mut s = session();
    s.write_nvm(0, &data, 128 << 10, 32).unwrap();
    let all = data.len() as u64 / LBA_BYTES;
    let small = copy(&mut s, all / 8);
    let alone = copy(&mut s, all);
    assert!(
        alone > 4 * small,
        "{alone} ns for 8x the data of {small} ns"
    );
    // The same copy while the host reads the same flash through the same front end.
    let mut t = session();
    t.write_nvm(0, &data, 128 << 10, 32).unwrap();
    copy(&mut t, all / 8);
    let c = t
        .call_beside_reads(
            Command::CopyFromNvm {
                dest_bytes: 0,
                sources: vec![(0, all)],
            },
            0,
            data.len() as u64,
            128 << 10,
        )
        .unwrap();
    c.result.clone().unwrap();
    let beside = c.completed.since(c.submitted).as_ns();
    assert!(beside > alone, "beside reads {beside} ns, alone {alone} ns");
}

#[test]
fn the_same_seed_and_inputs_give_the_same_trace() {
    let dir = tempfile::tempdir().unwrap();
    let program = compile(ProgramType::Ebpf, "checksum", dir.path());
    let data = input(32 << 10, 4);
    let run = || {
        let mut s = session();
        s.write_nvm(0, &data, 128 << 10, 32).unwrap();
        let got = offload(
            &mut s,
            &spec(
                ProgramType::Ebpf,
                program.clone(),
                data.len() as u64,
                [0, 0],
                1,
            ),
        )
        .unwrap();
        (got.total, s.trace_hash())
    };
    assert_eq!(run(), run());
}
