//! Energy (seed 000 §5.3, Fig. 13): every component draws its active power while busy and
//! its idle power for the rest of the run, E = P_active × busy + P_idle × (makespan − busy),
//! with busy times measured by the run (served requests, never a formula over the
//! workload). Components are grouped as Fig. 13 does: data movement (the host and links
//! moving data between storage and the accelerator), computation (the accelerator computing:
//! LWP workers and DDR3L) and storage access (serving I/O: the SSD, the flash backbone and
//! the LWPs running Flashvisor and Storengine).

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

/// Accumulates components, then sums them over a makespan.
#[derive(Default)]
pub struct EnergyMeter {
    parts: Vec<(String, Category, f64, f64, u64)>,
}

impl EnergyMeter {
    pub fn add(
        &mut self,
        name: impl Into<String>,
        c: Category,
        active_w: f64,
        idle_w: f64,
        busy_ns: u64,
    ) {
        self.parts.push((name.into(), c, active_w, idle_w, busy_ns));
    }

    pub fn report(self, makespan_ns: u64) -> EnergyReport {
        let mut r = EnergyReport {
            total: 0.0,
            data_movement: 0.0,
            computation: 0.0,
            storage_access: 0.0,
            per_component: BTreeMap::new(),
        };
        for (name, category, active_w, idle_w, busy_ns) in self.parts {
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
        m.add("a", Category::Computation, 2.0, 0.5, 1_000_000_000);
        m.add("b", Category::StorageAccess, 1.0, 0.0, 0);
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
