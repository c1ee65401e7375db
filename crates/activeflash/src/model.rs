//! The paper's analytic model (§II), treating the SSD as a black box:
//!
//! - `x`: host CPU utilization of the baseline (all computation on the host), in [0, 1];
//! - `s` = host speed / controller speed, `p` = Δpower(controller) / Δpower(host), where
//!   Δpower = active − idle power;
//! - `c(x)` = 1 for x < 1/s, else 1/(s·x): the fraction of the computation the controller
//!   takes when it runs at 100% beside the host;
//! - `ΔE(x)` = (1 − s·p)·c(x): the energy saved, as a fraction of the baseline's computation
//!   energy;
//! - `S(x)` = s·c(x): the slowdown, as the paper defines it.
//!
//! Data transfer is ignored, as in the paper; the simulations (`background`, `split`) put it
//! back and are compared with this model in the report.

use crate::error::ActiveFlashError;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Model {
    /// Host speed / controller speed.
    pub s: f64,
    /// Controller Δpower / host Δpower.
    pub p: f64,
}

/// One row of the model's table (Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelPoint {
    pub host_utilization: f64,
    pub offloaded_fraction: f64,
    pub energy_saving: f64,
    pub slowdown: f64,
}

impl Model {
    pub fn new(s: f64, p: f64) -> Result<Model, ActiveFlashError> {
        if !(s.is_finite() && s > 0.0) {
            return Err(ActiveFlashError::NotPositive {
                what: "speed ratio s",
                value: s,
            });
        }
        if !(p.is_finite() && p > 0.0) {
            return Err(ActiveFlashError::NotPositive {
                what: "power ratio p",
                value: p,
            });
        }
        Ok(Model { s, p })
    }

    pub fn from_config(c: &crate::ActiveFlashConfig) -> Result<Model, ActiveFlashError> {
        c.validate()?;
        Model::new(c.speed_ratio(), c.power_ratio())
    }

    fn check(x: f64) -> Result<(), ActiveFlashError> {
        if (0.0..=1.0).contains(&x) {
            Ok(())
        } else {
            Err(ActiveFlashError::OutOfUnitRange {
                what: "host utilization x",
                value: x,
            })
        }
    }

    /// c(x): the fraction of the computation moved to the controller.
    pub fn offloaded_fraction(&self, x: f64) -> Result<f64, ActiveFlashError> {
        Self::check(x)?;
        Ok(if x < 1.0 / self.s {
            1.0
        } else {
            1.0 / (self.s * x)
        })
    }

    /// ΔE(x) = (1 − s·p)·c(x).
    pub fn energy_saving(&self, x: f64) -> Result<f64, ActiveFlashError> {
        Ok((1.0 - self.s * self.p) * self.offloaded_fraction(x)?)
    }

    /// S(x) = s·c(x).
    pub fn slowdown(&self, x: f64) -> Result<f64, ActiveFlashError> {
        Ok(self.s * self.offloaded_fraction(x)?)
    }

    pub fn point(&self, x: f64) -> Result<ModelPoint, ActiveFlashError> {
        Ok(ModelPoint {
            host_utilization: x,
            offloaded_fraction: self.offloaded_fraction(x)?,
            energy_saving: self.energy_saving(x)?,
            slowdown: self.slowdown(x)?,
        })
    }

    /// Fig. 1: the model at `steps + 1` evenly spaced utilizations from 0 to 1, plus the
    /// breakpoint x = 1/s when it falls inside.
    pub fn curve(&self, steps: u32) -> Vec<ModelPoint> {
        assert!(steps > 0);
        let mut xs: Vec<f64> = (0..=steps)
            .map(|i| f64::from(i) / f64::from(steps))
            .collect();
        let knee = 1.0 / self.s;
        if knee < 1.0 && !xs.iter().any(|&x| (x - knee).abs() < 1e-12) {
            xs.push(knee);
            xs.sort_by(f64::total_cmp);
        }
        xs.into_iter()
            .map(|x| self.point(x).expect("x in [0, 1]"))
            .collect()
    }

    /// The controller's share of a split job (Fig. 3) at which host and controller finish
    /// together, when computation is the bottleneck: 1 / (1 + s).
    pub fn balanced_split(&self) -> f64 {
        1.0 / (1.0 + self.s)
    }

