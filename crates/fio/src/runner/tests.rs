//! Job files run end to end on test-min: groups, clones, replays, placement, reports.

use super::*;
use crate::jobfile::tests::one;

fn run_text(text: &str, seed: u64) -> FioRun {
    let file = one(text).unwrap();
    run(
        &file,
        std::path::Path::new("job.fio"),
        &RunOptions {
            preset: "test-min".into(),
            overrides: Vec::new(),
            seed,
            fidelity: Fidelity::Timing,
            interface: Interface::Nvme,
            precondition: None,
        },
        &mut |_, _, _| {},
    )
    .unwrap()
}

/// `text` run on test-min with `overrides`, seed 1, over NVMe.
pub(crate) fn run_test_min(
    text: &str,
    overrides: &[&str],
    fidelity: Fidelity,
) -> Result<FioRun, FioError> {
    run(
        &one(text).unwrap(),
        std::path::Path::new("job.fio"),
        &RunOptions {
            preset: "test-min".into(),
            overrides: overrides.iter().map(|o| o.to_string()).collect(),
            seed: 1,
            fidelity,
            interface: Interface::Nvme,
            precondition: None,
        },
        &mut |_, _, _| {},
    )
}

fn run_fdp(text: &str, overrides: &[&str]) -> Result<FioRun, FioError> {
    run_test_min(text, overrides, Fidelity::Timing)
}

const FDP_DRIVE: &[&str] = &["ftl.mapping=\"page\"", "fdp.enabled=true", "fdp.handles=4"];

fn host_bytes_by_handle(r: &FioRun) -> Vec<u64> {
    r.nearflash["fdp"]["handles"]
        .as_array()
        .expect("the FDP report")
        .iter()
        .map(|h| h["host_bytes_written"].as_u64().unwrap())
        .collect()
}

/// examples/fio/fdp.fio: the hot job's 800 writes go to placement ID index 0, the cold
/// job's 400 alternate between indices 1 and 2 (fio's round robin), and handle 3 gets
/// nothing — the bytes per handle are exact.
#[test]
fn fdp_jobs_write_on_their_fdp_pli_handles_in_turn() {
    let text = include_str!("../../../../examples/fio/fdp.fio");
    let r = run_fdp(text, FDP_DRIVE).unwrap();
    let k = 4096;
    assert_eq!(host_bytes_by_handle(&r), [800 * k, 200 * k, 200 * k, 0]);
}

/// `fdp_pli_select=random` draws from the listed indices only; without `fdp_pli` a job
/// cycles over every handle; a drive without FDP refuses `fdp=1`, and an index past the
/// drive's handles is refused, naming what the drive has.
#[test]
fn fdp_random_selection_stays_on_the_list_and_bad_setups_are_refused() {
    let random =
        "[j]\nrw=randwrite\nsize=1m\nnumber_ios=400\nfdp=1\nfdp_pli=1,3\nfdp_pli_select=random\n";
    let host = host_bytes_by_handle(&run_fdp(random, FDP_DRIVE).unwrap());
    assert!(host[1] > 0 && host[3] > 0, "{host:?}");
    assert_eq!((host[0], host[2], host[1] + host[3]), (0, 0, 400 * 4096));
    let all = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=400\nfdp=1\n";
    let host = host_bytes_by_handle(&run_fdp(all, FDP_DRIVE).unwrap());
    assert_eq!(host, [100 * 4096; 4]);
    let e = run_fdp(all, &[]).unwrap_err().to_string();
    assert!(e.contains("fdp.enabled=false"), "{e}");
    let past = all.replace("fdp=1\n", "fdp=1\nfdp_pli=4\n");
    let e = run_fdp(&past, FDP_DRIVE).unwrap_err().to_string();
    assert!(e.contains("fdp_pli index 4"), "{e}");
}

