//! Functional fidelity: an application from `nearflash-iscapps` runs on real bytes through
//! the runtime — its file installed on the drive, its program in a slot (or on the cores),
//! its parameters through `send_params`, its output through `vread` (or, for a virtual
//! write, into the real file, read back through the ordinary path) — and the host remainder's
//! result is verified against the app's independent reference.

use crate::error::InsiderError;
use crate::experiment::HOST_READ_BYTES;
use crate::runtime::{ProgramSpec, Runtime};
use crate::stream::Direction;
use nearflash_iscapps::IscApp;

/// The user functional runs are made as.
const UID: u32 = 1000;

/// What one verified run did.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionalResult {
    pub app: String,
    pub input_bytes: u64,
    /// Drive output bytes of each pass.
    pub output_bytes: Vec<u64>,
    pub sim_ns: u64,
    pub trace_hash: String,
}

fn app_error(e: impl std::fmt::Display) -> InsiderError {
    InsiderError::App(e.to_string())
}

/// Runs `name` (a registry app) on about `bytes` of seeded input on `rt` (a functional
/// runtime with user 1000 and a writable `/data`) and verifies the result.
pub fn run_verified(
    rt: &mut Runtime,
    name: &'static str,
    bytes: u64,
    seed: u64,
) -> Result<FunctionalResult, InsiderError> {
    let app = nearflash_iscapps::app(name).map_err(app_error)?;
    let dataset = app.generate(seed, bytes).map_err(app_error)?;
    let input = &dataset.input;
    let start = rt.now();
    let mut outputs: Vec<Vec<u8>> = Vec::new();
    for pass in 0..app.pass_count() {
        let params = app
            .pass_params(&dataset, pass, &outputs)
            .map_err(app_error)?;
        let program = format!("{name}.{pass}");
        rt.install_program(
            &program,
            ProgramSpec {
                make: Box::new(move || {
                    nearflash_iscapps::app(name)
                        .and_then(|a| a.program(pass))
                        .expect("a registry app builds the program of each of its passes")
                }),
                output_per_input: app.output_ratio(pass).map_err(app_error)?.ratio,
            },
        );
        let out = match app.direction() {
            nearflash_iscapps::Direction::Read => {
                read_pass(rt, app.as_ref(), pass, input, &params, &program)?
            }
            nearflash_iscapps::Direction::Write => {
                let prealloc = app.preallocate_bytes(&dataset).unwrap_or(0);
                write_pass(rt, name, pass, input, &params, &program, prealloc)?
            }
        };
        outputs.push(out);
    }
    let got = app.host_remainder(&dataset, &outputs).map_err(app_error)?;
    let want = app.reference(&dataset).map_err(app_error)?;
    app.verify(&got, &want)
        .map_err(|e| InsiderError::Verification {
            app: name.into(),
            reason: e.to_string(),
        })?;
    Ok(FunctionalResult {
        app: name.into(),
        input_bytes: input.len() as u64,
        output_bytes: outputs.iter().map(|o| o.len() as u64).collect(),
        sim_ns: rt.now().since(start).as_ns(),
        trace_hash: rt.machine().trace_hash(),
    })
}

fn read_pass(
    rt: &mut Runtime,
    app: &dyn IscApp,
    pass: usize,
    input: &[u8],
    params: &[Vec<u8>],
    program: &str,
) -> Result<Vec<u8>, InsiderError> {
    let path = format!("/data/{}", app.name());
    if pass == 0 {
        rt.install_file(UID, &path, 0o644, input.len() as u64, Some(input))?;
    }
    let vpath = format!("{path}.{pass}.virt");
    rt.reg_virt_file(UID, &vpath, &path, program)?;
    let fd = rt.vopen(UID, &vpath, Direction::Read)?;
    for p in params {
        rt.send_params(fd, p)?;
    }
    let mut out = Vec::new();
    loop {
        let (n, d) = rt.vread(fd, HOST_READ_BYTES)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&d);
    }
    rt.vclose(fd)?;
    Ok(out)
}

fn write_pass(
    rt: &mut Runtime,
    name: &str,
    pass: usize,
    input: &[u8],
    params: &[Vec<u8>],
    program: &str,
    prealloc: u64,
) -> Result<Vec<u8>, InsiderError> {
    let path = format!("/data/{name}.{pass}.out");
    rt.create(UID, &path, 0o644)?;
    rt.fallocate(UID, &path, prealloc)?;
    let vpath = format!("{path}.virt");
    rt.reg_virt_file(UID, &vpath, &path, program)?;
    let fd = rt.vopen(UID, &vpath, Direction::Write)?;
    for p in params {
        rt.send_params(fd, p)?;
    }
    for piece in input.chunks(HOST_READ_BYTES as usize) {
        rt.vwrite(fd, piece.len() as u64, piece)?;
    }
    let written = rt.vclose(fd)?;
    rt.truncate(UID, &path, written)?;
    rt.read_file(UID, &path)
}
