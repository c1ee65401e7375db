//! One option applied to a job: its value read (sizes, times, flags, per-direction lists)
//! and set on the job, by concept — the pattern, the region, timing, randomness,
//! durability, reporting, I/O logs and placement. A bad value is an error naming the
//! option and its line.

use super::table::Status::{Ignored, Supported, Unsupported};
use super::table::{canonical, find, FDP_PLI_MAX};
use super::{BlockSizes, Distribution, JobSpec, Rw, VerifyKind};
use crate::error::FioError;
use crate::jobfile::Entry;
use crate::value::{self, TimeUnit};

impl JobSpec {
    /// Applies one option: refuses what nearflash does not model, records what it ignores,
    /// and hands a supported option's value to the setter of its concept.
    pub(super) fn apply(&mut self, e: &Entry) -> Result<(), FioError> {
        let def = find(&e.key).ok_or_else(|| FioError::Unknown {
            at: e.at.clone(),
            option: e.key.clone(),
        })?;
        match def.status {
            Unsupported(reason) => {
                return Err(FioError::Unsupported {
                    at: e.at.clone(),
                    option: e.key.clone(),
                    reason,
                })
            }
            Ignored => {
                if !self.ignored.iter().any(|(k, _)| *k == e.key) {
                    self.ignored.push((e.key.clone(), e.at.clone()));
                }
                return Ok(());
            }
            Supported => {}
        }
        let text: &str = match (&e.value, takes_bare_flag(def.names[0])) {
            (Some(v), _) => v,
            (None, true) => "1",
            (None, false) => {
                return Err(FioError::Value {
                    at: e.at.clone(),
                    option: e.key.clone(),
                    reason: "needs a value (key=value)".into(),
                })
            }
        };
        let arg = Arg {
            entry: e,
            text,
            kb_base: self.kb_base,
        };
        let name = canonical(&e.key).expect("found above");
        let handled = self.set_pattern(name, &arg)?
            || self.set_region(name, &arg)?
            || self.set_timing(name, &arg)?
            || self.set_randomness(name, &arg)?
            || self.set_durability(name, &arg)?
            || self.set_reporting(name, &arg)?
            || self.set_iolog(name, &arg)?
            || self.set_placement(name, &arg)?;
        if !handled {
            unreachable!("supported option {name} without a handler");
        }
        Ok(())
    }

