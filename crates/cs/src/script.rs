//! A command script: the two command sets driven one command at a time from a TOML file, for
//! sequences `nearflash cs run` does not cover (several programs, several range sets, SLM to
//! SLM copies, a program kept loaded across executions). `nearflash cs script FILE.toml` runs
//! one; each command is printed with its simulated latency and status.
//!
//! ```toml
//! [[command]]
//! op = "write_nvm"            # host block writes of a file to the NVM namespace, then a flush
//! file = "lines.txt"          # files are relative to the working directory, as fio's are
//! [[command]]
//! op = "load_program"         # Load Program in chunks; the type from the name (.o / .wasm / .wat)
//! file = "filter.o"
//! [[command]]
//! op = "activate"
//! [[command]]
//! op = "create_range_set"     # on engine 0's compute namespace; SLM ranges [start, length]
//! ranges = [{ start_bytes = 0 }, { start_bytes = 1048576, len_bytes = 4096 }]
//! [[command]]
//! op = "copy_from_nvm"        # Memory Copy, NVM LBA ranges → SLM (default: what write_nvm wrote)
//! # or, on the drive of `nearflash serve` (its namespace is the image's):
//! # op = "copy_from_file"     # Memory Copy of a file's extents, the path read as the caller
//! # path = "/data/lines.txt"
//! [[command]]
//! op = "execute"
//! cparam = ["str:needle", 6]
//! [[command]]
//! op = "memory_read"          # default length: the last Execute's return, in whole dwords
//! offset_bytes = 1048576
//! output = "count.txt"
//! ```
//!
//! Defaults that refer to earlier commands: a range's omitted `len_bytes` and `copy_from_nvm`'s
//! omitted `lbas` are the last `write_nvm`'s (or `copy_from_file`'s) bytes and LBAs;
//! `execute`'s omitted `rsid` the last range set created. Files are read and written by the
//! caller (`ScriptFiles`), and the drive is the caller's ([`ScriptDrive`]: a [`Session`], or
//! live mode's drive over the image): the runner does no I/O of its own.

use crate::device::{Command, Completion, LBA_BYTES};
use crate::error::CommandError;
use crate::opcodes::{ProgramType, Status};
use crate::program::Chunk;
use crate::rangeset::{RangeDescriptor, NSID_COMPUTE_FIRST, NSID_SLM};
use crate::sequence::Step;
use crate::session::{Session, SessionError};
use nearflash_sim::SimTime;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Commands a script may hold: far more than any sequence needs, few enough that a script
/// cannot run for hours by mistake.
pub const SCRIPT_COMMANDS_MAX: usize = 10_000;

/// Load Program's default chunk: 64 KiB (`nearflash cs run --chunk-kib`'s default).
const CHUNK_BYTES_DEFAULT: u64 = 64 << 10;

fn chunk_default() -> u64 {
    CHUNK_BYTES_DEFAULT
}

#[derive(Debug)]
pub struct Script {
    pub commands: Vec<ScriptCommand>,
}

/// The file as TOML tables, each command decoded on its own so that an error names it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    #[serde(rename = "command", default)]
    commands: Vec<toml::Table>,
}

/// An SLM range of a range set: `len_bytes` omitted = the bytes of the last `write_nvm`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlmRange {
    pub start_bytes: u64,
    pub len_bytes: Option<u64>,
}

/// Execute's parameter: a number, or `"str:TEXT"` (up to 8 bytes, first byte lowest).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Param {
    Number(u64),
    Text(String),
}

