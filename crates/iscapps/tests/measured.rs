//! The measured instruction counts (crates/iscapps/src/measured.rs) are current and complete.

use std::path::Path;

use nearflash_iscapps::measure::{
    measured, source_digest, table, table_digest, DIGEST_SOURCES, TABLE_PATH,
};
use nearflash_iscapps::{registry, APPS};

fn collect(root: &Path, at: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    if at.is_dir() {
        for entry in std::fs::read_dir(at).unwrap() {
            collect(root, &entry.unwrap().path(), out);
        }
    } else if at.extension().is_some_and(|e| e == "rs" || e == "toml") {
        let rel = at
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        out.push((rel, std::fs::read(at).unwrap()));
    } else {
        assert!(at.exists(), "{} is listed in DIGEST_SOURCES", at.display());
    }
}

/// Story: someone edits a drive program (or the stream framing, the generators, the fuel
/// schedule, the measurer) and forgets to re-measure; this fails until they do.
#[test]
fn the_measured_table_was_measured_from_the_current_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap();
    let mut files = Vec::new();
    for s in DIGEST_SOURCES {
        collect(&root, &root.join(s), &mut files);
    }
    files.retain(|(p, _)| p != TABLE_PATH);
    files.sort();
    let now = source_digest(files.iter().map(|(p, c)| (p.as_str(), c.as_slice())));
    assert_eq!(
        now,
        table_digest(),
        "sources changed since {TABLE_PATH} was measured: run scripts/measure-insider-costs.sh"
    );
}

#[test]
fn every_app_and_pass_is_measured_once_with_growing_fuel() {
    assert_eq!(table().len(), APPS.len());
    for app in registry() {
        let m = measured(app.name()).unwrap();
        assert_eq!(m.pass_fuel.len(), app.pass_count(), "{}", app.name());
        assert_eq!(m.output_bytes.len(), app.pass_count(), "{}", app.name());
        assert!(m.input_bytes[1] > m.input_bytes[0], "{}", app.name());
        for (pass, f) in m.pass_fuel.iter().enumerate() {
            assert!(
                f[1] > f[0],
                "{} pass {pass}: fuel grows with the input",
                app.name()
            );
            let c = app.program(pass).unwrap().cost();
            assert_eq!(
                Some(c.instructions_per_byte),
                m.drive_instructions_per_byte(pass)
            );
            assert!(c.instructions_per_byte > 0.0);
        }
    }
}
