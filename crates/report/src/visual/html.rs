//! The self-contained HTML report: inline SVG plots, the step table, the settings,
//! `twelve --version` and the doctor's summary, in one file that fetches nothing.
//!
//! A Content-Security-Policy of `default-src 'none'` makes "no network fetches" a property the
//! browser enforces (and the browser test would see its console error) rather than a promise.
use super::step::{LoadKind, StepRow};
use std::fmt::Write as _;

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct HtmlPage {
    /// Page heading and `<title>`.
    pub title: String,
    /// `twelve --version`.
    pub version: String,
    /// Settings as (name, value), in display order.
    pub settings: Vec<(String, String)>,
    /// What varied.
    pub kind: LoadKind,
    /// One row per step, with whether its SLOs held (`None`: no SLOs).
    pub rows: Vec<(StepRow, Option<bool>)>,
    /// Plots as (id, title, SVG text).
    pub plots: Vec<(String, String, String)>,
    /// Sentences shown above the plots (the knee, client-bound warnings).
    pub notes: Vec<String>,
    /// The host as `twelve doctor` found it; `None`: not probed (`--no-doctor`).
    pub doctor: Option<Host>,
    /// Each row's failures by class, for the error table (empty: no table).
    pub errors: Vec<crate::Errors>,
    /// Each row's self-check verdict (`valid`, `client-bound`, …), shown in the step table;
    /// empty: no column.
    pub verdicts: Vec<&'static str>,
}

/// The host's state for the page's last section: the doctor's counts, and each check that is
/// not ok with what it found and what it means, as `twelve doctor` prints them.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// Checks that came out ok, advise, warn and unknown.
    pub counts: [usize; 4],
    /// Every check that is not ok, in the doctor's order.
    pub flagged: Vec<HostCheck>,
}

