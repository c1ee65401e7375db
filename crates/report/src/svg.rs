//! Small, dependency-free SVG charts: lines (x–y series), grouped bars and stacked bars.
//! Output is a pure function of the data, so a report is byte-identical for equal inputs.

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 160.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 56.0;
/// Colour-blind-safe palette (Okabe–Ito), cycled.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for SVG/HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// About five round tick values covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    (0..)
        .map(|i| first + f64::from(i) * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .collect()
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e6 || v.abs() < 1e-2 {
        format!("{v:.1e}")
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

struct Frame {
    x_lo: f64,
    x_hi: f64,
    y_lo: f64,
    y_hi: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x_lo) / (self.x_hi - self.x_lo).max(f64::MIN_POSITIVE) * (W - LEFT - RIGHT)
    }
    fn py(&self, y: f64) -> f64 {
        H - BOTTOM
            - (y - self.y_lo) / (self.y_hi - self.y_lo).max(f64::MIN_POSITIVE) * (H - TOP - BOTTOM)
    }
}

fn open(out: &mut String, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="12"><rect width="{W}" height="{H}" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        W / 2.0,
        escape(title)
    );
}

fn axes(out: &mut String, f: &Frame, x_label: &str, y_label: &str, x_ticks: bool) {
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
    let _ = write!(
        out,
        r#"<path d="M{x0} {y0}V{y1}H{x1}" fill="none" stroke="black"/>"#
    );
    for t in ticks(f.y_lo, f.y_hi) {
        let y = f.py(t);
        let _ = write!(
            out,
            r##"<line x1="{x0}" x2="{x1}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 4.0,
            y + 4.0,
            fmt_tick(t)
        );
    }
    if x_ticks {
        for t in ticks(f.x_lo, f.x_hi) {
            let x = f.px(t);
            let _ = write!(
                out,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{y1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
                y1 + 4.0,
                y1 + 16.0,
                fmt_tick(t)
            );
        }
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        H - 10.0,
        escape(x_label),
        (y0 + y1) / 2.0,
        escape(y_label)
    );
}

fn legend(out: &mut String, names: &[&str]) {
    for (i, n) in names.iter().enumerate() {
        let y = TOP + 8.0 + 18.0 * i as f64;
        let x = W - RIGHT + 12.0;
        let _ = write!(
            out,
            r#"<rect x="{x}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            y - 10.0,
            colour(i),
            x + 16.0,
            y,
            escape(n)
        );
    }
}

fn range(values: impl Iterator<Item = f64>, include_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if include_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * 0.05)
}

/// One named x–y series of a line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart: each series a polyline with point markers.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Step lines (a time series of per-interval values) instead of straight segments.
    pub step: bool,
}

impl LineChart {
    pub fn to_svg(&self) -> String {
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let (x_lo, x_hi) = range(all().map(|p| p.0), false);
        let (y_lo, y_hi) = range(all().map(|p| p.1), true);
        let f = Frame {
            x_lo,
            x_hi,
            y_lo,
            y_hi,
        };
        let mut out = String::new();
        open(&mut out, &self.title);
        axes(&mut out, &f, &self.x_label, &self.y_label, true);
        for (i, s) in self.series.iter().enumerate() {
            let mut d = String::new();
            let mut prev_y = None;
            for (k, &(x, y)) in s.points.iter().enumerate() {
                let (px, py) = (f.px(x), f.py(y));
                match (k, prev_y, self.step) {
                    (0, _, _) => {
                        let _ = write!(d, "M{px:.1} {py:.1}");
                    }
                    (_, Some(_), true) => {
                        let _ = write!(d, "H{px:.1}V{py:.1}");
                    }
                    _ => {
                        let _ = write!(d, "L{px:.1} {py:.1}");
                    }
                }
                prev_y = Some(py);
            }
            let _ = write!(
                out,
                r#"<path d="{d}" fill="none" stroke="{}" stroke-width="2"/>"#,
                colour(i)
            );
            if !self.step && s.points.len() <= 60 {
                for &(x, y) in &s.points {
                    let _ = write!(
                        out,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                        f.px(x),
                        f.py(y),
                        colour(i)
                    );
                }
            }
        }
        let names: Vec<&str> = self.series.iter().map(|s| s.name.as_str()).collect();
        legend(&mut out, &names);
        out.push_str("</svg>");
        out
    }
}

