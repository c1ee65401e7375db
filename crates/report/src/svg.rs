//! Small, dependency-free SVG charts: lines (x–y series), grouped bars, stacked bars and heat
//! maps. Output is a pure function of the data, so a report is byte-identical for equal inputs.
//!
//! Every chart is `W` wide (the page's column; pages draw it at 100% of their width). Its
//! margins follow its labels — the legend's longest name, the categories' longest label — so
//! nothing is cut off; without font metrics (see the crate header) a label's width is
//! estimated from its character count with a per-character width no narrower than the
//! sans-serif fonts' digits and lower-case letters. A value axis whose positive values span
//! `LOG_DECADES_MIN` decades or more is drawn on a log scale (its label says so), so that
//! small bars beside large ones stay visible.

use std::fmt::Write;

/// The chart's width in SVG units (the page draws it at full column width).
const W: f64 = 1040.0;
/// The plot area's height.
const PLOT_H: f64 = 300.0;
/// Above the plot: the title.
const TOP: f64 = 36.0;
/// Left of the plot: the value axis's tick labels and its title.
const LEFT: f64 = 80.0;
/// Right of the plot when there is no legend.
const RIGHT_BARE: f64 = 24.0;
/// Estimated width of one character at `FONT_PX` (see the module header).
const CHAR_W: f64 = 7.0;
const FONT_PX: f64 = 12.0;
/// Category labels' font size, and the estimated width of one of their characters.
const CAT_FONT_PX: f64 = 11.0;
const CAT_CHAR_W: f64 = 6.5;
/// Below the plot when the axis labels are one line: tick labels, then the axis title.
const BOTTOM_BARE: f64 = 48.0;
/// A value axis spanning this many decades or more is drawn on a log scale: 1.3 decades, a
/// factor of 20, where the smallest bar on a linear axis would be under 5% of the plot
/// (15 px) — INSIDER's Fig. 13 (37.6× to 1136×, 1.5 decades) drew two of its seven bars as
/// slivers under the old 2 decades.
const LOG_DECADES_MIN: f64 = 1.3;
/// A line chart's x axis gets a tick at every point's x when there are at most this many.
const DATA_TICKS_MAX: usize = 12;
/// A line chart's x axis starts at zero when its smallest x is positive and below this
/// share of its largest.
const X_FROM_ZERO_FRACTION: f64 = 0.25;
/// The dash pattern of a line chart's second and later series.
const DASH: &str = "7 5";
/// Steps of a heat map's colour scale.
const SCALE_STEPS: usize = 24;
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

/// Estimated width of `s` drawn at `char_w` per character.
fn text_w(s: &str, char_w: f64) -> f64 {
    s.chars().count() as f64 * char_w
}

/// About five round tick values covering `[lo, hi]`, and their step.
fn ticks(lo: f64, hi: f64) -> (Vec<f64>, f64) {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    let t: Vec<f64> = (0..)
        .map(|i| first + f64::from(i) * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .collect();
    assert!(!t.is_empty(), "a tick within [{lo}, {hi}]");
    (t, step)
}

/// Decimal places that write `step` exactly (0.25 → 2, 5 → 0), at most 9.
fn decimals_of(step: f64) -> usize {
    (0..9)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() <= 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(9)
}

/// Labels of linear ticks `step` apart: as many decimals as the step needs, so that two
/// ticks never print alike; powers of ten outside [1e-4, 1e6) in scientific notation.
fn tick_labels(t: &[f64], step: f64) -> Vec<String> {
    let big = t.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if big >= 1e6 || (big > 0.0 && step < 1e-4) {
        let exp = big.log10().floor() as i32;
        let d = decimals_of(step / 10f64.powi(exp));
        return t
            .iter()
            .map(|&v| {
                if v == 0.0 {
                    "0".into()
                } else {
                    format!("{v:.d$e}")
                }
            })
            .collect();
    }
    let d = decimals_of(step);
    t.iter()
        .map(|&v| {
            let s = format!("{v:.d$}");
            // −0.0 prints as "-0": a tick at zero is "0".
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                "0".into()
            } else {
                s
            }
        })
        .collect()
}

