//! A sweep's spec (TOML): the job, the base preset, what every point shares (`[fixed]`), the
//! grid (`[grid]`: a list of values per parameter, every combination) and random sampling
//! (`[random]`: `samples` draws per grid point from ranges or choices, from its own seed),
//! times `seeds`. A parameter named `table.field` overrides the preset; any other name is an
//! option of the job (`requests`, `queue_depth`, `system`...). The spec is checked whole
//! before anything runs: an unknown key, an empty or non-list grid entry, a sweep of nothing,
//! a bad range, an unknown metric or a wall-clock metric is an error naming it.
//!
//! ```toml
//! job = "io"
//! preset = "test-min"
//! seeds = [1, 2]
//! metrics = ["iops", "waf", "latency_us.p99"]
//! [fixed]
//! pattern = "rand-write"
//! requests = 2000
//! [grid]
//! "flash.channels" = [2, 4]
//! "ftl.gc_policy" = ["greedy", "round-robin"]
//! [random]
//! samples = 4
//! seed = 7
//! params = { queue_depth = { min = 1, max = 64 } }
//! ```

use crate::error::SweepError;
use crate::job::Job;
use nearflash_sim::SimRng;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Most points a sweep may have (grid × samples × seeds).
pub const POINTS_MAX: usize = 100_000;
/// Most bytes of a spec file.
pub const SPEC_BYTES_MAX: u64 = 1 << 20;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    job: String,
    preset: Option<String>,
    #[serde(default)]
    seeds: Option<Vec<u64>>,
    #[serde(default)]
    metrics: Option<Vec<String>>,
    #[serde(default)]
    fixed: toml::Table,
    grid: Option<toml::Table>,
    random: Option<RandomFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomFile {
    samples: u32,
    #[serde(default = "one")]
    seed: u64,
    params: BTreeMap<String, RangeFile>,
}

fn one() -> u64 {
    1
}

/// A random parameter: a numeric range (integers if both ends are), or a list to pick from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeFile {
    min: Option<toml::Value>,
    max: Option<toml::Value>,
    choices: Option<Vec<toml::Value>>,
}

#[derive(Clone, Debug)]
enum Draw {
    Int(i64, i64),
    Float(f64, f64),
    Choice(Vec<toml::Value>),
}

/// A checked spec.
#[derive(Clone, Debug)]
pub struct Spec {
    pub job: Job,
    pub preset: Option<String>,
    pub seeds: Vec<u64>,
    pub metrics: Vec<String>,
    pub fixed: toml::Table,
    /// Swept parameters in column order: the grid's, then the random ones (each in name
    /// order: TOML tables are read sorted).
    pub swept: Vec<String>,
    grid: Vec<(String, Vec<toml::Value>)>,
    random: Option<Random>,
}

/// `[random]`, checked: draws per grid point, the RNG's seed, and each parameter's draw.
#[derive(Clone, Debug)]
struct Random {
    samples: u32,
    seed: u64,
    draws: Vec<(String, Draw)>,
}

/// One combination of swept values (before seeds), in `Spec::swept` order.
pub type Combination = Vec<toml::Value>;

impl Spec {
    /// Parses and checks a spec; `source_name` names it in errors.
    pub fn parse(source_name: &str, text: &str) -> Result<Spec, SweepError> {
        let bad = |reason: String| SweepError::Spec {
            source_name: source_name.to_string(),
            reason,
        };
        // Parsed, then typed from the value: a syntax error keeps its line, a type error is
        // told with its dotted key (`random.samples`), which the line alone does not give.
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| bad(e.to_string()))?;
        let f: SpecFile = toml::Value::Table(table)
            .try_into()
            .map_err(|e| bad(typed(&e)))?;
        let job = Job::named(&f.job).map_err(bad)?;
        let seeds = f.seeds.unwrap_or_else(|| vec![1]);
        if seeds.is_empty() {
            return Err(bad("seeds is empty: give at least one seed".into()));
        }
        let metrics = metrics_of(job, f.metrics).map_err(bad)?;
        for k in f.fixed.keys() {
            check_name(k).map_err(bad)?;
        }
        let grid = grid_of(f.grid).map_err(bad)?;
        let random = f
            .random
            .map(|r| random_of(r, &grid))
            .transpose()
            .map_err(bad)?;
        let swept = swept_of(&grid, random.as_ref(), &f.fixed).map_err(bad)?;
        let combos = grid.iter().map(|(_, v)| v.len()).product::<usize>();
        let samples = random.as_ref().map_or(1, |r| r.samples as usize);
        let total = combos.saturating_mul(samples).saturating_mul(seeds.len());
        if total > POINTS_MAX {
            return Err(bad(format!(
                "{total} points: more than the {POINTS_MAX} a sweep may have"
            )));
        }
        Ok(Spec {
            job,
            preset: f.preset,
            seeds,
            metrics,
            fixed: f.fixed,
            swept,
            grid,
            random,
        })
    }

    /// Every combination of swept values, grid first (last parameter fastest), each grid
    /// point with its random draws (one RNG from `random.seed`, drawn in this order).
    pub fn combinations(&self) -> Vec<Combination> {
        let mut out: Vec<Combination> = vec![Vec::new()];
        for (_, values) in &self.grid {
            out = out
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(v.clone());
                        c
                    })
                })
                .collect();
        }
        let Some(r) = &self.random else {
            return out;
        };
        let mut rng = SimRng::seed_from_u64(r.seed);
        let mut with = Vec::with_capacity(out.len() * r.samples as usize);
        for c in out {
            for _ in 0..r.samples {
                let mut c = c.clone();
                for (_, d) in &r.draws {
                    c.push(draw(&mut rng, d));
                }
                with.push(c);
            }
        }
        with
    }
}

