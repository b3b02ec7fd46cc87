//! The sweep writers on synthetic steps: the CSV header and a golden row, the sweep JSON
//! document against its schema, every plot a well-formed SVG, and the HTML page's structure.
mod common;

use serde_json::Value;
use twelve_report::visual::csv::{header, row};
use twelve_report::visual::{
    CSV_HEADER_CLOSED, LoadKind, SWEEP_SCHEMA, StepRow, SweepDoc, plot, write_csv,
};

#[test]
fn csv_header_names_every_column() {
    assert_eq!(
        CSV_HEADER_CLOSED,
        "start_time,concurrency,complete,failed,req_per_s,min_us,mean_us,stddev_us,p50_us,\
p90_us,p95_us,p99_us,p99.9_us,max_us,client_busy"
    );
    assert_eq!(header(LoadKind::Rate).split(',').nth(1), Some("rate"));
    assert_eq!(header(LoadKind::Rate).split(',').count(), 15);
}

#[test]
fn csv_golden_row() {
    // 1000 latencies 100..1099 µs. HdrHistogram at 3 digits reports min as the lowest and
    // quantiles as the highest value equivalent to the bucket (buckets 32 to 512 ns wide
    // here): min 100 µs → 99.968, p50 = the 500th value 599 µs → 599.039; the stddev of
    // 1000 evenly spaced µs is 288.675.
    let r = StepRow::of(&common::step(10.0, 100));
    assert_eq!(
        row(&r),
        "2026-11-22T13:05:11.123Z,10,1000,5,1000.00,99.968,599.506,288.677,599.039,\
999.423,1049.599,1089.535,1098.751,1099.775,0.250"
    );
}

#[test]
fn csv_has_one_row_per_step() {
    let mut out = Vec::new();
    write_csv(&mut out, LoadKind::Concurrency, &common::steps()).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], CSV_HEADER_CLOSED);
    for l in &lines[1..] {
        assert_eq!(l.split(',').count(), 15, "{l}");
    }
}

fn violations(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SWEEP_SCHEMA).unwrap();
    let mut out = Vec::new();
    common::validate::validate(&schema, &schema, doc, "$", &mut out);
    out
}

#[test]
fn sweep_json_matches_schema() {
    let mut doc = SweepDoc::new(
        "0.1.0 (test)",
        "find-max-rate",
        LoadKind::Rate,
        &common::steps(),
    );
    doc.settings = vec![("url".into(), "http://127.0.0.1:8080/json".into())];
    doc.knee = Some(twelve_report::visual::doc::Knee {
        max_rate_per_s: Some(20.0),
        above_range: false,
        bracket: 0.5,
        pass_step: Some(1),
        fail_step: Some(2),
    });
    doc.doctor = Some(serde_json::json!({"schema_version": 1, "ok": 3, "checks": []}));
    let v: Value = serde_json::from_str(&doc.to_json()).unwrap();
    assert_eq!(violations(&v), Vec::<String>::new());
    assert_eq!(v["steps"].as_array().unwrap().len(), 3);
    assert_eq!(v["steps"][2]["passed"], Value::Bool(false));
    assert_eq!(v["steps"][0]["report"]["requests"], 1000);
}

#[test]
fn schema_check_rejects_a_broken_document() {
    // The validator is only worth something if it can fail.
    let doc = SweepDoc::new("v", "sweep", LoadKind::Concurrency, &common::steps());
    let mut v: Value = serde_json::from_str(&doc.to_json()).unwrap();
    v["steps"][0]["row"]["client_busy"] = serde_json::json!(1.5);
    v["mode"] = serde_json::json!("spiral");
    v.as_object_mut().unwrap().remove("knee");
    let found = violations(&v);
    assert_eq!(found.len(), 3, "{found:?}");
}

/// Parses an SVG and returns (element count, text of all `<text>` elements).
fn parse_svg(svg: &str) -> (usize, String) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let text: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    (doc.descendants().count(), text.join("|"))
}

#[test]
fn every_plot_is_well_formed_svg_with_its_labels() {
    let plots = plot::sweep_plots(LoadKind::Concurrency, &common::steps()).unwrap();
    let names: Vec<&str> = plots.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "throughput",
            "latency",
            "distribution",
            "throughput-over-time",
            "latency-over-time",
            "errors"
        ]
    );
    for (name, _, svg) in &plots {
        let (elements, text) = parse_svg(svg);
        assert!(elements > 50, "{name}: only {elements} elements");
        match name.as_str() {
            "latency" => assert!(text.contains("p99.9") && text.contains("p50"), "{text}"),
            "distribution" => {
                assert!(
                    text.contains("corrected") && text.contains("uncorrected"),
                    "{text}"
                );
                // The percentile axis reads in percent, not 1, 10, 100.
                let labels: Vec<&str> = text.split('|').map(str::trim).collect();
                for tick in ["90%", "99%", "99.9%"] {
                    assert!(labels.contains(&tick), "no tick {tick}: {text}");
                }
            }
            "throughput-over-time" | "latency-over-time" => {
                assert!(text.contains("seconds since the first step"), "{text}")
            }
            "errors" => assert!(
                text.contains("timeout") && text.contains("bad status"),
                "{text}"
            ),
            _ => assert!(text.contains("achieved req/s"), "{text}"),
        }
    }
}

