//! `report.html`: one self-contained page — the claims table (paper vs ours), then sections
//! of prose and inline SVG figures, then the runs table.

use crate::svg::escape;
use crate::Summary;
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

fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
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
             text-align:right;vertical-align:top}}td.l,th.l{{text-align:left}}svg{{display:block;margin:1em 0}}\
             </style></head><body><h1>{t}</h1>",
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
        for p in &self.intro {
            let _ = write!(h, "<p>{}</p>", escape(p));
        }
        h.push_str(
            "<h2>Claims: paper vs ours</h2><table><tr><th class=\"l\">claim</th>\
             <th>reference</th><th>ours</th><th class=\"l\">unit</th><th class=\"l\">note</th></tr>",
        );
        for c in &summary.claims {
            let _ = write!(
                h,
                "<tr><td class=\"l\"><b>{}</b><br>{}</td><td>{}{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                escape(&c.id),
                escape(&c.description),
                fmt_value(c.paper),
                match c.reference {
                    crate::Reference::PaperFigure => "<br><small>paper</small>",
                    crate::Reference::OwnBound => "<br><small>our bound</small>",
                    crate::Reference::Direction => "<br><small>paper's direction</small>",
                },
                fmt_value(c.ours),
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
        h.push_str(
            "<h2>Runs</h2><table><tr><th class=\"l\">system</th><th class=\"l\">workload</th>\
             <th>MB/s</th><th>latency avg ms</th><th>energy J</th><th>utilization</th><th>sim s</th></tr>",
        );
        for r in &summary.runs {
            let energy: f64 = r.energy_j.values().sum();
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td></tr>",
                escape(&r.system),
                escape(&r.workload),
                fmt_value(r.throughput_mb_s),
                r.latency_ms.as_ref().map_or("—".into(), |l| fmt_value(l.avg)),
                fmt_value(energy),
                r.utilization * 100.0,
                fmt_value(r.sim_s)
            );
        }
        h.push_str("</table></body></html>\n");
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Claim, Summary};

    #[test]
    fn page_lists_every_claim_and_escapes_text() {
        let s = Summary {
            paper: "x".into(),
            fidelity: "timing".into(),
            seed: 3,
            claims: vec![Claim {
                id: "c1".into(),
                description: "a < b".into(),
                paper: 127.0,
                ours: 80.5,
                unit: "%".into(),
                note: "why".into(),
                reference: crate::Reference::PaperFigure,
            }],
            runs: vec![],
            wall_s: 1.0,
        };
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
        assert!(html.contains("<td>127<br><small>paper</small></td><td>80.5</td>"));
        assert!(html.contains("<svg></svg>"));
        assert!(html.ends_with("</html>\n"));
    }
}