/// Bars per category, one bar per group side by side (`stacked == false`) or the groups
/// stacked into one bar (`stacked == true`, e.g. an energy breakdown).
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (group name, one value per category).
    pub groups: Vec<(String, Vec<f64>)>,
    pub stacked: bool,
}

impl BarChart {
    pub fn to_svg(&self) -> String {
        let n = self.categories.len().max(1);
        let value = |g: usize, c: usize| self.groups[g].1.get(c).copied().unwrap_or(0.0);
        let tops: Vec<f64> = if self.stacked {
            (0..n)
                .map(|c| (0..self.groups.len()).map(|g| value(g, c)).sum())
                .collect()
        } else {
            self.groups.iter().flat_map(|g| g.1.clone()).collect()
        };
        let (y_lo, y_hi) = range(tops.into_iter(), true);
        let f = Frame {
            x_lo: 0.0,
            x_hi: n as f64,
            y_lo,
            y_hi,
        };
        let mut out = String::new();
        open(&mut out, &self.title);
        axes(&mut out, &f, "", &self.y_label, false);
        let slot = (f.px(1.0) - f.px(0.0)) * 0.8;
        let per = if self.stacked {
            slot
        } else {
            slot / self.groups.len().max(1) as f64
        };
        for c in 0..n {
            let x0 = f.px(c as f64) + (f.px(1.0) - f.px(0.0)) * 0.1;
            let mut base = 0.0;
            for g in 0..self.groups.len() {
                let v = value(g, c);
                let (x, lo, hi) = if self.stacked {
                    let r = (x0, base, base + v);
                    base += v;
                    r
                } else {
                    (x0 + per * g as f64, 0.0, v)
                };
                let (ya, yb) = (f.py(hi.max(lo)), f.py(hi.min(lo)));
                let _ = write!(
                    out,
                    r#"<rect x="{x:.1}" y="{ya:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    per.max(1.0),
                    (yb - ya).max(0.0),
                    colour(g),
                    escape(&self.groups[g].0),
                    fmt_tick(v)
                );
            }
            if let Some(name) = self.categories.get(c) {
                let cx = x0 + slot / 2.0;
                let y = H - BOTTOM + 14.0;
                let _ = write!(
                    out,
                    r#"<text transform="translate({cx:.1} {y}) rotate(-30)" text-anchor="end" font-size="11">{}</text>"#,
                    escape(name)
                );
            }
        }
        let names: Vec<&str> = self.groups.iter().map(|g| g.0.as_str()).collect();
        legend(&mut out, &names);
        out.push_str("</svg>");
        out
    }
}

/// A heat map: a value per (column, row) cell, coloured from the smallest value (light) to
/// the largest (dark), each cell labelled with its value; a missing cell stays blank.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// `values[row][column]`.
    pub values: Vec<Vec<Option<f64>>>,
}

