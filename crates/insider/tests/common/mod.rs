//! Small drive programs and a small machine for the scenario tests. The real applications
//! live in `nearflash-iscapps`; these exercise the runtime's mechanisms on known bytes.

#![allow(dead_code)]

use nearflash_insider::runtime::{MachineSpec, ProgramSpec, Runtime};
use nearflash_insider::{BackingKind, InsiderConfig};
use nearflash_stream::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

pub const ALICE: u32 = 1000;
pub const BOB: u32 = 1001;

/// Returns every byte.
pub struct Echo;
impl StreamProgram for Echo {
    fn name(&self) -> &'static str {
        "echo"
    }
    fn on_flit(&mut self, f: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        out.push(f.payload());
        if f.eop() {
            out.end();
        }
        Ok(())
    }
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: 1.0,
        }
    }
}

/// Emits the lines (`\n`-terminated) that contain the needle given by `send_params`.
#[derive(Default)]
pub struct LineGrep {
    needle: Vec<u8>,
    line: Vec<u8>,
}
impl LineGrep {
    fn flush(&mut self, out: &mut FlitWriter) {
        if !self.needle.is_empty()
            && self
                .line
                .windows(self.needle.len())
                .any(|w| w == self.needle)
        {
            out.push(&self.line);
        }
        self.line.clear();
    }
}
impl StreamProgram for LineGrep {
    fn name(&self) -> &'static str {
        "linegrep"
    }
    fn on_params(&mut self, p: &[u8]) -> Result<(), ProgramError> {
        self.needle = p.to_vec();
        Ok(())
    }
    fn on_flit(&mut self, f: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        for &b in f.payload() {
            self.line.push(b);
            if b == b'\n' {
                self.flush(out);
            }
        }
        if f.eop() {
            self.flush(out);
            out.end();
        }
        Ok(())
    }
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 32.0,
            instructions_per_byte: 4.0,
        }
    }
}

/// Reference for `LineGrep`.
pub fn grep_reference(data: &[u8], needle: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in data.split_inclusive(|&b| b == b'\n') {
        if line.windows(needle.len()).any(|w| w == needle) {
            out.extend_from_slice(line);
        }
    }
    out
}

/// Faults once it has seen `after` bytes.
pub struct Faulty {
    pub after: usize,
    pub seen: usize,
}
impl StreamProgram for Faulty {
    fn name(&self) -> &'static str {
        "faulty"
    }
    fn on_flit(&mut self, f: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        self.seen += f.len();
        if self.seen > self.after {
            return Err(ProgramError::Fault {
                program: "faulty",
                reason: "division by zero".into(),
            });
        }
        out.push(f.payload());
        if f.eop() {
            out.end();
        }
        Ok(())
    }
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 64.0,
            instructions_per_byte: 1.0,
        }
    }
}

/// Writes every byte twice (an amplifying program for the virtual-write path).
pub struct Doubler;
impl StreamProgram for Doubler {
    fn name(&self) -> &'static str {
        "doubler"
    }
    fn on_flit(&mut self, f: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        for &b in f.payload() {
            out.push(&[b, b]);
        }
        if f.eop() {
            out.end();
        }
        Ok(())
    }
    fn cost(&self) -> WorkCost {
        WorkCost {
            slot_bytes_per_cycle: 32.0,
            instructions_per_byte: 2.0,
        }
    }
}

/// A small drive (C = 16 KiB, R = 4, 64 KiB host buffers) with the test programs installed
/// and users alice (uid 1000) and bob (uid 1001) in different groups; `/data` is 0777.
pub fn small(backing: BackingKind, functional: bool, seed: u64) -> Runtime {
    let cfg = InsiderConfig {
        backing,
        emulated_capacity_bytes: 64 << 20,
        credit_request_bytes: 16 << 10,
        credits_initial: 4,
        host_buffer_bytes: 64 << 10,
        ..InsiderConfig::default()
    };
    let host = nearflash_insider::config::insider_host();
    let flash = nearflash_ftl::testing::tiny_flash();
    // The tiny device must hold RLE's preallocated output beside its input: no
    // over-provisioning beyond the GC reserve (which it now takes in addition to it).
    let ftl = nearflash_ftl::FtlConfig {
        over_provisioning_percent: 0.0,
        ..nearflash_ftl::testing::tiny_ftl()
    };
    let mut rt = Runtime::new(&MachineSpec {
        insider: &cfg,
        host: &host,
        flash: Some((&flash, &ftl)),
        functional,
        seed,
    })
    .expect("a valid small machine");
    rt.add_user(ALICE, 100, "alice").unwrap();
    rt.add_user(BOB, 101, "bob").unwrap();
    rt.mkdir(0, "/data", 0o777).unwrap();
    rt.install_program(
        "echo",
        ProgramSpec {
            make: Box::new(|| Box::new(Echo)),
            output_per_input: 1.0,
        },
    );
    rt.install_program(
        "linegrep",
        ProgramSpec {
            make: Box::new(|| Box::<LineGrep>::default()),
            output_per_input: 0.1,
        },
    );
    rt.install_program(
        "faulty",
        ProgramSpec {
            make: Box::new(|| {
                Box::new(Faulty {
                    after: 40_000,
                    seen: 0,
                })
            }),
            output_per_input: 1.0,
        },
    );
    rt.install_program(
        "doubler",
        ProgramSpec {
            make: Box::new(|| Box::new(Doubler)),
            output_per_input: 2.0,
        },
    );
    rt
}

/// Deterministic text: lines of letters, some containing "needle".
pub fn text(bytes: usize, seed: u64) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 20 + (x >> 33) % 100;
        let with = (x >> 20).is_multiple_of(7);
        for i in 0..len {
            if with && i == 5 {
                out.extend_from_slice(b"needle");
            }
            out.push(b'a' + ((x >> (i % 40)) % 26) as u8);
        }
        out.push(b'\n');
    }
    out.truncate(bytes);
    out
}

/// Reads a virtual file to its end in `chunk`-byte vreads.
pub fn vread_all(
    rt: &mut Runtime,
    fd: u32,
    chunk: u64,
) -> Result<Vec<u8>, nearflash_insider::InsiderError> {
    let mut out = Vec::new();
    loop {
        let (n, d) = rt.vread(fd, chunk)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&d);
    }
}
