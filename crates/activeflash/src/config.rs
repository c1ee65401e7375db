//! The `[active_flash]` table of a preset: the SSD controller and the host CPU as compute
//! engines (clock, Dhrystone speed, active and idle power), the cost of compression per byte,
//! the FTL's own work per command, and how the offloaded compression is batched.
//!
//! Speeds are Dhrystone MIPS as in the paper (§II), so an engine's cycles per instruction
//! (CPI) is `clock_mhz / dmips`: one "instruction" is one Dhrystone (VAX) instruction. The
//! work of compression is measured once, in host cycles per byte (a cited benchmark), and
//! converted to instructions with the host's DMIPS per MHz; each engine's time then follows
//! from its own CPI and clock. This is exactly the paper's black-box assumption that the
//! controller is `s = host speed / controller speed` times slower.

use crate::error::ActiveFlashError;
use nearflash_hw::compute::CoreSpec;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ActiveFlashConfig {
    /// SSD controller clock (§II: 800 MHz ARM Cortex-A8).
    pub controller_clock_mhz: f64,
    /// SSD controller speed in Dhrystone MIPS (§II: 1600).
    pub controller_dmips: f64,
    pub controller_active_power_w: f64,
    pub controller_idle_power_w: f64,
    /// Host CPU clock (§II: 2.4 GHz Core 2 Duo).
    pub host_clock_mhz: f64,
    /// Host CPU speed in Dhrystone MIPS (§II: 7922).
    pub host_dmips: f64,
    pub host_active_power_w: f64,
    pub host_idle_power_w: f64,
    /// Host cycles to DEFLATE one input byte at `compress_level`.
    pub compress_host_cycles_per_byte: f64,
    /// DEFLATE level (0..=10, miniz_oxide's scale; 1 = fastest).
    pub compress_level: u8,
    /// Controller instructions the FTL spends on one host command (parse, translate, queue).
    pub ftl_instructions_per_command: f64,
    /// Pages compressed together as one extent.
    pub extent_pages: u32,
    /// Page operations the controller's compression task keeps in flight.
    pub controller_io_depth: u32,
    /// Page operations the host keeps in flight when it re-reads data to compress it.
    pub host_io_depth: u32,
    /// Foreground writes an open-loop host may have waiting for the controller at once: the
    /// entries of the largest NVMe I/O submission queue (CAP.MQES is 16 bits, so at most
    /// 65,536 entries; NVMe Base Specification 2.0 §3.1.4.1). An open-loop foreground that
    /// outruns the controller by more is refused as overloaded rather than queued without
    /// bound.
    #[serde(default = "foreground_waiting_max_default")]
    pub foreground_waiting_max: u32,
}

fn foreground_waiting_max_default() -> u32 {
    65_536
}

impl ActiveFlashConfig {
    pub fn validate(&self) -> Result<(), ActiveFlashError> {
        let bad =
            |field: &'static str, reason: String| Err(ActiveFlashError::Config { field, reason });
        for (field, v) in [
            ("controller_clock_mhz", self.controller_clock_mhz),
            ("controller_dmips", self.controller_dmips),
            ("host_clock_mhz", self.host_clock_mhz),
            ("host_dmips", self.host_dmips),
            (
                "compress_host_cycles_per_byte",
                self.compress_host_cycles_per_byte,
            ),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(field, format!("must be a positive number, got {v}"));
            }
        }
        for (field, v) in [
            ("controller_idle_power_w", self.controller_idle_power_w),
            ("host_idle_power_w", self.host_idle_power_w),
            (
                "ftl_instructions_per_command",
                self.ftl_instructions_per_command,
            ),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(field, format!("must be a non-negative number, got {v}"));
            }
        }
        for (field, active, idle) in [
            (
                "controller_active_power_w",
                self.controller_active_power_w,
                self.controller_idle_power_w,
            ),
            (
                "host_active_power_w",
                self.host_active_power_w,
                self.host_idle_power_w,
            ),
        ] {
            if !(active.is_finite() && active > idle) {
                return bad(
                    field,
                    format!("must exceed the idle power ({idle} W), got {active}"),
                );
            }
        }
        if self.compress_level > 10 {
            return bad(
                "compress_level",
                format!("must be 0..=10, got {}", self.compress_level),
            );
        }
        for (field, v) in [
            ("extent_pages", self.extent_pages),
            ("controller_io_depth", self.controller_io_depth),
            ("host_io_depth", self.host_io_depth),
            ("foreground_waiting_max", self.foreground_waiting_max),
        ] {
            if v == 0 {
                return bad(field, "must be greater than zero".into());
            }
        }
        if self.extent_pages > 1024 {
            return bad(
                "extent_pages",
                format!("at most 1024, got {}", self.extent_pages),
            );
        }
        Ok(())
    }

    /// s: how many times slower the controller computes than the host.
    pub fn speed_ratio(&self) -> f64 {
        self.host_dmips / self.controller_dmips
    }

    /// p: the controller's active-minus-idle power over the host's.
    pub fn power_ratio(&self) -> f64 {
        (self.controller_active_power_w - self.controller_idle_power_w)
            / (self.host_active_power_w - self.host_idle_power_w)
    }

    /// Dhrystone instructions to compress one byte: host cycles per byte × host DMIPS/MHz.
    pub fn compress_instructions_per_byte(&self) -> f64 {
        self.compress_host_cycles_per_byte * self.host_dmips / self.host_clock_mhz
    }

    pub fn controller(&self) -> EngineSpec {
        EngineSpec {
            clock_mhz: self.controller_clock_mhz,
            dmips: self.controller_dmips,
            active_power_w: self.controller_active_power_w,
            idle_power_w: self.controller_idle_power_w,
        }
    }

    pub fn host(&self) -> EngineSpec {
        EngineSpec {
            clock_mhz: self.host_clock_mhz,
            dmips: self.host_dmips,
            active_power_w: self.host_active_power_w,
            idle_power_w: self.host_idle_power_w,
        }
    }
}