/// One command: what a script's `[[command]]` table and live mode's control file
/// (`{"op":"cs","commands":[…]}`) hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptCommand {
    WriteNvm {
        file: PathBuf,
        #[serde(default)]
        lba: u64,
    },
    LoadProgram {
        file: PathBuf,
        #[serde(default)]
        pind: u16,
        #[serde(default = "chunk_default")]
        chunk_bytes: u64,
    },
    Activate {
        #[serde(default)]
        pind: u16,
    },
    Deactivate {
        #[serde(default)]
        pind: u16,
    },
    Unload {
        #[serde(default)]
        pind: u16,
    },
    CreateRangeSet {
        #[serde(default)]
        engine: u32,
        ranges: Vec<SlmRange>,
    },
    DeleteRangeSet {
        rsid: Option<u16>,
    },
    CopyFromNvm {
        #[serde(default)]
        dest_bytes: u64,
        /// `[slba, nlb]` pairs.
        lbas: Option<Vec<[u64; 2]>>,
    },
    /// Memory Copy of a file's LBAs (its extents, in file order) to SLM at `dest_bytes`:
    /// `path` on the file system of the drive's image, read as the caller.
    CopyFromFile {
        path: String,
        #[serde(default)]
        dest_bytes: u64,
    },
    CopyWithinSlm {
        dest_bytes: u64,
        /// `[offset, length]` pairs.
        sources: Vec<[u64; 2]>,
    },
    MemoryWrite {
        #[serde(default)]
        offset_bytes: u64,
        file: PathBuf,
    },
    Execute {
        #[serde(default)]
        engine: u32,
        #[serde(default)]
        pind: u16,
        rsid: Option<u16>,
        #[serde(default)]
        cparam: Vec<Param>,
    },
    MemoryRead {
        offset_bytes: u64,
        len_bytes: Option<u64>,
        output: Option<PathBuf>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: command {index} ({op}): {reason}")]
    Invalid {
        path: String,
        index: usize,
        op: &'static str,
        reason: String,
    },
    #[error("{path}: command {index} ({op}): {source}")]
    File {
        path: String,
        index: usize,
        op: &'static str,
        source: std::io::Error,
    },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("command {index} ({step}) failed with {status}: {source}")]
    Command {
        index: usize,
        step: &'static str,
        status: Status,
        source: CommandError,
        /// The commands before it, and it.
        steps: Vec<Step>,
    },
}

/// What the runner needs from outside: reading the files a script names.
pub trait ScriptFiles {
    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>>;
}

/// The host's write requests for `write_nvm`: their size and how many are in flight.
#[derive(Clone, Copy, Debug)]
pub struct HostWrites {
    pub request_bytes: u64,
    pub depth: u32,
}

/// A script's outcome: every command as a step, the files `memory_read` asked for, the last
/// Execute's return.
#[derive(Debug, Default)]
pub struct ScriptOutcome {
    pub steps: Vec<Step>,
    pub outputs: Vec<(PathBuf, Vec<u8>)>,
    pub last_result: Option<u64>,
}

impl ScriptCommand {
    pub fn op(&self) -> &'static str {
        match self {
            ScriptCommand::WriteNvm { .. } => "write_nvm",
            ScriptCommand::LoadProgram { .. } => "load_program",
            ScriptCommand::Activate { .. } => "activate",
            ScriptCommand::Deactivate { .. } => "deactivate",
            ScriptCommand::Unload { .. } => "unload",
            ScriptCommand::CreateRangeSet { .. } => "create_range_set",
            ScriptCommand::DeleteRangeSet { .. } => "delete_range_set",
            ScriptCommand::CopyFromNvm { .. } => "copy_from_nvm",
            ScriptCommand::CopyFromFile { .. } => "copy_from_file",
            ScriptCommand::CopyWithinSlm { .. } => "copy_within_slm",
            ScriptCommand::MemoryWrite { .. } => "memory_write",
            ScriptCommand::Execute { .. } => "execute",
            ScriptCommand::MemoryRead { .. } => "memory_read",
        }
    }
}