/// A value as a label beside a bar or in a cell: four significant figures, whole numbers
/// from 1000 up to 10^12 in full (a table's 1885576 ms reads better than 1.886e6).
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e12).contains(&a) {
        format!("{v:.3e}")
    } else {
        let d = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.d$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

/// Ticks of a log axis over `[10^lo_exp, 10^hi_exp]`: every power of ten, with 2× and 5×
/// between them when the axis spans few decades.
fn log_ticks(lo_exp: i32, hi_exp: i32) -> Vec<f64> {
    let few = hi_exp - lo_exp <= 2;
    let mut t = Vec::new();
    for e in lo_exp..=hi_exp {
        let p = 10f64.powi(e);
        t.push(p);
        if few && e < hi_exp {
            t.extend([2.0 * p, 5.0 * p]);
        }
    }
    t
}

/// A log tick's label: plain between 1e-4 and 1e6, else scientific.
fn log_label(v: f64) -> String {
    if (1e-4..1e6).contains(&v) {
        let d = (-v.log10().floor()).max(0.0) as usize;
        format!("{v:.d$}")
    } else {
        format!("{v:.0e}")
    }
}

/// How the value axis maps values: linear over `[lo, hi]`, or log over `[10^lo, 10^hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    Linear { lo: f64, hi: f64 },
    Log { lo_exp: i32, hi_exp: i32 },
}

impl Scale {
    /// Log when `values` are all non-negative and their positive ones span
    /// `LOG_DECADES_MIN` decades or more; else linear, zero included when `include_zero`.
    fn fit(values: &[f64], include_zero: bool, log_allowed: bool) -> Scale {
        let finite = || values.iter().copied().filter(|v| v.is_finite());
        let positive = || finite().filter(|v| *v > 0.0);
        let (p_lo, p_hi) = (
            positive().fold(f64::INFINITY, f64::min),
            positive().fold(f64::NEG_INFINITY, f64::max),
        );
        if log_allowed && finite().all(|v| v >= 0.0) && p_lo.is_finite() {
            // The axis starts at least a factor of two below the smallest bar, so that it
            // shows as a bar.
            let (lo_exp, hi_exp) = ((p_lo / 2.0).log10().floor(), p_hi.log10().ceil());
            if (p_hi / p_lo).log10() >= LOG_DECADES_MIN {
                return Scale::Log {
                    lo_exp: lo_exp as i32,
                    hi_exp: hi_exp as i32,
                };
            }
        }
        let (lo, hi) = range(finite(), include_zero);
        Scale::Linear { lo, hi }
    }

    /// 0 at the bottom of the axis, 1 at the top.
    fn frac(&self, v: f64) -> f64 {
        match *self {
            Scale::Linear { lo, hi } => (v - lo) / (hi - lo).max(f64::MIN_POSITIVE),
            Scale::Log { lo_exp, hi_exp } => {
                if v <= 0.0 {
                    return 0.0;
                }
                (v.log10() - f64::from(lo_exp)) / f64::from((hi_exp - lo_exp).max(1))
            }
        }
    }

    /// The value bars rise from: zero, or the bottom of a log axis.
    fn base(&self) -> f64 {
        match *self {
            Scale::Linear { lo, hi } => 0.0_f64.clamp(lo, hi),
            Scale::Log { lo_exp, .. } => 10f64.powi(lo_exp),
        }
    }

    /// (position, label) of every tick.
    fn ticks(&self) -> Vec<(f64, String)> {
        match *self {
            Scale::Linear { lo, hi } => {
                let (t, step) = ticks(lo, hi);
                t.iter().copied().zip(tick_labels(&t, step)).collect()
            }
            Scale::Log { lo_exp, hi_exp } => log_ticks(lo_exp, hi_exp)
                .into_iter()
                .map(|v| (v, log_label(v)))
                .collect(),
        }
    }

    /// The axis title, with "(log scale)" on a log axis.
    fn label(&self, title: &str) -> String {
        match self {
            Scale::Linear { .. } => title.to_string(),
            Scale::Log { .. } => format!("{title} (log scale)"),
        }
    }
}

/// The chart's margins, set by its labels.
#[derive(Clone, Copy, Debug)]
struct Layout {
    left: f64,
    right: f64,
    bottom: f64,
}

impl Layout {
    fn h(&self) -> f64 {
        TOP + PLOT_H + self.bottom
    }
    fn plot_right(&self) -> f64 {
        W - self.right
    }
    fn plot_w(&self) -> f64 {
        self.plot_right() - self.left
    }
    fn plot_bottom(&self) -> f64 {
        TOP + PLOT_H
    }
}