/// Light yellow to dark blue (viridis' ends and middle), linear in between.
fn heat_colour(t: f64) -> String {
    const STOPS: [(f64, f64, f64); 3] = [
        (253.0, 231.0, 37.0),
        (33.0, 145.0, 140.0),
        (68.0, 1.0, 84.0),
    ];
    let t = t.clamp(0.0, 1.0) * 2.0;
    let k = (t.floor() as usize).min(1);
    let f = t - k as f64;
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

impl HeatMap {
    pub fn to_svg(&self) -> String {
        assert_eq!(
            self.values.len(),
            self.rows.len(),
            "one row of values per row label"
        );
        let known = || {
            self.values
                .iter()
                .flatten()
                .flatten()
                .copied()
                .filter(|v| v.is_finite())
        };
        let lo = known().fold(f64::INFINITY, f64::min);
        let hi = known().fold(f64::NEG_INFINITY, f64::max);
        let (nx, ny) = (
            self.columns.len().max(1) as f64,
            self.rows.len().max(1) as f64,
        );
        let (cw, ch) = ((W - RIGHT - LEFT) / nx, (H - BOTTOM - TOP) / ny);
        let mut out = String::new();
        open(&mut out, &self.title);
        for (r, row) in self.values.iter().enumerate() {
            assert_eq!(row.len(), self.columns.len(), "one value per column");
            for (c, v) in row.iter().enumerate() {
                let Some(v) = v.filter(|v| v.is_finite()) else {
                    continue;
                };
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                let (x, y) = (LEFT + c as f64 * cw, TOP + (ny - 1.0 - r as f64) * ch);
                let ink = if t > 0.5 { "white" } else { "black" };
                let _ = write!(
                    out,
                    r#"<rect x="{x:.1}" y="{y:.1}" width="{cw:.1}" height="{ch:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}">{}</text>"#,
                    heat_colour(t),
                    x + cw / 2.0,
                    y + ch / 2.0 + 4.0,
                    fmt_tick(v)
                );
            }
        }
        for (c, name) in self.columns.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                LEFT + (c as f64 + 0.5) * cw,
                H - BOTTOM + 16.0,
                escape(name)
            );
        }
        for (r, name) in self.rows.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 4.0,
                TOP + (ny - 0.5 - r as f64) * ch + 4.0,
                escape(name)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="14" y="{:.1}" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
            (LEFT + W - RIGHT) / 2.0,
            H - 12.0,
            escape(&self.x_label),
            (TOP + H - BOTTOM) / 2.0,
            (TOP + H - BOTTOM) / 2.0,
            escape(&self.y_label)
        );
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.0, 0.93);
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.len() >= 4 && t.len() <= 7, "{t:?}");
    }

    #[test]
    fn line_chart_is_well_formed_and_deterministic() {
        let c = LineChart {
            title: "a <b>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: "s&t".into(),
                points: vec![(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)],
            }],
            step: false,
        };
        let s = c.to_svg();
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("a &lt;b&gt;") && s.contains("s&amp;t"));
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(s, c.to_svg());
    }

    #[test]
    fn stacked_bars_reach_the_sum_and_grouped_bars_one_rect_each() {
        let mut c = BarChart {
            title: "e".into(),
            y_label: "J".into(),
            categories: vec!["a".into(), "b".into()],
            groups: vec![("x".into(), vec![1.0, 2.0]), ("y".into(), vec![3.0, 4.0])],
            stacked: false,
        };
        // two legend swatches + four bars + the background
        assert_eq!(c.to_svg().matches("<rect").count(), 1 + 4 + 2);
        c.stacked = true;
        let s = c.to_svg();
        assert!(s.contains("<title>y: 4</title>"));
    }

    #[test]
    fn empty_and_degenerate_data_still_draw() {
        let c = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![],
            step: true,
        };
        assert!(c.to_svg().ends_with("</svg>"));
    }

    #[test]
    fn a_heat_map_colours_the_extremes_apart_and_leaves_missing_cells_blank() {
        let h = HeatMap {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            columns: vec!["a".into(), "b".into()],
            rows: vec!["r".into()],
            values: vec![vec![Some(1.0), None]],
        };
        let svg = h.to_svg();
        assert_eq!(svg.matches("<rect x=").count(), 1, "{svg}");
        assert_eq!(heat_colour(0.0), "#fde725");
        assert_eq!(heat_colour(1.0), "#440154");
        assert_eq!(svg, h.to_svg(), "a pure function of the data");
    }
}