impl Script {
    /// Parses a script; `path` names it in errors (a TOML syntax error with its line and
    /// column, a command's mistake with the command's number, from 0).
    pub fn parse(path: &str, text: &str) -> Result<Script, ScriptError> {
        let parse = |message: String| ScriptError::Parse {
            path: path.to_string(),
            message,
        };
        let raw: RawScript = toml::from_str(text).map_err(|e| parse(e.to_string()))?;
        let commands = raw
            .commands
            .into_iter()
            .enumerate()
            .map(|(i, table)| {
                ScriptCommand::deserialize(toml::Value::Table(table))
                    .map_err(|e| parse(format!("command {i}: {}", e.message())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let script = Script { commands };
        if script.commands.is_empty() {
            return Err(ScriptError::Parse {
                path: path.to_string(),
                message: "no [[command]] tables".into(),
            });
        }
        if script.commands.len() > SCRIPT_COMMANDS_MAX {
            return Err(ScriptError::Parse {
                path: path.to_string(),
                message: format!(
                    "{} commands, more than the {SCRIPT_COMMANDS_MAX} a script may hold",
                    script.commands.len()
                ),
            });
        }
        Ok(script)
    }
}

/// Execute's parameter as the 64-bit CPARAM.
fn param_value(p: &Param) -> Result<u64, String> {
    match p {
        Param::Number(n) => Ok(*n),
        Param::Text(t) => {
            let s = t
                .strip_prefix("str:")
                .ok_or_else(|| format!("cparam {t:?}: a number or \"str:TEXT\""))?;
            if s.len() > 8 {
                return Err(format!("cparam {t:?}: str: takes at most 8 bytes"));
            }
            let mut w = [0u8; 8];
            w[..s.len()].copy_from_slice(s.as_bytes());
            Ok(u64::from_le_bytes(w))
        }
    }
}

fn program_type(file: &Path) -> Option<ProgramType> {
    match file.extension().and_then(|e| e.to_str()) {
        Some("o") => Some(ProgramType::Ebpf),
        Some("wasm") | Some("wat") => Some(ProgramType::Wasm),
        _ => None,
    }
}

/// One extent of a file: `len_bytes` of the file at `file_offset_bytes` are on the device at
/// `device_offset_bytes` (the file system's `FIEMAP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileExtent {
    pub file_offset_bytes: u64,
    pub device_offset_bytes: u64,
    pub len_bytes: u64,
}

/// A file as `copy_from_file` reads it: its size and its extents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileExtents {
    pub size_bytes: u64,
    pub extents: Vec<FileExtent>,
}

impl FileExtents {
    /// The NVM LBA ranges `(slba, nlb)` holding the file's bytes, in file order (merged where
    /// they touch); a hole below the size is refused (Memory Copy reads what the file holds).
    pub fn lbas(&self, path: &str) -> Result<Vec<(u64, u64)>, SessionError> {
        let mut sorted = self.extents.clone();
        sorted.sort_by_key(|e| e.file_offset_bytes);
        let mut lbas: Vec<(u64, u64)> = Vec::new();
        let mut covered = 0u64;
        for e in sorted {
            if covered >= self.size_bytes {
                break;
            }
            if e.file_offset_bytes != covered {
                return Err(SessionError::Sparse {
                    path: path.to_string(),
                    hole_at_bytes: covered,
                });
            }
            assert!(
                e.device_offset_bytes.is_multiple_of(LBA_BYTES)
                    && e.len_bytes.is_multiple_of(LBA_BYTES),
                "a file's extents are whole LBAs"
            );
            let take = e
                .len_bytes
                .min((self.size_bytes - covered).div_ceil(LBA_BYTES) * LBA_BYTES);
            let (slba, nlb) = (e.device_offset_bytes / LBA_BYTES, take / LBA_BYTES);
            match lbas.last_mut() {
                Some(last) if last.0 + last.1 == slba => last.1 += nlb,
                _ => lbas.push((slba, nlb)),
            }
            covered += take;
        }
        if covered < self.size_bytes {
            return Err(SessionError::Sparse {
                path: path.to_string(),
                hole_at_bytes: covered,
            });
        }
        Ok(lbas)
    }
}

/// The drive a script runs on, one command at a time: a [`Session`] (its own drive) or live
/// mode's computational drive over the served image.
pub trait ScriptDrive {
    /// The drive's clock.
    fn now(&self) -> SimTime;
    /// Submits `cmd` now and runs until it completes.
    fn call(&mut self, cmd: Command) -> Result<Completion, SessionError>;
    /// Host block writes of `data` at `offset_bytes` of the NVM namespace, then a flush.
    fn write_nvm(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        request_bytes: u64,
        depth: u32,
    ) -> Result<(), SessionError>;
    /// Whether Memory Copy may name raw LBAs (`copy_from_nvm`).
    fn check_raw_copy(&self) -> Result<(), SessionError>;
    /// The file `path` of the drive's file system, opened as the caller: its size and extents
    /// (the file's data made durable first, so that the flash holds it).
    fn file_extents(&mut self, path: &str) -> Result<FileExtents, SessionError>;
}

impl<D: nearflash_blockdev::BlockDevice> ScriptDrive for Session<D> {
    fn now(&self) -> SimTime {
        Session::now(self)
    }
    fn call(&mut self, cmd: Command) -> Result<Completion, SessionError> {
        Session::call(self, cmd)
    }
    fn write_nvm(
        &mut self,
        offset_bytes: u64,
        data: &[u8],
        request_bytes: u64,
        depth: u32,
    ) -> Result<(), SessionError> {
        Session::write_nvm(self, offset_bytes, data, request_bytes, depth)
    }
    fn check_raw_copy(&self) -> Result<(), SessionError> {
        Ok(())
    }
    fn file_extents(&mut self, _path: &str) -> Result<FileExtents, SessionError> {
        Err(SessionError::NoFileSystem)
    }
}

/// Runs `script` on `s`, stopping at the first command that fails.
pub fn run_script(
    s: &mut dyn ScriptDrive,
    script: &Script,
    path: &str,
    files: &mut dyn ScriptFiles,
    writes: HostWrites,
) -> Result<ScriptOutcome, ScriptError> {
    let mut run = ScriptRun {
        path,
        files,
        writes,
        out: ScriptOutcome::default(),
        input: None,
        last_rsid: None,
    };
    for (index, c) in script.commands.iter().enumerate() {
        let commands = match c {
            ScriptCommand::WriteNvm { file, lba } => {
                run.write_nvm(s, index, c, file, *lba)?;
                continue;
            }
            ScriptCommand::CopyFromFile { path, dest_bytes } => {
                run.copy_from_file(s, index, c, path, *dest_bytes)?
            }
            ScriptCommand::CopyFromNvm { lbas: Some(_), .. } => {
                s.check_raw_copy()?;
                run.commands(index, c)?
            }
            _ => run.commands(index, c)?,
        };
        for (cmd, detail) in commands {
            run.issue(s, index, c, cmd, detail)?;
        }
    }
    Ok(run.out)
}

/// A script's run: where it reads its files, what it has done so far, and what later
/// commands may take from earlier ones.
struct ScriptRun<'a> {
    path: &'a str,
    files: &'a mut dyn ScriptFiles,
    writes: HostWrites,
    out: ScriptOutcome,
    /// The last write_nvm's or copy_from_file's input: its LBA ranges and bytes.
    input: Option<(Vec<(u64, u64)>, u64)>,
    /// The last range set created.
    last_rsid: Option<u16>,
}

impl ScriptRun<'_> {
    fn invalid(&self, index: usize, c: &ScriptCommand, reason: String) -> ScriptError {
        ScriptError::Invalid {
            path: self.path.to_string(),
            index,
            op: c.op(),
            reason,
        }
    }

