//! §5.3 on the insider preset's drive: statistics, SQL and pass-through throttled to 12, 6.4
//! and 8 GB/s join one after another on a 16 GB/s drive. Each is served in full while the
//! drive can (alone; stat + SQL = 18.4 GB/s is over, so stat gets the rest) and fairly when it
//! cannot: within 10% of the max-min fair shares, nobody starves.

use nearflash_insider::fairness::{run_fairness, Contender};
use nearflash_insider::InsiderConfig;

pub fn contenders() -> Vec<Contender> {
    [
        ("statistics", 12_000.0, 0.0),
        ("sql", 6_400.0, 20.0),
        ("passthrough", 8_000.0, 40.0),
    ]
    .iter()
    .map(|&(name, demand, start)| {
        let app = nearflash_iscapps::app(name).unwrap();
        Contender {
            name: name.into(),
            cost: app.program(0).unwrap().cost(),
            output_per_input: app.output_ratio(0).unwrap().ratio,
            demand_mb_s: demand,
            start_ms: start,
        }
    })
    .collect()
}

#[test]
fn shares_are_max_min_fair_and_nobody_starves() {
    let cfg = InsiderConfig {
        pcie_lanes: 16,
        ..InsiderConfig::default()
    };
    let r = run_fairness(
        &cfg,
        &nearflash_insider::config::insider_host(),
        &contenders(),
        80.0,
        2.0,
        1,
    )
    .unwrap();
    for p in &r.phases {
        eprintln!("{:?} -> {:?}", p.measured_mb_s, p.fair_mb_s);
    }
    assert!(r.worst_deviation() < 0.10, "{:?}", r.phases);
    assert!(r.min_active_mb_s() > 1000.0);
    let again = run_fairness(
        &cfg,
        &nearflash_insider::config::insider_host(),
        &contenders(),
        80.0,
        2.0,
        1,
    )
    .unwrap();
    assert_eq!(r, again);
}
