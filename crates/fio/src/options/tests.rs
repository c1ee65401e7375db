//! Options read as fio reads them, and refused with the option and line named.

use super::apply::distribution;
use super::*;
use crate::jobfile::tests::one;

fn job(text: &str) -> Result<JobSpec, FioError> {
    let f = one(text)?;
    JobSpec::from_section(&f.jobs[0])
}

#[test]
fn a_full_job_reads_every_supported_option() {
    let j = job(
        "[global]\nbs=4k,8k\nioengine=libaio\n[j]\nrw=randrw\nrwmixwrite=30\niodepth=8\n\
         numjobs=2\nsize=50%\noffset=1m\nio_size=2m\nnumber_ios=100\nruntime=2\n\
         time_based\nramp_time=10ms\nstartdelay=1ms\nthinktime=50\nthinktime_blocks=4\n\
         rate=1m,2m\nrate_iops=100\nrandrepeat=0\nrandseed=7\n\
         random_distribution=zipf:1.2\npercentage_random=80\nnorandommap\nfsync=8\n\
         direct=1\nsync=1\nverify=md5\nstonewall\ngroup_reporting\nfilename=/dev/x\n\
         blockalign=8k\ndescription=hello world\n",
    )
    .unwrap();
    assert_eq!(j.rw, Rw::RandReadWrite);
    assert_eq!(j.rwmixread, 70);
    assert_eq!(j.bs[0], BlockSizes::Fixed(4096));
    assert_eq!(j.bs[1], BlockSizes::Fixed(8192));
    assert_eq!((j.iodepth, j.numjobs), (8, 2));
    assert_eq!(j.size, Some(SizeOrShare::Percent(50.0)));
    assert_eq!(j.offset, SizeOrShare::Bytes(1 << 20));
    assert_eq!((j.io_size, j.number_ios), (Some(2 << 20), Some(100)));
    assert_eq!(j.runtime_ns, Some(2_000_000_000));
    assert!(j.time_based);
    assert_eq!((j.ramp_time_ns, j.startdelay_ns), (10_000_000, 1_000_000));
    assert_eq!((j.thinktime_ns, j.thinktime_blocks), (50_000, 4));
    assert_eq!(
        j.rate_bytes_s,
        [Some(1 << 20), Some(2 << 20), Some(2 << 20)]
    );
    assert_eq!(j.rate_iops, [Some(100); 3]);
    assert!(!j.randrepeat);
    assert_eq!(j.randseed, Some(7));
    assert_eq!(j.distribution, Distribution::Zipf(1.2));
    assert_eq!(j.percentage_random, [80; 3]);
    assert!(j.norandommap && j.direct && j.sync && j.stonewall && j.group_reporting);
    assert_eq!(j.fsync_every, 8);
    assert_eq!(j.verify, Some(VerifyKind::Md5));
    assert_eq!(j.blockalign, [Some(8192); 3]);
    assert_eq!(j.description.as_deref(), Some("hello world"));
    let ignored: Vec<&str> = j.ignored.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(ignored, ["ioengine", "filename"]);
    assert_eq!(j.options[0], ("rw".into(), "randrw".into()));
}

#[test]
fn rw_takes_a_sequential_skip_and_bssplit_and_bsrange_read_per_direction() {
    let j = job("[j]\nrw=write:8k\nbssplit=4k/50:64k/50\n").unwrap();
    assert_eq!((j.rw, j.seq_skip_bytes), (Rw::Write, 8192));
    assert_eq!(j.bs[1], BlockSizes::Split(vec![(4096, 50), (65536, 50)]));
    let j = job("[j]\nbsrange=4k-16k,8k-8k\n").unwrap();
    assert_eq!(j.bs[0], BlockSizes::Range(4096, 16384));
    assert_eq!(j.bs[2], BlockSizes::Range(8192, 8192));
}

#[test]
fn distributions() {
    for (t, d) in [
        ("random", Distribution::Uniform),
        ("pareto:0.9", Distribution::Pareto(0.9)),
        ("normal:10", Distribution::Normal(10.0)),
        (
            "zoned:60/10:40/90",
            Distribution::Zoned(vec![(60, 10), (40, 90)]),
        ),
    ] {
        assert_eq!(distribution(t), Ok(d), "{t}");
    }
    for t in ["zipf:1", "zipf:x", "pareto:2", "zoned:60/10", "gauss2:1"] {
        assert!(distribution(t).is_err(), "{t}");
    }
}

#[test]
fn unknown_and_unsupported_options_are_errors_naming_the_option_and_line() {
    let e = job("[j]\nrw=read\nfrobnicate=1\n").unwrap_err().to_string();
    assert_eq!(e, "job.fio:3: unknown option 'frobnicate'");
    for opt in [
        "verify_backlog=16",
        "zonerange=1m",
        "merge_blktrace_file=x.bin",
        "rate_process=poisson",
    ] {
        let e = job(&format!("[global]\n{opt}\n[j]\n"))
            .unwrap_err()
            .to_string();
        let name = opt.split('=').next().unwrap();
        assert!(
            e.starts_with("job.fio:2: option '") && e.contains(name) && e.contains("not supported"),
            "{e}"
        );
    }
}