    /// Sets what the job issues: its name, direction mix, block sizes and queue depth.
    fn set_pattern(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let (v, kb) = (a.text, a.kb_base);
        match name {
            "name" => self.name = v.to_string(),
            "description" => self.description = Some(v.to_string()),
            "rw" => {
                let (mode, skip) = match v.split_once(':') {
                    Some((m, s)) => (m, value::size(s, kb).map_err(|r| a.bad(r))?),
                    None => (v, 0),
                };
                self.rw = Rw::parse(mode).ok_or_else(|| {
                    a.bad(format!(
                        "'{mode}' is not a mode nearflash runs (read, write, trim, randread, \
                         randwrite, randtrim, rw, readwrite, randrw)"
                    ))
                })?;
                self.seq_skip_bytes = skip;
            }
            "rwmixread" | "rwmixwrite" => {
                let p = a.num32()?;
                if p > 100 {
                    return Err(a.bad(format!("{p} is not a percentage")));
                }
                self.rwmixread = if a.entry.key == "rwmixread" {
                    p
                } else {
                    100 - p
                };
            }
            "bs" => {
                self.bs = value::per_direction(v, self.bs.clone(), |f| {
                    value::size(f, kb).map(BlockSizes::Fixed)
                })
                .map_err(|r| a.bad(r))?
            }
            "bsrange" => {
                self.bs = value::per_direction(v, self.bs.clone(), |f| {
                    value::size_range(f, kb).map(|(min, max)| BlockSizes::Range(min, max))
                })
                .map_err(|r| a.bad(r))?
            }
            "bssplit" => {
                self.bs = value::per_direction(v, self.bs.clone(), |f| {
                    value::block_split(f, kb).map(BlockSizes::Split)
                })
                .map_err(|r| a.bad(r))?
            }
            "blockalign" => {
                self.blockalign =
                    value::per_direction(v, self.blockalign, |f| value::size(f, kb).map(Some))
                        .map_err(|r| a.bad(r))?
            }
            "iodepth" => self.iodepth = a.num32()?,
            "numjobs" => self.numjobs = a.num32()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets where and how much the job reads and writes: size, offsets, I/O counts, loops.
    fn set_region(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let (v, kb) = (a.text, a.kb_base);
        match name {
            "size" => self.size = Some(value::size_or_share(v, kb).map_err(|r| a.bad(r))?),
            "offset" => self.offset = value::size_or_share(v, kb).map_err(|r| a.bad(r))?,
            "offset_increment" => self.offset_increment = a.size()?,
            "io_size" => self.io_size = Some(a.size()?),
            "number_ios" => self.number_ios = Some(a.num()?),
            "loops" => self.loops = a.num32()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets when the job runs and how fast: runtime, delays, think time and rate limits.
    fn set_timing(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let (v, kb) = (a.text, a.kb_base);
        match name {
            "runtime" => self.runtime_ns = Some(a.time(TimeUnit::S)?),
            "time_based" => self.time_based = a.flag()?,
            "ramp_time" => self.ramp_time_ns = a.time(TimeUnit::S)?,
            "startdelay" => self.startdelay_ns = a.time(TimeUnit::S)?,
            "thinktime" => self.thinktime_ns = a.time(TimeUnit::Us)?,
            "thinktime_blocks" => self.thinktime_blocks = a.num32()?,
            "rate" => {
                self.rate_bytes_s =
                    value::per_direction(v, self.rate_bytes_s, |f| value::size(f, kb).map(Some))
                        .map_err(|r| a.bad(r))?
            }
            "rate_iops" => {
                self.rate_iops =
                    value::per_direction(v, self.rate_iops, |f| value::integer(f).map(Some))
                        .map_err(|r| a.bad(r))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets how offsets are drawn: seeds, distribution, share of random requests.
    fn set_randomness(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "randrepeat" => self.randrepeat = a.flag()?,
            "randseed" => self.randseed = Some(a.num()?),
            "random_distribution" => self.distribution = distribution(v).map_err(|r| a.bad(r))?,
            "percentage_random" => {
                self.percentage_random =
                    value::per_direction(v, self.percentage_random, |f| match value::integer(f)? {
                        p @ 0..=100 => Ok(p as u32),
                        p => Err(format!("{p} is not a percentage")),
                    })
                    .map_err(|r| a.bad(r))?
            }
            "norandommap" => self.norandommap = a.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets what makes data durable and checked: flushes, direct and synchronous writes,
    /// verification.
    fn set_durability(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "fsync" | "fdatasync" => self.fsync_every = a.num32()?,
            "end_fsync" => self.end_fsync = a.flag()?,
            "direct" => self.direct = a.flag()?,
            "buffered" => self.direct = !a.flag()?,
            "sync" => {
                self.sync = match v {
                    "sync" | "dsync" => true,
                    "none" => false,
                    _ => a.flag()?,
                }
            }
            "verify" => {
                self.verify = match v {
                    "crc32c" | "crc32c-intel" => Some(VerifyKind::Crc32c),
                    "md5" => Some(VerifyKind::Md5),
                    "0" | "null" => None,
                    other => {
                        return Err(a.bad(format!(
                            "verify method '{other}' is not supported (crc32c, crc32c-intel, \
                             md5, null)"
                        )))
                    }
                }
            }
            "do_verify" => self.do_verify = a.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets how results are grouped and reported: stonewalls, groups, averaging windows,
    /// the size base.
    fn set_reporting(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        match name {
            "stonewall" => self.stonewall = a.flag()?,
            "group_reporting" => self.group_reporting = a.flag()?,
            "bwavgtime" => self.bwavgtime_ns = a.time(TimeUnit::Ms)?,
            "iopsavgtime" => self.iopsavgtime_ns = a.time(TimeUnit::Ms)?,
            "kb_base" => {
                self.kb_base = match a.num()? {
                    b @ (1000 | 1024) => b,
                    b => return Err(a.bad(format!("{b}: kb_base is 1000 or 1024"))),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets the I/O logs the job writes or replays, and how a replay is scaled and aimed.
    fn set_iolog(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "write_iolog" => self.write_iolog = Some(v.to_string()),
            "read_iolog" => {
                // fio splits the list on ':' (a '\:' escapes one in a name).
                self.read_iolog = split_names(v);
                if self.read_iolog.iter().any(|f| f.is_empty() || f == "-") {
                    return Err(
                        a.bad("an empty name or '-' (stdin) is not a log nearflash reads".into())
                    );
                }
            }
            "replay_no_stall" => self.replay_no_stall = a.flag()?,
            "replay_time_scale" => {
                self.replay_time_scale = a.num32()?;
                if self.replay_time_scale == 0 {
                    return Err(a.bad("replay_time_scale is a percentage of at least 1".into()));
                }
            }
            "replay_redirect" => self.replay_redirect = Some(v.to_string()),
            "replay_align" => {
                let align = a.size()?;
                if !align.is_power_of_two() {
                    return Err(a.bad(format!("{align} is not a power of two")));
                }
                self.replay_align = Some(align);
            }
            "replay_scale" => {
                self.replay_scale = a.num()?;
                if self.replay_scale == 0 {
                    return Err(a.bad("replay_scale divides offsets: at least 1".into()));
                }
            }
            "replay_skip" => {
                self.replay_skip = crate::replay::Skip::parse(v).map_err(|r| a.bad(r))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets where writes land on the drive: FDP placement IDs and the zoned-drive options.
    fn set_placement(&mut self, name: &str, a: &Arg) -> Result<bool, FioError> {
        let v = a.text;
        match name {
            "fdp" => self.fdp = a.flag()?,
            "fdp_pli" => self.fdp_pli = fdp_placement_ids(a)?,
            "fdp_pli_select" => {
                self.fdp_pli_random = match v {
                    "roundrobin" => false,
                    "random" => true,
                    other => {
                        return Err(a.bad(format!(
                            "'{other}' is not a selection nearflash runs (roundrobin, random)"
                        )))
                    }
                }
            }
            "zonemode" => {
                self.zbd = match v {
                    "none" => false,
                    "zbd" => true,
                    other => {
                        return Err(a.bad(format!(
                            "'{other}' is not a zone mode nearflash runs (none, zbd)"
                        )))
                    }
                }
            }
            "zonesize" => {
                let z = a.size()?;
                if z == 0 {
                    return Err(a.bad("a zone size must be positive".into()));
                }
                self.zonesize = Some(z);
            }
            "max_open_zones" => self.max_open_zones = Some(a.num32()?),
            "zone_reset_threshold" | "zone_reset_frequency" => {
                let f: f64 = v
                    .parse()
                    .map_err(|_| a.bad(format!("'{v}' is not a number")))?;
                if !(0.0..=1.0).contains(&f) {
                    return Err(a.bad(format!("{f} must lie within 0..=1")));
                }
                if a.entry.key == "zone_reset_threshold" {
                    self.zone_reset_threshold = f;
                } else {
                    self.zone_reset_frequency = f;
                }
            }
            "read_beyond_wp" => self.read_beyond_wp = a.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// fio's list of names: split on ':' except where a backslash escapes it (HOWTO, `filename`).
fn split_names(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("one name").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one name").push(c),
        }
    }
    out
}

pub(super) fn distribution(text: &str) -> Result<Distribution, String> {
    let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
    let float = |what: &str| -> Result<f64, String> {
        arg.parse::<f64>()
            .map_err(|_| format!("{kind} needs a number ({what}), got '{arg}'"))
    };
    Ok(match kind {
        "random" => Distribution::Uniform,
        "zipf" => {
            let t = float("theta")?;
            // fio: theta must differ from 1 (the generator divides by 1 − θ).
            if t.is_nan() || t <= 0.0 || t == 1.0 {
                return Err(format!("zipf theta {t} must be positive and not 1"));
            }
            Distribution::Zipf(t)
        }
        "pareto" => {
            let h = float("h")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto h {h} must lie within (0, 1)"));
            }
            Distribution::Pareto(h)
        }
        "normal" => {
            let s = float("standard deviation, %")?;
            if !(s > 0.0 && s <= 100.0) {
                return Err(format!("normal deviation {s}% must lie within (0, 100]"));
            }
            Distribution::Normal(s)
        }
        "zoned" => {
            let mut zones = Vec::new();
            for z in arg.split(':') {
                let (a, r) = z
                    .split_once('/')
                    .ok_or_else(|| format!("zone '{z}' is not access%/region%"))?;
                let p = |t: &str| {
                    t.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("'{t}' in zone '{z}'"))
                };
                zones.push((p(a)?, p(r)?));
            }
            let (acc, reg): (u32, u32) =
                zones.iter().fold((0, 0), |(a, r), &(x, y)| (a + x, r + y));
            if acc != 100 || reg != 100 {
                return Err(format!(
                    "zoned: accesses add up to {acc}% and regions to {reg}%; both must be 100"
                ));
            }
            Distribution::Zoned(zones)
        }
        other => {
            return Err(format!(
                "'{other}' is not a distribution nearflash draws (random, zipf, pareto, normal, \
                 zoned)"
            ))
        }
    })
}

/// Whether the option may stand bare (`direct` alone reads as `direct=1`).
fn takes_bare_flag(name: &str) -> bool {
    matches!(
        name,
        "time_based"
            | "randrepeat"
            | "norandommap"
            | "direct"
            | "buffered"
            | "sync"
            | "stonewall"
            | "group_reporting"
            | "end_fsync"
            | "do_verify"
            | "replay_no_stall"
            | "fdp"
            | "read_beyond_wp"
    )
}

/// One supported option's value as written, with what reading it needs.
struct Arg<'a> {
    /// The option as written (an alias keeps its own name) and where it stands.
    entry: &'a Entry,
    /// The value; `1` for a flag standing bare.
    text: &'a str,
    /// The job's `kb_base` when the option is read.
    kb_base: u64,
}

impl Arg<'_> {
    /// The error naming the option and its line, with why its value is refused.
    fn bad(&self, reason: String) -> FioError {
        FioError::Value {
            at: self.entry.at.clone(),
            option: self.entry.key.clone(),
            reason,
        }
    }

    /// The value read as a size in bytes.
    fn size(&self) -> Result<u64, FioError> {
        value::size(self.text, self.kb_base).map_err(|r| self.bad(r))
    }

    /// The value read as an integer.
    fn num(&self) -> Result<u64, FioError> {
        value::integer(self.text).map_err(|r| self.bad(r))
    }

    /// The value read as an integer that fits 32 bits.
    fn num32(&self) -> Result<u32, FioError> {
        let n = self.num()?;
        u32::try_from(n).map_err(|_| self.bad(format!("{n} is too large")))
    }

    /// The value read as a boolean.
    fn flag(&self) -> Result<bool, FioError> {
        value::boolean(Some(self.text)).map_err(|r| self.bad(r))
    }

    /// The value read as a time in nanoseconds, `unit` when it names none.
    fn time(&self, unit: TimeUnit) -> Result<u64, FioError> {
        value::time_ns(self.text, unit).map_err(|r| self.bad(r))
    }
}

/// `fdp_pli`'s comma-separated placement ID indices, at most `FDP_PLI_MAX` of them.
fn fdp_placement_ids(a: &Arg) -> Result<Vec<u16>, FioError> {
    let ids = a
        .text
        .split(',')
        .map(|t| {
            let n = value::integer(t.trim()).map_err(|r| a.bad(r))?;
            u16::try_from(n).map_err(|_| a.bad(format!("{n} is not a placement ID index")))
        })
        .collect::<Result<Vec<u16>, FioError>>()?;
    if ids.len() > FDP_PLI_MAX {
        return Err(a.bad(format!(
            "{} indices: fio takes at most {FDP_PLI_MAX}",
            ids.len()
        )));
    }
    Ok(ids)
}