/// One compute engine's speed and power.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineSpec {
    pub clock_mhz: f64,
    pub dmips: f64,
    pub active_power_w: f64,
    pub idle_power_w: f64,
}

impl EngineSpec {
    /// Cycles per (Dhrystone) instruction.
    pub fn cpi(&self) -> f64 {
        self.clock_mhz / self.dmips
    }

    /// The engine as a core of the shared cost model.
    pub fn core(&self) -> CoreSpec {
        CoreSpec::new(self.clock_mhz, self.cpi())
    }

    /// Nanoseconds to execute `instructions`: instructions × CPI ÷ clock.
    pub fn time_ns(&self, instructions: f64) -> f64 {
        self.core().time_ns(instructions)
    }

    /// Bytes per second this engine compresses at `instructions_per_byte`.
    pub fn rate_bytes_per_s(&self, instructions_per_byte: f64) -> f64 {
        1e9 / self.time_ns(instructions_per_byte)
    }

    pub fn delta_power_w(&self) -> f64 {
        self.active_power_w - self.idle_power_w
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The seed's parameters (see configs/active-flash.toml for each source).
    pub fn seed_config() -> ActiveFlashConfig {
        ActiveFlashConfig {
            controller_clock_mhz: 800.0,
            controller_dmips: 1600.0,
            controller_active_power_w: 0.3,
            controller_idle_power_w: 0.03,
            host_clock_mhz: 2400.0,
            host_dmips: 7922.0,
            host_active_power_w: 65.0,
            host_idle_power_w: 22.0,
            compress_host_cycles_per_byte: 32.2,
            compress_level: 1,
            ftl_instructions_per_command: 4000.0,
            extent_pages: 16,
            controller_io_depth: 1,
            host_io_depth: 32,
            foreground_waiting_max: foreground_waiting_max_default(),
        }
    }

    #[test]
    fn cpi_and_rates_follow_from_clock_and_dmips() {
        let c = seed_config();
        assert!((c.controller().cpi() - 0.5).abs() < 1e-12);
        assert!((c.speed_ratio() - 4.95125).abs() < 1e-9);
        // Host: 32.2 cycles/B at 2.4 GHz = 74.5 MB/s; the controller is s times slower.
        let ipb = c.compress_instructions_per_byte();
        let host = c.host().rate_bytes_per_s(ipb);
        assert!((host / 1e6 - 2400.0 / 32.2).abs() < 1e-6, "{host}");
        let ctrl = c.controller().rate_bytes_per_s(ipb);
        assert!((host / ctrl - c.speed_ratio()).abs() < 1e-9);
    }

    #[test]
    fn a_zero_foreground_queue_is_refused_naming_the_field() {
        let mut c = seed_config();
        c.foreground_waiting_max = 0;
        let e = c.validate().unwrap_err();
        assert!(e.to_string().contains("foreground_waiting_max"), "{e}");
    }

    #[test]
    fn zero_controller_clock_is_named() {
        let mut c = seed_config();
        c.controller_clock_mhz = 0.0;
        let e = c.validate().unwrap_err();
        assert!(e.to_string().contains("controller_clock_mhz"), "{e}");
    }

    #[test]
    fn active_power_below_idle_is_named() {
        let mut c = seed_config();
        c.host_active_power_w = 10.0;
        let e = c.validate().unwrap_err();
        assert!(e.to_string().contains("host_active_power_w"), "{e}");
    }
}
