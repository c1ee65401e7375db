//! §5.3: programs whose processing rates are throttled below the drive's bandwidth run
//! together; the credit-based scheduler should serve each in full while the drive can and
//! share it fairly when it cannot. The host only calls the API (no host computation): one
//! process per program, each on its own core, keeps one `vread` in flight on its virtual
//! file (the runtime's non-blocking core: `Call::ProcessVread`) and issues the next when it
//! ends, so the measured rates are the drive side's.
//!
//! Programs join one after another, so the run passes through phases with different sets of
//! active programs; in each phase the measured rates are compared with the max-min fair
//! shares of the drive's bandwidth given the programs' demands.

use crate::config::InsiderConfig;
use crate::error::InsiderError;
use crate::probe::CounterProbe;
use crate::runtime::{Call, MachineSpec, OpId, Output, ProgramSpec, Runtime};
use crate::stream::Direction;
use nearflash_host::HostConfig;
use nearflash_sim::SimDuration;
use nearflash_stream::WorkCost;
use std::collections::BTreeMap;

/// One program of the experiment.
#[derive(Clone, Debug)]
pub struct Contender {
    pub name: String,
    pub cost: WorkCost,
    pub output_per_input: f64,
    /// The throttle (§5.3: "BW stat = 12 GB/s, BW SQL = 6.4 GB/s, BW PT = 8 GB/s").
    pub demand_mb_s: f64,
    pub start_ms: f64,
}

/// A program's processing rate over time.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub demand_mb_s: f64,
    /// (bin start, ms; MB/s of input processed in the bin).
    pub points: Vec<(f64, f64)>,
}

/// One interval with a fixed set of active programs.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub start_ms: f64,
    pub end_ms: f64,
    /// Per program (0 when not active): measured mean rate and max-min fair share, MB/s.
    pub measured_mb_s: Vec<f64>,
    pub fair_mb_s: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FairnessResult {
    pub drive_mb_s: f64,
    pub series: Vec<Series>,
    pub phases: Vec<Phase>,
}

impl FairnessResult {
    /// Largest |measured − fair| ÷ fair over the active programs of every phase.
    pub fn worst_deviation(&self) -> f64 {
        self.phases
            .iter()
            .flat_map(|p| p.measured_mb_s.iter().zip(&p.fair_mb_s))
            .filter(|(_, &f)| f > 0.0)
            .map(|(&m, &f)| (m - f).abs() / f)
            .fold(0.0, f64::max)
    }

    /// Smallest measured rate of an active program in any phase (0 would be starvation).
    pub fn min_active_mb_s(&self) -> f64 {
        self.phases
            .iter()
            .flat_map(|p| p.measured_mb_s.iter().zip(&p.fair_mb_s))
            .filter(|(_, &f)| f > 0.0)
            .map(|(&m, _)| m)
            .fold(f64::INFINITY, f64::min)
    }
}

/// Max-min fair shares of `capacity` among `demands` (water filling).
pub fn max_min_fair(capacity: f64, demands: &[f64]) -> Vec<f64> {
    let mut share = vec![0.0; demands.len()];
    let mut left = capacity;
    let mut open: Vec<usize> = (0..demands.len()).filter(|&i| demands[i] > 0.0).collect();
    while !open.is_empty() && left > 1e-9 {
        let each = left / open.len() as f64;
        let (sat, rest): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&i| demands[i] - share[i] <= each);
        if sat.is_empty() {
            for &i in &rest {
                share[i] += each;
            }
            break;
        }
        for &i in &sat {
            left -= demands[i] - share[i];
            share[i] = demands[i];
        }
        open = rest;
    }
    share
}

/// Bytes each program's file holds: more than it can read before `end_ms`.
fn file_bytes(c: &Contender, end_ms: f64) -> u64 {
    ((c.demand_mb_s * 1e3 * (end_ms - c.start_ms)) as u64).div_ceil(1 << 20) * (1 << 20) * 2
}