/// A type error of the spec as "key: what was expected, what was given", in words rather
/// than serde's Rust type names ("expected u32").
fn typed(e: &toml::de::Error) -> String {
    let message = e
        .message()
        .replace("expected a sequence", "expected a list")
        .replace("expected u32", "expected a whole number >= 0")
        .replace("expected u64", "expected a whole number >= 0")
        .replace("expected a string", "expected a string (in quotes)");
    match nearflash_preset::error_key(e) {
        Some(key) => format!("{key}: {message}"),
        None => message,
    }
}

/// The metrics a spec names (the job's defaults when it names none), each known to the job
/// and named once.
fn metrics_of(job: Job, named: Option<Vec<String>>) -> Result<Vec<String>, String> {
    let metrics = named.unwrap_or_else(|| {
        job.default_metrics()
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    if metrics.is_empty() {
        return Err("metrics is empty: name at least one figure".into());
    }
    for (i, m) in metrics.iter().enumerate() {
        job.check_metric(m)?;
        if metrics[..i].contains(m) {
            return Err(format!(
                "metrics names '{m}' twice (the table would have two such columns)"
            ));
        }
    }
    Ok(metrics)
}

/// `[grid]`, checked: each parameter with its non-empty list of values, in name order.
fn grid_of(grid: Option<toml::Table>) -> Result<Vec<(String, Vec<toml::Value>)>, String> {
    let mut out = Vec::new();
    for (k, v) in grid.iter().flatten() {
        check_name(k)?;
        let values = match v {
            toml::Value::Array(a) if a.is_empty() => {
                return Err(format!("grid.{k} is empty: give it at least one value"))
            }
            toml::Value::Array(a) => a.clone(),
            other => {
                return Err(format!(
                    "grid.{k} must be a list of values, got a {}",
                    other.type_str()
                ))
            }
        };
        out.push((k.clone(), values));
    }
    Ok(out)
}

/// `[random]`, checked: at least one sample and one parameter, none also in the grid, each
/// with a valid range.
fn random_of(r: RandomFile, grid: &[(String, Vec<toml::Value>)]) -> Result<Random, String> {
    if r.samples == 0 {
        return Err("random.samples must be at least 1".into());
    }
    if r.params.is_empty() {
        return Err("random.params is empty: name a parameter to draw".into());
    }
    let mut draws = Vec::new();
    for (k, range) in r.params {
        check_name(&k)?;
        if grid.iter().any(|(g, _)| *g == k) {
            return Err(format!("{k} is both in [grid] and in [random]"));
        }
        draws.push((k.clone(), draw_of(&k, range)?));
    }
    Ok(Random {
        samples: r.samples,
        seed: r.seed,
        draws,
    })
}

/// The swept parameters in column order (the grid's, then the random ones): at least one,
/// and none also fixed.
fn swept_of(
    grid: &[(String, Vec<toml::Value>)],
    random: Option<&Random>,
    fixed: &toml::Table,
) -> Result<Vec<String>, String> {
    if grid.is_empty() && random.is_none() {
        return Err(
            "the grid is empty: [grid] names no parameter and there is no [random] \
                    (a sweep needs at least one swept parameter)"
                .into(),
        );
    }
    let mut swept: Vec<String> = grid.iter().map(|(k, _)| k.clone()).collect();
    if let Some(r) = random {
        swept.extend(r.draws.iter().map(|(k, _)| k.clone()));
    }
    for k in &swept {
        if fixed.contains_key(k) {
            return Err(format!("{k} is both fixed and swept"));
        }
    }
    Ok(swept)
}

/// A parameter name: `table.field` (a preset field) or a job option; no empty parts.
fn check_name(k: &str) -> Result<(), String> {
    if k.is_empty() || k.split('.').any(str::is_empty) {
        return Err(format!(
            "'{k}' is not a parameter name (table.field or an option)"
        ));
    }
    if matches!(k, "seed" | "overrides") {
        return Err(format!(
            "'{k}' cannot be a parameter: seeds come from `seeds`, overrides are table.field names"
        ));
    }
    Ok(())
}

fn draw_of(k: &str, r: RangeFile) -> Result<Draw, String> {
    match (r.min, r.max, r.choices) {
        (None, None, Some(c)) if !c.is_empty() => Ok(Draw::Choice(c)),
        (None, None, Some(_)) => Err(format!("random.params.{k}.choices is empty")),
        (Some(toml::Value::Integer(a)), Some(toml::Value::Integer(b)), None) if a <= b => {
            Ok(Draw::Int(a, b))
        }
        (Some(a), Some(b), None) => {
            let num = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
            match (num(&a), num(&b)) {
                (Some(a), Some(b)) if a.is_finite() && b.is_finite() && a <= b => {
                    Ok(Draw::Float(a, b))
                }
                _ => Err(format!(
                    "random.params.{k}: min and max must be numbers with min <= max"
                )),
            }
        }
        _ => Err(format!(
            "random.params.{k}: give either min and max, or choices"
        )),
    }
}

fn draw(rng: &mut SimRng, d: &Draw) -> toml::Value {
    match d {
        Draw::Int(a, b) => {
            let span = (b - a) as u64 + 1;
            toml::Value::Integer(a + rng.below(span) as i64)
        }
        Draw::Float(a, b) => {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            toml::Value::Float(a + (b - a) * u)
        }
        Draw::Choice(c) => c[rng.below(c.len() as u64) as usize].clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str =
        "job = \"io\"\npreset = \"test-min\"\n[fixed]\npattern = \"rand-read\"\nrequests = 100\n";

    #[test]
    fn a_grid_expands_to_every_combination_last_parameter_fastest() {
        let s = Spec::parse(
            "t",
            &format!("{BASE}[grid]\n\"flash.channels\" = [1, 2]\nqueue_depth = [4, 8, 16]\n"),
        )
        .unwrap();
        let c = s.combinations();
        assert_eq!(c.len(), 6);
        assert_eq!(c[1], vec![toml::Value::Integer(1), toml::Value::Integer(8)]);
        assert_eq!(s.swept, ["flash.channels", "queue_depth"]);
    }

    #[test]
    fn random_draws_are_in_range_and_the_same_for_the_same_seed() {
        let text = format!(
            "{BASE}[random]\nsamples = 20\nseed = 3\nparams = {{ queue_depth = {{ min = 1, max = 4 }}, \"flash.read_latency_us\" = {{ min = 20.0, max = 80.0 }} }}\n"
        );
        let a = Spec::parse("t", &text).unwrap().combinations();
        let b = Spec::parse("t", &text).unwrap().combinations();
        assert_eq!(a, b);
        assert_eq!(a.len(), 20);
        for c in &a {
            let q = c[1].as_integer().unwrap();
            assert!((1..=4).contains(&q), "{c:?}");
            let l = c[0].as_float().unwrap();
            assert!((20.0..=80.0).contains(&l), "{c:?}");
        }
    }

    #[test]
    fn an_empty_grid_an_empty_entry_and_an_unknown_key_are_named() {
        let e = Spec::parse("t", BASE).unwrap_err().to_string();
        assert!(e.contains("the grid is empty"), "{e}");
        let e = Spec::parse("t", &format!("{BASE}[grid]\nqueue_depth = []\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("grid.queue_depth is empty"), "{e}");
        let e = Spec::parse(
            "t",
            &format!("colour = 1\n{BASE}[grid]\nqueue_depth = [1]\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `colour`"), "{e}");
        // Story (issue 28): type errors named neither the key (a table's key least of all)
        // nor the type in words.
        let e = Spec::parse(
            "t",
            &format!("seeds = \"1\"\n{BASE}[grid]\nqueue_depth = [1]\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with("seeds: invalid type: string \"1\", expected a list"),
            "{e}"
        );
        let e = Spec::parse(
            "t",
            &format!("{BASE}[random]\nsamples = \"x\"\nparams = {{ queue_depth = {{ min = 1, max = 2 }} }}\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with("random.samples: invalid type: string \"x\", expected a whole number >= 0"),
            "{e}"
        );
        let e = Spec::parse(
            "t",
            &format!("metrics = [\"wall_s\"]\n{BASE}[grid]\nqueue_depth = [1]\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("wall_s"), "{e}");
        // Story (issue 28): a metric named twice made two columns of it.
        let e = Spec::parse(
            "t",
            &format!("metrics = [\"iops\", \"iops\"]\n{BASE}[grid]\nqueue_depth = [1]\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("'iops' twice"), "{e}");
    }
}
