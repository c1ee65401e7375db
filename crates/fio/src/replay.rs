//! fio's `read_iolog`: a job replays an iolog (v2 or v3, from its header) read by the one
//! iolog parser, `nearflash_iotrace::read_iolog`, as a bounded stream. The `replay_*` options
//! apply as fio's `iolog.c` applies them: `replay_scale` divides each offset, then
//! `replay_align` rounds it down to its power of two (`ipo_bytes_align`: the offset only);
//! `replay_time_scale` (percent) scales the gaps between timestamps by 100/value
//! (`delay_since_ttime`); `replay_skip` leaves out reads, writes, trims or syncs;
//! `replay_redirect` replays every file the log names onto the one simulated device (without
//! it a second file is an error naming its line). Each request then lands on the device as
//! `nearflash io --trace` places it (`Region::draw`: whole sectors, within the capacity,
//! errors naming `file:line`). How the job paces them (timed or `replay_no_stall`) is the
//! job's (`job.rs`).

use crate::error::FioError;
use crate::options::JobSpec;
use nearflash_ftl::BlockOp;
use nearflash_iobench::trace::Region;
use nearflash_iobench::workload::Draw;
use nearflash_iotrace::{read_iolog, ReadOptions, ReadSummary, TraceLimits, TraceOp};
use std::path::{Path, PathBuf};

/// fio's `replay_skip` kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    /// Syncs (`sync` and `datasync` lines, replayed as NVMe flushes).
    pub sync: bool,
}

impl Skip {
    /// fio's comma-separated list: read, write, trim, sync (and its help's "flush").
    pub fn parse(text: &str) -> Result<Skip, String> {
        let mut s = Skip::default();
        for kind in text.split(',').map(str::trim) {
            match kind {
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" | "flush" => s.sync = true,
                other => {
                    return Err(format!(
                        "'{other}' is not a kind replay_skip takes (read, write, trim, sync)"
                    ))
                }
            }
        }
        Ok(s)
    }

    fn skips(&self, op: TraceOp) -> bool {
        match op {
            TraceOp::Read => self.read,
            TraceOp::Write => self.write,
            TraceOp::Trim => self.trim,
            TraceOp::Flush => self.sync,
        }
    }
}

/// An iolog read for replay.
#[derive(Debug)]
pub struct ReplayLog {
    pub path: PathBuf,
    pub requests: Vec<Draw>,
    /// Each request's time after the first, in ns, scaled by `replay_time_scale` (all 0 in a
    /// v2 log without `wait`s).
    pub arrivals_ns: Vec<u64>,
    /// Requests left out by `replay_skip`.
    pub skipped: u64,
    /// The end of the highest request, in bytes.
    pub end_bytes: u64,
    pub summary: ReadSummary,
}

impl ReplayLog {
    pub fn reads(&self) -> bool {
        self.requests.iter().any(|d| d.op == BlockOp::Read)
    }

