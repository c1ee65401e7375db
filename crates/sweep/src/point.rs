//! A point of a sweep: one combination of swept values and one seed, as the job's options
//! document, identified by a hash of (the preset after overrides, the workload options, the
//! seed, the program version) — equal inputs give equal hashes whatever the spec's layout,
//! so a table's rows are recognised when a sweep resumes. A point serialises whole (JSON), so
//! it can be shipped to another process (a Ray worker) and run there: `run` returns its
//! table row.

use crate::error::SweepError;
use crate::job::{is_text_metric, lookup, Job};
use crate::spec::{Combination, Spec};
use crate::table::csv_cell;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub job: String,
    /// 16 hex digits.
    pub hash: String,
    pub seed: u64,
    /// The swept values as table cells, in `Spec::swept` order.
    pub cells: Vec<String>,
    /// The job's options document.
    pub doc: serde_json::Value,
    pub metrics: Vec<String>,
}

/// FNV-1a, 64 bits, over bytes (stable across versions and machines; not cryptographic —
/// a sweep of 10^5 points collides with probability about 3 × 10^-10).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn toml_cell(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The points of `spec`: each combination times each seed, checked (options and preset)
/// before any runs.
pub fn points(spec: &Spec) -> Result<Vec<Point>, SweepError> {
    let combos = spec.combinations();
    let mut out = Vec::with_capacity(combos.len() * spec.seeds.len());
    for c in &combos {
        for &seed in &spec.seeds {
            out.push(point(spec, c, seed)?);
        }
    }
    Ok(out)
}