/// Runs `contenders` until `end_ms` and bins their rates by `bin_ms`.
pub fn run_fairness(
    cfg: &InsiderConfig,
    host: &HostConfig,
    contenders: &[Contender],
    end_ms: f64,
    bin_ms: f64,
    seed: u64,
) -> Result<FairnessResult, InsiderError> {
    let mut rt = Runtime::new(&MachineSpec {
        insider: cfg,
        host,
        flash: None,
        functional: false,
        seed,
    })?;
    rt.add_user(1000, 100, "user")?;
    rt.mkdir(0, "/data", 0o777)?;
    let mut order: Vec<usize> = (0..contenders.len()).collect();
    order.sort_by(|&a, &b| contenders[a].start_ms.total_cmp(&contenders[b].start_ms));
    for c in contenders {
        let cost = c.cost;
        rt.install_program(
            &c.name,
            ProgramSpec {
                make: Box::new(move || Box::new(crate::experiment::Costed { cost, name: "app" })),
                output_per_input: c.output_per_input,
            },
        );
        rt.throttle(&c.name, c.demand_mb_s);
        let path = format!("/data/{}", c.name);
        rt.install_file(1000, &path, 0o644, file_bytes(c, end_ms), None)?;
        rt.reg_virt_file(1000, &format!("{path}.virt"), &path, &c.name)?;
    }
    let t0 = rt.now();
    let at = |ms: f64| t0 + SimDuration::from_ns((ms * 1e6) as u64);
    let windows = Windows::new(contenders, end_ms, bin_ms);
    let end = at(end_ms);
    let read = crate::experiment::HOST_READ_BYTES;
    // One process per program, each with its own read in flight (through the runtime's
    // core); the main thread opens each program's file at its start time.
    let mut fds: Vec<(usize, u32)> = Vec::new();
    let mut reads: BTreeMap<OpId, u32> = BTreeMap::new();
    let mut done = Vec::new();
    let mut next = 0;
    while rt.now() < end {
        while next < order.len() && rt.now() >= at(contenders[order[next]].start_ms) {
            let i = order[next];
            let vpath = format!("/data/{}.virt", contenders[i].name);
            let fd = rt.vopen(1000, &vpath, Direction::Read)?;
            assert!(rt.probe_consumption(fd, CounterProbe::new(t0, windows.query_ms())));
            fds.push((i, fd));
            reads.insert(rt.submit(Call::ProcessVread { fd, len: read })?, fd);
            next += 1;
        }
        let wake = if next < order.len() {
            at(contenders[order[next]].start_ms).min(end)
        } else {
            end
        };
        let timer = rt.submit(Call::Sleep { until: wake })?;
        'wait: loop {
            rt.turn()?;
            rt.take_completions(&mut done);
            for c in done.drain(..) {
                if c.op == timer {
                    break 'wait;
                }
                let fd = reads.remove(&c.op).expect("a process's read");
                match c.result? {
                    // The program's output ended: the process is done.
                    Output::Read { n: 0, .. } => {}
                    _ => {
                        reads.insert(rt.submit(Call::ProcessVread { fd, len: read })?, fd);
                    }
                }
            }
        }
    }
    let probes: Vec<(usize, CounterProbe)> = fds
        .iter()
        .map(|&(i, fd)| {
            let s = rt.machine().stream(fd).expect("open");
            (i, s.consumed_probe.clone().expect("armed at open"))
        })
        .collect();
    Ok(summarise(cfg, contenders, &probes, &windows))
}

/// The intervals the experiment reports rates over: the time series' bins and each phase's
/// measured window (ms since the start).
struct Windows {
    bins: Vec<(f64, f64)>,
    /// Per phase: its start and end, and the window measured in it.
    phases: Vec<(f64, f64, (f64, f64))>,
}

impl Windows {
    fn new(contenders: &[Contender], end_ms: f64, bin_ms: f64) -> Windows {
        let bins = (0..(end_ms / bin_ms).floor() as usize)
            .map(|k| {
                let a = k as f64 * bin_ms;
                (a, a + bin_ms)
            })
            .collect();
        let mut starts: Vec<f64> = contenders.iter().map(|c| c.start_ms).collect();
        starts.sort_by(f64::total_cmp);
        starts.dedup();
        let phases = starts
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let e = starts.get(k + 1).copied().unwrap_or(end_ms);
                // Skip the first fifth of a phase: the newcomer's credits and FIFOs fill.
                (s, e, (s + (e - s) / 5.0, e))
            })
            .collect();
        Windows { bins, phases }
    }

    /// Every time a rate is taken between.
    fn query_ms(&self) -> Vec<f64> {
        let phases = self.phases.iter().map(|p| p.2);
        self.bins
            .iter()
            .copied()
            .chain(phases)
            .flat_map(|(a, b)| [a, b])
            .collect()
    }
}

fn summarise(
    cfg: &InsiderConfig,
    contenders: &[Contender],
    probes: &[(usize, CounterProbe)],
    windows: &Windows,
) -> FairnessResult {
    // Input bytes consumed per ms over `a..b` (linear between samples), MB/s.
    let rate = |i: usize, a: f64, b: f64| -> f64 {
        let at = |x: f64| {
            probes
                .iter()
                .find(|(j, _)| *j == i)
                .map_or(0.0, |(_, p)| p.value_at(x))
        };
        (at(b) - at(a)) / ((b - a) * 1e3)
    };
    let series = contenders
        .iter()
        .enumerate()
        .map(|(i, c)| Series {
            name: c.name.clone(),
            demand_mb_s: c.demand_mb_s,
            points: windows
                .bins
                .iter()
                .map(|&(a, b)| (a, rate(i, a, b)))
                .collect(),
        })
        .collect();
    let phases = windows
        .phases
        .iter()
        .map(|&(s, e, (a, b))| {
            let demands: Vec<f64> = contenders
                .iter()
                .map(|c| if c.start_ms <= s { c.demand_mb_s } else { 0.0 })
                .collect();
            Phase {
                start_ms: s,
                end_ms: e,
                measured_mb_s: (0..contenders.len())
                    .map(|i| if demands[i] > 0.0 { rate(i, a, b) } else { 0.0 })
                    .collect(),
                fair_mb_s: max_min_fair(cfg.emulated_bandwidth_mb_s, &demands),
            }
        })
        .collect();
    FairnessResult {
        drive_mb_s: cfg.emulated_bandwidth_mb_s,
        series,
        phases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_filling_serves_small_demands_in_full() {
        assert_eq!(max_min_fair(16.0, &[12.0, 0.0, 0.0]), vec![12.0, 0.0, 0.0]);
        assert_eq!(max_min_fair(16.0, &[12.0, 6.4, 0.0]), vec![9.6, 6.4, 0.0]);
        let s = max_min_fair(16.0, &[12.0, 6.4, 8.0]);
        assert!(s.iter().all(|&x| (x - 16.0 / 3.0).abs() < 1e-9), "{s:?}");
        assert_eq!(max_min_fair(16.0, &[2.0, 3.0]), vec![2.0, 3.0]);
    }
}