    fn read(
        &mut self,
        index: usize,
        c: &ScriptCommand,
        file: &Path,
    ) -> Result<Vec<u8>, ScriptError> {
        self.files.read(file).map_err(|source| ScriptError::File {
            path: self.path.to_string(),
            index,
            op: c.op(),
            source,
        })
    }

    /// `write_nvm`: the host writes a file to the NVM namespace through its block path.
    fn write_nvm(
        &mut self,
        s: &mut dyn ScriptDrive,
        index: usize,
        c: &ScriptCommand,
        file: &Path,
        lba: u64,
    ) -> Result<(), ScriptError> {
        let data = self.read(index, c, file)?;
        let start = s.now();
        s.write_nvm(
            lba * LBA_BYTES,
            &data,
            self.writes.request_bytes,
            self.writes.depth,
        )?;
        let bytes = data.len() as u64;
        self.input = Some((vec![(lba, bytes.div_ceil(LBA_BYTES))], bytes));
        self.out.steps.push(Step {
            name: "write_nvm",
            detail: format!("{} bytes at LBA {lba}", data.len()),
            latency: s.now().since(start),
            status: Status::Success,
        });
        Ok(())
    }

    /// `copy_from_file`: the file's LBAs (the drive resolves the path as the caller), copied
    /// by one Memory Copy; later commands' defaults take its LBAs and bytes.
    fn copy_from_file(
        &mut self,
        s: &mut dyn ScriptDrive,
        index: usize,
        c: &ScriptCommand,
        path: &str,
        dest_bytes: u64,
    ) -> Result<Vec<(Command, String)>, ScriptError> {
        let file = s.file_extents(path)?;
        if file.size_bytes == 0 {
            return Err(self.invalid(index, c, format!("{path} is empty: nothing to copy")));
        }
        let sources = file.lbas(path)?;
        let detail = format!(
            "{path}: {} bytes in {} LBA ranges from LBA {} -> SLM {dest_bytes}",
            file.size_bytes,
            sources.len(),
            sources[0].0
        );
        self.input = Some((sources.clone(), file.size_bytes));
        Ok(vec![(
            Command::CopyFromNvm {
                dest_bytes,
                sources,
            },
            detail,
        )])
    }

