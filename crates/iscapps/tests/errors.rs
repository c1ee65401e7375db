//! Bad parameters, data before parameters, malformed streams and faults: each a clean,
//! typed error, never a panic.

use nearflash_iscapps::apps::*;
use nearflash_iscapps::{flits_with_lengths, run_program, AppError, IscApp};
use nearflash_stream::{flits_of, Flit, FlitWriter, ProgramError, StreamProgram};

fn is_params<T: std::fmt::Debug>(r: Result<T, ProgramError>) -> bool {
    matches!(r, Err(ProgramError::Params { .. }))
}

/// A program and parameter messages it must refuse (at least one of them).
type Case = (Box<dyn StreamProgram>, Vec<Vec<u8>>);

#[test]
fn bad_params_are_param_errors_for_every_program() {
    let cases: Vec<Case> = vec![
        (Box::new(GrepProgram::default()), vec![vec![]]),
        (Box::new(KnnDistanceProgram::default()), vec![vec![10; 4]]),
        (
            Box::new(KnnDistanceProgram::default()),
            vec![vec![1; 4], vec![1; 5]],
        ),
        (Box::new(KnnDistanceProgram::default()), vec![vec![1; 4]; 9]),
        (Box::new(StatisticsProgram::default()), vec![vec![1, 2, 3]]),
        (
            Box::new(StatisticsProgram::default()),
            vec![0u32.to_le_bytes().to_vec()],
        ),
        (
            Box::new(StatisticsProgram::default()),
            vec![6u32.to_le_bytes().to_vec()],
        ),
        (Box::new(SqlFilterProgram::default()), vec![vec![61, 50]]),
        (Box::new(SqlFilterProgram::default()), vec![vec![0, 100]]),
        (Box::new(SqlFilterProgram::default()), vec![vec![50]]),
        (
            Box::new(IntegrationProgram::default()),
            vec![vec![b'A'; 31]],
        ),
        (Box::new(ReliefNearestProgram::default()), vec![vec![0; 7]]),
        (
            Box::new(ReliefNearestProgram::default()),
            vec![vec![0; 8], vec![0; 1000]],
        ),
        (
            Box::new(ReliefFilterProgram::default()),
            vec![vec![0; 1024]],
        ),
        (Box::new(RleDecodeProgram::default()), vec![vec![1]]),
        (Box::new(PassThrough::default()), vec![vec![1]]),
    ];
    for (mut p, params) in cases {
        let name = p.name();
        let failed = params.iter().any(|m| is_params(p.on_params(m)));
        assert!(failed, "{name} accepted {params:?}");
    }
}

#[test]
fn data_before_params_is_a_param_error() {
    let programs: Vec<Box<dyn StreamProgram>> = vec![
        Box::new(GrepProgram::default()),
        Box::new(KnnDistanceProgram::default()),
        Box::new(StatisticsProgram::default()),
        Box::new(SqlFilterProgram::default()),
        Box::new(IntegrationProgram::default()),
        Box::new(ReliefNearestProgram::default()),
        Box::new(ReliefFilterProgram::default()),
    ];
    for mut p in programs {
        let r = p.on_flit(&flits_of(&[b'0'; 10])[0], &mut FlitWriter::new());
        assert!(is_params(r), "{}", p.name());
    }
}

/// Every app: its dataset cut short by one byte ends inside a record (a framing error),
/// and a flit after `eop` is a framing error.
#[test]
fn truncated_streams_and_flits_after_the_end_are_framing_errors() {
    let apps: Vec<Box<dyn IscApp>> = vec![
        Box::new(KnnApp::with_features(30).unwrap()),
        Box::new(StatisticsApp::with_row_values(5).unwrap()),
        Box::new(SqlApp::with_rounds(3).unwrap()),
        Box::new(IntegrationApp::default()),
        Box::new(ReliefApp::default()),
        Box::new(RleApp),
        Box::new(GrepApp::with_line_chars(10).unwrap()),
        Box::new(PassThroughApp),
    ];
    for app in apps {
        let data = app.generate(5, 4 * app.record_bytes() + 16).unwrap();
        let params = app.pass_params(&data, 0, &[]).unwrap();
        // Grep's last line may lack its newline and pass-through has no records.
        if !matches!(app.name(), "grep" | "passthrough") {
            let short = &data.input[..data.input.len() - 1];
            let mut p = app.program(0).unwrap();
            let r = run_program(p.as_mut(), &params, &flits_with_lengths(short, &[17]));
            assert!(
                matches!(r, Err(ProgramError::Framing(_))),
                "{}: {r:?}",
                app.name()
            );
        }
        let mut flits = flits_of(&data.input);
        flits.push(Flit::new(&[1], true));
        let mut p = app.program(0).unwrap();
        let r = run_program(p.as_mut(), &params, &flits);
        assert!(
            matches!(r, Err(ProgramError::Framing(_))),
            "{}: {r:?}",
            app.name()
        );
    }
}