/// One check of [`Host`].
#[derive(Debug, Clone)]
pub struct HostCheck {
    /// Its id (`twelve doctor --apply ID` takes it), e.g. `cpu.governor`.
    pub id: String,
    /// `advise`, `warn` or `unknown`.
    pub status: String,
    /// What the tuning is, e.g. "CPU frequency governor".
    pub title: String,
    /// What was read on this host (the tuning's value), in a sentence.
    pub found: String,
    /// What to do about it here; empty for `unknown`.
    pub advice: String,
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;\
padding:0 1em;color:#222}h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px \
solid #ddd}table{border-collapse:collapse;font-variant-numeric:tabular-nums}td,th{padding:.25em \
.6em;border-bottom:1px solid #eee;text-align:right}th{background:#f4f4f4}td.k,th.k{text-align:\
left}.fail{color:#b00}.pass{color:#070}.note{background:#fff6d6;padding:.5em 1em;border-left:4px \
solid #e6a700}figure{margin:1em 0}figure svg{width:100%;height:auto;border:1px solid #eee}\
code{font-size:.95em}.wide{overflow-x:auto}#steps{font-size:13px}.muted{color:#666}";

/// Counts the plots once the page is parsed, so a headless browser's DOM dump shows that the
/// page's script ran and the SVGs exist as elements.
const SCRIPT: &str = "document.addEventListener('DOMContentLoaded',function(){\
var n=document.querySelectorAll('figure svg').length;\
document.documentElement.setAttribute('data-plots',String(n));});";

impl HtmlPage {
    /// The page.
    pub fn render(&self) -> String {
        let mut h =
            String::with_capacity(64 * 1024 + self.plots.iter().map(|p| p.2.len()).sum::<usize>());
        let title = esc(&self.title);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{title}</title><style>{STYLE}</style><script>{SCRIPT}</script></head><body>\n\
<h1>{title}</h1>\n<p class=\"muted\">twelve {}</p>\n",
            esc(&self.version)
        );
        for n in &self.notes {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", esc(n));
        }
        h.push_str("<h2>Plots</h2>\n");
        for (id, t, svg) in &self.plots {
            let _ = writeln!(
                h,
                "<figure id=\"plot-{}\">{}<figcaption>{}</figcaption></figure>",
                esc(id),
                strip_xml_decl(svg),
                esc(t)
            );
        }
        self.table(&mut h);
        if !self.errors.is_empty() {
            let steps: Vec<(f64, &crate::Errors)> = self
                .rows
                .iter()
                .map(|r| r.0.load)
                .zip(&self.errors)
                .collect();
            super::error_table::render(&mut h, self.kind.label(), &steps);
        }
        h.push_str("<h2>Settings</h2>\n<table>\n");
        for (k, v) in &self.settings {
            let _ = writeln!(
                h,
                "<tr><th class=\"k\">{}</th><td class=\"k\"><code>{}</code></td></tr>",
                esc(k),
                esc(v)
            );
        }
        h.push_str("</table>\n");
        self.doctor_section(&mut h);
        h.push_str("</body></html>\n");
        h
    }

    fn table(&self, h: &mut String) {
        let slo = self.rows.iter().any(|r| r.1.is_some());
        let _ = write!(
            h,
            "<h2>Steps</h2>\n<div class=\"wide\"><table id=\"steps\"><tr><th>#</th><th class=\"k\">start \
(UTC)</th><th>{}</th>\
<th>complete</th><th>failed</th><th>req/s</th><th>min µs</th><th>mean µs</th><th>stddev µs</th>\
<th>p50 µs</th><th>p90 µs</th><th>p95 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th>\
<th>client busy</th>{}{}</tr>\n",
            self.kind.label(),
            if self.verdicts.is_empty() {
                ""
            } else {
                "<th class=\"k\">verdict</th>"
            },
            if slo { "<th>SLO</th>" } else { "" }
        );
        for (i, (r, pass)) in self.rows.iter().enumerate() {
            let start = r.start_iso8601();
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"k\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
<td>{:.0}</td>",
                i + 1,
                &start[11..23],
                super::plot::fmt_si(r.load),
                r.complete,
                r.failed,
                r.rps
            );
            for v in r.latencies_us() {
                let _ = write!(h, "<td>{v:.1}</td>");
            }
            let _ = write!(h, "<td>{:.0}%</td>", r.client_busy * 100.0);
            if let Some(v) = self.verdicts.get(i) {
                // The CLIENT-BOUND (or under-delivered) marker of each step, in the table.
                let class = if *v == "valid" { "k pass" } else { "k fail" };
                let _ = write!(h, "<td class=\"{class}\">{}</td>", esc(&v.to_uppercase()));
            }
            match pass {
                Some(true) => h.push_str("<td class=\"pass\">pass</td>"),
                Some(false) => h.push_str("<td class=\"fail\">fail</td>"),
                None => {}
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n");
    }

    fn doctor_section(&self, h: &mut String) {
        h.push_str("<h2>Host (twelve doctor)</h2>\n");
        let Some(d) = &self.doctor else {
            h.push_str("<p class=\"muted\">The doctor's summary was not available.</p>\n");
            return;
        };
        let [ok, advise, warn, unknown] = d.counts;
        let _ = writeln!(
            h,
            "<p>{ok} ok, {advise} advise, {warn} warn, {unknown} unknown.</p>"
        );
        if d.flagged.is_empty() {
            return;
        }
        h.push_str(
            "<div class=\"wide\"><table id=\"doctor\"><tr><th class=\"k\">check</th>\
<th class=\"k\">state</th><th class=\"k\">found here</th><th class=\"k\">what it means</th></tr>\n",
        );
        for c in &d.flagged {
            let class = if c.status == "warn" { " fail" } else { "" };
            let _ = write!(
                h,
                "<tr><td class=\"k\"><code>{}</code></td><td class=\"k{class}\">{}</td>\
<td class=\"k\">{}</td><td class=\"k\">{}",
                esc(&c.id),
                esc(&c.status),
                esc(&c.found),
                esc(&c.title),
            );
            if !c.advice.is_empty() {
                let _ = write!(h, ": {}", esc(&c.advice));
            }
            h.push_str("</td></tr>\n");
        }
        h.push_str(
            "</table></div>\n<p class=\"muted\"><code>twelve doctor --explain</code> adds why, \
the risk, and the commands that apply and revert each.</p>\n",
        );
    }
}

/// plotters' SVG has no XML declaration today; strip one anyway, since it is not allowed
/// inside an HTML document.
fn strip_xml_decl(svg: &str) -> &str {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest.find("?>").map_or(svg, |i| rest[i + 2..].trim_start()),
        None => svg,
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! escaped {
        ($name:ident, $in:expr, $out:expr) => {
            #[test]
            fn $name() {
                assert_eq!(esc($in), $out);
            }
        };
    }

    escaped!(escape_plain, "p99<2ms", "p99&lt;2ms");
    escaped!(
        escape_quotes,
        "-H 'a: \"b\"'",
        "-H &#39;a: &quot;b&quot;&#39;"
    );
    escaped!(escape_ampersand, "a&b", "a&amp;b");

    #[test]
    fn xml_declaration_is_stripped() {
        assert_eq!(strip_xml_decl("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(strip_xml_decl("<svg/>"), "<svg/>");
    }
}
