//! What a reproduction may be asked for: the options common to every paper and those of one
//! paper, which are refused for the others (a flag that silently did nothing would mislead).

use crate::ReproduceError;
use nearflash_sim::Fidelity;

#[derive(Clone, Debug)]
pub struct Options {
    pub fidelity: Fidelity,
    /// The preset (default: the paper's own).
    pub preset: Option<String>,
    /// `table.field=value` overrides of the preset.
    pub overrides: Vec<String>,
    pub seed: u64,
    /// Run only these workloads (papers that have a workload list).
    pub only: Vec<String>,
    /// FlashAbacus: kernel sizes (default paper in timing fidelity, mini in functional).
    pub dataset: Option<String>,
    /// FlashAbacus functional fidelity: most data held in memory, MiB.
    pub max_functional_mib: Option<u64>,
    /// Active Flash: the foreground volume, MiB.
    pub volume_mib: Option<u64>,
    /// Active Flash: the Fig. 2 foreground throughputs, MB/s.
    pub foreground_mb_s: Vec<f64>,
    /// Active Flash: the Fig. 3 controller shares.
    pub splits: Vec<f64>,
    /// Hayagui: the genome data sets divided by this (1: full size).
    pub genome_scale: Option<u64>,
    /// Hayagui: db_bench's N (`--num`).
    pub db_num: Option<i64>,
    /// Hayagui: YCSB's record count (and operation count).
    pub ycsb_records: Option<i64>,
}

impl Options {
    /// Defaults: timing fidelity, the paper's preset, seed 1, everything.
    pub fn new(fidelity: Fidelity) -> Self {
        Options {
            fidelity,
            preset: None,
            overrides: Vec::new(),
            seed: 1,
            only: Vec::new(),
            dataset: None,
            max_functional_mib: None,
            volume_mib: None,
            foreground_mb_s: Vec::new(),
            splits: Vec::new(),
            genome_scale: None,
            db_num: None,
            ycsb_records: None,
        }
    }

    /// Every option takes effect for `paper` or is refused.
    pub fn check_for(&self, paper: &str) -> Result<(), ReproduceError> {
        let given: [(&str, &str, bool); 8] = [
            ("--dataset", "flashabacus", self.dataset.is_some()),
            (
                "--max-functional-mib",
                "flashabacus",
                self.max_functional_mib.is_some(),
            ),
            ("--volume-mib", "active-flash", self.volume_mib.is_some()),
            (
                "--foreground-mb-s",
                "active-flash",
                !self.foreground_mb_s.is_empty(),
            ),
            ("--splits", "active-flash", !self.splits.is_empty()),
            ("--genome-scale", "hayagui", self.genome_scale.is_some()),
            ("--db-num", "hayagui", self.db_num.is_some()),
            ("--ycsb-records", "hayagui", self.ycsb_records.is_some()),
        ];
        for (flag, owner, set) in given {
            if set && paper != owner {
                return Err(ReproduceError::Invalid(format!(
                    "{flag} applies to `reproduce {owner}` only, not `reproduce {paper}`"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_of_another_paper_is_refused_naming_the_flag_and_its_paper() {
        let mut o = Options::new(Fidelity::Timing);
        assert!(o.check_for("insider").is_ok());
        o.splits = vec![0.2];
        assert!(o.check_for("active-flash").is_ok());
        let e = o.check_for("flashabacus").unwrap_err().to_string();
        assert!(e.contains("--splits") && e.contains("active-flash"), "{e}");
    }
}
