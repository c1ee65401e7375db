//! `nearflash vfile register|unregister|list --mount DIR`: INSIDER's virtual files on a running
//! `nearflash serve`. Each command is one request written to `DIR/.nearflash/control` by this
//! process (so it runs as this user: the server checks this user's read permission on the real
//! file as the file system does) and the answer read back from it (`nearflash_live::vfile::
//! control`); a refused request exits non-zero with the server's errno and message. A module
//! (`--program PROG.wasm|PROG.wat`) is read here and sent inside the request.

use crate::error::CliError;
use nearflash_live::vfile::control::{
    self, Answer, Registration, Request, MODULE_BYTES_MAX, REQUEST_BYTES_MAX,
};
use nearflash_live::vfile::program::is_module_name;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct RegisterArgs {
    /// The mount point of a running `nearflash serve`.
    #[arg(long)]
    pub mount: PathBuf,
    /// The virtual file's name: it appears as MOUNT/.nearflash/vfiles/NAME.
    #[arg(long)]
    pub name: String,
    /// The real file, a path inside the mount (e.g. m/data/lines.txt).
    #[arg(long)]
    pub file: PathBuf,
    /// A built-in INSIDER drive program (grep, statistics, passthrough, knn, sql,
    /// integration) or a WebAssembly module, PROG.wasm or PROG.wat.
    #[arg(long)]
    pub program: String,
    /// An argument: a module's argv[1], argv[2], …; a built-in's parameter message (grep: the
    /// pattern; statistics: the row size in bytes; any: hex:BYTES). Repeatable.
    #[arg(long = "arg", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// A module's fuel per run (default: `program run`'s over the real file, 2 × 10^9 + 100
    /// per byte of it; the server allows at most 10^11).
    #[arg(long)]
    pub fuel_max: Option<u64>,
    /// A module's linear memory (default 64; at most 256).
    #[arg(long)]
    pub memory_max_mib: Option<u64>,
}

#[derive(clap::Args, Debug)]
pub struct UnregisterArgs {
    #[arg(long)]
    pub mount: PathBuf,
    #[arg(long)]
    pub name: String,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    #[arg(long)]
    pub mount: PathBuf,
    /// Print the server's answer (JSON) instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn register(a: &RegisterArgs) -> Result<(), CliError> {
    let file = device_path(&a.mount, &a.file)?;
    let (program, module_hex) = if is_module_name(&a.program) {
        let path = Path::new(&a.program);
        let bytes = read_module(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.program.clone());
        (name, Some(control::hex_encode(&bytes)))
    } else {
        (a.program.clone(), None)
    };
    let answer = send(
        &a.mount,
        &Request::Register(Registration {
            name: a.name.clone(),
            file: file.clone(),
            program: program.clone(),
            args: a.args.clone(),
            module_hex,
            fuel_max: a.fuel_max,
            memory_max_mib: a.memory_max_mib,
        }),
    )?;
    println!(
        "{} ({program} over {file}); read it: cat {}",
        answer.message,
        a.mount.join(".nearflash/vfiles").join(&a.name).display()
    );
    Ok(())
}

pub fn unregister(a: &UnregisterArgs) -> Result<(), CliError> {
    let answer = send(
        &a.mount,
        &Request::Unregister {
            name: a.name.clone(),
        },
    )?;
    println!("{}", answer.message);
    Ok(())
}

pub fn list(a: &ListArgs) -> Result<(), CliError> {
    let answer = send(&a.mount, &Request::List)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&answer).expect("an answer serializes")
        );
        return Ok(());
    }
    let mut t = comfy_table::Table::new();
    t.set_header(vec![
        "name",
        "real file",
        "program",
        "arguments",
        "owner uid",
        "last output bytes",
    ]);
    for v in &answer.vfiles {
        t.add_row(vec![
            v.name.clone(),
            v.file.clone(),
            if v.wasm {
                format!("{} (wasm)", v.program)
            } else {
                v.program.clone()
            },
            v.args.join(" "),
            v.owner_uid.to_string(),
            v.last_output_bytes.to_string(),
        ]);
    }
    println!("{t}");
    println!(
        "{} (read each at {}/NAME)",
        answer.message,
        a.mount.join(".nearflash/vfiles").display()
    );
    Ok(())
}

