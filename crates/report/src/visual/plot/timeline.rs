//! Plots over time: a sweep's steps in the order they ran, on one clock. Throughput is drawn
//! second by second from each step's per-second response counts (dips and stalls inside a
//! step show); latency per step (its p50, p99 and p99.9), since a step is the interval over
//! which the sweep keeps a histogram.
//!
//! A submodule of `plot` (declared after its `draw!` macro, which it uses).
use super::{
    Line, PALETTE, PlotError, SIZE, err, fmt_si, headroom, headroom_log, legend_rows, span,
};
use crate::visual::step::Step;
use plotters::prelude::*;
use std::time::SystemTime;

/// Seconds from `t0` to `t`.
fn offset_s(t0: SystemTime, t: SystemTime) -> f64 {
    t.duration_since(t0).map_or(0.0, |d| d.as_secs_f64())
}

/// Responses per second over time; one line segment per step (the drain pause between steps
/// is a gap, not a line). `steps` in the order run.
pub fn throughput_over_time(steps: &[&Step]) -> Result<String, PlotError> {
    let Some(t0) = steps.first().map(|s| s.start) else {
        return Err(PlotError("no step to draw".into()));
    };
    let lines: Vec<Line> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let at = offset_s(t0, s.start);
            let points = s
                .summary
                .per_second
                .iter()
                .enumerate()
                .map(|(k, n)| (at + k as f64 + 0.5, *n as f64))
                .collect();
            let label = if i == 0 { "responses per second" } else { "" };
            Line::new(label, PALETTE[0], false, points)
        })
        .collect();
    let (x0, x1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        false,
    );
    let (_, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    let (y0, y1) = headroom(0.0, y1.max(1.0) * 1.04, legend_rows(&lines));
    draw!(
        "Throughput over time",
        "seconds since the first step",
        "responses per second",
        x0.min(0.0)..x1,
        y0..y1,
        &lines,
        SeriesLabelPosition::UpperLeft
    )
}

/// p50, p99 and p99.9 (corrected, µs, log scale) of each step, at the middle of its window.
pub fn latency_over_time(steps: &[&Step]) -> Result<String, PlotError> {
    let Some(t0) = steps.first().map(|s| s.start) else {
        return Err(PlotError("no step to draw".into()));
    };
    let quantiles = [("p50", 0.50), ("p99", 0.99), ("p99.9", 0.999)];
    let lines: Vec<Line> = quantiles
        .iter()
        .enumerate()
        .map(|(i, (label, q))| {
            let points = steps
                .iter()
                .filter(|s| s.summary.requests > 0)
                .map(|s| {
                    let mid = offset_s(t0, s.start) + s.summary.elapsed.as_secs_f64() / 2.0;
                    (mid, s.summary.corrected_quantile_us(*q).max(0.001))
                })
                .collect();
            Line::new(*label, PALETTE[i], false, points)
        })
        .collect();
    let (x0, x1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        false,
    );
    let (y0, y1) = span(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        true,
    );
    let (y0, y1) = headroom_log(y0, y1, legend_rows(&lines));
    draw!(
        "Latency over time (corrected)",
        "seconds since the first step",
        "latency (µs, log)",
        x0.min(0.0)..x1,
        (y0..y1).log_scale(),
        &lines,
        SeriesLabelPosition::UpperLeft
    )
}