    /// The NVMe commands a script command stands for, each with its detail line.
    // Long: one arm per script command, each a few lines naming its NVMe command; the
    // commands with more to check (load_program, create_range_set, execute) have their own.
    fn commands(
        &mut self,
        index: usize,
        c: &ScriptCommand,
    ) -> Result<Vec<(Command, String)>, ScriptError> {
        let invalid = |reason: String| self.invalid(index, c, reason);
        Ok(match c {
            ScriptCommand::WriteNvm { .. } => unreachable!("write_nvm runs on the host path"),
            ScriptCommand::CopyFromFile { .. } => unreachable!("copy_from_file asks the drive"),
            ScriptCommand::LoadProgram {
                file,
                pind,
                chunk_bytes,
            } => self.load_program(index, c, file, *pind, *chunk_bytes)?,
            ScriptCommand::Activate { pind } | ScriptCommand::Deactivate { pind } => {
                let (pind, activate) = (*pind, matches!(c, ScriptCommand::Activate { .. }));
                let detail = format!("program {pind}");
                vec![(Command::ActivateProgram { pind, activate }, detail)]
            }
            ScriptCommand::Unload { pind } => vec![(
                Command::UnloadProgram { pind: *pind },
                format!("program {pind}"),
            )],
            ScriptCommand::CreateRangeSet { engine, ranges } => {
                self.create_range_set(index, c, *engine, ranges)?
            }
            ScriptCommand::DeleteRangeSet { rsid } => {
                let rsid = rsid
                    .or(self.last_rsid)
                    .ok_or_else(|| invalid("no rsid and no range set created before".into()))?;
                vec![(
                    Command::DeleteRangeSet { rsid },
                    format!("range set {rsid}"),
                )]
            }
            ScriptCommand::CopyFromNvm { dest_bytes, lbas } => {
                let sources = match lbas {
                    Some(l) => l.iter().map(|&[slba, nlb]| (slba, nlb)).collect(),
                    None => self
                        .input
                        .as_ref()
                        .ok_or_else(|| {
                            invalid("no lbas and no write_nvm or copy_from_file before".into())
                        })?
                        .0
                        .clone(),
                };
                let detail = format!("LBAs {sources:?} -> SLM {dest_bytes}");
                let dest_bytes = *dest_bytes;
                vec![(
                    Command::CopyFromNvm {
                        dest_bytes,
                        sources,
                    },
                    detail,
                )]
            }
            ScriptCommand::CopyWithinSlm {
                dest_bytes,
                sources,
            } => vec![(
                Command::CopyWithinSlm {
                    dest_bytes: *dest_bytes,
                    sources: sources.iter().map(|&[o, l]| (o, l)).collect(),
                },
                format!("SLM {sources:?} -> SLM {dest_bytes}"),
            )],
            ScriptCommand::MemoryWrite { offset_bytes, file } => {
                let data = self.read(index, c, file)?;
                let detail = format!("{} bytes at SLM {offset_bytes}", data.len());
                vec![(
                    Command::MemoryWrite {
                        offset_bytes: *offset_bytes,
                        data,
                    },
                    detail,
                )]
            }
            ScriptCommand::Execute {
                engine,
                pind,
                rsid,
                cparam,
            } => self.execute(index, c, *engine, *pind, *rsid, cparam)?,
            ScriptCommand::MemoryRead {
                offset_bytes,
                len_bytes,
                ..
            } => {
                // Without a length: the last Execute's result, in whole 4-byte words.
                let len_bytes = match len_bytes {
                    Some(l) => *l,
                    None => {
                        let bytes = self
                            .out
                            .last_result
                            .ok_or_else(|| invalid("no len_bytes and no execute before".into()))?;
                        bytes.div_ceil(4).max(1) * 4
                    }
                };
                let offset_bytes = *offset_bytes;
                let detail = format!("{len_bytes} bytes at SLM {offset_bytes}");
                vec![(
                    Command::MemoryRead {
                        offset_bytes,
                        len_bytes,
                    },
                    detail,
                )]
            }
        })
    }

