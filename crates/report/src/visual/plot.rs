//! SVG plots of a sweep with plotters' SVG backend: req/s against load, latency percentiles
//! against load, the HDR percentile distribution on a log scale of 1/(1-p) with corrected and
//! uncorrected together (HdrHistogram's plotFiles view) labelled in percent, throughput and
//! latency over time (`timeline`), and errors by class when there were any. Every legend
//! sits in headroom left above the data, so it never covers a point.
//!
//! Text is emitted as SVG `<text>` (plotters' "naive" font estimate), so no font file is
//! needed to draw and the browser picks the face.
use super::step::{LoadKind, Step, StepRow};
use hdrhistogram::Histogram;
use plotters::prelude::*;
use std::fmt;

/// Draws `lines` on one chart and returns the SVG text. A macro rather than a function
/// because linear and logarithmic axes are different coordinate types in plotters.
macro_rules! draw {
    ($title:expr, $xdesc:expr, $ydesc:expr, $xr:expr, $yr:expr, $lines:expr, $legend:expr) => {{ draw!($title, $xdesc, $ydesc, $xr, $yr, $lines, $legend, fmt_si) }};
    ($title:expr, $xdesc:expr, $ydesc:expr, $xr:expr, $yr:expr, $lines:expr, $legend:expr, $xfmt:expr) => {{
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            let mut chart = ChartBuilder::on(&root)
                .caption($title, ("sans-serif", 22))
                .margin(16)
                .x_label_area_size(48)
                .y_label_area_size(72)
                .build_cartesian_2d($xr, $yr)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc($xdesc)
                .y_desc($ydesc)
                .x_label_formatter(&|v| $xfmt(*v))
                .y_label_formatter(&|v| fmt_si(*v))
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .light_line_style(RGBColor(235, 235, 235))
                // A log axis's many minor lines would merge into a grey band.
                .max_light_lines($crate::visual::plot::MAX_LIGHT_LINES)
                .draw()
                .map_err(err)?;
            for l in $lines.iter() {
                let style = ShapeStyle::from(&l.color).stroke_width(2);
                let color = l.color;
                if l.marks_only {
                    // Marks on chosen points (client-bound steps): a cross, no line.
                    let series =
                        chart
                            .draw_series(l.points.iter().map(|p| {
                                Cross::new(*p, 7, ShapeStyle::from(&color).stroke_width(3))
                            }))
                            .map_err(err)?;
                    if !l.label.is_empty() {
                        series.label(l.label.as_str()).legend(move |(x, y)| {
                            Cross::new((x + 6, y), 5, ShapeStyle::from(&color).stroke_width(3))
                        });
                    }
                    continue;
                }
                let series = if l.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(l.points.clone(), 8, 5, style))
                        .map_err(err)?
                } else {
                    chart
                        .draw_series(LineSeries::new(l.points.clone(), style))
                        .map_err(err)?
                };
                if !l.label.is_empty() {
                    let len = if l.dashed { 8 } else { 20 };
                    series.label(l.label.as_str()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + len, y)], color.stroke_width(2))
                    });
                }
                if l.points.len() <= 40 {
                    chart
                        .draw_series(
                            l.points
                                .iter()
                                .map(|p| Circle::new(*p, 3, ShapeStyle::from(&color).filled())),
                        )
                        .map_err(err)?;
                }
            }
            chart
                .configure_series_labels()
                .position($legend)
                .label_font(("sans-serif", 14))
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .draw()
                .map_err(err)?;
            root.present().map_err(err)?;
        }
        Ok(svg)
    }};
}

/// [`draw!`] with load on the x axis: logarithmic when the plan spans a factor of 16 or more
/// (a `1..64*2` plan would otherwise crowd its first steps into the left edge).
macro_rules! draw_load {
    ($title:expr, $kind:expr, $ydesc:expr, $yr:expr, $lines:expr, $legend:expr) => {{
        let xs = || $lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let lo = xs().fold(f64::INFINITY, f64::min);
        let hi = xs().fold(f64::NEG_INFINITY, f64::max);
        if lo > 0.0 && hi / lo >= 16.0 {
            let (x0, x1) = span(xs(), true);
            let desc = format!("{} (log)", $kind.axis());
            // Every step labelled (8, 32, 128 as well as 10 and 100), not the decades only.
            let keys = load_keys(xs());
            draw!(
                $title,
                desc,
                $ydesc,
                (x0..x1).log_scale().with_key_points(keys),
                $yr,
                $lines,
                $legend
            )
        } else {
            let (x0, x1) = span(xs(), false);
            draw!($title, $kind.axis(), $ydesc, x0..x1, $yr, $lines, $legend)
        }
    }};
}