/// Writes `request` to the mount's control file and reads the answer; a refusal is an error
/// carrying the server's errno and message.
pub fn send(mount: &Path, request: &Request) -> Result<Answer, CliError> {
    let path = mount.join(".nearflash").join(control::CONTROL_FILE_NAME);
    let io = |what: String| move |source| CliError::Io { what, source };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(io(format!(
            "{} (is a `nearflash serve` running at that mount point?)",
            path.display()
        )))?;
    let mut line = serde_json::to_vec(request).expect("a request serializes");
    line.push(b'\n');
    if line.len() as u64 > REQUEST_BYTES_MAX {
        return Err(CliError::Workload(format!(
            "the request is {} bytes, over the server's {REQUEST_BYTES_MAX}",
            line.len()
        )));
    }
    let written = (&f).write_all(&line);
    let answer =
        read_answer(&f).map_err(io(format!("reading the answer from {}", path.display())))?;
    let parsed: Option<Answer> = serde_json::from_slice(&answer).ok();
    match (written, parsed) {
        (Ok(()), Some(a)) if a.ok => Ok(a),
        (_, Some(a)) if !a.ok => Err(CliError::VfileRefused {
            errno: a.errno.unwrap_or(libc::EIO),
            message: a.message,
        }),
        (Err(e), _) => Err(io(format!("writing the request to {}", path.display()))(e)),
        (Ok(()), _) => Err(CliError::Workload(format!(
            "{}: the server's answer is not one: {:?}",
            path.display(),
            String::from_utf8_lossy(&answer)
        ))),
    }
}

/// The answer, from offset 0 (bounded: a listing of every virtual file is a few KiB).
fn read_answer(f: &std::fs::File) -> std::io::Result<Vec<u8>> {
    const ANSWER_BYTES_MAX: usize = 1 << 20;
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = f.read_at(&mut buf, answer.len() as u64)?;
        if n == 0 || answer.len() + n > ANSWER_BYTES_MAX {
            return Ok(answer);
        }
        answer.extend_from_slice(&buf[..n]);
    }
}

fn read_module(path: &Path) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let io = |source| CliError::Io {
        what: format!("--program {}", path.display()),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MODULE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MODULE_BYTES_MAX {
        return Err(CliError::Workload(format!(
            "--program {}: larger than the {MODULE_BYTES_MAX} bytes a virtual file's module may be",
            path.display()
        )));
    }
    Ok(bytes)
}

/// The real file's path in the device's file system: `file` (a host path inside the mount)
/// made absolute and normalized without looking it up — the server does the lookup, as the
/// caller — then taken relative to the mount point.
fn device_path(mount: &Path, file: &Path) -> Result<String, CliError> {
    let cwd = std::env::current_dir().map_err(|source| CliError::Io {
        what: "the current directory".into(),
        source,
    })?;
    let file_abs = normalize(&cwd.join(file));
    let candidates = [Some(normalize(&cwd.join(mount))), mount.canonicalize().ok()];
    for m in candidates.into_iter().flatten() {
        if let Ok(rel) = file_abs.strip_prefix(&m) {
            let rel = rel.to_str().ok_or_else(|| {
                CliError::Workload(format!("--file {}: not UTF-8", file.display()))
            })?;
            if rel.is_empty() {
                break;
            }
            return Ok(format!("/{rel}"));
        }
    }
    Err(CliError::Workload(format!(
        "--file {}: not a file inside the mount {}",
        file.display(),
        mount.display()
    )))
}

/// `.` and `..` resolved lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_path_inside_the_mount_becomes_the_devices_path_and_one_outside_is_refused() {
        let m = Path::new("/tmp/m");
        assert_eq!(
            device_path(m, Path::new("/tmp/m/data/../data/x.txt")).unwrap(),
            "/data/x.txt"
        );
        assert!(device_path(m, Path::new("/tmp/mx/a")).is_err());
        assert!(device_path(m, Path::new("/tmp/m")).is_err());
    }
}