    /// `load_program`: the program file in Load Program commands of `chunk_bytes` each.
    fn load_program(
        &mut self,
        index: usize,
        c: &ScriptCommand,
        file: &Path,
        pind: u16,
        chunk_bytes: u64,
    ) -> Result<Vec<(Command, String)>, ScriptError> {
        let ptype = program_type(file).ok_or_else(|| {
            self.invalid(
                index,
                c,
                format!(
                    "{}: name it .o (eBPF), .wasm or .wat (WebAssembly)",
                    file.display()
                ),
            )
        })?;
        if chunk_bytes == 0 {
            return Err(self.invalid(index, c, "chunk_bytes must be positive".into()));
        }
        let program = self.read(index, c, file)?;
        let total = program.len() as u64;
        Ok(program
            .chunks(chunk_bytes as usize)
            .enumerate()
            .map(|(i, part)| {
                let offset_bytes = i as u64 * chunk_bytes;
                (
                    Command::LoadProgram(Chunk {
                        pind,
                        ptype,
                        puid: 0x6e66_6373,
                        size_bytes: total,
                        offset_bytes,
                        data: part.to_vec(),
                    }),
                    format!("{} bytes at {offset_bytes} of {total}", part.len()),
                )
            })
            .collect())
    }

    /// `create_range_set`: SLM ranges (a range without a length spans the last write).
    fn create_range_set(
        &self,
        index: usize,
        c: &ScriptCommand,
        engine: u32,
        ranges: &[SlmRange],
    ) -> Result<Vec<(Command, String)>, ScriptError> {
        let mut descriptors = Vec::with_capacity(ranges.len());
        for r in ranges {
            let len = match r.len_bytes {
                Some(l) => l,
                None => {
                    self.input
                        .as_ref()
                        .ok_or_else(|| {
                            self.invalid(
                                index,
                                c,
                                "a range without len_bytes needs an earlier write_nvm or copy_from_file".into(),
                            )
                        })?
                        .1
                }
            };
            let len_bytes = u32::try_from(len).map_err(|_| {
                self.invalid(
                    index,
                    c,
                    format!("a range of {len} bytes: its length is 32 bits"),
                )
            })?;
            descriptors.push(RangeDescriptor {
                nsid: NSID_SLM,
                len_bytes,
                start_bytes: r.start_bytes,
            });
        }
        let detail = descriptors
            .iter()
            .map(|d| format!("{}+{}", d.start_bytes, d.len_bytes))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(vec![(
            Command::CreateRangeSet {
                nsid: NSID_COMPUTE_FIRST + engine,
                ranges: descriptors,
            },
            format!("engine {engine}: {detail}"),
        )])
    }

    /// `execute`: Execute Program with up to two parameters, on the last range set unless
    /// one is named.
    fn execute(
        &self,
        index: usize,
        c: &ScriptCommand,
        engine: u32,
        pind: u16,
        rsid: Option<u16>,
        cparam: &[Param],
    ) -> Result<Vec<(Command, String)>, ScriptError> {
        let invalid = |reason: String| self.invalid(index, c, reason);
        if cparam.len() > 2 {
            return Err(invalid(
                "Execute Program takes two parameters (CPARAM1, CPARAM2)".into(),
            ));
        }
        let mut values = [0u64; 2];
        for (i, p) in cparam.iter().enumerate() {
            values[i] = param_value(p).map_err(invalid)?;
        }
        let rsid = rsid
            .or(self.last_rsid)
            .ok_or_else(|| invalid("no rsid and no range set created before".into()))?;
        Ok(vec![(
            Command::Execute {
                nsid: NSID_COMPUTE_FIRST + engine,
                pind,
                rsid,
                cparam: values,
            },
            format!("program {pind} on engine {engine}, range set {rsid}"),
        )])
    }