mod timeline;

/// Minor grid lines between two labelled ones, at most.
pub(crate) const MAX_LIGHT_LINES: usize = 4;
/// Labels on a load axis, at most: beyond this every other step (and so on) is labelled.
const MAX_LOAD_LABELS: usize = 16;

/// The loads of the steps, each once and in order, thinned to at most MAX_LOAD_LABELS: the
/// labels of a logarithmic load axis.
fn load_keys(xs: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut keys: Vec<f64> = xs.filter(|x| x.is_finite() && *x > 0.0).collect();
    keys.sort_by(f64::total_cmp);
    keys.dedup();
    let every = keys.len().div_ceil(MAX_LOAD_LABELS).max(1);
    keys.into_iter().step_by(every).collect()
}

/// Width and height of every plot, px.
pub const SIZE: (u32, u32) = (900, 520);

/// A plot could not be drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "drawing a plot: {}", self.0)
    }
}

impl std::error::Error for PlotError {}

fn err(e: impl fmt::Debug) -> PlotError {
    PlotError(format!("{e:?}"))
}

/// Reads one figure of a row.
type RowField = fn(&StepRow) -> f64;

/// One named line (an empty label keeps it out of the legend).
struct Line {
    label: String,
    color: RGBColor,
    dashed: bool,
    /// Marks on the points only, no line.
    marks_only: bool,
    points: Vec<(f64, f64)>,
}

impl Line {
    fn new(
        label: impl Into<String>,
        color: RGBColor,
        dashed: bool,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Self {
            label: label.into(),
            color,
            dashed,
            marks_only: false,
            points,
        }
    }
}

/// Legend rows fit in the top this share of a plot per row (about 22 px of the ~410 px
/// plotting area), plus one row of margin.
const LEGEND_ROW_SHARE: f64 = 0.055;

/// A linear y range whose top part is left empty for `rows` legend rows, so the legend never
/// covers a data point.
fn headroom(y0: f64, y1: f64, rows: usize) -> (f64, f64) {
    let f = (LEGEND_ROW_SHARE * (rows + 1) as f64).min(0.6);
    (y0, y0 + (y1 - y0) / (1.0 - f))
}

/// [`headroom`] for a logarithmic y axis.
fn headroom_log(y0: f64, y1: f64, rows: usize) -> (f64, f64) {
    let f = (LEGEND_ROW_SHARE * (rows + 1) as f64).min(0.6);
    (y0, y1 * (y1 / y0).powf(f / (1.0 - f)))
}

/// How many lines show in the legend.
fn legend_rows(lines: &[Line]) -> usize {
    lines.iter().filter(|l| !l.label.is_empty()).count()
}

