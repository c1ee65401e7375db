//! Property tests for the trace stream (through the MSR format): arbitrary text never panics
//! and any accepted trace upholds the request invariants; valid requests rendered as CSV parse
//! back unchanged.

use nearflash_iotrace::{parse_trace, ReadOptions, TraceError, TraceFormat, TraceOp, TraceRequest};
use proptest::prelude::*;

fn parse_msr(text: &str, opts: &ReadOptions) -> Result<Vec<TraceRequest>, TraceError> {
    parse_trace(text, TraceFormat::Msr, opts).map(|t| t.requests)
}

/// The invariants every successfully parsed trace must satisfy.
fn assert_well_formed(requests: &[TraceRequest]) {
    assert!(!requests.is_empty());
    assert_eq!(requests[0].arrival_ns, 0);
    for pair in requests.windows(2) {
        assert!(pair[0].arrival_ns <= pair[1].arrival_ns);
    }
    for r in requests {
        assert!(r.size_bytes > 0);
        assert!(r.offset_bytes.checked_add(r.size_bytes).is_some());
    }
}

fn any_options() -> impl Strategy<Value = ReadOptions> {
    let time_scale = prop_oneof![Just(1.0), Just(0.5), 1e-12f64..1e12, any::<f64>()];
    (
        time_scale,
        proptest::option::of(0u32..4),
        any::<bool>(),
        0usize..4,
    )
        .prop_map(
            |(time_scale, disk, skip_bad_lines, reorder_window)| ReadOptions {
                time_scale,
                select: disk.map(|d| d.to_string()),
                skip_bad_lines,
                reorder_window,
                ..ReadOptions::default()
            },
        )
}

/// A field that is sometimes valid, sometimes subtly wrong and sometimes garbage.
fn any_field() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        (0u64..4).prop_map(|n| n.to_string()),
        Just(u64::MAX.to_string()),
        Just("18446744073709551616".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        prop_oneof![
            Just("Read"),
            Just("Write"),
            Just("read"),
            Just("WRITE"),
            Just("Flush")
        ]
        .prop_map(str::to_string),
        Just(String::new()),
        "[^,\n\r]{0,12}",
    ]
}

fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::collection::vec(any_field(), 7).prop_map(|fields| fields.join(",")),
        1 => proptest::collection::vec(any_field(), 0..10).prop_map(|fields| fields.join(",")),
        1 => Just("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime".to_string()),
        1 => "#[^\n]{0,10}",
    ]
}

/// A valid request as the parser should return it, with its timestamp step and disk.
#[derive(Debug, Clone)]
struct Generated {
    step_ticks: u64,
    disk: u32,
    op: TraceOp,
    offset: u64,
    size: u64,
}

fn valid_request() -> impl Strategy<Value = Generated> {
    let op = prop_oneof![Just(TraceOp::Read), Just(TraceOp::Write)];
    let size = prop_oneof![(1u64..=16).prop_map(|n| n * 4096), 1u64..=u64::MAX / 2];
    (0u64..10_000_000_000, 0u32..3, op, size, any::<u64>()).prop_map(
        |(step_ticks, disk, op, size, offset)| Generated {
            step_ticks,
            disk,
            op,
            offset: offset.min(u64::MAX - size),
            size,
        },
    )
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics_in_any_format(
        text in any::<String>(),
        opts in any_options(),
    ) {
        for format in TraceFormat::ALL {
            let opts = ReadOptions { select: None, ..opts.clone() };
            if let Ok(t) = parse_trace(&text, format, &opts) {
                assert_well_formed(&t.requests);
            }
        }
    }

    /// Requests shuffled no further than the reorder window come out sorted, each once.
    #[test]
    fn the_reorder_window_sorts_nearby_steps_back(
        steps in proptest::collection::vec(0u64..1000, 1..60),
        swaps in proptest::collection::vec(0usize..60, 0..20),
    ) {
        let mut stamps: Vec<u64> = steps
            .iter()
            .scan(0, |t, s| { *t += s; Some(*t) })
            .collect();
        let sorted = stamps.clone();
        for &i in &swaps {
            if i + 1 < stamps.len() {
                stamps.swap(i, i + 1);
            }
        }
        let csv: String = stamps
            .iter()
            .map(|t| format!("{t},h,0,Read,{t},4096,0\n"))
            .collect();
        // Adjacent swaps move a request by at most `swaps.len()` places.
        let opts = ReadOptions { reorder_window: swaps.len() + 1, ..ReadOptions::default() };
        let got: Vec<u64> = parse_msr(&csv, &opts).unwrap().iter().map(|r| r.offset_bytes).collect();
        prop_assert_eq!(got, sorted);
    }

    #[test]
    fn arbitrary_seven_field_lines_never_panic(
        lines in proptest::collection::vec(any_line(), 0..20),
        crlf in any::<bool>(),
        opts in any_options(),
    ) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        if let Ok(requests) = parse_msr(&text, &opts) {
            assert_well_formed(&requests);
        }
    }

    #[test]
    fn valid_requests_round_trip(
        base in 0u64..u64::MAX / 2,
        generated in proptest::collection::vec(valid_request(), 1..50),
        scale_log2 in -2i32..=3,
        filter in any::<bool>(),
        header in any::<bool>(),
    ) {
        let time_scale = 2f64.powi(scale_log2);
        let disk_number = filter.then_some(generated[0].disk);
        let mut csv = String::new();
        if header {
            csv.push_str("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
        }
        let mut expected = Vec::new();
        let mut timestamp = base;
        for g in &generated {
            timestamp += g.step_ticks;
            let op = match g.op {
                TraceOp::Read => "Read",
                TraceOp::Write | TraceOp::Trim | TraceOp::Flush => "Write",
            };
            csv.push_str(&format!(
                "{timestamp},hm,{},{op},{},{},{}\n",
                g.disk, g.offset, g.size, g.step_ticks % 5000
            ));
            if disk_number.is_none_or(|disk| disk == g.disk) {
                expected.push((timestamp, g, csv.lines().count() as u64));
            }
        }
        let first = expected[0].0;
        let expected: Vec<TraceRequest> = expected
            .iter()
            .map(|&(timestamp, g, line)| TraceRequest {
                // Scales 1/4..=8 keep multiples of 100 ns integral, so no rounding is involved.
                arrival_ns: if scale_log2 >= 0 {
                    ((timestamp - first) * 100) << scale_log2
                } else {
                    ((timestamp - first) * 100) >> -scale_log2
                },
                op: g.op,
                offset_bytes: g.offset,
                size_bytes: g.size,
                line,
                // The MSR stream is the disk number.
                stream: u64::from(g.disk),
            })
            .collect();
        let opts = ReadOptions {
            time_scale,
            select: disk_number.map(|d| d.to_string()),
            ..ReadOptions::default()
        };
        prop_assert_eq!(parse_msr(&csv, &opts).unwrap(), expected);
    }
}
