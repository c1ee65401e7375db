//! `report.html`: one self-contained page — how many claims hold (per model variant), the
//! claims table (paper vs ours, with each claim's verdict), then sections of prose and inline
//! SVG figures at the column's full width, then the runs table.

use crate::svg::{escape, fmt_value};
use crate::{Claim, Run, Summary, Verdict, NO_CHANGE_PCT, TIE_RATIO};
use std::fmt::Write;

/// A section of the report: a heading, paragraphs and figures (SVG strings).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    pub heading: String,
    pub paragraphs: Vec<String>,
    pub figures: Vec<String>,
}

/// The page: a title, an introduction and sections; the summary supplies the tables.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub title: String,
    pub intro: Vec<String>,
    pub sections: Vec<Section>,
}

/// The CSS class of a verdict's cell (`render`'s style colours it).
pub fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Within => "within",
        Verdict::DirectionHolds => "direction",
        Verdict::Off => "off",
        Verdict::OwnBound => "own",
    }
}

/// "13 of 19 within 25% · 4 direction holds · 2 off" for the claims of one variant, with
/// the claims against our own bounds counted apart.
pub fn verdict_counts(claims: &[&Claim]) -> String {
    let judged: Vec<Verdict> = claims
        .iter()
        .map(|c| c.verdict())
        .filter(|v| *v != Verdict::OwnBound)
        .collect();
    let n = |v: Verdict| judged.iter().filter(|x| **x == v).count();
    let mut s = format!(
        "{} of {} {} · {} {} · {} {}",
        n(Verdict::Within),
        judged.len(),
        Verdict::Within.name(),
        n(Verdict::DirectionHolds),
        Verdict::DirectionHolds.name(),
        n(Verdict::Off),
        Verdict::Off.name()
    );
    let own = claims.len() - judged.len();
    if own > 0 {
        let _ = write!(s, " · {own} against a bound of our own");
    }
    s
}

/// The claims' variants in order of first appearance (`""`, the default, first).
fn variants(claims: &[Claim]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for c in claims {
        if !v.contains(&c.variant()) {
            v.push(c.variant());
        }
    }
    v
}

impl Page {
    /// The page with `summary`'s claims and runs as tables.
    pub fn render(&self, summary: &Summary) -> String {
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
             <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;line-height:1.4}}\
             table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #bbb;padding:3px 8px;\
             text-align:right;vertical-align:top;white-space:nowrap}}td.l,th.l{{text-align:left;white-space:normal}}\
             svg{{display:block;margin:1em 0;width:100%;height:auto}}\
             .within{{background:#d9f2d9}}.direction{{background:#fdf1c7}}.off{{background:#f8d4d0}}\
             .own{{background:#eee}}td.v{{text-align:left;white-space:nowrap;font-weight:bold}}\
             p.count{{font-size:1.15em}}table.claims{{width:100%}}table.claims td:first-child{{width:24%}}</style></head><body><h1>{t}</h1>",
            t = escape(&self.title)
        );
        let _ = write!(
            h,
            "<p>Paper: <b>{}</b> · fidelity: <b>{}</b> · seed {} · {} runs · wall {:.1} s</p>",
            escape(&summary.paper),
            escape(&summary.fidelity),
            summary.seed,
            summary.runs.len(),
            summary.wall_s
        );
        for variant in variants(&summary.claims) {
            let of: Vec<&Claim> = summary
                .claims
                .iter()
                .filter(|c| c.variant() == variant)
                .collect();
            let under = if variant.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape(variant))
            };
            let _ = write!(
                h,
                "<p class=\"count\">Claims{under}: <b>{}</b></p>",
                verdict_counts(&of)
            );
        }
        for p in &self.intro {
            let _ = write!(h, "<p>{}</p>", escape(p));
        }
        let _ = write!(
            h,
            "<h2>Claims: paper vs ours</h2><p>Verdict: <span class=\"within\">{}</span> of the \
             paper's value; else <span class=\"direction\">{}</span> when ours lies on the same \
             side of the claim's baseline (a tie: {}% change, a ratio of {}) as the paper's; else \
             <span class=\"off\">{}</span>. A level (a share, a rate) has no baseline.</p>\
             <table class=\"claims\"><tr><th class=\"l\">claim</th><th>reference</th><th>ours</th>\
             <th class=\"l\">verdict</th><th class=\"l\">unit</th><th class=\"l\">note</th></tr>",
            Verdict::Within.name(),
            Verdict::DirectionHolds.name(),
            fmt_value(NO_CHANGE_PCT.unwrap_or_default()),
            fmt_value(TIE_RATIO.unwrap_or_default()),
            Verdict::Off.name()
        );
        for c in &summary.claims {
            let v = c.verdict();
            let _ = write!(
                h,
                "<tr><td class=\"l\"><b>{}</b><br>{}</td><td>{}{}</td><td>{}</td><td class=\"v {}\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                escape(&c.id),
                escape(&c.description),
                fmt_value(c.paper),
                match c.reference {
                    crate::Reference::PaperFigure => "<br><small>paper</small>",
                    crate::Reference::OwnBound => "<br><small>our bound</small>",
                    crate::Reference::Direction => "<br><small>paper's direction</small>",
                },
                fmt_value(c.ours),
                verdict_class(v),
                v.name(),
                escape(&c.unit),
                escape(&c.note)
            );
        }
        h.push_str("</table>");
        for s in &self.sections {
            let _ = write!(h, "<h2>{}</h2>", escape(&s.heading));
            for p in &s.paragraphs {
                let _ = write!(h, "<p>{}</p>", escape(p));
            }
            for f in &s.figures {
                h.push_str(f);
            }
        }
        runs_table(&mut h, &summary.runs);
        h.push_str("</body></html>\n");
        h
    }
}