#[test]
fn percentile_curve_runs_out_to_the_tail() {
    let s = common::step(10.0, 100);
    let curve = plot::percentile_curve(&s.summary.latency.corrected);
    let (x_last, y_last) = *curve.last().unwrap();
    assert!(x_last >= 500.0, "1/(1-p) reached only {x_last}");
    assert!(y_last > 1000.0 && y_last < 1100.0, "{y_last}");
    assert!(
        curve
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
    );
}

#[test]
fn single_step_plots_do_not_fail() {
    let plots = plot::sweep_plots(LoadKind::Rate, &[common::step(5.0, 50)]).unwrap();
    for (_, _, svg) in &plots {
        parse_svg(svg);
    }
}

#[test]
fn html_page_is_self_contained() {
    let html = common::page().render();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 6);
    assert!(html.contains("default-src 'none'"));
    for fetch in ["src=\"http", "href=\"http", "@import", "url(http", "<link"] {
        assert!(!html.contains(fetch), "page fetches: {fetch}");
    }
    assert!(html.contains("cpu.governor") && !html.contains("net.somaxconn"));
    assert!(html.contains("p99&lt;2ms"));
    assert_eq!(html.matches("<td class=\"fail\">").count(), 1);
}

/// The doctor section shows each flagged tuning's state, what was found here (its value) and
/// what it means, as `twelve doctor` prints them: not only its name.
#[test]
fn the_doctor_section_says_state_value_and_meaning() {
    let html = common::page().render();
    let section = &html[html.find("<h2>Host (twelve doctor)</h2>").unwrap()..];
    assert!(
        section.contains("12 ok, 2 advise, 1 warn, 0 unknown."),
        "{section}"
    );
    for want in [
        "<th class=\"k\">state</th>",
        "<code>cpu.governor</code>",
        ">advise<",
        "scaling_governor: schedutil",
        "CPU frequency governor: Set the governor to `performance` while benchmarking.",
    ] {
        assert!(section.contains(want), "no {want:?}: {section}");
    }
}

#[test]
fn wide_plans_get_a_log_load_axis() {
    let wide = [common::step(1.0, 100), common::step(64.0, 200)];
    let narrow = common::steps(); // 10..40: a factor of 4
    let desc = |steps: &[twelve_report::visual::Step]| {
        let plots = plot::sweep_plots(LoadKind::Concurrency, steps).unwrap();
        parse_svg(&plots[0].2).1
    };
    assert!(desc(&wide).contains("connections (log)"));
    assert!(!desc(&narrow).contains("(log)"));
}

/// A log load axis labels every step of a doubling plan (8, 32 and 128 too, not only the
/// decades), and its minor grid lines stay few enough not to merge into a grey band.
#[test]
fn a_log_load_axis_labels_every_step_without_a_grey_band() {
    let steps: Vec<_> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
        .into_iter()
        .map(|c| common::step(c, 100))
        .collect();
    let plots = plot::sweep_plots(LoadKind::Concurrency, &steps).unwrap();
    let (_, text) = parse_svg(&plots[0].2);
    for label in ["8", "32", "128"] {
        assert!(
            text.split('|').any(|t| t.trim() == label),
            "no {label} label: {text}"
        );
    }
    // Light lines: at most a few between two labels, not a line per pixel.
    let lines = plots[0].2.matches("<line").count() + plots[0].2.matches("<polyline").count();
    assert!(lines < 200, "{lines} lines");
}

/// The plots take the page's whole width.
#[test]
fn plots_take_the_page_width() {
    let html = common::page().render();
    assert!(html.contains("figure svg{width:100%"), "{html}");
}

/// An errors chart of a sweep without errors took a full panel to say nothing.
#[test]
fn a_sweep_without_errors_has_no_errors_chart() {
    let mut steps = common::steps();
    for s in &mut steps {
        s.summary.errors = twelve_report::Errors::default();
    }
    let plots = plot::sweep_plots(LoadKind::Concurrency, &steps).unwrap();
    assert!(
        plots.iter().all(|p| p.0 != "errors"),
        "{:?}",
        plots.iter().map(|p| &p.0).collect::<Vec<_>>()
    );
}

/// The CLIENT-BOUND marker: a step whose self-check is not valid is crossed on the throughput
/// plot and named in the page's step table.
#[test]
fn a_client_bound_step_is_marked_on_the_plot_and_in_the_table() {
    let mut steps = common::steps();
    steps[1].summary.check.verdict = twelve_report::Verdict::ClientBound;
    let plots = plot::sweep_plots(LoadKind::Concurrency, &steps).unwrap();
    assert!(parse_svg(&plots[0].2).1.contains("not valid (client-bound"));
    let mut page = common::page();
    page.verdicts[1] = "client-bound";
    let html = page.render();
    assert!(
        html.contains("<td class=\"k fail\">CLIENT-BOUND</td>"),
        "{html}"
    );
}

/// The sweep's step line names a step whose self-check is not valid.
#[test]
fn step_line_names_an_invalid_step() {
    let mut steps = common::steps();
    assert!(!twelve_report::visual::console::step_line(1, &steps[0], "0.1s").contains("BOUND"));
    steps[0].summary.check.verdict = twelve_report::Verdict::UnderDelivered;
    let line = twelve_report::visual::console::step_line(1, &steps[0], "0.1s");
    assert!(line.ends_with("0.1s  UNDER-DELIVERED"), "{line}");
}
