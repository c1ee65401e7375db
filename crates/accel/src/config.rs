//! `AccelConfig`: the compute side of the FlashAbacus prototype (seed 000, §2.2 and Table 1)
//! — light-weight processors, DDR3L, scratchpad, the PCIe link to the host and the hardware
//! queues between workers and Flashvisor. Every field carries its unit; each default cites
//! Table 1 / §2.2 or is marked as an assumption with its reasoning. `validate` rejects
//! impossible values with an error naming the field.

use crate::cost_model::CostModel;
use crate::energy::{power_pair, Blame};
use crate::error::AccelError;
use nearflash_hw::CoreSpec;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AccelConfig {
    /// Table 1: "LWP 8 processors". LWP0 runs Flashvisor, LWP1 Storengine, the rest are
    /// workers (§3.3, §4.3).
    pub lwp_count: u32,
    /// Table 1: LWP "1GHz".
    pub lwp_clock_mhz: f64,
    /// Assumption: 1.0. The LWPs are TI C66x-class VLIW DSP cores (up to 8 instructions per
    /// cycle) but the kernels' cost model counts scalar instructions of compiled loops, and
    /// their loads stall on L2 misses to DDR3L; with no measured figure in the paper we take
    /// one instruction per cycle as the neutral value.
    pub lwp_cpi: f64,
    /// Table 1: "0.8W/core".
    pub lwp_active_power_w: f64,
    /// Assumption: 0.08 W, 10% of active: the power/sleep controller (§4) clock-gates an idle
    /// LWP, leaving mostly leakage.
    pub lwp_idle_power_w: f64,
    /// Table 1: "DDR3L, 1GB".
    pub ddr_bytes: u64,
    /// Table 1: DDR3L "6.4GB/s".
    pub ddr_bandwidth_mb_s: f64,
    /// Table 1: DDR3L "0.7W", drawn while the port transfers.
    pub ddr_power_w: f64,
    /// Assumption: 0.07 W, 10% of active: DDR3L in self refresh / power-down between
    /// transfers (the low-voltage part's standby currents are a small fraction of IDD4).
    pub ddr_idle_power_w: f64,
    /// Table 1: "Scratchpad 4MB" (holds Flashvisor's mapping table, §4.3).
    pub scratchpad_bytes: u64,
    /// Table 1: PCIe "v2.0, 2 lanes ... 1GB/s".
    pub pcie_bandwidth_mb_s: f64,
    /// Table 1: PCIe "0.17W", drawn while the link transfers.
    pub pcie_power_w: f64,
    /// Assumption: 0.017 W, 10% of active: the link idles in L0s/L1 between transfers.
    pub pcie_idle_power_w: f64,
    /// Table 1: flash backbone "11W", taken as the power with every die busy.
    pub backbone_active_power_w: f64,
    /// Assumption: 1.1 W (10%): the FPGA flash controllers and idle NAND draw standby power;
    /// in between, the backbone draws idle + (active − idle) × the fraction of dies busy.
    pub backbone_idle_power_w: f64,
    /// Assumption: 200 ns to pass one message through a hardware queue (§3.3, Fig. 2): the
    /// KeyStone-class queue manager pushes and pops a descriptor in ~100 cycles each at 1 GHz.
    pub queue_message_ns: u64,
    /// Assumption: 1000 cycles of Flashvisor's LWP per message it handles (page-group
    /// address arithmetic, a range-lock tree operation, a scheduling decision — §4.3 keeps
    /// the map in scratchpad precisely so that this stays small).
    pub flashvisor_message_cycles: u64,
    /// Assumption: 64 KiB per kernel description table (§4 "Offload": code .text, section
    /// table, heap and stack sizes; PolyBench kernels compile to a few tens of KiB).
    pub kernel_description_bytes: u64,
    /// Assumption: Flashvisor issues flash requests of at most 1 MiB (16 page groups of
    /// 64 KiB, one per die of the 16-package backbone) so a large section streams across
    /// all dies without one request hogging the FTL queue.
    pub flash_request_bytes_max: u64,
    /// Assumption: Flashvisor keeps at most 32 flash requests outstanding at the FTL (the
    /// flash controllers' command queues; the paper gives no depth). 32 requests of up to
    /// 1 MiB are 512 page groups, 16 per die of the 32-die backbone — deep enough to keep
    /// every die busy. Further requests wait in Flashvisor's per-worker queues, issued round
    /// robin across workers so that one screen's large footprint cannot starve the others.
    pub flash_queue_depth: u32,
    /// Screens per screened microblock: one per worker LWP (8 − Flashvisor − Storengine),
    /// the kernels crate's `ScreenPlan::default()`.
    pub screens_per_microblock: u32,
    /// Where a unit's instruction count comes from (`cost_model`): `counted` (default, our
    /// implementation's scalar count, every kernel at every dataset) or `table2` (seed 000
    /// Table 2's measured B/KI per kernel, spread over the units by the counted shape).
    pub cost_model: CostModel,
}