    /// Reads the log at `path` with `spec`'s replay options, for a device of
    /// `capacity_bytes`.
    pub fn load(path: &Path, spec: &JobSpec, capacity_bytes: u64) -> Result<ReplayLog, FioError> {
        let file = std::fs::File::open(path).map_err(|source| FioError::ReplayOpen {
            path: path.to_path_buf(),
            source,
        })?;
        let opts = ReadOptions {
            // fio: "if set to 50 it means run at 50% the original IO rate": gaps × 100/50.
            time_scale: 100.0 / f64::from(spec.replay_time_scale),
            iolog_redirect: spec.replay_redirect.is_some(),
            ..ReadOptions::default()
        };
        let trace = read_iolog(
            std::io::BufReader::new(file),
            &opts,
            &TraceLimits::default(),
        )
        .map_err(|source| FioError::ReplayTrace {
            path: path.to_path_buf(),
            source: Box::new(source),
        })?;
        let region = Region {
            span_bytes: capacity_bytes,
            capacity_bytes,
            fold: false,
        };
        let mut out = ReplayLog {
            path: path.to_path_buf(),
            requests: Vec::with_capacity(trace.requests.len()),
            arrivals_ns: Vec::with_capacity(trace.requests.len()),
            skipped: 0,
            end_bytes: 0,
            summary: trace.summary,
        };
        for mut r in trace.requests {
            if spec.replay_skip.skips(r.op) {
                out.skipped += 1;
                continue;
            }
            r.offset_bytes /= spec.replay_scale;
            if let Some(align) = spec.replay_align {
                assert!(align.is_power_of_two(), "checked with the option");
                r.offset_bytes &= !(align - 1);
            }
            let (draw, _) =
                region.draw(&r, || format!("read_iolog {}:{}", path.display(), r.line))?;
            out.end_bytes = out.end_bytes.max(draw.offset_bytes + draw.len_bytes);
            out.requests.push(draw);
            out.arrivals_ns.push(r.arrival_ns);
        }
        if out.requests.is_empty() {
            return Err(FioError::ReplaySkipsAll {
                path: path.to_path_buf(),
                skipped: out.skipped,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::tests::one;

    fn spec(text: &str) -> JobSpec {
        JobSpec::from_section(&one(text).unwrap().jobs[0]).unwrap()
    }

    /// The log `text` in a temporary file.
    fn log(text: &str) -> tempfile::TempPath {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f.into_temp_path()
    }

    const V3: &str = "fio version 3 iolog\n0 /dev/sda add\n0 /dev/sda open\n\
                      10 /dev/sda write 1052672 4096\n30 /dev/sda read 8704 4096\n\
                      35 /dev/sda trim 65536 8192\n40 /dev/sda sync 0 0\n50 /dev/sda close\n";

    #[test]
    fn scale_then_align_move_the_offsets_as_fios_iolog_c_does() {
        let f = log(V3);
        let s = spec("[j]\nreplay_scale=2\nreplay_align=4096\nread_iolog=x\n");
        let l = ReplayLog::load(&f, &s, 8 << 20).unwrap();
        let offsets: Vec<u64> = l.requests.iter().map(|d| d.offset_bytes).collect();
        // 1052672 / 2 = 526336 → 524288; 8704 / 2 = 4352 → 4096; 65536 / 2 = 32768; the
        // sync is a flush, of no range.
        assert_eq!(offsets, [524_288, 4096, 32_768, 0]);
        assert_eq!(l.requests[2].op, BlockOp::Trim);
        assert_eq!(
            (l.requests[3].op, l.requests[3].len_bytes),
            (BlockOp::Flush, 0)
        );
        assert!(l.reads());
    }

    #[test]
    fn replay_time_scale_is_a_percentage_of_the_rate_and_skip_drops_kinds() {
        let f = log(V3);
        let l = ReplayLog::load(&f, &spec("[j]\nreplay_time_scale=50\n"), 8 << 20).unwrap();
        assert_eq!(
            l.arrivals_ns,
            [0, 40_000, 50_000, 60_000],
            "half the rate: gaps doubled"
        );
        let l = ReplayLog::load(&f, &spec("[j]\nreplay_skip=read,trim\n"), 8 << 20).unwrap();
        assert_eq!((l.requests.len(), l.skipped), (2, 2));
        let l = ReplayLog::load(&f, &spec("[j]\nreplay_skip=sync\n"), 8 << 20).unwrap();
        assert_eq!((l.requests.len(), l.skipped), (3, 1));
        let e = ReplayLog::load(
            &f,
            &spec("[j]\nreplay_skip=read,write,trim,sync\n"),
            8 << 20,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("leaves none"), "{e}");
    }

    #[test]
    fn a_second_file_is_refused_with_its_line_unless_redirected() {
        let f = log("fio version 3 iolog\n0 a add\n0 b add\n1 a read 0 4096\n2 b read 4096 4096\n");
        let e = ReplayLog::load(&f, &spec("[j]\n"), 8 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("\"b\""), "{e}");
        let l = ReplayLog::load(&f, &spec("[j]\nreplay_redirect=/dev/nvme0n1\n"), 8 << 20).unwrap();
        assert_eq!(l.requests.len(), 2);
    }

    #[test]
    fn a_request_past_the_device_names_the_log_and_line() {
        let f = log("fio version 2 iolog\nd add\nd read 0 4096\nd read 9000000 4096\n");
        let e = ReplayLog::load(&f, &spec("[j]\n"), 8 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("read_iolog {}:4", f.display())) && e.contains("beyond"),
            "{e}"
        );
    }
}