#[test]
fn bad_values_name_the_option_and_line() {
    for (text, what) in [
        ("[j]\nbs=4q\n", "'bs'"),
        ("[j]\nrw=randtrimwrite\n", "'rw'"),
        ("[j]\nrwmixread=120\n", "'rwmixread'"),
        ("[j]\niodepth\n", "needs a value"),
        ("[j]\nverify=sha512\n", "sha512"),
        ("[j]\nruntime=5 fortnights\n", "'runtime'"),
        ("[j]\nkb_base=512\n", "kb_base"),
    ] {
        let e = job(text).unwrap_err().to_string();
        assert!(
            e.starts_with("job.fio:2:") && e.contains(what),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn jobs_that_do_not_fit_together_are_refused() {
    for (text, what) in [
        ("[j]\nbs=1000\n", "multiple of 512"),
        ("[j]\niodepth=0\n", "iodepth"),
        ("[j]\ntime_based\n", "needs a runtime"),
        ("[j]\nnumjobs=1000\n", "numjobs"),
    ] {
        let e = job(text).unwrap_err().to_string();
        assert!(
            e.starts_with("job 'j':") && e.contains(what),
            "{text:?}: {e}"
        );
    }
}

proptest::proptest! {
    /// Whatever the text, reading it as a job file and building its jobs answers with
    /// jobs or an error, never a panic.
    #[test]
    fn any_text_gives_jobs_or_an_error(
        lines in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::string::string_regex("[a-z_]{1,12}=[0-9a-z:/%.,-]{0,12}").unwrap(),
                proptest::string::string_regex("\\[[a-z]{0,6}\\]?").unwrap(),
                proptest::string::string_regex("(bs|rw|size|iodepth|bssplit|bsrange|rate|runtime|random_distribution|offset|numjobs|verify)=[0-9a-z:/%.,-]{0,10}").unwrap(),
                proptest::string::string_regex(".{0,20}").unwrap(),
            ],
            0..12,
        )
    ) {
        if let Ok(f) = one(&lines.join("\n")) {
            for s in &f.jobs {
                let _ = JobSpec::from_section(s);
            }
        }
    }
}

#[test]
fn docs_cli_md_lists_every_option_of_the_table() {
    let docs = include_str!("../../../../docs/cli.md");
    for d in TABLE {
        for n in d.names {
            assert!(docs.contains(&format!("`{n}`")), "docs/cli.md lacks {n}");
        }
    }
}

#[test]
fn the_replay_options_read_as_fio_reads_them() {
    let j = job(
        "[j]\nread_iolog=a.log:b\\:c.log\nreplay_no_stall\nreplay_time_scale=200\n\
         replay_redirect=/dev/sdc\nreplay_align=4k\nreplay_scale=8\nreplay_skip=write,sync\n",
    )
    .unwrap();
    assert_eq!(j.read_iolog, ["a.log", "b:c.log"]);
    assert!(j.replay_no_stall);
    assert_eq!((j.replay_time_scale, j.replay_scale), (200, 8));
    assert_eq!(j.replay_align, Some(4096));
    assert_eq!(j.replay_redirect.as_deref(), Some("/dev/sdc"));
    assert!(j.replay_skip.write && j.replay_skip.sync && !j.replay_skip.read);
    for (text, what) in [
        ("[j]\nreplay_align=3000\n", "power of two"),
        ("[j]\nreplay_time_scale=0\n", "at least 1"),
        ("[j]\nreplay_scale=0\n", "at least 1"),
        ("[j]\nreplay_skip=erase\n", "'erase'"),
        ("[j]\nread_iolog=-\n", "stdin"),
    ] {
        let e = job(text).unwrap_err().to_string();
        assert!(
            e.starts_with("job.fio:2:") && e.contains(what),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn zbd_options_read_as_fio_reads_them_and_misfits_are_refused() {
    let j = job(
        "[j]\nzonemode=zbd\nrw=randwrite\nzonesize=256k\nmax_open_zones=4\n\
         zone_reset_threshold=0.7\nzone_reset_frequency=0.01\nread_beyond_wp\n",
    )
    .unwrap();
    assert!(j.zbd && j.read_beyond_wp);
    assert_eq!((j.zonesize, j.max_open_zones), (Some(256 << 10), Some(4)));
    assert_eq!(
        (j.zone_reset_threshold, j.zone_reset_frequency),
        (0.7, 0.01)
    );
    for (text, what) in [
        ("[j]\nzonemode=strided\n", "'strided'"),
        ("[j]\nzone_reset_threshold=1.5\n", "within 0..=1"),
        ("[j]\nzonesize=0\n", "positive"),
    ] {
        let e = job(text).unwrap_err().to_string();
        assert!(
            e.starts_with("job.fio:2:") && e.contains(what),
            "{text:?}: {e}"
        );
    }
    for (text, what) in [
        (
            "[j]\nmax_open_zones=4\n",
            "max_open_zones applies to zonemode=zbd only",
        ),
        ("[j]\nzonemode=zbd\nrw=randtrim\n", "trims"),
        ("[j]\nzonemode=zbd\nrw=write\nverify=md5\n", "verify"),
        ("[j]\nzonemode=zbd\nrw=write:4k\n", "skip"),
        ("[j]\nzonemode=zbd\nrw=write\nfdp=1\n", "fdp=1"),
    ] {
        let e = job(text).unwrap_err().to_string();
        assert!(
            e.starts_with("job 'j': ") && e.contains(what),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn kb_base_1000_changes_how_sizes_read_wherever_it_stands() {
    let j = job("[j]\nbs=4k\nkb_base=1000\n").unwrap_err().to_string();
    assert!(j.contains("multiple of 512"), "4k is 4000 bytes: {j}");
}