/// The right margin a legend of `names` needs: swatch, gap, the longest name.
fn legend_right(names: &[&str]) -> f64 {
    let longest = names.iter().map(|n| text_w(n, CHAR_W)).fold(0.0, f64::max);
    if names.is_empty() {
        RIGHT_BARE
    } else {
        12.0 + 16.0 + longest + 12.0
    }
}

struct Frame {
    layout: Layout,
    x_lo: f64,
    x_hi: f64,
    y: Scale,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let l = &self.layout;
        l.left + (x - self.x_lo) / (self.x_hi - self.x_lo).max(f64::MIN_POSITIVE) * l.plot_w()
    }
    fn py(&self, y: f64) -> f64 {
        self.layout.plot_bottom() - self.y.frac(y).clamp(0.0, 1.0) * PLOT_H
    }
}

fn open(out: &mut String, title: &str, h: f64) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" font-family="sans-serif" font-size="{FONT_PX}"><rect width="{W}" height="{h}" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        W / 2.0,
        escape(title)
    );
}

/// The x axis's ticks of a line chart: at the points' own x values when there are at most
/// `DATA_TICKS_MAX` of them and their labels fit between their neighbours (a swept
/// parameter's 1 and 2 channels read "1" and "2", not "1.0, 1.2, … 2.0"), else about five
/// round values.
fn x_ticks_for(xs: &[f64], f: &Frame) -> Vec<(f64, String)> {
    let mut distinct: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if f.x_lo == 0.0 {
        // An axis that starts at zero shows it.
        distinct.push(0.0);
    }
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if !distinct.is_empty() && distinct.len() <= DATA_TICKS_MAX {
        let labels: Vec<String> = distinct.iter().map(|&x| fmt_value(x)).collect();
        let fits = distinct.windows(2).zip(labels.windows(2)).all(|(x, l)| {
            let need = (text_w(&l[0], CHAR_W) + text_w(&l[1], CHAR_W)) / 2.0 + 4.0;
            f.px(x[1]) - f.px(x[0]) >= need
        });
        let distinct_labels = labels.windows(2).all(|l| l[0] != l[1]);
        if fits && distinct_labels {
            return distinct.into_iter().zip(labels).collect();
        }
    }
    let (t, step) = ticks(f.x_lo, f.x_hi);
    t.iter().copied().zip(tick_labels(&t, step)).collect()
}