impl Default for AccelConfig {
    fn default() -> Self {
        AccelConfig {
            lwp_count: 8,
            lwp_clock_mhz: 1000.0,
            lwp_cpi: 1.0,
            lwp_active_power_w: 0.8,
            lwp_idle_power_w: 0.08,
            ddr_bytes: 1 << 30,
            ddr_bandwidth_mb_s: 6400.0,
            ddr_power_w: 0.7,
            ddr_idle_power_w: 0.07,
            scratchpad_bytes: 4 << 20,
            pcie_bandwidth_mb_s: 1000.0,
            pcie_power_w: 0.17,
            pcie_idle_power_w: 0.017,
            backbone_active_power_w: 11.0,
            backbone_idle_power_w: 1.1,
            queue_message_ns: 200,
            flashvisor_message_cycles: 1000,
            kernel_description_bytes: 64 << 10,
            flash_request_bytes_max: 1 << 20,
            flash_queue_depth: 32,
            screens_per_microblock: 6,
            cost_model: CostModel::Counted,
        }
    }
}

fn positive(field: &'static str, v: f64) -> Result<(), AccelError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(AccelError::Config {
            field,
            reason: format!("must be a positive finite number, got {v}"),
        })
    }
}

/// An active/idle power pair (see `energy::power_pair`), naming the field at fault.
fn powers(active: &'static str, idle: &'static str, a: f64, i: f64) -> Result<(), AccelError> {
    power_pair(a, i).map_err(|(blame, reason)| AccelError::Config {
        field: match blame {
            Blame::Active => active,
            Blame::Idle => idle,
        },
        reason,
    })
}

fn nonzero(field: &'static str, v: u64) -> Result<(), AccelError> {
    if v > 0 {
        Ok(())
    } else {
        Err(AccelError::Config {
            field,
            reason: "must be greater than 0".into(),
        })
    }
}

impl AccelConfig {
    /// Worker LWPs: all but Flashvisor's and Storengine's.
    pub fn worker_count(&self) -> usize {
        self.lwp_count as usize - 2
    }