/// The runs table. The throughput, latency, energy and utilization columns appear only when
/// some run measured them, and a run that did not shows "—" there: never a 0 that reads as a
/// measurement, nor a column of dashes.
fn runs_table(h: &mut String, runs: &[Run]) {
    let energy = runs.iter().any(|r| r.energy_total_j().is_some());
    let utilization = runs.iter().any(|r| r.utilization.is_some());
    let throughput = runs.iter().any(|r| r.throughput_mb_s.is_some());
    let latency = runs.iter().any(|r| r.latency_ms.is_some());
    h.push_str("<h2>Runs</h2><table><tr><th class=\"l\">system</th><th class=\"l\">workload</th>");
    if throughput {
        h.push_str("<th>MB/s</th>");
    }
    if latency {
        h.push_str("<th>latency avg ms</th>");
    }
    if energy {
        h.push_str("<th>energy J</th>");
    }
    if utilization {
        h.push_str("<th>utilization</th>");
    }
    h.push_str("<th>sim s</th></tr>");
    for r in runs {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>",
            escape(&r.system),
            escape(&r.workload),
        );
        if throughput {
            let _ = write!(
                h,
                "<td>{}</td>",
                r.throughput_mb_s.map_or("—".into(), fmt_value)
            );
        }
        if latency {
            let _ = write!(
                h,
                "<td>{}</td>",
                r.latency_ms
                    .as_ref()
                    .map_or("—".into(), |l| fmt_value(l.avg)),
            );
        }
        if energy {
            let _ = write!(
                h,
                "<td>{}</td>",
                r.energy_total_j().map_or("—".into(), fmt_value)
            );
        }
        if utilization {
            let _ = write!(
                h,
                "<td>{}</td>",
                r.utilization
                    .map_or("—".into(), |u| format!("{:.1}%", u * 100.0))
            );
        }
        let _ = write!(h, "<td>{}</td></tr>", fmt_value(r.sim_s));
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LatencyMs, Reference};
    use std::collections::BTreeMap;

    fn claim(id: &str, paper: f64, ours: f64, reference: Reference) -> Claim {
        Claim {
            id: id.into(),
            description: "a < b".into(),
            paper,
            ours,
            unit: "%".into(),
            note: "why".into(),
            reference,
            baseline: NO_CHANGE_PCT,
        }
    }

    fn run(energy_j: BTreeMap<String, f64>, utilization: Option<f64>) -> Run {
        Run {
            system: "s".into(),
            workload: "w".into(),
            throughput_mb_s: Some(1.0),
            latency_ms: Some(LatencyMs {
                min: 1.0,
                avg: 1.0,
                max: 1.0,
            }),
            energy_j,
            utilization,
            sim_s: 1.0,
            extra: BTreeMap::new(),
        }
    }

    fn summary(claims: Vec<Claim>, runs: Vec<Run>) -> Summary {
        Summary {
            paper: "x".into(),
            fidelity: "timing".into(),
            seed: 3,
            claims,
            runs,
            wall_s: 1.0,
        }
    }

    #[test]
    fn page_lists_every_claim_with_its_verdict_and_escapes_text() {
        let s = summary(
            vec![claim("c1", 127.0, 80.5, Reference::PaperFigure)],
            vec![],
        );
        let page = Page {
            title: "T".into(),
            intro: vec!["i".into()],
            sections: vec![Section {
                heading: "S".into(),
                paragraphs: vec!["p".into()],
                figures: vec!["<svg></svg>".into()],
            }],
        };
        let html = page.render(&s);
        assert!(html.contains("<b>c1</b><br>a &lt; b"));
        assert!(html.contains(
            "<td>127<br><small>paper</small></td><td>80.5</td>\
             <td class=\"v direction\">direction holds</td>"
        ));
        assert!(html.contains("<svg></svg>"));
        assert!(html.ends_with("</html>\n"));
    }

    #[test]
    fn the_count_at_the_top_judges_each_model_variant_apart_and_leaves_own_bounds_out() {
        let s = summary(
            vec![
                claim("a", 100.0, 110.0, Reference::PaperFigure),
                claim("b", 100.0, 10.0, Reference::PaperFigure),
                claim("c", 100.0, -10.0, Reference::PaperFigure),
                claim("d", 10.0, 0.2, Reference::OwnBound),
                claim("a.table2", 100.0, 50.0, Reference::PaperFigure),
            ],
            vec![],
        );
        let html = Page::default().render(&s);
        assert!(
            html.contains(
                "Claims: <b>1 of 3 within 25% · 1 direction holds · 1 off · 1 against a bound \
                 of our own</b>"
            ),
            "{html}"
        );
        assert!(
            html.contains("Claims (table2): <b>0 of 1 within 25% · 1 direction holds · 0 off</b>"),
            "{html}"
        );
    }

    /// Story: every INSIDER, Active Flash and Hayagui run printed energy "-0.00" and every
    /// Hayagui run utilization "0.0%" — numbers no run measured.
    #[test]
    fn energy_and_utilization_columns_appear_only_when_measured() {
        let none = Page::default().render(&summary(vec![], vec![run(BTreeMap::new(), None)]));
        assert!(
            !none.contains("energy J") && !none.contains("utilization"),
            "{none}"
        );
        assert!(!none.contains("-0"), "{none}");
        let parts = BTreeMap::from([("a".to_string(), 1.5), ("total".to_string(), 1.5)]);
        let some = Page::default().render(&summary(
            vec![],
            vec![run(parts, Some(0.5)), run(BTreeMap::new(), None)],
        ));
        assert!(
            some.contains("<th>energy J</th><th>utilization</th>"),
            "{some}"
        );
        assert!(some.contains("<td>1.5</td><td>50.0%</td>"), "{some}");
        assert!(some.contains("<td>—</td><td>—</td>"), "{some}");
    }

    /// Hayagui's YCSB and genome runs printed "0" MB/s: their figures are operations per
    /// second and phase times, not data rates.
    #[test]
    fn the_throughput_column_appears_only_when_some_run_measures_one() {
        let mut unmeasured = run(BTreeMap::new(), None);
        unmeasured.throughput_mb_s = None;
        let none = Page::default().render(&summary(vec![], vec![unmeasured.clone()]));
        assert!(!none.contains("MB/s"), "{none}");
        let some = Page::default().render(&summary(
            vec![],
            vec![run(BTreeMap::new(), None), unmeasured],
        ));
        assert!(some.contains("<th>MB/s</th>"), "{some}");
        assert!(some.contains("<td class=\"l\">w</td><td>—</td>"), "{some}");
    }

    /// Story: every row of INSIDER's runs table printed latency "—": no run measures one,
    /// so the column was dashes only.
    #[test]
    fn the_latency_column_appears_only_when_some_run_measures_one() {
        let mut unmeasured = run(BTreeMap::new(), None);
        unmeasured.latency_ms = None;
        let none = Page::default().render(&summary(vec![], vec![unmeasured.clone()]));
        assert!(!none.contains("latency"), "{none}");
        let some = Page::default().render(&summary(
            vec![],
            vec![run(BTreeMap::new(), None), unmeasured],
        ));
        assert!(some.contains("<th>latency avg ms</th>"), "{some}");
        assert!(some.contains("<td>1</td><td>—</td>"), "{some}");
    }
}