    /// Throughput of a split job relative to the host alone, computation only: the slower
    /// of the two sides sets the time.
    pub fn split_speedup(&self, controller_share: f64) -> Result<f64, ActiveFlashError> {
        if !(0.0..=1.0).contains(&controller_share) {
            return Err(ActiveFlashError::OutOfUnitRange {
                what: "controller share",
                value: controller_share,
            });
        }
        let host_time = 1.0 - controller_share;
        let ctrl_time = controller_share * self.s;
        Ok(1.0 / host_time.max(ctrl_time))
    }

    /// Energy of a split job relative to the host alone (Δpower only): the host's share
    /// costs 1 per unit, the controller's s·p.
    pub fn split_energy(&self, controller_share: f64) -> Result<f64, ActiveFlashError> {
        self.split_speedup(controller_share)?;
        Ok(1.0 - controller_share + controller_share * self.s * self.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> Model {
        let c = crate::config::tests::seed_config();
        Model::from_config(&c).unwrap()
    }

    #[test]
    fn breakpoint_at_one_over_s_is_where_the_controller_saturates() {
        let m = seed();
        let knee = 1.0 / m.s;
        assert_eq!(m.offloaded_fraction(knee * 0.999).unwrap(), 1.0);
        // At x = 1/s both branches agree: c = 1/(s · 1/s) = 1.
        assert!((m.offloaded_fraction(knee).unwrap() - 1.0).abs() < 1e-12);
        assert!((m.slowdown(knee).unwrap() - m.s).abs() < 1e-12);
    }

    #[test]
    fn at_full_host_utilization_the_controller_takes_one_over_s() {
        let m = seed();
        assert!((m.offloaded_fraction(1.0).unwrap() - 1.0 / m.s).abs() < 1e-12);
        assert!((m.slowdown(1.0).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn seed_parameters_match_a_hand_computation() {
        // s = 7922 / 1600 = 4.95125; p = (0.3 − 0.03) / (65 − 22) = 0.27 / 43 = 0.0062791.
        let m = seed();
        assert!((m.s - 4.95125).abs() < 1e-9);
        assert!((m.p - 0.27 / 43.0).abs() < 1e-12);
        // 1 − s·p = 1 − 4.95125 × 0.0062791 = 0.968911.
        let e0 = m.energy_saving(0.1).unwrap();
        assert!((e0 - 0.968911).abs() < 1e-6, "{e0}");
        // x = 0.6: c = 1 / (4.95125 × 0.6) = 0.336616; ΔE = 0.968911 × 0.336616 = 0.326151;
        // S = 4.95125 × 0.336616 = 1.666667.
        assert!((m.offloaded_fraction(0.6).unwrap() - 0.336616).abs() < 1e-6);
        assert!((m.energy_saving(0.6).unwrap() - 0.326151).abs() < 1e-6);
        assert!((m.slowdown(0.6).unwrap() - 1.0 / 0.6).abs() < 1e-9);
        // x = 1: ΔE = 0.968911 / 4.95125 = 0.195690.
        assert!((m.energy_saving(1.0).unwrap() - 0.195690).abs() < 1e-6);
    }

    #[test]
    fn utilization_outside_unit_range_is_an_error() {
        let m = seed();
        for x in [-0.1, 1.5, f64::NAN] {
            assert!(matches!(
                m.energy_saving(x),
                Err(ActiveFlashError::OutOfUnitRange { .. })
            ));
        }
        assert!(m.split_speedup(1.2).is_err());
    }

    #[test]
    fn split_balances_at_one_over_one_plus_s() {
        let m = seed();
        let q = m.balanced_split();
        let best = m.split_speedup(q).unwrap();
        for share in [0.0, 0.1, 0.3, 0.5, 1.0] {
            assert!(m.split_speedup(share).unwrap() <= best + 1e-12);
        }
        assert!((best - (1.0 + 1.0 / m.s)).abs() < 1e-9);
        assert!(m.split_energy(1.0).unwrap() < m.split_energy(0.0).unwrap());
    }

    #[test]
    fn curve_includes_the_knee() {
        let m = seed();
        let c = m.curve(20);
        assert!(c
            .iter()
            .any(|p| (p.host_utilization - 1.0 / m.s).abs() < 1e-12));
        assert_eq!(c.len(), 22);
    }

    #[test]
    fn non_positive_ratios_are_errors() {
        assert!(Model::new(0.0, 0.1).is_err());
        assert!(Model::new(2.0, -1.0).is_err());
    }
}