fn point(spec: &Spec, values: &Combination, seed: u64) -> Result<Point, SweepError> {
    let mut workload: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    let mut overrides: BTreeMap<&str, &toml::Value> = BTreeMap::new();
    let named = spec.swept.iter().zip(values);
    for (k, v) in spec.fixed.iter().chain(named) {
        if k.contains('.') {
            overrides.insert(k, v);
        } else {
            workload.insert(
                k.clone(),
                serde_json::to_value(v).expect("a TOML value is JSON"),
            );
        }
    }
    let params = || {
        spec.swept
            .iter()
            .zip(values)
            .map(|(k, v)| format!("{k}={v}"))
            .chain(std::iter::once(format!("seed={seed}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let preset_name = match workload.remove("preset") {
        Some(serde_json::Value::String(p)) => p,
        Some(other) => {
            return Err(SweepError::Spec {
                source_name: "parameters".into(),
                reason: format!("preset must be a name or a path, got {other}"),
            })
        }
        None => spec
            .preset
            .clone()
            .unwrap_or_else(|| spec.job.default_preset().to_string()),
    };
    let overrides = nearflash_jobs::overrides_from(overrides);
    let fail = |source: nearflash_jobs::JobError| SweepError::Point {
        point: "-".into(),
        params: params(),
        source: Box::new(source),
    };
    let preset = nearflash_jobs::preset(&preset_name, &overrides).map_err(fail)?;
    let identity = serde_json::json!({
        "job": spec.job.name(),
        "preset": preset,
        "workload": workload,
        "seed": seed,
        "version": nearflash_jobs::VERSION,
    });
    let hash = format!("{:016x}", fnv1a(identity.to_string().as_bytes()));
    let mut doc = serde_json::Map::new();
    doc.extend(workload);
    doc.insert("preset".into(), preset_name.into());
    doc.insert("overrides".into(), overrides.into());
    doc.insert("seed".into(), seed.into());
    let doc = serde_json::Value::Object(doc);
    spec.job.check(doc.clone()).map_err(fail)?;
    Ok(Point {
        job: spec.job.name().into(),
        hash,
        seed,
        cells: values.iter().map(toml_cell).collect(),
        doc,
        metrics: spec.metrics.clone(),
    })
}

impl Point {
    /// Runs the point and returns its table row (without the trailing newline).
    pub fn run(&self) -> Result<String, SweepError> {
        let job = Job::named(&self.job).map_err(|reason| SweepError::Spec {
            source_name: "point".into(),
            reason,
        })?;
        let fail = |source| SweepError::Point {
            point: self.hash.clone(),
            params: self.describe(),
            source: Box::new(source),
        };
        let out = job.run(self.doc.clone()).map_err(fail)?;
        let mut cells = vec![self.hash.clone(), self.seed.to_string()];
        cells.extend(self.cells.iter().cloned());
        for m in &self.metrics {
            let v = lookup(&out, m).ok_or_else(|| {
                let known = match &out {
                    serde_json::Value::Object(o) => {
                        o.keys().cloned().collect::<Vec<_>>().join(", ")
                    }
                    _ => String::new(),
                };
                fail(nearflash_jobs::JobError::Options {
                    job: "metrics",
                    reason: format!(
                        "'{m}' is not in the {} job's output (top-level fields: {known})",
                        self.job
                    ),
                })
            })?;
            cells.push(match v {
                serde_json::Value::String(s) if is_text_metric(m) => s.clone(),
                serde_json::Value::String(s) => {
                    // A table's metric cells are figures (and trace hashes): a resumed table
                    // keeps only those (`table::Columns`).
                    return Err(fail(nearflash_jobs::JobError::Options {
                        job: "metrics",
                        reason: format!(
                            "'{m}' is text ('{}'), not a figure: a table records numbers \
                             (and trace hashes)",
                            s.chars().take(40).collect::<String>()
                        ),
                    }));
                }
                serde_json::Value::Null => String::new(),
                serde_json::Value::Object(o) => {
                    // A table cell holds one figure, not a JSON document.
                    let fields: Vec<String> = o.keys().map(|k| format!("{m}.{k}")).collect();
                    return Err(fail(nearflash_jobs::JobError::Options {
                        job: "metrics",
                        reason: format!(
                            "'{m}' is a group of figures, not one: name one of {}",
                            fields.join(", ")
                        ),
                    }));
                }
                serde_json::Value::Array(_) => {
                    return Err(fail(nearflash_jobs::JobError::Options {
                        job: "metrics",
                        reason: format!(
                            "'{m}' is a list of figures, not one: name one by its index, \
                             e.g. {m}.0"
                        ),
                    }));
                }
                other => other.to_string(),
            });
        }
        Ok(cells
            .iter()
            .map(|c| csv_cell(c))
            .collect::<Vec<_>>()
            .join(","))
    }

    /// `name=value, ...` of the point's options, for messages.
    pub fn describe(&self) -> String {
        self.doc.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Story (issue 28): a metric naming a group of figures landed as JSON inside a CSV cell.
    #[test]
    fn a_metric_naming_a_group_of_figures_is_refused_naming_its_fields() {
        let spec = Spec::parse(
            "t",
            "job = \"io\"\npreset = \"test-min\"\nmetrics = [\"latency_us\"]\n[fixed]\npattern = \"rand-read\"\nrequests = 20\n[grid]\nqueue_depth = [1]\n",
        )
        .unwrap();
        let e = points(&spec).unwrap()[0].run().unwrap_err().to_string();
        assert!(e.contains("latency_us.p99"), "{e}");
    }

    /// A text figure other than a trace hash is refused as a metric: a resumed table could not
    /// tell it from a damaged cell.
    #[test]
    fn a_metric_naming_text_other_than_a_trace_hash_is_refused() {
        let spec = Spec::parse(
            "t",
            "job = \"io\"\npreset = \"test-min\"\nmetrics = [\"preset\", \"trace_hash\"]\n[fixed]\npattern = \"rand-read\"\nrequests = 20\n[grid]\nqueue_depth = [1]\n",
        )
        .unwrap();
        let e = points(&spec).unwrap()[0].run().unwrap_err().to_string();
        assert!(e.contains("'preset' is text"), "{e}");
    }

    #[test]
    fn the_hash_follows_the_preset_after_overrides_not_the_spec_layout() {
        // The same device set by an override in [fixed] or in [grid] is the same point.
        let a = Spec::parse(
            "a",
            "job = \"io\"\npreset = \"test-min\"\n[fixed]\npattern = \"rand-read\"\nrequests = 50\n\"flash.channels\" = 2\n[grid]\nqueue_depth = [4]\n",
        )
        .unwrap();
        let b = Spec::parse(
            "b",
            "job = \"io\"\npreset = \"test-min\"\n[fixed]\npattern = \"rand-read\"\nrequests = 50\nqueue_depth = 4\n[grid]\n\"flash.channels\" = [2, 4]\n",
        )
        .unwrap();
        let pa = points(&a).unwrap();
        let pb = points(&b).unwrap();
        assert_eq!(pa[0].hash, pb[0].hash);
        assert_ne!(pb[0].hash, pb[1].hash);
    }

    #[test]
    fn an_unknown_option_or_preset_field_is_refused_before_any_run() {
        let e = points(
            &Spec::parse(
                "t",
                "job = \"io\"\npreset = \"test-min\"\n[grid]\nqueue_dpeth = [4]\n",
            )
            .unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `queue_dpeth`"), "{e}");
        let e = points(
            &Spec::parse(
                "t",
                "job = \"io\"\npreset = \"test-min\"\n[grid]\n\"flash.chanels\" = [4]\n",
            )
            .unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("chanels"), "{e}");
    }
}
