//! Scenario tests of the public block-trace formats through the real binary: every sample in
//! examples/traces replays on the tiny device with the request count it holds, `trace stats`
//! counts each sample exactly (the figures were computed independently, by the script that
//! wrote the samples), gzip is read transparently, device selectors keep one device, and bad
//! input — malformed lines, zero sizes, offsets past the device, steps back in time — fails
//! naming the line or is skipped and reported when asked.

use serde_json::Value;
use std::path::{Path, PathBuf};
mod common;
use common::{fails_naming, nearflash};

fn sample(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traces")
        .join(name);
    p.to_str().unwrap().to_string()
}

fn spec(format: &str, name: &str) -> String {
    format!("{format}:{}", sample(name))
}

fn ok_stdout(args: &[&str]) -> String {
    let out = nearflash(args);
    assert!(
        out.status.success(),
        "nearflash {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn stats(args: &[&str]) -> Value {
    let mut all = vec!["trace", "stats"];
    all.extend(args);
    all.push("--json");
    serde_json::from_str(&ok_stdout(&all)).unwrap()
}

fn replay(dir: &Path, args: &[&str]) -> Value {
    let path = dir.join("run.json");
    let p = path.to_str().unwrap().to_string();
    let mut all = vec!["io", "--preset", "test-min", "--quiet", "--json", &p];
    all.extend(args);
    ok_stdout(&all);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Requests (flushes included), reads, writes, trims, read bytes, write bytes, distinct 4 KiB
/// units.
type Figures = [u64; 7];

/// Each sample: its format, its file and its figures.
const SAMPLES: [(&str, &str, Figures); 10] = [
    ("msr", "msr.csv", [20, 15, 5, 0, 286720, 90112, 92]),
    (
        "blkparse",
        "blkparse.txt",
        [26, 14, 10, 1, 348160, 212992, 356],
    ),
    ("iolog", "iolog-v3.log", [36, 23, 9, 2, 442368, 98304, 128]),
    ("iolog", "iolog-v2.log", [21, 16, 5, 0, 303104, 106496, 97]),
    ("systor", "systor.csv", [38, 25, 13, 0, 368640, 241664, 144]),
    (
        "alibaba",
        "alibaba.csv",
        [40, 13, 27, 0, 253952, 389120, 154],
    ),
    (
        "tencent",
        "tencent.csv.gz",
        [40, 28, 12, 0, 524288, 184320, 170],
    ),
    ("fiu", "fiu.txt", [40, 10, 30, 0, 180224, 667648, 183]),
    ("spc", "spc.csv", [40, 17, 23, 0, 111104, 140800, 71]),
    ("mqsim", "mqsim.trace", [40, 31, 9, 0, 786432, 163840, 225]),
];

#[test]
fn trace_stats_counts_each_sample_exactly() {
    for (format, name, figures) in SAMPLES {
        let s = stats(&[&spec(format, name)]);
        let got = [
            u(&s, "requests"),
            u(&s, "reads"),
            u(&s, "writes"),
            u(&s, "trims"),
            u(&s, "read_bytes"),
            u(&s, "write_bytes"),
            u(&s, "footprint_units"),
        ];
        assert_eq!(got, figures, "{name}");
        assert_eq!(s["read"]["format"], format, "{name}");
        assert!(!s["footprint_capped"].as_bool().unwrap());
        let histogram: u64 = s["size_histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(b, "requests"))
            .sum();
        // Sizes are histogrammed for data requests; a flush has none.
        assert_eq!(histogram + u(&s, "flushes"), figures[0], "{name}");
    }
    // Durations follow each format's time unit: fio v3 µs, v2 `wait` µs, Tencent seconds.
    assert_eq!(
        u(&stats(&[&spec("iolog", "iolog-v3.log")]), "duration_ns"),
        6_467_000
    );
    assert_eq!(
        u(&stats(&[&spec("iolog", "iolog-v2.log")]), "duration_ns"),
        3_689_000
    );
    let tencent = stats(&[&spec("tencent", "tencent.csv.gz")]);
    assert_eq!(u(&tencent, "duration_ns"), 10_000_000_000);
    // What was read but is not a request is counted by kind.
    let ignored = |f, n| stats(&[&spec(f, n)])["read"]["ignored"].clone();
    // Flushes are requests: blkparse's preflush, fio's sync and datasync.
    assert_eq!(ignored("blkparse", "blkparse.txt"), serde_json::json!({}));
    assert_eq!(
        u(&stats(&[&spec("blkparse", "blkparse.txt")]), "flushes"),
        1
    );
    assert_eq!(u(&stats(&[&spec("iolog", "iolog-v3.log")]), "flushes"), 2);
    assert_eq!(
        ignored("systor", "systor.csv"),
        serde_json::json!({"untyped": 2})
    );
}

#[test]
fn trace_stats_prints_a_table() {
    let out = ok_stdout(&["trace", "stats", &spec("blkparse", "blkparse.txt")]);
    for row in [
        "reads / writes / trims / flushes",
        "14 / 10 / 1 / 1",
        "size <= 65536 B",
    ] {
        assert!(out.contains(row), "{row} missing from\n{out}");
    }
}

#[test]
fn a_gzip_trace_reads_as_its_plain_text() {
    let mut plain = stats(&[&spec("tencent", "tencent.csv")]);
    let mut packed = stats(&[&spec("tencent", "tencent.csv.gz")]);
    assert_eq!(plain["read"]["gzip"], false);
    assert_eq!(packed["read"]["gzip"], true);
    for v in [&mut plain, &mut packed] {
        v["read"]["gzip"] = Value::Null;
        v["trace"] = Value::Null;
    }
    assert_eq!(plain, packed);
}

/// Every sample replays whole: trims too, as trims (over NVMe a Dataset Management
/// deallocate), counted in the report with the reads and writes.
#[test]
fn every_sample_trace_replays_on_the_tiny_device_with_its_request_count() {
    let d = tempfile::tempdir().unwrap();
    for (format, name, [requests, _, _, trims, ..]) in SAMPLES {
        let t = spec(format, name);
        // The MSR sample's offsets reach past test-min's 8.25 MiB; the others fit in 8 MiB.
        let mut args = vec!["--trace", &t];
        if format == "msr" {
            args.push("--fold-offsets");
        }
        let r = replay(d.path(), &args);
        assert_eq!(u(&r, "requests"), requests, "{name}");
        assert_eq!(u(&r, "requests_failed"), 0, "{name}");
        assert_eq!(u(&r, "trims"), trims, "{name}");
        let w = &r["workload"];
        assert_eq!(w["format"], format, "{name}");
        assert_eq!(u(w, "trims"), trims, "{name}");
    }
}

#[test]
fn device_selectors_keep_one_device_under_each_formats_name() {
    for (format, name, flag, value, kept) in [
        ("blkparse", "blkparse.txt", "--trace-device", "8,32", 22),
        ("systor", "systor.csv", "--trace-lun", "0", 18),
        ("alibaba", "alibaba.csv", "--trace-device", "419", 26),
        ("tencent", "tencent.csv", "--trace-volume", "77", 11),
        ("fiu", "fiu.txt", "--trace-device", "8,1", 13),
        ("spc", "spc.csv", "--trace-asu", "1", 17),
        ("mqsim", "mqsim.trace", "--trace-device", "1", 27),
        ("msr", "msr.csv", "--trace-device", "1", 4),
    ] {
        let s = stats(&[&spec(format, name), flag, value]);
        assert_eq!(u(&s, "requests"), kept, "{name} {flag} {value}");
        let all = SAMPLES.iter().find(|x| x.1 == name).map_or(40, |x| x.2[0]);
        assert_eq!(u(&s["read"], "filtered_out"), all - kept, "{name}");
    }
    let d = tempfile::tempdir().unwrap();
    let r = replay(
        d.path(),
        &[
            "--trace",
            &spec("alibaba", "alibaba.csv"),
            "--trace-device",
            "7",
        ],
    );
    assert_eq!(u(&r, "requests"), 14);
    fails_naming(
        &[
            "trace",
            "stats",
            &spec("iolog", "iolog-v3.log"),
            "--trace-device",
            "1",
        ],
        "the iolog format has no device column",
    );
    fails_naming(
        &[
            "trace",
            "stats",
            &spec("tencent", "tencent.csv"),
            "--trace-volume",
            "5",
        ],
        "no requests for volume 5",
    );
    fails_naming(
        &[
            "io",
            "--preset",
            "test-min",
            "--trace",
            &spec("spc", "spc.csv"),
            "--disk",
            "1",
        ],
        "--disk selects an MSR trace's disk",
    );
}

#[test]
fn blkparse_completions_are_replayed_when_asked() {
    let s = stats(&[&spec("blkparse", "blkparse.txt"), "--trace-action", "C"]);
    // The journal's preflush completes as `C FWS 0`: a flush, as its issue `D FWS` is.
    assert_eq!(u(&s, "requests"), 26);
    assert_eq!(u(&s, "flushes"), 1);
    let issue = stats(&[&spec("blkparse", "blkparse.txt")]);
    assert!(u(&s, "duration_ns") > u(&issue, "duration_ns") / 2);
    assert_ne!(s["inter_arrival"], issue["inter_arrival"]);
}

/// Writes `text` to a file in `dir`, returning `FORMAT:PATH`.
fn write_trace(dir: &Path, format: &str, text: &str) -> String {
    let p = dir.join(format!("bad.{format}"));
    std::fs::write(&p, text).unwrap();
    format!("{format}:{}", p.display())
}

#[test]
fn a_malformed_line_fails_naming_it_or_is_skipped_and_reported() {
    let d = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(sample("spc.csv")).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(4, "0,12,4096,x,0.5");
    let t = write_trace(d.path(), "spc", &(lines.join("\n") + "\n"));
    fails_naming(
        &["io", "--preset", "test-min", "--trace", &t],
        "line 5: unknown request type \"x\" (expected r or w)",
    );
    fails_naming(&["trace", "stats", &t], "line 5: unknown request type");
    let r = replay(d.path(), &["--trace", &t, "--skip-bad-lines"]);
    assert_eq!(u(&r, "requests"), 40);
    assert_eq!(u(&r["workload"]["read"], "bad_lines"), 1);
    assert_eq!(
        r["workload"]["read"]["bad_line_errors"][0],
        "line 5: unknown request type \"x\" (expected r or w)"
    );
    let s = stats(&[&t, "--skip-bad-lines"]);
    assert_eq!((u(&s, "requests"), u(&s["read"], "bad_lines")), (40, 1));
}

#[test]
fn zero_and_negative_sizes_fail_naming_the_line() {
    let d = tempfile::tempdir().unwrap();
    let t = write_trace(d.path(), "mqsim", "1000 0 8 8 1\n2000 0 16 0 0\n");
    fails_naming(&["trace", "stats", &t], "line 2: request size is 0");
    let t = write_trace(d.path(), "alibaba", "1,W,0,-4096,5\n");
    fails_naming(
        &["io", "--preset", "test-min", "--trace", &t],
        "line 1: field 'length' is negative: -4096",
    );
}

#[test]
fn an_offset_past_the_device_fails_naming_the_line_unless_folded() {
    let d = tempfile::tempdir().unwrap();
    // test-min holds 8.25 MiB of logical space; sector 100000 is at 48.8 MiB.
    let t = write_trace(d.path(), "mqsim", "1000 0 8 8 1\n2000 0 100000 8 0\n");
    fails_naming(
        &["io", "--preset", "test-min", "--trace", &t],
        "line 2 (offset 51200000, 4096 bytes) lies beyond the device",
    );
    let r = replay(d.path(), &["--trace", &t, "--fold-offsets"]);
    assert_eq!(u(&r["workload"], "folded_offsets"), 1);
}

#[test]
fn a_step_back_in_time_is_sorted_within_the_window_and_refused_beyond_it() {
    // alibaba.csv's lines 18 and 19 were collected out of order.
    let s = stats(&[&spec("alibaba", "alibaba.csv")]);
    assert_eq!(u(&s["read"], "reordered"), 1);
    fails_naming(
        &[
            "trace",
            "stats",
            &spec("alibaba", "alibaba.csv"),
            "--trace-reorder-window",
            "0",
        ],
        "line 19: timestamp",
    );
}

#[test]
fn an_unknown_format_or_a_missing_prefix_is_refused_with_the_formats_listed() {
    fails_naming(
        &["trace", "stats", &sample("msr.csv")],
        "expected FORMAT:PATH with FORMAT one of msr, blkparse",
    );
    fails_naming(
        &["io", "--preset", "test-min", "--trace", "csv:x.csv"],
        "unknown trace format \"csv\"",
    );
    fails_naming(
        &["trace", "stats", &spec("iolog", "msr.csv")],
        "line 1: not a fio iolog header",
    );
}

/// A trace's trims reach the drive as trims (over NVMe, Dataset Management deallocates):
/// sixteen 64 KiB writes, then — in the second log only — trims of the same range, then
/// reads of it. Reading deallocated data costs no flash read, so the reads after the trims
/// read nothing from flash while the same reads without them read every page; in functional
/// fidelity every read checks out against the reference model, which saw the trims too.
#[test]
fn a_traces_trims_deallocate_so_reads_after_them_touch_no_flash() {
    let d = tempfile::tempdir().unwrap();
    let log = |trim: bool| {
        let mut lines = vec!["fio version 3 iolog".to_string(), "0 d add".into()];
        let mut t = 0;
        let mut line =
            |t: u64, op: &str, i: u64| lines.push(format!("{t} d {op} {} 65536", i * 65536));
        for i in 0..16 {
            t += 2000;
            line(t, "write", i);
        }
        t += 50_000;
        for i in (0..16).filter(|_| trim) {
            t += 10;
            line(t, "trim", i);
        }
        t += 50_000;
        for i in 0..16 {
            t += 1000;
            line(t, "read", i);
        }
        let path = d.path().join(format!("trim-{trim}.log"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        format!("iolog:{}", path.display())
    };
    let (kept, trimmed) = (log(false), log(true));
    let plain = replay(d.path(), &["--trace", &kept]);
    let after_trims = replay(d.path(), &["--trace", &trimmed]);
    assert_eq!(u(&plain, "trims"), 0);
    assert_eq!(u(&after_trims, "trims"), 16);
    assert_eq!(u(&after_trims, "trim_bytes"), 16 * 65536);
    assert_eq!(u(&after_trims, "requests"), 48);
    assert!(u(&plain, "flash_page_reads") > 0);
    assert_eq!(u(&after_trims, "flash_page_reads"), 0);
    let checked = replay(d.path(), &["--trace", &trimmed, "--fidelity", "functional"]);
    assert_eq!(u(&checked, "reads_verified"), 16);
    assert_eq!(u(&checked, "requests_failed"), 0);
}

/// fio replays an iolog's `sync` and `datasync` lines as fsyncs: here each is an NVMe Flush,
/// counted in the report and its workload, and `replay_skip=sync` in a job leaves them out.
#[test]
fn an_iologs_syncs_are_replayed_as_flushes() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("sync.log");
    let mut lines = vec!["fio version 3 iolog".to_string(), "0 d add".into()];
    for i in 0..8u64 {
        lines.push(format!("{} d write {} 4096", 10 * i, i * 4096));
        if i % 4 == 3 {
            let kind = if i == 3 { "sync" } else { "datasync" };
            lines.push(format!("{} d {kind} 0 0", 10 * i + 5));
        }
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let t = format!("iolog:{}", path.display());
    let run = replay(d.path(), &["--trace", &t]);
    assert_eq!(u(&run, "flushes"), 2);
    assert_eq!(u(&run, "requests"), 10);
    assert_eq!(u(&run, "requests_failed"), 0);
    assert_eq!(u(&run["workload"], "flushes"), 2);
    assert_eq!(u(&stats(&[&t]), "flushes"), 2);
}

/// `--replay-no-stall` ignores the timestamps: a log whose requests lie a second apart
/// replays in microseconds at the queue depth; `--queue-depth` without it is refused (a
/// timed replay submits at the trace's times).
#[test]
fn replay_no_stall_ignores_the_timestamps_and_queue_depth_needs_it() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("slow.log");
    let lines: Vec<String> = (0..8)
        .map(|i| format!("{} d read {} 4096", i * 1_000_000, i * 4096))
        .collect();
    std::fs::write(
        &path,
        format!("fio version 3 iolog\n{}\n", lines.join("\n")),
    )
    .unwrap();
    let t = format!("iolog:{}", path.display());
    let timed = replay(d.path(), &["--trace", &t]);
    let fast = replay(
        d.path(),
        &["--trace", &t, "--replay-no-stall", "--queue-depth", "4"],
    );
    let sim_s = |v: &Value| v["sim_time_s"].as_f64().unwrap();
    assert!(sim_s(&timed) > 7.0, "{}", sim_s(&timed));
    assert!(sim_s(&fast) < 0.01, "{}", sim_s(&fast));
    assert_eq!(fast["workload"]["replay"]["queue_depth"], 4);
    fails_naming(
        &[
            "io",
            "--preset",
            "test-min",
            "--trace",
            &t,
            "--queue-depth",
            "4",
        ],
        "--replay-no-stall",
    );
}
