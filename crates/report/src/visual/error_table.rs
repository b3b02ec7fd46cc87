//! Failures by class, as the sweep page's error table and its errors plot both show them: one
//! list of classes, HTTP/2's kinds (RST_STREAM, refused, bad stream, protocol, flow-control
//! stall, GOAWAY) among them, so a class the text report names is never missing from the page.
use super::html::esc;
use super::plot::fmt_si;
use crate::Errors;
use std::fmt::Write as _;

/// A class's name and how many failures of it a run had.
pub type ErrorClass = (&'static str, fn(&Errors) -> u64);

/// Every class, in the order the page shows them. GOAWAY is a server's graceful close, not a
/// failure, but a count of them says why connections were reopened.
pub const CLASSES: [ErrorClass; 13] = [
    ("connect", |e| {
        e.connect_refused + e.connect_timeout + e.connect_other
    }),
    ("read", |e| e.read),
    ("write", |e| e.write),
    ("timeout", |e| e.timeout),
    ("parse", |e| e.parse),
    ("body length", |e| e.body_length),
    ("bad status", |e| e.bad_status()),
    ("h2 reset", |e| e.h2.reset),
    ("h2 refused", |e| e.h2.refused),
    ("h2 bad stream", |e| e.h2.stream),
    ("h2 protocol", |e| e.h2.protocol),
    ("h2 flow-control stall", |e| e.h2.stall),
    ("h2 GOAWAY", |e| e.h2.goaway),
];

/// The page's error table: a row per step (its load and `label`'s column), a column per class
/// that occurred in any step; a sentence instead when none did.
pub fn render(h: &mut String, label: &str, steps: &[(f64, &Errors)]) {
    h.push_str("<h2>Errors</h2>\n");
    let used: Vec<&ErrorClass> = CLASSES
        .iter()
        .filter(|(_, f)| steps.iter().any(|(_, e)| f(e) > 0))
        .collect();
    if used.is_empty() {
        h.push_str("<p class=\"muted\">No step had an error.</p>\n");
        return;
    }
    let _ = write!(
        h,
        "<div class=\"wide\"><table id=\"errors\"><tr><th>#</th><th>{}</th>",
        esc(label)
    );
    for (name, _) in &used {
        let _ = write!(h, "<th>{}</th>", esc(name));
    }
    h.push_str("</tr>\n");
    for (i, (load, e)) in steps.iter().enumerate() {
        let _ = write!(h, "<tr><td>{}</td><td>{}</td>", i + 1, fmt_si(*load));
        for (_, f) in &used {
            let _ = write!(h, "<td>{}</td>", f(e));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_classes_that_occurred_get_a_column_and_http2_kinds_are_among_them() {
        let mut a = Errors {
            timeout: 2,
            ..Errors::default()
        };
        a.h2.stall = 3;
        let mut b = Errors::default();
        b.h2.refused = 5;
        b.h2.goaway = 1;
        let mut h = String::new();
        render(&mut h, "streams", &[(1.0, &a), (10.0, &b)]);
        assert!(h.contains(
            "<th>#</th><th>streams</th><th>timeout</th><th>h2 refused</th>\
             <th>h2 flow-control stall</th><th>h2 GOAWAY</th></tr>"
        ));
        assert!(
            h.contains("<tr><td>1</td><td>1</td><td>2</td><td>0</td><td>3</td><td>0</td></tr>")
        );
        assert!(
            h.contains("<tr><td>2</td><td>10</td><td>0</td><td>5</td><td>0</td><td>1</td></tr>")
        );
        let mut none = String::new();
        render(&mut none, "rate", &[(1.0, &Errors::default())]);
        assert!(none.contains("No step had an error"), "{none}");
        assert!(!none.contains("<table"));
    }
}
