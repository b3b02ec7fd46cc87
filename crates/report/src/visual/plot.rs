//! SVG plots of a sweep with plotters' SVG backend: req/s against load, latency percentiles
//! against load, the HDR percentile distribution on a log scale of 1/(1-p) with corrected and
//! uncorrected together (HdrHistogram's plotFiles view), and errors by class.
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
    ($title:expr, $xdesc:expr, $ydesc:expr, $xr:expr, $yr:expr, $lines:expr, $legend:expr) => {{
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
                .x_label_formatter(&|v| fmt_si(*v))
                .y_label_formatter(&|v| fmt_si(*v))
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(err)?;
            for l in $lines.iter() {
                let style = ShapeStyle::from(&l.color).stroke_width(2);
                let color = l.color;
                if l.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(l.points.clone(), 8, 5, style))
                        .map_err(err)?
                        .label(l.label.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 8, y)], color.stroke_width(2))
                        });
                } else {
                    chart
                        .draw_series(LineSeries::new(l.points.clone(), style))
                        .map_err(err)?
                        .label(l.label.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
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
            draw!(
                $title,
                desc,
                $ydesc,
                (x0..x1).log_scale(),
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
/// Counts one class of failure.
type ErrorClass = fn(&crate::Errors) -> u64;

/// One named line.
struct Line {
    label: String,
    color: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64)>,
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

/// The plots of a sweep as (file stem, title, SVG text), in page order.
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
    Ok(vec![
        (
            "throughput".into(),
            "Throughput against load".into(),
            throughput(kind, &rows)?,
        ),
        (
            "latency".into(),
            "Latency percentiles against load".into(),
            latency(kind, &rows)?,
        ),
        (
            "distribution".into(),
            "Latency by percentile (HDR)".into(),
            distribution(&pick(&ordered, 4))?,
        ),
        (
            "errors".into(),
            "Errors by class".into(),
            errors(kind, &ordered)?,
        ),
    ])
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
/// where the server stopped keeping up.
pub fn throughput(kind: LoadKind, rows: &[StepRow]) -> Result<String, PlotError> {
    let mut lines = vec![Line {
        label: "achieved req/s".into(),
        color: PALETTE[0],
        dashed: false,
        points: rows.iter().map(|r| (r.load, r.rps)).collect(),
    }];
    if kind == LoadKind::Rate {
        lines.push(Line {
            label: "offered".into(),
            color: PALETTE[6],
            dashed: true,
            points: rows.iter().map(|r| (r.load, r.load)).collect(),
        });
    }
    let (_, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    draw_load!(
        "Throughput",
        kind,
        "responses per second",
        0.0..y1 * 1.08,
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
        .map(|(i, (label, f))| Line {
            label: (*label).into(),
            color: PALETTE[i],
            dashed: *label == "max",
            points: rows.iter().map(|r| (r.load, f(r).max(0.001))).collect(),
        })
        .collect();
    let (y0, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    draw_load!(
        "Latency (corrected)",
        kind,
        "latency (µs, log)",
        (y0..y1).log_scale(),
        &lines,
        SeriesLabelPosition::UpperLeft
    )
}

/// Latency against 1/(1-p) on log axes; per step, corrected solid and uncorrected dashed in
/// one colour. `steps` should be few (four at most stay readable).
pub fn distribution(steps: &[&Step]) -> Result<String, PlotError> {
    let mut lines = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let lat = &s.summary.latency;
        let color = PALETTE[i % PALETTE.len()];
        for (h, which, dashed) in [
            (&lat.corrected, "corrected", false),
            (&lat.uncorrected, "uncorrected", true),
        ] {
            lines.push(Line {
                label: format!("{} {which}", fmt_load(s.load)),
                color,
                dashed,
                points: percentile_curve(h),
            });
        }
    }
    let (_, x1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        true,
    );
    let (y0, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    draw!(
        "Percentile distribution",
        "percentile, as 1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9",
        "latency (µs, log)",
        (1.0..x1.max(10.0)).log_scale(),
        (y0..y1).log_scale(),
        &lines,
        SeriesLabelPosition::LowerRight
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
    let classes: [(&str, ErrorClass); 7] = [
        ("connect", |e| {
            e.connect_refused + e.connect_timeout + e.connect_other
        }),
        ("read", |e| e.read),
        ("write", |e| e.write),
        ("timeout", |e| e.timeout),
        ("parse", |e| e.parse),
        ("body length", |e| e.body_length),
        ("bad status", |e| e.bad_status()),
    ];
    let merged: Vec<(f64, &crate::Errors)> =
        steps.iter().map(|s| (s.load, &s.summary.errors)).collect();
    let mut lines: Vec<Line> = classes
        .iter()
        .enumerate()
        .filter(|(_, (_, f))| merged.iter().any(|(_, e)| f(e) > 0))
        .map(|(i, (label, f))| Line {
            label: (*label).into(),
            color: PALETTE[i],
            dashed: false,
            points: merged.iter().map(|(x, e)| (*x, f(e) as f64)).collect(),
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line {
            label: "no errors".into(),
            color: PALETTE[2],
            dashed: false,
            points: merged.iter().map(|(x, _)| (*x, 0.0)).collect(),
        });
    }
    let (_, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    draw_load!(
        "Errors",
        kind,
        "failed requests",
        0.0..(y1 * 1.1).max(1.0),
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