/// `1/(1-p)` as the percentile it stands for: 10 → `90%`, 1000 → `99.9%`.
pub fn fmt_percentile(x: f64) -> String {
    if x <= 1.0 {
        return "0%".into();
    }
    let p = 100.0 * (1.0 - 1.0 / x);
    let s = format!("{p:.4}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// Colour-blind-safe palette (Okabe and Ito), in series order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// The plots of a sweep as (file stem, title, SVG text), in page order. The errors plot is
/// left out when no step had an error: an empty chart would take a full panel to say nothing.
pub fn sweep_plots(
    kind: LoadKind,
    steps: &[Step],
) -> Result<Vec<(String, String, String)>, PlotError> {
    let rows: Vec<StepRow> = steps.iter().map(StepRow::of).collect();
    let mut sorted: Vec<(f64, &Step, StepRow)> = steps
        .iter()
        .zip(rows)
        .map(|(s, r)| (s.load, s, r))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let rows: Vec<StepRow> = sorted.iter().map(|t| t.2).collect();
    let ordered: Vec<&Step> = sorted.iter().map(|t| t.1).collect();
    let invalid: Vec<bool> = ordered
        .iter()
        .map(|s| !s.summary.check.verdict.rankable())
        .collect();
    let mut plots = vec![
        (
            "throughput".into(),
            "Throughput against load (× marks a step whose self-check was not valid)".into(),
            throughput(kind, &rows, &invalid)?,
        ),
        (
            "latency".into(),
            "Latency percentiles against load".into(),
            latency(kind, &rows)?,
        ),
        (
            "distribution".into(),
            "Latency by percentile (HDR): solid corrected, dashed uncorrected".into(),
            distribution(&pick(&ordered, 4))?,
        ),
    ];
    let mut in_time: Vec<&Step> = steps.iter().collect();
    in_time.sort_by_key(|s| s.start);
    plots.push((
        "throughput-over-time".into(),
        "Throughput over time, second by second, every step in the order run".into(),
        timeline::throughput_over_time(&in_time)?,
    ));
    plots.push((
        "latency-over-time".into(),
        "Latency over time, per step in the order run".into(),
        timeline::latency_over_time(&in_time)?,
    ));
    if ordered.iter().any(|s| s.summary.errors.total() > 0) {
        plots.push((
            "errors".into(),
            "Errors by class".into(),
            errors(kind, &ordered)?,
        ));
    }
    Ok(plots)
}

/// Up to `n` steps evenly spread, always including the first and last.
fn pick<'a>(steps: &[&'a Step], n: usize) -> Vec<&'a Step> {
    if steps.len() <= n {
        return steps.to_vec();
    }
    let mut idx: Vec<usize> = (0..n).map(|i| i * (steps.len() - 1) / (n - 1)).collect();
    idx.dedup();
    idx.into_iter().map(|i| steps[i]).collect()
}

