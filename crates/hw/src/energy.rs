//! Energy (seed 000 §5.3, Fig. 13): every component draws its active power while busy and
//! its idle power for the rest of the run, E = P_active × busy + P_idle × (makespan − busy),
//! with busy times measured by the run (served requests, never a formula over the
//! workload). Components are grouped as Fig. 13 does: data movement (the host and links
//! moving data between storage and the accelerator), computation (the accelerator computing:
//! LWP workers and DDR3L) and storage access (serving I/O: the SSD, the flash backbone and
//! the LWPs running Flashvisor and Storengine).

use crate::series::TimeBins;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    DataMovement,
    Computation,
    StorageAccess,
}

/// One powered component of a run and how long it was busy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComponentEnergy {
    pub category: Category,
    pub active_power_w: f64,
    pub idle_power_w: f64,
    pub busy_ns: u64,
    pub energy_j: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnergyReport {
    pub total: f64,
    pub data_movement: f64,
    pub computation: f64,
    pub storage_access: f64,
    pub per_component: BTreeMap<String, ComponentEnergy>,
}

struct Part {
    name: String,
    category: Category,
    active_w: f64,
    idle_w: f64,
    busy_ns: u64,
    /// Busy time over the run and how many identical units it sums (the backbone's dies).
    bins: TimeBins,
    units: u64,
}

/// Accumulates components, then sums them over a makespan.
#[derive(Default)]
pub struct EnergyMeter {
    parts: Vec<Part>,
}

impl EnergyMeter {
    /// A component busy `busy_ns` over the run (already averaged over its units), with its
    /// busy time over time in `bins` summed over `units` identical units.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        category: Category,
        active_w: f64,
        idle_w: f64,
        busy_ns: u64,
        (bins, units): (&TimeBins, u64),
    ) {
        assert!(units > 0, "a component has at least one unit");
        self.parts.push(Part {
            name: name.into(),
            category,
            active_w,
            idle_w,
            busy_ns,
            bins: bins.clone(),
            units,
        });
    }

    /// Power drawn by all components in each bin of the common width over `[0, span_ns)`:
    /// returns the width and one value per bin, watts.
    pub fn power_series(&self, span_ns: u64) -> (u64, Vec<f64>) {
        let bin_ns = TimeBins::common_bin_ns(self.parts.iter().map(|p| &p.bins), span_ns);
        let n = span_ns.div_ceil(bin_ns).max(1) as usize;
        let mut power = vec![0.0; n];
        for p in &self.parts {
            let busy = p.bins.rebinned(bin_ns, span_ns);
            for (b, w) in power.iter_mut().enumerate() {
                let frac = (busy[b] as f64 / (bin_ns * p.units) as f64).min(1.0);
                *w += p.idle_w + (p.active_w - p.idle_w) * frac;
            }
        }
        (bin_ns, power)
    }

    pub fn report(self, makespan_ns: u64) -> EnergyReport {
        let mut r = EnergyReport {
            total: 0.0,
            data_movement: 0.0,
            computation: 0.0,
            storage_access: 0.0,
            per_component: BTreeMap::new(),
        };
        for Part {
            name,
            category,
            active_w,
            idle_w,
            busy_ns,
            ..
        } in self.parts
        {
            assert!(
                busy_ns <= makespan_ns,
                "{name} busy {busy_ns} ns > makespan {makespan_ns} ns"
            );
            let j = (active_w * busy_ns as f64 + idle_w * (makespan_ns - busy_ns) as f64) / 1e9;
            r.total += j;
            *match category {
                Category::DataMovement => &mut r.data_movement,
                Category::Computation => &mut r.computation,
                Category::StorageAccess => &mut r.storage_access,
            } += j;
            r.per_component.insert(
                name,
                ComponentEnergy {
                    category,
                    active_power_w: active_w,
                    idle_power_w: idle_w,
                    busy_ns,
                    energy_j: j,
                },
            );
        }
        r
    }
}

/// Which field of an active/idle power pair is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blame {
    Active,
    Idle,
}

/// An active power must be positive and finite, an idle power finite, non-negative and at
/// most the active power.
pub fn power_pair(active_w: f64, idle_w: f64) -> Result<(), (Blame, String)> {
    if !(active_w.is_finite() && active_w > 0.0) {
        return Err((
            Blame::Active,
            format!("must be a positive finite power in W, got {active_w}"),
        ));
    }
    if !(idle_w.is_finite() && (0.0..=active_w).contains(&idle_w)) {
        return Err((
            Blame::Idle,
            format!(
                "must be a finite power in W between 0 and the active {active_w}, got {idle_w}"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_at_active_rest_at_idle() {
        let mut m = EnergyMeter::default();
        let mut bins = TimeBins::default();
        bins.add(
            nearflash_sim::SimTime::ZERO,
            nearflash_sim::SimTime::ZERO + nearflash_sim::SimDuration::from_ns(1_000_000_000),
        );
        m.add(
            "a",
            Category::Computation,
            2.0,
            0.5,
            1_000_000_000,
            (&bins, 1),
        );
        m.add(
            "b",
            Category::StorageAccess,
            1.0,
            0.0,
            0,
            (&TimeBins::default(), 1),
        );
        let (bin_ns, p) = m.power_series(3_000_000_000);
        assert!(bin_ns * p.len() as u64 >= 3_000_000_000);
        assert_eq!(p[0], 2.0, "busy bin draws the active power");
        assert_eq!(*p.last().unwrap(), 0.5, "idle bin draws idle power only");
        let r = m.report(3_000_000_000);
        assert!((r.computation - 3.0).abs() < 1e-12);
        assert_eq!(r.storage_access, 0.0);
        assert!((r.total - 3.0).abs() < 1e-12);
    }

    #[test]
    fn bad_powers_blame_the_right_field() {
        assert_eq!(power_pair(0.0, 0.0).unwrap_err().0, Blame::Active);
        assert_eq!(power_pair(1.0, 2.0).unwrap_err().0, Blame::Idle);
        assert!(power_pair(1.0, 1.0).is_ok());
    }
}