/// The axes, the value axis's ticks and grid, the x axis's `x_ticks`, the titles.
fn axes(out: &mut String, f: &Frame, x_label: &str, y_label: &str, x_ticks: &[(f64, String)]) {
    let l = &f.layout;
    let (x0, x1, y0, y1) = (l.left, l.plot_right(), TOP, l.plot_bottom());
    let _ = write!(
        out,
        r#"<path d="M{x0} {y0}V{y1}H{x1}" fill="none" stroke="black"/>"#
    );
    for (t, label) in f.y.ticks() {
        let y = f.py(t);
        let _ = write!(
            out,
            r##"<line x1="{x0}" x2="{x1}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 4.0,
            y + 4.0,
            label
        );
    }
    for (v, label) in x_ticks {
        let x = f.px(*v);
        let _ = write!(
            out,
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{y1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            y1 + 4.0,
            y1 + 16.0,
            label
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        l.h() - 10.0,
        escape(x_label),
        (y0 + y1) / 2.0,
        escape(&f.y.label(y_label))
    );
}

fn legend(out: &mut String, l: &Layout, names: &[&str]) {
    for (i, n) in names.iter().enumerate() {
        let y = TOP + 8.0 + 18.0 * i as f64;
        let x = l.plot_right() + 12.0;
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
        // Positive x values that start near zero (a sweep from 4 MB/s to 120): the axis
        // starts at zero, so its first point is not read as zero.
        let near_zero = x_lo > 0.0 && x_lo < X_FROM_ZERO_FRACTION * x_hi;
        let (x_lo, x_hi) = range(all().map(|p| p.0), near_zero);
        let ys: Vec<f64> = all().map(|p| p.1).collect();
        let names: Vec<&str> = self.series.iter().map(|s| s.name.as_str()).collect();
        let f = Frame {
            layout: Layout {
                left: LEFT,
                right: legend_right(&names),
                bottom: BOTTOM_BARE,
            },
            x_lo,
            x_hi,
            y: Scale::fit(&ys, true, true),
        };
        let mut out = String::new();
        open(&mut out, &self.title, f.layout.h());
        let xs: Vec<f64> = all().map(|p| p.0).collect();
        axes(
            &mut out,
            &f,
            &self.x_label,
            &self.y_label,
            &x_ticks_for(&xs, &f),
        );
        for (i, s) in self.series.iter().enumerate() {
            let mut d = String::new();
            for (k, &(x, y)) in s.points.iter().enumerate() {
                let (px, py) = (f.px(x), f.py(y));
                match (k, self.step) {
                    (0, _) => {
                        let _ = write!(d, "M{px:.1} {py:.1}");
                    }
                    (_, true) => {
                        let _ = write!(d, "H{px:.1}V{py:.1}");
                    }
                    (_, false) => {
                        let _ = write!(d, "L{px:.1} {py:.1}");
                    }
                }
            }
            // Every series after the first is dashed, so that one drawn over another where
            // they coincide (Active Flash's simulated energy equals its model's) leaves the
            // one below visible through its gaps.
            let dash = if i == 0 {
                String::new()
            } else {
                format!(r#" stroke-dasharray="{DASH}""#)
            };
            let _ = write!(
                out,
                r#"<path d="{d}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                colour(i)
            );
            if !self.step && s.points.len() <= 60 {
                for &(x, y) in &s.points {
                    let _ = write!(
                        out,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"><title>{}: {}, {}</title></circle>"#,
                        f.px(x),
                        f.py(y),
                        colour(i),
                        escape(&s.name),
                        fmt_value(x),
                        fmt_value(y)
                    );
                }
            }
        }
        legend(&mut out, &f.layout, &names);
        out.push_str("</svg>");
        out
    }
}

/// Bars per category, one bar per group side by side (`stacked == false`) or the groups
/// stacked into one bar (`stacked == true`, e.g. an energy breakdown). Side-by-side bars
/// whose values span decades get a log axis (stacked ones stay linear: a stack's parts are
/// lengths).
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (group name, one value per category).
    pub groups: Vec<(String, Vec<f64>)>,
    pub stacked: bool,
}

/// How the category labels under the bars are drawn: level, or turned by `angle_deg`
/// (counter-clockwise) when they are wider than their slot.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CategoryLabels {
    angle_deg: f64,
}

impl CategoryLabels {
    /// Level if every label fits its slot; else turned 40° when the turned labels' baselines
    /// lie a line apart; else upright.
    fn fit(labels: &[String], slot_w: f64) -> CategoryLabels {
        let widest = labels
            .iter()
            .map(|s| text_w(s, CAT_CHAR_W))
            .fold(0.0, f64::max);
        let line = CAT_FONT_PX + 2.0;
        let angle_deg = if widest <= slot_w * 0.9 {
            0.0
        } else if slot_w * 40f64.to_radians().sin() >= line {
            40.0
        } else {
            90.0
        };
        CategoryLabels { angle_deg }
    }

    /// Height the labels take below the axis, for labels no wider than `widest`.
    fn height(&self, widest: f64) -> f64 {
        let a = self.angle_deg.to_radians();
        widest * a.sin() + CAT_FONT_PX * a.cos()
    }

    /// How far a label of `width` reaches left of its anchor.
    fn reach_left(&self, width: f64) -> f64 {
        if self.angle_deg == 0.0 {
            width / 2.0
        } else {
            width * self.angle_deg.to_radians().cos()
        }
    }
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
        let names: Vec<&str> = self.groups.iter().map(|g| g.0.as_str()).collect();
        let right = legend_right(&names);
        let widths: Vec<f64> = self
            .categories
            .iter()
            .map(|s| text_w(s, CAT_CHAR_W))
            .collect();
        let widest = widths.iter().copied().fold(0.0, f64::max);
        let labels = CategoryLabels::fit(&self.categories, (W - LEFT - right) / n as f64);
        // The first label may reach left of the plot: widen the left margin to hold it.
        let first_reach = widths.first().map_or(0.0, |w| labels.reach_left(*w));
        let left = LEFT.max(first_reach - (W - LEFT - right) / n as f64 / 2.0 + 8.0);
        let f = Frame {
            layout: Layout {
                left,
                right,
                bottom: BOTTOM_BARE + labels.height(widest),
            },
            x_lo: 0.0,
            x_hi: n as f64,
            y: Scale::fit(&tops, true, !self.stacked),
        };
        let mut out = String::new();
        open(&mut out, &self.title, f.layout.h());
        axes(&mut out, &f, "", &self.y_label, &[]);
        let slot = (f.px(1.0) - f.px(0.0)) * 0.8;
        let per = if self.stacked {
            slot
        } else {
            slot / self.groups.len().max(1) as f64
        };
        let base = f.y.base();
        for c in 0..n {
            let x0 = f.px(c as f64) + (f.px(1.0) - f.px(0.0)) * 0.1;
            let mut stacked_to = 0.0;
            for g in 0..self.groups.len() {
                let v = value(g, c);
                let (x, lo, hi) = if self.stacked {
                    let r = (x0, stacked_to, stacked_to + v);
                    stacked_to += v;
                    r
                } else {
                    (x0 + per * g as f64, base, v)
                };
                let (ya, yb) = (f.py(hi.max(lo)), f.py(hi.min(lo)));
                let _ = write!(
                    out,
                    r#"<rect x="{x:.1}" y="{ya:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    per.max(1.0),
                    (yb - ya).max(0.0),
                    colour(g),
                    escape(&self.groups[g].0),
                    fmt_value(v)
                );
            }
            if let Some(name) = self.categories.get(c) {
                let cx = x0 + slot / 2.0;
                let y = f.layout.plot_bottom() + 14.0;
                let (rotate, anchor) = if labels.angle_deg == 0.0 {
                    (String::new(), "middle")
                } else {
                    (format!(" rotate(-{})", labels.angle_deg), "end")
                };
                let _ = write!(
                    out,
                    r#"<text transform="translate({cx:.1} {y}){rotate}" text-anchor="{anchor}" font-size="{CAT_FONT_PX}">{}</text>"#,
                    escape(name)
                );
            }
        }
        legend(&mut out, &f.layout, &names);
        out.push_str("</svg>");
        out
    }
}