    /// Submits one command, records its step, and keeps what later commands may use: the
    /// range set it created, the program's result, the memory it read.
    fn issue(
        &mut self,
        s: &mut dyn ScriptDrive,
        index: usize,
        c: &ScriptCommand,
        cmd: Command,
        detail: String,
    ) -> Result<(), ScriptError> {
        let done = s.call(cmd)?;
        let status = done
            .result
            .as_ref()
            .map_or_else(CommandError::status, |_| Status::Success);
        self.out.steps.push(Step {
            name: done.name,
            detail,
            latency: done.completed.since(done.submitted),
            status,
        });
        let value = match done.result {
            Ok(v) => v,
            Err(source) => {
                return Err(ScriptError::Command {
                    index,
                    step: done.name,
                    status,
                    source,
                    steps: self.out.steps.clone(),
                })
            }
        };
        match c {
            ScriptCommand::CreateRangeSet { .. } => {
                self.last_rsid = Some(u16::try_from(value).expect("an RSID is 16 bits"));
            }
            ScriptCommand::Execute { .. } => self.out.last_result = Some(value),
            ScriptCommand::MemoryRead {
                output: Some(file),
                len_bytes,
                ..
            } => {
                let mut data = done.data;
                // Without a length, the examples' convention: Execute returned the
                // output's bytes.
                if len_bytes.is_none() {
                    data.truncate(self.out.last_result.unwrap_or(0) as usize);
                }
                self.out.outputs.push((file.clone(), data));
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_parses_with_defaults_and_names_the_command_an_unknown_field_is_in() {
        let s = Script::parse(
            "s.toml",
            "[[command]]\nop = \"activate\"\n[[command]]\nop = \"execute\"\ncparam = [\"str:ab\", 2]\n",
        )
        .unwrap();
        assert_eq!(s.commands.len(), 2);
        assert!(matches!(s.commands[0], ScriptCommand::Activate { pind: 0 }));
        // The error points at the offending command's table.
        let e = Script::parse(
            "s.toml",
            "[[command]]\nop = \"activate\"\n[[command]]\nop = \"activate\"\npnid = 1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("s.toml") && e.contains("command 1: unknown field `pnid`"),
            "{e}"
        );
        let e = Script::parse("s.toml", "[[command]]\nop = \"explode\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("explode"), "{e}");
        let e = Script::parse("s.toml", "").unwrap_err().to_string();
        assert!(e.contains("no [[command]]"), "{e}");
    }

    #[test]
    fn a_files_extents_become_lbas_in_file_order_merged_and_a_hole_is_refused() {
        let e = |file_offset_bytes, device_offset_bytes, len_bytes| FileExtent {
            file_offset_bytes,
            device_offset_bytes,
            len_bytes,
        };
        let f = FileExtents {
            size_bytes: 3 * 4096 + 10,
            // Out of file order; the second and third touch on the device; the last one
            // reaches past the size (preallocated) and is cut to it.
            extents: vec![
                e(8192, 40 * 4096, 4096),
                e(0, 10 * 4096, 4096),
                e(4096, 11 * 4096, 4096),
                e(12288, 41 * 4096, 3 * 4096),
            ],
        };
        assert_eq!(f.lbas("/f").unwrap(), vec![(10, 2), (40, 2)]);
        let holey = FileExtents {
            size_bytes: 3 * 4096,
            extents: vec![e(0, 0, 4096), e(8192, 4096, 4096)],
        };
        let err = holey.lbas("/h").unwrap_err().to_string();
        assert!(err.contains("/h: a hole at byte 4096"), "{err}");
        let short = FileExtents {
            size_bytes: 2 * 4096,
            extents: vec![e(0, 0, 4096)],
        };
        assert!(short.lbas("/s").is_err());
    }

    #[test]
    fn parameters_are_numbers_or_short_strings() {
        assert_eq!(param_value(&Param::Number(6)), Ok(6));
        assert_eq!(
            param_value(&Param::Text("str:ab".into())),
            Ok(u64::from(b'a') | u64::from(b'b') << 8)
        );
        assert!(param_value(&Param::Text("str:123456789".into())).is_err());
        assert!(param_value(&Param::Text("12".into())).is_err());
    }
}