#[test]
fn malformed_records_fault_instead_of_panicking() {
    // SQL: a year that is not digits.
    let mut p = SqlFilterProgram::default();
    let r = run_program(&mut p, &[vec![50, 60]], &flits_of(&[b'x'; 32]));
    assert!(matches!(r, Err(ProgramError::Fault { .. })));
    // KNN: a label that is not digits.
    let mut p = KnnDistanceProgram::default();
    let r = run_program(&mut p, &[vec![1; 2]], &flits_of(&[b'z'; 66]));
    assert!(matches!(r, Err(ProgramError::Fault { .. })));
    // RLE: bad magic; a zero-length run; more runs than the header says.
    let mut enc = b"NFRLE001".to_vec();
    enc.extend_from_slice(&3u64.to_le_bytes());
    for (bytes, what) in [
        (
            [b"XXXXXXXX".as_slice(), &enc[8..], &[3, b'a']].concat(),
            "magic",
        ),
        ([enc.as_slice(), &[0, b'a']].concat(), "zero run"),
        ([enc.as_slice(), &[4, b'a']].concat(), "overflow"),
    ] {
        let r = run_program(&mut RleDecodeProgram::default(), &[], &flits_of(&bytes));
        assert!(
            matches!(r, Err(ProgramError::Fault { .. })),
            "{what}: {r:?}"
        );
    }
    // Relief: no miss sample.
    let mut p = ReliefNearestProgram::default();
    let r = run_program(
        &mut p,
        &[5u64.to_le_bytes().to_vec(), vec![0; 1024]],
        &flits_of(&[0; 2048]),
    );
    assert!(matches!(r, Err(ProgramError::Fault { .. })));
}

#[test]
fn relief_passes_are_explicit_and_checked() {
    let app = ReliefApp::default();
    let data = app.generate(1, 8 * 1024).unwrap();
    assert_eq!(app.pass_count(), 2);
    assert!(matches!(
        app.pass_params(&data, 1, &[vec![0; 1000]]),
        Err(AppError::DriveOutput { .. })
    ));
    assert!(matches!(
        app.pass_params(&data, 1, &[]),
        Err(AppError::OutputCount { .. })
    ));
    let p = app.pass_params(&data, 1, &[vec![0; 1024]]).unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(&p[0][..4], &(-10i32).to_le_bytes());
    assert!(matches!(
        app.pass_params(&data, 2, &[vec![], vec![]]),
        Err(AppError::NoSuchPass { .. })
    ));
    assert!(matches!(
        app.host_remainder(&data, &[vec![0; 1024]]),
        Err(AppError::OutputCount { .. })
    ));
}

#[test]
fn host_remainders_reject_malformed_drive_output() {
    let grep = GrepApp::with_line_chars(10).unwrap();
    let data = grep.generate(1, 100).unwrap();
    assert!(grep.host_remainder(&data, &[vec![0; 7]]).is_err());
    let beyond = [99u32.to_le_bytes(), 0u32.to_le_bytes()].concat();
    assert!(grep.host_remainder(&data, &[beyond]).is_err());
    let stats = StatisticsApp::with_row_values(4).unwrap();
    let data = stats.generate(1, 64).unwrap();
    assert!(stats.host_remainder(&data, &[vec![0; 16]]).is_err());
    let knn = KnnApp::with_features(4).unwrap();
    let data = knn.generate(1, 680).unwrap();
    assert!(knn.host_remainder(&data, &[vec![]]).is_err());
}