/// req/s against load; for a rate sweep also the offered rate (y = x), so the gap shows
/// where the server stopped keeping up. Steps flagged in `invalid` (client-bound,
/// under-delivered) get a red cross.
pub fn throughput(kind: LoadKind, rows: &[StepRow], invalid: &[bool]) -> Result<String, PlotError> {
    let mut lines = vec![Line::new(
        "achieved req/s",
        PALETTE[0],
        false,
        rows.iter().map(|r| (r.load, r.rps)).collect(),
    )];
    if kind == LoadKind::Rate {
        lines.push(Line::new(
            "offered",
            PALETTE[6],
            true,
            rows.iter().map(|r| (r.load, r.load)).collect(),
        ));
    }
    let flagged: Vec<(f64, f64)> = rows
        .iter()
        .zip(invalid)
        .filter(|(_, bad)| **bad)
        .map(|(r, _)| (r.load, r.rps))
        .collect();
    if !flagged.is_empty() {
        lines.push(Line {
            marks_only: true,
            ..Line::new(
                "not valid (client-bound or under-delivered)",
                RED,
                false,
                flagged,
            )
        });
    }
    let (_, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    let (y0, y1) = headroom(0.0, y1 * 1.04, legend_rows(&lines));
    draw_load!(
        "Throughput",
        kind,
        "responses per second",
        y0..y1,
        &lines,
        SeriesLabelPosition::UpperLeft
    )
}

/// p50, p90, p99, p99.9 and max (corrected, µs, log scale) against load.
pub fn latency(kind: LoadKind, rows: &[StepRow]) -> Result<String, PlotError> {
    let pick: [(&str, RowField); 5] = [
        ("p50", |r| r.p50_us),
        ("p90", |r| r.p90_us),
        ("p99", |r| r.p99_us),
        ("p99.9", |r| r.p999_us),
        ("max", |r| r.max_us),
    ];
    let lines: Vec<Line> = pick
        .iter()
        .enumerate()
        .map(|(i, (label, f))| {
            let points = rows.iter().map(|r| (r.load, f(r).max(0.001))).collect();
            Line::new(*label, PALETTE[i], *label == "max", points)
        })
        .collect();
    let (y0, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    let (y0, y1) = headroom_log(y0, y1, legend_rows(&lines));
    draw_load!(
        "Latency (corrected)",
        kind,
        "latency (µs, log)",
        (y0..y1).log_scale(),
        &lines,
        SeriesLabelPosition::UpperLeft
    )
}

/// Latency against percentile (a log axis of 1/(1-p), labelled 90%, 99%, 99.9%); per step,
/// corrected solid and uncorrected dashed in one colour, one legend row per step. `steps`
/// should be few (four at most stay readable).
pub fn distribution(steps: &[&Step]) -> Result<String, PlotError> {
    let mut lines = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let lat = &s.summary.latency;
        let color = PALETTE[i % PALETTE.len()];
        lines.push(Line::new(
            format!("{} corrected (dashed: uncorrected)", fmt_load(s.load)),
            color,
            false,
            percentile_curve(&lat.corrected),
        ));
        lines.push(Line::new(
            "",
            color,
            true,
            percentile_curve(&lat.uncorrected),
        ));
    }
    let (_, x1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        true,
    );
    let (y0, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    let (y0, y1) = headroom_log(y0, y1, legend_rows(&lines));
    draw!(
        "Percentile distribution",
        "percentile (log scale of 1/(1-p))",
        "latency (µs, log)",
        (1.0..x1.max(10.0)).log_scale(),
        (y0..y1).log_scale(),
        &lines,
        SeriesLabelPosition::UpperLeft,
        fmt_percentile
    )
}

/// (1/(1-p), µs) points of a histogram, five per halving of the remaining tail (the
/// iteration HdrHistogram's `.hgrm` output uses), stopping before p = 1.
pub fn percentile_curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    h.iter_quantiles(5)
        .map(|v| (v.quantile_iterated_to(), v.value_iterated_to()))
        .filter(|(q, _)| *q < 1.0)
        .map(|(q, ns)| (1.0 / (1.0 - q), (ns as f64 / 1e3).max(0.001)))
        .collect()
}

/// Failures per step by class; only classes that occurred get a line.
pub fn errors(kind: LoadKind, steps: &[&Step]) -> Result<String, PlotError> {
    let classes = &super::error_table::CLASSES;
    let merged: Vec<(f64, &crate::Errors)> =
        steps.iter().map(|s| (s.load, &s.summary.errors)).collect();
    let mut lines: Vec<Line> = classes
        .iter()
        .enumerate()
        .filter(|(_, (_, f))| merged.iter().any(|(_, e)| f(e) > 0))
        .map(|(i, (label, f))| {
            let points = merged.iter().map(|(x, e)| (*x, f(e) as f64)).collect();
            Line::new(*label, PALETTE[i % PALETTE.len()], false, points)
        })
        .collect();
    if lines.is_empty() {
        let points = merged.iter().map(|(x, _)| (*x, 0.0)).collect();
        lines.push(Line::new("no errors", PALETTE[2], false, points));
    }
    let (_, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    let (y0, y1) = headroom(0.0, (y1 * 1.04).max(1.0), legend_rows(&lines));
    draw_load!(
        "Errors",
        kind,
        "failed requests",
        y0..y1,
        &lines,
        SeriesLabelPosition::UpperRight
    )
}

/// A padded (min, max) of the values; `log` keeps the lower end positive.
fn span(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        (lo - 0.5 * lo.abs().max(1.0), hi + 0.5 * hi.abs().max(1.0))
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    }
}

/// `12000` → `12k`, `1500000` → `1.5M`, small values with up to three decimals.
pub fn fmt_si(v: f64) -> String {
    let a = v.abs();
    let (n, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = format!("{n:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{suffix}")
}

fn fmt_load(v: f64) -> String {
    fmt_si(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! percent {
        ($name:ident, $x:expr, $label:expr) => {
            #[test]
            fn $name() {
                assert_eq!(fmt_percentile($x), $label);
            }
        };
    }

    percent!(percent_of_one_is_zero, 1.0, "0%");
    percent!(percent_of_two_is_median, 2.0, "50%");
    percent!(percent_of_ten, 10.0, "90%");
    percent!(percent_of_a_hundred, 100.0, "99%");
    percent!(percent_of_a_thousand, 1000.0, "99.9%");
    percent!(percent_of_ten_thousand, 10_000.0, "99.99%");

    /// The legend sits in the top share the headroom leaves empty: the data's highest point
    /// stays below the legend's last row.
    #[test]
    fn headroom_keeps_data_under_the_legend() {
        for rows in 1..=6 {
            let (y0, y1) = headroom(0.0, 100.0, rows);
            let top_of_data = (100.0 - y0) / (y1 - y0);
            assert!(
                top_of_data <= 1.0 - LEGEND_ROW_SHARE * rows as f64,
                "{rows}"
            );
            let (l0, l1) = headroom_log(1.0, 1000.0, rows);
            let top_log = (1000f64.ln() - l0.ln()) / (l1.ln() - l0.ln());
            assert!(
                top_log <= 1.0 - LEGEND_ROW_SHARE * rows as f64 + 1e-9,
                "{rows}"
            );
        }
    }
}