    pub fn validate(&self) -> Result<(), AccelError> {
        if self.lwp_count < 3 {
            return Err(AccelError::Config {
                field: "lwp_count",
                reason: format!(
                    "needs at least 3 LWPs (Flashvisor, Storengine and one worker), got {}",
                    self.lwp_count
                ),
            });
        }
        positive("lwp_clock_mhz", self.lwp_clock_mhz)?;
        positive("lwp_cpi", self.lwp_cpi)?;
        powers(
            "lwp_active_power_w",
            "lwp_idle_power_w",
            self.lwp_active_power_w,
            self.lwp_idle_power_w,
        )?;
        nonzero("ddr_bytes", self.ddr_bytes)?;
        positive("ddr_bandwidth_mb_s", self.ddr_bandwidth_mb_s)?;
        powers(
            "ddr_power_w",
            "ddr_idle_power_w",
            self.ddr_power_w,
            self.ddr_idle_power_w,
        )?;
        nonzero("scratchpad_bytes", self.scratchpad_bytes)?;
        positive("pcie_bandwidth_mb_s", self.pcie_bandwidth_mb_s)?;
        powers(
            "pcie_power_w",
            "pcie_idle_power_w",
            self.pcie_power_w,
            self.pcie_idle_power_w,
        )?;
        powers(
            "backbone_active_power_w",
            "backbone_idle_power_w",
            self.backbone_active_power_w,
            self.backbone_idle_power_w,
        )?;
        nonzero("kernel_description_bytes", self.kernel_description_bytes)?;
        nonzero("flash_request_bytes_max", self.flash_request_bytes_max)?;
        nonzero("flash_queue_depth", u64::from(self.flash_queue_depth))?;
        if !self.flash_request_bytes_max.is_multiple_of(512) {
            return Err(AccelError::Config {
                field: "flash_request_bytes_max",
                reason: "must be a multiple of the 512-byte sector".into(),
            });
        }
        nonzero(
            "screens_per_microblock",
            u64::from(self.screens_per_microblock),
        )?;
        Ok(())
    }

    /// One LWP as a core of the shared cost model (instructions × CPI ÷ clock).
    pub fn lwp(&self) -> CoreSpec {
        CoreSpec::new(self.lwp_clock_mhz, self.lwp_cpi)
    }

    /// Nanoseconds to execute `instructions` on one LWP, rounded up.
    pub fn compute_ns(&self, instructions: u64) -> u64 {
        self.lwp().duration(instructions as f64).as_ns()
    }

    /// Nanoseconds Flashvisor's LWP spends on one message.
    pub fn flashvisor_message_ns(&self) -> u64 {
        self.compute_ns(self.flashvisor_message_cycles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_table_1_and_valid() {
        let c = AccelConfig::default();
        c.validate().unwrap();
        assert_eq!(c.lwp_count, 8);
        assert_eq!(c.worker_count(), 6);
        assert_eq!(c.compute_ns(1000), 1000);
        assert_eq!(c.ddr_bytes, 1 << 30);
    }

    #[test]
    fn bad_fields_are_named() {
        let cases: Vec<(AccelConfig, &str)> = vec![
            (
                AccelConfig {
                    lwp_count: 2,
                    ..Default::default()
                },
                "lwp_count",
            ),
            (
                AccelConfig {
                    lwp_cpi: 0.0,
                    ..Default::default()
                },
                "lwp_cpi",
            ),
            (
                AccelConfig {
                    ddr_bandwidth_mb_s: f64::NAN,
                    ..Default::default()
                },
                "ddr_bandwidth_mb_s",
            ),
            (
                AccelConfig {
                    screens_per_microblock: 0,
                    ..Default::default()
                },
                "screens_per_microblock",
            ),
            (
                AccelConfig {
                    flash_request_bytes_max: 1000,
                    ..Default::default()
                },
                "flash_request_bytes_max",
            ),
            (
                AccelConfig {
                    lwp_active_power_w: 0.0,
                    ..Default::default()
                },
                "lwp_active_power_w",
            ),
            (
                AccelConfig {
                    backbone_idle_power_w: 20.0,
                    ..Default::default()
                },
                "backbone_idle_power_w",
            ),
        ];
        for (c, field) in cases {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
    }

    #[test]
    fn the_cost_model_is_read_by_name_and_a_bad_one_is_named() {
        let c: AccelConfig = toml::from_str("cost_model = \"table2\"").unwrap();
        assert_eq!(c.cost_model, CostModel::Table2);
        assert_eq!(AccelConfig::default().cost_model, CostModel::Counted);
        let e = toml::from_str::<AccelConfig>("cost_model = \"flops\"").unwrap_err();
        assert!(e.to_string().contains("flops"), "{e}");
    }

    #[test]
    fn unknown_toml_field_is_rejected() {
        let e = toml::from_str::<AccelConfig>("lwp_cont = 8").unwrap_err();
        assert!(e.to_string().contains("lwp_cont"), "{e}");
    }
}
