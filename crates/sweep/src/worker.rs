//! The local backend's processes: a pool of worker processes on this machine, each running
//! points one at a time over a line protocol on its standard input and output.
//!
//! The parent writes a point (its JSON, one line); the worker answers one line, a JSON object
//! `{"row": ROW}` or `{"error": MESSAGE}`, and waits for the next point; end of input ends it.
//! A process per worker rather than a thread per point keeps a point that aborts, runs out of
//! memory or is killed from taking the sweep (and its other points) down with it: its death is
//! reported as that point's failure, naming how the process ended. Workers are whatever
//! command the caller names — `nearflash sweep-worker` for the CLI, the Python package's
//! `python -m nearflash._worker` for `nearflash.sweep` — and both serve with `serve` below, so
//! a row is computed by the same code in every backend.

use crate::error::SweepError;
use crate::point::Point;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Longest line either side sends: a point's JSON or a row (bytes). Points are a few hundred
/// bytes and rows a few dozen cells; 1 MiB bounds a corrupt or hostile stream.
pub const LINE_BYTES_MAX: u64 = 1 << 20;

/// A worker's answer to one point.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Row(String),
    Error(String),
}

/// How to start a worker process.
#[derive(Clone, Debug)]
pub struct WorkerCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl WorkerCommand {
    pub fn new(
        program: impl Into<OsString>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> Self {
        WorkerCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    fn describe(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub(crate) fn spawn(&self) -> Result<Worker, SweepError> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| SweepError::Io {
                what: format!("starting the sweep worker `{}`", self.describe()),
                source,
            })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Ok(Worker {
            child,
            stdin: Some(stdin),
            stdout,
        })
    }
}

/// A running worker process; killed and reaped when dropped.
pub(crate) struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    /// Runs one point on the worker: its row, the point's own error, or the worker's death
    /// (the process ended or broke the protocol) as this point's failure.
    pub(crate) fn run(&mut self, p: &Point) -> Result<String, SweepError> {
        let line = serde_json::to_string(p).expect("a point serialises");
        let sent = match self.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{line}").and_then(|()| stdin.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        let answer = match sent {
            Ok(()) => read_line(&mut self.stdout),
            Err(e) => Err(format!("could not be sent the point ({e})")),
        };
        let answer = answer.and_then(|l| match l {
            None => Err("closed its output".into()),
            Some(l) => serde_json::from_str::<Answer>(&l)
                .map_err(|e| format!("answered something that is not a row ({e})")),
        });
        match answer {
            Ok(Answer::Row(row)) => Ok(row),
            // The point's own error, as the worker's library wrote it (it names the point).
            Ok(Answer::Error(reason)) => Err(SweepError::Remote(reason)),
            Err(what) => Err(SweepError::Worker {
                point: p.hash.clone(),
                params: p.describe(),
                reason: format!("its worker process {what}; {}", self.end()),
            }),
        }
    }

    /// Ends the worker (end of input, then kill if it lingers) and says how it ended.
    fn end(&mut self) -> String {
        self.stdin = None;
        let status = match self.child.try_wait() {
            Ok(Some(s)) => Ok(s),
            _ => {
                let _ = self.child.kill();
                self.child.wait()
            }
        };
        match status {
            Ok(s) => exit_text(s),
            Err(e) => format!("its status is unknown ({e})"),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // End of input: a healthy worker exits by itself after the point it is running.
        self.stdin = None;
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn exit_text(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("it was killed by signal {sig}");
        }
    }
    match s.code() {
        Some(c) => format!("it exited with status {c}"),
        None => "it ended".into(),
    }
}

/// One line of at most `LINE_BYTES_MAX` bytes, without its newline; `None` at end of input.
fn read_line(r: &mut impl BufRead) -> Result<Option<String>, String> {
    let mut buf = Vec::new();
    let n = r
        .take(LINE_BYTES_MAX + 1)
        .read_until(b'\n', &mut buf)
        .map_err(|e| format!("could not be read ({e})"))?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') {
        return Err(if n as u64 > LINE_BYTES_MAX {
            format!("sent a line longer than {LINE_BYTES_MAX} bytes")
        } else {
            "ended in the middle of a line".into()
        });
    }
    buf.pop();
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| "sent a line that is not UTF-8".into())
}

/// The worker's side: answers each point read from `input` with its row (or its error) on
/// `output`, until end of input. A malformed line is answered with an error and the worker
/// carries on; only a broken stream ends it early.
pub fn serve(mut input: impl BufRead, mut output: impl Write) -> Result<(), SweepError> {
    let io = |what: &str| {
        let what = what.to_string();
        move |source| SweepError::Io { what, source }
    };
    loop {
        let line = match read_line(&mut input) {
            Ok(Some(l)) => l,
            Ok(None) => return Ok(()),
            Err(reason) => {
                return Err(SweepError::Io {
                    what: format!("reading points: the input {reason}"),
                    source: std::io::ErrorKind::InvalidData.into(),
                })
            }
        };
        let answer = match serde_json::from_str::<Point>(&line) {
            Ok(p) => match p.run() {
                Ok(row) => Answer::Row(row),
                Err(e) => Answer::Error(e.to_string()),
            },
            Err(e) => Answer::Error(format!("not a sweep point: {e}")),
        };
        let text = serde_json::to_string(&answer).expect("an answer serialises");
        writeln!(output, "{text}").map_err(io("writing a row"))?;
        output.flush().map_err(io("writing a row"))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_answers_each_point_and_a_bad_line_without_stopping() {
        let spec = crate::spec::Spec::parse(
            "t",
            "job = \"io\"\npreset = \"test-min\"\nmetrics = [\"iops\"]\n[fixed]\npattern = \"rand-read\"\nrequests = 50\n[grid]\nqueue_depth = [1, 2]\n",
        )
        .unwrap();
        let points = crate::point::points(&spec).unwrap();
        let mut input = String::new();
        input.push_str(&serde_json::to_string(&points[0]).unwrap());
        input.push_str("\n{not json\n");
        input.push_str(&serde_json::to_string(&points[1]).unwrap());
        input.push('\n');
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out).unwrap();
        let answers: Vec<Answer> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 3);
        assert_eq!(answers[0], Answer::Row(points[0].run().unwrap()));
        assert!(matches!(&answers[1], Answer::Error(e) if e.starts_with("not a sweep point")));
        assert_eq!(answers[2], Answer::Row(points[1].run().unwrap()));
    }

    #[test]
    fn a_line_without_end_or_beyond_the_bound_is_refused() {
        assert_eq!(
            read_line(&mut "abc".as_bytes()),
            Err("ended in the middle of a line".into())
        );
        let long = vec![b'x'; LINE_BYTES_MAX as usize + 10];
        assert!(read_line(&mut long.as_slice())
            .unwrap_err()
            .contains("longer than"));
        assert_eq!(read_line(&mut "".as_bytes()), Ok(None));
        assert_eq!(read_line(&mut "a\nb\n".as_bytes()), Ok(Some("a".into())));
    }
}
