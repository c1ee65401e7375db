//! `DIR/summary.html`: one self-contained page of a finished sweep — for every numeric metric,
//! a line chart of it against every swept parameter (one line per value of another swept
//! parameter, the mean over the rest and the seeds; bars where the parameter is not a number)
//! and heat maps of it over pairs of swept parameters (the mean over the rest). Charts come
//! from `nearflash-report`'s SVG, so the page is a pure function of the table.

use nearflash_report::svg::{escape, BarChart, HeatMap, LineChart, Series};
use std::fmt::Write;

/// Most parameter pairs drawn as heat maps per metric.
const HEAT_PAIRS_MAX: usize = 3;

/// Splits a CSV row into cells (quoted cells may hold commas and doubled quotes).
pub fn parse_row(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            (c, _) => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

/// Distinct values of a column in first-appearance order, numerically sorted if all numbers.
fn levels(rows: &[Vec<String>], col: usize) -> (Vec<String>, bool) {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        if !seen.contains(&r[col]) {
            seen.push(r[col].clone());
        }
    }
    let numeric = seen.iter().all(|v| v.parse::<f64>().is_ok());
    if numeric {
        seen.sort_by(|a, b| {
            a.parse::<f64>()
                .unwrap()
                .total_cmp(&b.parse::<f64>().unwrap())
        });
    }
    (seen, numeric)
}

/// The mean of `metric` over rows matching `filter`.
fn mean(rows: &[Vec<String>], metric: usize, filter: impl Fn(&[String]) -> bool) -> Option<f64> {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| filter(r))
        .filter_map(|r| r[metric].parse::<f64>().ok())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The page for a table of `header` columns (point, seed, `swept`..., metrics...) and `rows`.
pub fn page(
    title: &str,
    spec_text: &str,
    swept: &[String],
    header: &[String],
    rows: &[String],
) -> String {
    let rows: Vec<Vec<String>> = rows.iter().map(|l| parse_row(l)).collect();
    let first_metric = 2 + swept.len();
    let mut body = String::new();
    for m in first_metric..header.len() {
        if !rows.iter().all(|r| r[m].parse::<f64>().is_ok()) {
            continue; // a hash or a name: nothing to plot
        }
        let metric = &header[m];
        let _ = write!(body, "<h2>{}</h2>", escape(metric));
        for pi in 0..swept.len() {
            body.push_str(&parameter_chart(&rows, header, swept, m, pi));
        }
        heat_maps(&mut body, &rows, swept, m, metric);
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}\
         svg{{display:block;margin:1em 0;width:100%;height:auto}}\
         pre{{background:#f4f4f4;padding:1em}}</style></head>\
         <body><h1>{t}</h1><p>{n} points; the table is <a href=\"results.csv\">results.csv</a>. \
         Each chart shows the mean over seeds and over the swept parameters it does not name.</p>\
         <pre>{spec}</pre>{body}</body></html>\n",
        t = escape(title),
        n = rows.len(),
        spec = escape(spec_text),
    )
}

/// The chart of metric column `m` against swept parameter `pi`: lines over a numeric
/// parameter, bars over a named one, one series per value of the next swept parameter.
fn parameter_chart(
    rows: &[Vec<String>],
    header: &[String],
    swept: &[String],
    m: usize,
    pi: usize,
) -> String {
    let metric = &header[m];
    let p = &swept[pi];
    let pc = 2 + pi;
    let (xs, numeric) = levels(rows, pc);
    // One line per value of the next swept parameter (if any).
    let other = (0..swept.len()).find(|&q| q != pi).map(|q| 2 + q);
    let groups: Vec<(String, Option<(usize, String)>)> = match other {
        Some(qc) => levels(rows, qc)
            .0
            .into_iter()
            .map(|v| (format!("{} = {v}", header[qc]), Some((qc, v))))
            .collect(),
        None => vec![("mean over seeds".into(), None)],
    };
    let value = |x: &str, g: &Option<(usize, String)>| {
        mean(rows, m, |r| {
            r[pc] == x && g.as_ref().is_none_or(|(qc, v)| r[*qc] == *v)
        })
    };
    if numeric {
        LineChart {
            title: format!("{metric} vs {p}"),
            x_label: p.clone(),
            y_label: metric.clone(),
            series: groups
                .iter()
                .map(|(name, g)| Series {
                    name: name.clone(),
                    points: xs
                        .iter()
                        .filter_map(|x| Some((x.parse().ok()?, value(x, g)?)))
                        .collect(),
                })
                .collect(),
            step: false,
        }
        .to_svg()
    } else {
        BarChart {
            title: format!("{metric} vs {p}"),
            y_label: metric.clone(),
            categories: xs.clone(),
            groups: groups
                .iter()
                .map(|(name, g)| {
                    (
                        name.clone(),
                        xs.iter().map(|x| value(x, g).unwrap_or(0.0)).collect(),
                    )
                })
                .collect(),
            stacked: false,
        }
        .to_svg()
    }
}

/// Appends the heat maps of metric column `m` over pairs of swept parameters (at most
/// `HEAT_PAIRS_MAX`).
fn heat_maps(body: &mut String, rows: &[Vec<String>], swept: &[String], m: usize, metric: &str) {
    let pairs = (0..swept.len())
        .flat_map(|a| (a + 1..swept.len()).map(move |b| (a, b)))
        .take(HEAT_PAIRS_MAX);
    for (a, b) in pairs {
        let (ac, bc) = (2 + a, 2 + b);
        let (cols, _) = levels(rows, ac);
        let (rs, _) = levels(rows, bc);
        let heat = HeatMap {
            title: format!("{metric} over {} × {}", swept[a], swept[b]),
            x_label: swept[a].clone(),
            y_label: swept[b].clone(),
            values: rs
                .iter()
                .map(|y| {
                    cols.iter()
                        .map(|x| mean(rows, m, |r| r[ac] == *x && r[bc] == *y))
                        .collect()
                })
                .collect(),
            columns: cols,
            rows: rs,
        };
        body.push_str(&heat.to_svg());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_round_trip_and_the_page_draws_lines_and_a_heat_map() {
        assert_eq!(parse_row("a,\"b,c\",\"d\"\"e\""), ["a", "b,c", "d\"e"]);
        let header: Vec<String> = ["point", "seed", "x", "y", "m"].map(String::from).into();
        let rows: Vec<String> = ["p1,1,1,a,10", "p2,1,1,b,20", "p3,1,2,a,30", "p4,1,2,b,40"]
            .map(String::from)
            .into();
        let html = page(
            "t",
            "job = \"io\"",
            &["x".into(), "y".into()],
            &header,
            &rows,
        );
        assert!(html.contains("m vs x") && html.contains("m vs y"), "{html}");
        assert!(html.contains("m over x × y"), "{html}");
    }
}