/// With two reclaim groups the drive's Reclaim Unit Handle Status lists (handle, group)
/// pairs — PIDs 0, 0x8000, 1, 0x8001 for two handles — and `fdp_pli` indexes that list
/// as fio's `init_ruh_info` does: indices 1 and 2 are handle 0 in group 1 and handle 1 in
/// group 0, so both handles take half the writes; index 4 is past the list.
#[test]
fn with_two_reclaim_groups_fdp_pli_indexes_the_status_lists_group_and_handle_pairs() {
    let drive = &[
        "ftl.mapping=\"page\"",
        "fdp.enabled=true",
        "fdp.handles=2",
        "fdp.reclaim_groups=2",
    ];
    let job = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=400\nfdp=1\nfdp_pli=1,2\n";
    let host = host_bytes_by_handle(&run_fdp(job, drive).unwrap());
    assert_eq!(host, [200 * 4096, 200 * 4096]);
    let past = job.replace("fdp_pli=1,2", "fdp_pli=4");
    let e = run_fdp(&past, drive).unwrap_err().to_string();
    assert!(e.contains("lists 4 placement identifiers"), "{e}");
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

#[test]
fn a_start_delay_and_think_times_stretch_the_run_in_simulated_time() {
    let plain = run_text("[j]\nrw=randread\nsize=1m\nnumber_ios=64\n", 1);
    let delayed = run_text(
        "[j]\nrw=randread\nsize=1m\nnumber_ios=64\nstartdelay=3ms\n",
        1,
    );
    let gap = delayed.sim_time_ns - plain.sim_time_ns;
    assert!((2_900_000..3_100_000).contains(&gap), "{}", ms(gap));
    let thinking = run_text(
        "[j]\nrw=randread\nsize=1m\nnumber_ios=64\nthinktime=100us\nthinktime_blocks=8\n",
        1,
    );
    // A think time of 100 µs after every 8 requests, once they have completed: 7 of them
    // lie before the last completion (a read after an idle gap may run a little faster).
    let gap = thinking.sim_time_ns - plain.sim_time_ns;
    assert!((650_000..800_000).contains(&gap), "{}", ms(gap));
    assert_eq!(thinking.jobs[0].stats.dirs[0].total_ios, 64);
}

#[test]
fn rate_iops_caps_the_jobs_rate_in_simulated_time() {
    let r = run_text(
        "[j]\nrw=randread\nsize=1m\nnumber_ios=200\nrate_iops=10000\n",
        1,
    );
    let s = &r.jobs[0].stats;
    let iops = s.dirs[0].total_ios as f64 * 1e9 / s.runtime_ns as f64;
    assert!((9_000.0..=10_100.0).contains(&iops), "{iops}");
}

#[test]
fn ramp_time_is_run_but_left_out_of_the_figures() {
    let r = run_text(
        "[j]\nrw=randread\nsize=1m\nruntime=2ms\nramp_time=1ms\ntime_based\niodepth=4\n",
        1,
    );
    let s = &r.jobs[0].stats;
    let ios = s.dirs[0].total_ios;
    assert!(
        ios > 0 && s.submitted > ios,
        "ramp requests run but are not counted"
    );
    assert!(
        (2.0..2.5).contains(&ms(s.runtime_ns)),
        "{}",
        ms(s.runtime_ns)
    );
}

#[test]
fn randseed_fixes_the_offsets_whatever_the_run_seed_and_clones_differ() {
    let text = "[j]\nrw=randwrite\nsize=1m\nnumber_ios=50\nnorandommap\nrandseed=5\n\
                write_iolog=x\nnumjobs=2\n";
    let (a, b) = (run_text(text, 1), run_text(text, 2));
    let log = |r: &FioRun, i: usize| r.iologs[i].1.clone();
    assert_eq!(log(&a, 0), log(&b, 0));
    assert_ne!(log(&a, 0), log(&a, 1), "each clone has its own stream");
    let c = run_text(&text.replace("randseed=5\n", ""), 1);
    let d = run_text(&text.replace("randseed=5\n", ""), 2);
    assert_ne!(log(&c, 0), log(&d, 0), "without randseed, --seed decides");
}

#[test]
fn jobs_without_a_stonewall_run_together_and_a_stonewall_waits() {
    let together = run_text(
        "[a]\nrw=randread\nsize=1m\nnumber_ios=500\n[b]\nrw=randread\nsize=1m\n\
         number_ios=500\n",
        1,
    );
    let apart = run_text(
        "[a]\nrw=randread\nsize=1m\nnumber_ios=500\n[b]\nstonewall\nrw=randread\n\
         size=1m\nnumber_ios=500\n",
        1,
    );
    assert_eq!(together.groups, 1);
    assert_eq!(apart.groups, 2);
    assert_eq!(
        together.jobs.len(),
        2,
        "no group reporting: a report per job"
    );
    assert!(
        apart.sim_time_ns > together.sim_time_ns,
        "{} vs {}",
        ms(apart.sim_time_ns),
        ms(together.sim_time_ns)
    );
}

/// The log in a temporary file.
fn log_file(text: &str) -> tempfile::TempPath {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    f.into_temp_path()
}

/// The log a job writes (v3, with the simulated issue times), replayed without stalls
/// at the same depth, issues the same requests in the same order at the same times: the
/// whole run is the same — its trace hash, IOPS and latencies.
#[test]
fn a_log_a_job_wrote_replays_without_stalls_as_the_same_run() {
    for rw in ["randread", "randwrite"] {
        let writer = run_text(
            &format!(
                "[w]\nrw={rw}\nsize=1m\nnumber_ios=400\niodepth=8\nnorandommap\n\
                 write_iolog=unused\n"
            ),
            3,
        );
        let text = &writer.iologs[0].1;
        assert!(
            text.starts_with("fio version 3 iolog\n0 nearflash0n1 add\n"),
            "{text}"
        );
        let path = log_file(text);
        let replay = run_text(
            &format!(
                "[r]\nread_iolog={}\nreplay_no_stall=1\niodepth=8\nsize=1m\n",
                path.display()
            ),
            3,
        );
        assert_eq!(
            replay.nearflash["trace_hash"], writer.nearflash["trace_hash"],
            "{rw}"
        );
        let (a, b) = (&writer.jobs[0].stats, &replay.jobs[0].stats);
        for d in 0..2 {
            assert_eq!(a.dirs[d].total_ios, b.dirs[d].total_ios, "{rw}");
            assert_eq!(
                a.dirs[d].clat.hist.mean_ns(),
                b.dirs[d].clat.hist.mean_ns(),
                "{rw}"
            );
        }
        assert_eq!(a.runtime_ns, b.runtime_ns, "{rw}");
    }
}

/// Timed, the requests keep the log's gaps (µs) in simulated time, scaled by
/// replay_time_scale (a percentage of the rate); without stalls they go back to back.
#[test]
fn a_timed_replay_keeps_the_logs_gaps_and_replay_time_scale_scales_them() {
    let path = log_file(
        "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n100 /dev/sdb read 0 4096\n\
         1100 /dev/sdb read 4096 4096\n3100 /dev/sdb write 8192 4096\n\
         3200 /dev/sdb close\n",
    );
    let run = |extra: &str| {
        run_text(
            &format!("[r]\nread_iolog={}\nsize=1m\n{extra}", path.display()),
            1,
        )
    };
    let timed = run("");
    let s = &timed.jobs[0].stats;
    assert_eq!((s.dirs[0].total_ios, s.dirs[1].total_ios), (2, 1));
    // The last request goes 3 ms after the first; the run ends one write later.
    assert!(
        (3.0..3.5).contains(&ms(s.runtime_ns)),
        "{}",
        ms(s.runtime_ns)
    );
    let fast = run("replay_time_scale=200\n");
    let f = ms(fast.jobs[0].stats.runtime_ns);
    assert!((1.5..2.0).contains(&f), "twice the rate: {f}");
    let no_stall = run("replay_no_stall=1\n");
    assert!(ms(no_stall.jobs[0].stats.runtime_ns) < 0.5);
    assert!(
        timed
            .notes
            .iter()
            .any(|n| n.contains("3 requests replayed at the log's timing")),
        "{:?}",
        timed.notes
    );
}

#[test]
fn a_job_past_the_device_is_refused_before_anything_runs() {
    let file = one("[j]\nrw=read\noffset=8m\nsize=1m\n").unwrap();
    let e = run(
        &file,
        std::path::Path::new("job.fio"),
        &RunOptions {
            preset: "test-min".into(),
            overrides: Vec::new(),
            seed: 1,
            fidelity: Fidelity::Timing,
            interface: Interface::Nvme,
            precondition: None,
        },
        &mut |_, _, _| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("beyond the device"), "{e}");
}