/// A heat map: a value per (column, row) cell, coloured from the smallest value (light) to
/// the largest (dark), each cell labelled with its value, a colour scale beside it; a
/// missing cell stays blank.
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

/// The colour scale's bar width and the gap before it.
const SCALE_W: f64 = 18.0;
const SCALE_GAP: f64 = 24.0;

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
        let scale_labels: Vec<(f64, String)> = if lo.is_finite() {
            let mid = (lo + hi) / 2.0;
            [hi, mid, lo].iter().map(|&v| (v, fmt_value(v))).collect()
        } else {
            Vec::new()
        };
        let widest_scale = scale_labels
            .iter()
            .map(|(_, s)| text_w(s, CHAR_W))
            .fold(0.0, f64::max);
        let widest_row = self
            .rows
            .iter()
            .map(|s| text_w(s, CHAR_W))
            .fold(0.0, f64::max);
        let l = Layout {
            left: (28.0 + widest_row + 8.0).max(LEFT),
            right: SCALE_GAP + SCALE_W + 6.0 + widest_scale + 12.0,
            bottom: BOTTOM_BARE,
        };
        let (nx, ny) = (
            self.columns.len().max(1) as f64,
            self.rows.len().max(1) as f64,
        );
        let (cw, ch) = (l.plot_w() / nx, PLOT_H / ny);
        let mut out = String::new();
        open(&mut out, &self.title, l.h());
        for (r, row) in self.values.iter().enumerate() {
            assert_eq!(row.len(), self.columns.len(), "one value per column");
            for (c, v) in row.iter().enumerate() {
                let Some(v) = v.filter(|v| v.is_finite()) else {
                    continue;
                };
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                let (x, y) = (l.left + c as f64 * cw, TOP + (ny - 1.0 - r as f64) * ch);
                let ink = if t > 0.5 { "white" } else { "black" };
                let _ = write!(
                    out,
                    r#"<rect x="{x:.1}" y="{y:.1}" width="{cw:.1}" height="{ch:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}">{}</text>"#,
                    heat_colour(t),
                    x + cw / 2.0,
                    y + ch / 2.0 + 4.0,
                    fmt_value(v)
                );
            }
        }
        self.colour_scale(&mut out, &l, &scale_labels);
        for (c, name) in self.columns.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                l.left + (c as f64 + 0.5) * cw,
                l.plot_bottom() + 16.0,
                escape(name)
            );
        }
        for (r, name) in self.rows.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                l.left - 4.0,
                TOP + (ny - 0.5 - r as f64) * ch + 4.0,
                escape(name)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="14" y="{:.1}" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
            (l.left + l.plot_right()) / 2.0,
            l.h() - 12.0,
            escape(&self.x_label),
            TOP + PLOT_H / 2.0,
            TOP + PLOT_H / 2.0,
            escape(&self.y_label)
        );
        out.push_str("</svg>");
        out
    }

    /// The colour scale right of the cells: `SCALE_STEPS` bands from the largest value (top)
    /// to the smallest, labelled at both ends and the middle (`labels`: value, text, largest
    /// first); nothing when no cell has a value.
    fn colour_scale(&self, out: &mut String, l: &Layout, labels: &[(f64, String)]) {
        if labels.is_empty() {
            return;
        }
        let x = l.plot_right() + SCALE_GAP;
        let band = PLOT_H / SCALE_STEPS as f64;
        for k in 0..SCALE_STEPS {
            // Band k from the top shows the colour of its middle.
            let t = 1.0 - (k as f64 + 0.5) / SCALE_STEPS as f64;
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{SCALE_W}" height="{:.1}" fill="{}"/>"#,
                TOP + k as f64 * band,
                band + 0.5,
                heat_colour(t)
            );
        }
        let last = labels.len().saturating_sub(1).max(1) as f64;
        for (i, (_, text)) in labels.iter().enumerate() {
            let y = TOP + PLOT_H * i as f64 / last;
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                x + SCALE_W + 6.0,
                y + 4.0,
                text
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0).0, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let (t, _) = ticks(0.0, 0.93);
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.len() >= 4 && t.len() <= 7, "{t:?}");
    }

    /// Story: FlashAbacus's Fig. 13a printed "0.01" at two ticks — ticks 0.0025 apart were
    /// rounded to two decimals.
    #[test]
    fn tick_labels_never_repeat_whatever_the_range() {
        for (lo, hi) in [
            (0.0, 0.0137),
            (0.0, 0.93),
            (0.5, 0.53),
            (0.0, 1.7e7),
            (1.0e6, 1.00002e6),
            (-3.0, 0.0),
            (0.0, 2.6e-5),
            (0.0, 830_000.0),
        ] {
            let (t, step) = ticks(lo, hi);
            let labels = tick_labels(&t, step);
            let mut unique = labels.clone();
            unique.dedup();
            assert_eq!(unique, labels, "[{lo}, {hi}]: {labels:?}");
            assert!(!labels.iter().any(|l| l == "-0"), "{labels:?}");
        }
        let (t, step) = ticks(0.0, 0.0137);
        assert!(tick_labels(&t, step).contains(&"0.0125".to_string()));
    }

    #[test]
    fn values_print_with_four_significant_figures() {
        assert_eq!(fmt_value(771.13), "771.1");
        assert_eq!(fmt_value(0.031754), "0.03175");
        assert_eq!(fmt_value(824_890.3), "824890");
        assert_eq!(fmt_value(1_885_576.27), "1885576");
        assert_eq!(fmt_value(2.5e13), "2.500e13");
        assert_eq!(fmt_value(2.0), "2");
        assert_eq!(fmt_value(3.2e-5), "3.200e-5");
        assert_eq!(fmt_value(-0.0), "0");
    }

    #[test]
    fn values_spanning_decades_get_a_log_axis_and_narrow_ranges_a_linear_one() {
        let log = Scale::fit(&[31.7, 120.0, 824_890.0], true, true);
        assert_eq!(
            log,
            Scale::Log {
                lo_exp: 1,
                hi_exp: 6
            }
        );
        // 10.47 µs would be a sliver on an axis starting at 10: it starts at 1.
        assert_eq!(
            Scale::fit(&[10.47, 2500.0], true, true),
            Scale::Log {
                lo_exp: 0,
                hi_exp: 4
            }
        );
        assert_eq!(log.label("µs"), "µs (log scale)");
        assert!(log.frac(31.7) > 0.0 && log.frac(1e6) == 1.0);
        let labels: Vec<String> = log.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["10", "100", "1000", "10000", "100000", "1e6"]);
        assert!(matches!(
            Scale::fit(&[5.0, 80.0], true, true),
            Scale::Linear { lo, .. } if lo == 0.0
        ));
        // A 30× span: the smaller bar would be a 10 px sliver on a linear axis.
        assert!(matches!(
            Scale::fit(&[37.6, 42.6, 1136.0], true, true),
            Scale::Log { .. }
        ));
        assert!(matches!(
            Scale::fit(&[60.0, 1136.0], true, true),
            Scale::Linear { .. }
        ));
        assert!(matches!(
            Scale::fit(&[-1.0, 1e4], true, true),
            Scale::Linear { .. }
        ));
        assert!(matches!(
            Scale::fit(&[1.0, 1e4], true, false),
            Scale::Linear { .. }
        ));
        let few: Vec<String> = Scale::Log {
            lo_exp: -2,
            hi_exp: 0,
        }
        .ticks()
        .into_iter()
        .map(|t| t.1)
        .collect();
        assert_eq!(few, ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"]);
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

    fn lines(points: &[&[(f64, f64)]]) -> LineChart {
        LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: points
                .iter()
                .enumerate()
                .map(|(i, p)| Series {
                    name: format!("s{i}"),
                    points: p.to_vec(),
                })
                .collect(),
            step: false,
        }
    }

    /// The x tick labels of a chart, in order.
    fn x_tick_labels(svg: &str) -> Vec<String> {
        svg.split(r#"stroke="black"/><text x=""#)
            .skip(1)
            .filter_map(|s| s.split('>').nth(1)?.split('<').next().map(str::to_string))
            .collect()
    }

    /// Story: the sweep summary's "iops vs flash.channels" put ticks at 1.0, 1.2, … 2.0 for
    /// a parameter that is 1 or 2.
    #[test]
    fn a_swept_parameters_few_values_are_its_x_ticks() {
        let svg = lines(&[&[(1.0, 5.0), (2.0, 6.0)]]).to_svg();
        assert_eq!(x_tick_labels(&svg), ["1", "2"]);
        let depths = lines(&[&[(1.0, 5.0), (2.0, 6.0), (4.0, 6.0), (8.0, 6.0), (16.0, 6.0)]]);
        // The axis starts at zero (1 is below a quarter of 16), and says so.
        assert_eq!(
            x_tick_labels(&depths.to_svg()),
            ["0", "1", "2", "4", "8", "16"]
        );
        // Labels that would run into each other fall back to round ticks.
        let crowded = lines(&[&[(1000.001, 1.0), (1000.002, 2.0), (2000.0, 3.0)]]);
        let l = x_tick_labels(&crowded.to_svg());
        assert!(
            !l.is_empty() && !l.contains(&"1000.001".to_string()),
            "{l:?}"
        );
        // More points than DATA_TICKS_MAX: round ticks.
        let many: Vec<(f64, f64)> = (0..=20).map(|k| (f64::from(k), 1.0)).collect();
        let l = x_tick_labels(&lines(&[&many]).to_svg());
        assert!(l.len() < 10, "{l:?}");
    }

    /// Story: Active Flash's Fig. 2 swept foreground rates from 4 to 120 MB/s; its x axis
    /// began at 4 with the first tick at 25, so the first point sat on the y axis as if at 0.
    #[test]
    fn an_x_axis_whose_values_start_near_zero_starts_at_a_zero_tick() {
        let sweep: Vec<(f64, f64)> = (1..=17).map(|k| (f64::from(k) * 7.0, 1.0)).collect();
        let l = x_tick_labels(&lines(&[&sweep]).to_svg());
        assert_eq!(l.first().map(String::as_str), Some("0"), "{l:?}");
        // Values far from zero keep their own range.
        let far: Vec<(f64, f64)> = (0..20).map(|k| (1000.0 + f64::from(k), 1.0)).collect();
        let l = x_tick_labels(&lines(&[&far]).to_svg());
        assert_ne!(l.first().map(String::as_str), Some("0"), "{l:?}");
    }

    /// Story: Active Flash's Fig. 3 energy chart showed only the model's line: the simulated
    /// series equals it and was drawn underneath.
    #[test]
    fn a_series_drawn_over_an_equal_one_leaves_it_visible() {
        let p: &[(f64, f64)] = &[(0.0, 1.0), (1.0, 0.5)];
        let svg = lines(&[p, p]).to_svg();
        let paths: Vec<&str> = svg.split("<path d=\"M").skip(2).collect();
        assert_eq!(paths.len(), 2, "{svg}");
        assert!(!paths[0].split("/>").next().unwrap().contains("dasharray"));
        assert!(paths[1]
            .split("/>")
            .next()
            .unwrap()
            .contains(&format!(r#"stroke-dasharray="{DASH}""#)));
    }

    /// Story: the sweep summary's legends read "flash.dies_per_package =" — the values were
    /// cut off at a fixed legend width.
    #[test]
    fn a_long_legend_name_widens_the_margin_instead_of_being_cut() {
        let name = "flash.dies_per_package = 4";
        let c = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: name.into(),
                points: vec![(1.0, 1.0), (2.0, 2.0)],
            }],
            step: false,
        };
        let right = legend_right(&[name]);
        assert!(right >= text_w(name, CHAR_W) + 28.0);
        let svg = c.to_svg();
        assert!(svg.contains(name));
        // The legend's text starts where its width still fits in the chart.
        let start = W - right + 12.0 + 16.0;
        assert!(start + text_w(name, CHAR_W) <= W, "{start}");
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

    /// Story: Hayagui's file-operation chart put latencies from 30 µs to 820 ms on a linear
    /// axis, where ten of twelve bar pairs were invisible.
    #[test]
    fn grouped_bars_spanning_decades_stay_visible_on_a_log_axis() {
        let c = BarChart {
            title: "t".into(),
            y_label: "µs".into(),
            categories: vec!["read 4 KiB".into(), "write-sync 8192 KiB".into()],
            groups: vec![
                ("direct".into(), vec![31.7, 11_653.0]),
                ("redirected".into(), vec![110.0, 824_890.0]),
            ],
            stacked: false,
        };
        let svg = c.to_svg();
        assert!(svg.contains("µs (log scale)"), "{svg}");
        let heights: Vec<f64> = svg
            .split("height=\"")
            .skip(3) // the svg's own and the background's
            .filter_map(|s| s.split('"').next()?.parse().ok())
            .collect();
        assert!(
            heights.iter().take(4).all(|h| *h >= PLOT_H / 20.0),
            "{heights:?}"
        );
    }

    /// Story: Hayagui's twelve category labels ran into each other and out of the chart.
    #[test]
    fn category_labels_turn_when_wider_than_their_slot_and_the_chart_makes_room() {
        let labels: Vec<String> = (0..12).map(|k| format!("write-sync {k} KiB")).collect();
        let fit = CategoryLabels::fit(&labels, 60.0);
        assert_eq!(fit.angle_deg, 40.0);
        assert!(60.0 * 40f64.to_radians().sin() >= CAT_FONT_PX + 2.0);
        assert_eq!(CategoryLabels::fit(&labels, 200.0).angle_deg, 0.0);
        assert_eq!(CategoryLabels::fit(&labels, 15.0).angle_deg, 90.0);
        let c = BarChart {
            title: "t".into(),
            y_label: "µs".into(),
            categories: labels,
            groups: vec![("d".into(), vec![1.0; 12])],
            stacked: false,
        };
        let svg = c.to_svg();
        let h: f64 = svg
            .split("height=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .unwrap();
        let widest = text_w("write-sync 10 KiB", CAT_CHAR_W);
        assert!(h >= TOP + PLOT_H + widest * 40f64.to_radians().sin(), "{h}");
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
        let h = HeatMap {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            columns: vec!["a".into()],
            rows: vec!["r".into()],
            values: vec![vec![None]],
        };
        assert!(h.to_svg().ends_with("</svg>"));
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
        // One cell, the colour scale's bands; the missing cell draws nothing.
        assert_eq!(svg.matches("<rect x=").count(), 1 + SCALE_STEPS, "{svg}");
        assert_eq!(heat_colour(0.0), "#fde725");
        assert_eq!(heat_colour(1.0), "#440154");
        assert_eq!(svg, h.to_svg(), "a pure function of the data");
    }

    /// Story: the sweep summary's heat maps had no colour scale — a reader could not tell
    /// which end was large.
    #[test]
    fn a_heat_map_has_a_colour_scale_labelled_with_its_extremes() {
        let h = HeatMap {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            columns: vec!["a".into(), "b".into()],
            rows: vec!["r".into()],
            values: vec![vec![Some(540.0), Some(806.0)]],
        };
        let svg = h.to_svg();
        for label in ["806", "673", "540"] {
            assert!(
                svg.matches(&format!(">{label}<")).count() >= 1,
                "{label}: {svg}"
            );
        }
        // The largest value's band is the darkest colour's neighbour, at the top.
        let top = format!(r#"y="{TOP:.1}" width="{SCALE_W}""#);
        assert!(svg.contains(&top), "{svg}");
    }
}
