//! What no single option can check: a job's values in range and fitting together, and
//! the zoned-drive options fitting the job.

use super::{JobSpec, DIRECTIONS};
use crate::error::FioError;

impl JobSpec {
    /// Checks what no single option can: values in range and fitting together.
    pub(super) fn check(&self) -> Result<(), FioError> {
        let bad = |reason: String| FioError::Job {
            job: self.name.clone(),
            reason,
        };
        let sector = nearflash_ftl::SECTOR_BYTES;
        for (d, used) in self.rw.directions().iter().enumerate() {
            if !used {
                continue;
            }
            for b in self.bs[d].sizes() {
                if b == 0 || b % sector != 0 {
                    return Err(bad(format!(
                        "{} block size {b} is not a positive multiple of {sector} bytes",
                        DIRECTIONS[d]
                    )));
                }
            }
            if let Some(a) = self.blockalign[d] {
                if a == 0 || a % sector != 0 {
                    return Err(bad(format!(
                        "blockalign {a} is not a positive multiple of {sector} bytes"
                    )));
                }
            }
        }
        if !self.seq_skip_bytes.is_multiple_of(sector) {
            return Err(bad(format!(
                "the rw offset skip {} is not a multiple of {sector} bytes",
                self.seq_skip_bytes
            )));
        }
        // Bounds that keep a job file from asking for unbounded work or memory.
        if !(1..=65_536).contains(&self.iodepth) {
            return Err(bad(format!(
                "iodepth {} must be within 1..=65536",
                self.iodepth
            )));
        }
        if !(1..=256).contains(&self.numjobs) {
            return Err(bad(format!(
                "numjobs {} must be within 1..=256",
                self.numjobs
            )));
        }
        if self.loops == 0 || self.thinktime_blocks == 0 {
            return Err(bad("loops and thinktime_blocks must be at least 1".into()));
        }
        if self.time_based && self.runtime_ns.is_none() {
            return Err(bad("time_based needs a runtime".into()));
        }
        if self.bwavgtime_ns == 0 || self.iopsavgtime_ns == 0 {
            return Err(bad("bwavgtime and iopsavgtime must be positive".into()));
        }
        if self.number_ios == Some(0) || self.io_size == Some(0) {
            return Err(bad("number_ios and io_size must be positive".into()));
        }
        self.check_zbd()
    }

    /// What `zonemode=zbd` needs of the job alone (the drive's side is `crate::zbd`'s).
    fn check_zbd(&self) -> Result<(), FioError> {
        let bad = |reason: String| FioError::Job {
            job: self.name.clone(),
            reason,
        };
        if !self.zbd {
            let set: Vec<&str> = [
                ("zonesize", self.zonesize.is_some()),
                ("max_open_zones", self.max_open_zones.is_some()),
                ("zone_reset_threshold", self.zone_reset_threshold > 0.0),
                ("zone_reset_frequency", self.zone_reset_frequency > 0.0),
                ("read_beyond_wp", self.read_beyond_wp),
            ]
            .into_iter()
            .filter_map(|(n, on)| on.then_some(n))
            .collect();
            if !set.is_empty() {
                return Err(bad(format!(
                    "{} applies to zonemode=zbd only (set zonemode=zbd)",
                    set.join(", ")
                )));
            }
            return Ok(());
        }
        let refused = [
            (
                self.rw.directions()[2],
                "rw with trims (fio turns a zbd trim into a zone reset): not modelled",
            ),
            (
                self.verify.is_some(),
                "verify: not modelled with zonemode=zbd (a reset zone loses what verify would read)",
            ),
            (
                !self.read_iolog.is_empty(),
                "read_iolog: a log's writes land at arbitrary offsets, not at write pointers",
            ),
            (
                self.fdp,
                "fdp=1: a zoned drive has no placement handles",
            ),
            (
                self.seq_skip_bytes > 0,
                "an rw offset skip: zbd writes go to the write pointer",
            ),
        ];
        match refused.iter().find(|(on, _)| *on) {
            Some((_, why)) => Err(bad(format!("zonemode=zbd with {why}"))),
            None => Ok(()),
        }
    }
}
