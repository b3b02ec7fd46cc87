//! Every benchmark run's summary.json follows bench/runs/SCHEMA.md, INDEX.md has a row for
//! every run, and raw samples are kept only packed, in each run's raw.tar.xz.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One summary.json, as bench/runs/SCHEMA.md describes it; any other field is an error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    schema: u32,
    run: String,
    date: String,
    question: String,
    answer: String,
    command: String,
    commit: String,
    measured: Option<String>,
    superseded_by: Option<String>,
    figures: Vec<Figure>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Figure {
    name: String,
    value: f64,
    unit: String,
    source: String,
}

fn runs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/runs")
}

/// The run folders' names, sorted.
fn runs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry of bench/runs"))
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn is_commit(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// What is wrong with one summary.json of the run `run`, given the other runs' names; empty
/// when it follows the schema. `dir` is the run's folder, against which sources resolve.
fn problems(run: &str, text: &str, dir: &Path, all: &BTreeSet<String>) -> Vec<String> {
    let s: Summary = match serde_json::from_str(text) {
        Ok(s) => s,
        Err(e) => return vec![format!("not in the schema: {e}")],
    };
    let mut out = Vec::new();
    let mut need = |ok: bool, what: String| {
        if !ok {
            out.push(what);
        }
    };
    need(s.schema == 1, format!("schema is {}, not 1", s.schema));
    need(
        s.run == run,
        format!("run is {:?}, not the folder's name", s.run),
    );
    need(
        is_date(&s.date),
        format!("date {:?} is not YYYY-MM-DD", s.date),
    );
    need(
        run.starts_with(&s.date),
        format!("the folder's name does not start with {}", s.date),
    );
    for (field, value) in [
        ("question", &s.question),
        ("answer", &s.answer),
        ("command", &s.command),
    ] {
        need(!value.trim().is_empty(), format!("{field} is empty"));
    }
    need(
        is_commit(&s.commit),
        format!("commit {:?} is not 7 to 40 lowercase hex digits", s.commit),
    );
    if let Some(m) = &s.measured {
        need(
            !m.trim().is_empty(),
            "measured is an empty string (null when unknown)".into(),
        );
    }
    if let Some(later) = &s.superseded_by {
        need(later != run, "superseded_by names the run itself".into());
        need(
            all.contains(later),
            format!("superseded_by {later:?} is no run folder"),
        );
        need(
            later.as_str() >= run.get(..10).unwrap_or(run),
            format!("superseded_by {later:?} is dated earlier"),
        );
    }
    let note = s.note.as_deref().unwrap_or("").trim();
    need(
        s.note.is_none() || !note.is_empty(),
        "note is an empty string (leave it out)".into(),
    );
    need(
        !s.figures.is_empty() || !note.is_empty(),
        "no figures and no note saying why".into(),
    );
    for f in &s.figures {
        need(!f.name.trim().is_empty(), "a figure without a name".into());
        need(
            !f.unit.trim().is_empty(),
            format!("figure {:?} has no unit", f.name),
        );
        need(
            f.value.is_finite(),
            format!("figure {:?} is not a finite number", f.name),
        );
        let relative = !f.source.is_empty() && !f.source.starts_with('/');
        need(
            relative,
            format!(
                "figure {:?}: source {:?} is not a relative path",
                f.name, f.source
            ),
        );
        need(
            relative && dir.join(&f.source).is_file(),
            format!(
                "figure {:?}: source {:?} is no file beside the summary",
                f.name, f.source
            ),
        );
        need(
            !f.source.contains("raw/"),
            format!("figure {:?}: source {:?} is a raw sample", f.name, f.source),
        );
    }
    out
}

#[test]
fn every_run_has_a_summary_in_the_schema() {
    let dir = runs_dir();
    let names = runs(&dir);
    assert!(
        names.len() >= 79,
        "bench/runs holds {} runs, expected at least 79",
        names.len()
    );
    let all: BTreeSet<String> = names.iter().cloned().collect();
    let mut report = Vec::new();
    for run in &names {
        let run_dir = dir.join(run);
        if !run_dir.join("README.md").is_file() && !run_dir.join("summary.md").is_file() {
            report.push(format!("{run}: neither README.md nor summary.md"));
        }
        match fs::read_to_string(run_dir.join("summary.json")) {
            Ok(text) => report.extend(
                problems(run, &text, &run_dir, &all)
                    .into_iter()
                    .map(|p| format!("{run}: {p}")),
            ),
            Err(e) => report.push(format!("{run}: summary.json: {e}")),
        }
    }
    assert!(
        report.is_empty(),
        "bench/runs/SCHEMA.md is not followed:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_index_has_one_row_per_run() {
    let dir = runs_dir();
    let index = fs::read_to_string(dir.join("INDEX.md")).expect("bench/runs/INDEX.md");
    let mut report = Vec::new();
    for run in runs(&dir) {
        let row = format!("| [{run}]({run}/) |");
        let rows = index.lines().filter(|line| line.starts_with(&row)).count();
        if rows != 1 {
            report.push(format!(
                "{run}: {rows} rows (python3 bench/tools/runs-index.py writes them)"
            ));
        }
    }
    assert!(
        report.is_empty(),
        "bench/runs/INDEX.md:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_check_refuses_what_the_schema_forbids() {
    let dir = runs_dir();
    let run = "2026-11-23-upgrade";
    let run_dir = dir.join(run);
    let all: BTreeSet<String> = runs(&dir).into_iter().collect();
    let good = r#"{"schema": 1, "run": "2026-11-23-upgrade", "date": "2026-11-23", "question": "q",
        "answer": "a", "command": "c", "commit": "82bba7c", "measured": null,
        "superseded_by": null, "figures": [{"name": "n", "value": 1.5, "unit": "ratio",
        "source": "README.md"}]}"#;
    assert_eq!(problems(run, good, &run_dir, &all), Vec::<String>::new());
    let cases = [
        (
            "an unknown field",
            good.replacen("\"schema\"", "\"extra\": 1, \"schema\"", 1),
        ),
        (
            "another run's name",
            good.replacen("\"run\": \"2026-11-23-upgrade\"", "\"run\": \"x\"", 1),
        ),
        ("a short commit", good.replacen("82bba7c", "82bb", 1)),
        (
            "no figures and no note",
            good.replacen(
                r#"{"name": "n", "value": 1.5, "unit": "ratio",
        "source": "README.md"}"#,
                "",
                1,
            ),
        ),
        (
            "a missing source",
            good.replacen("README.md", "nothing.md", 1),
        ),
        ("a raw source", good.replacen("README.md", "raw/x.txt", 1)),
        (
            "an unknown later run",
            good.replacen(
                "\"superseded_by\": null",
                "\"superseded_by\": \"2026-11-30-x\"",
                1,
            ),
        ),
        (
            "an earlier run as the later",
            good.replacen(
                "\"superseded_by\": null",
                "\"superseded_by\": \"2026-11-22-serve\"",
                1,
            ),
        ),
        ("a figure as a string", good.replacen("1.5", "\"1.5\"", 1)),
    ];
    for (what, text) in cases {
        assert_ne!(text, good, "{what}: the case did not change the summary");
        assert!(
            !problems(run, &text, &run_dir, &all).is_empty(),
            "{what} passed the check"
        );
    }
}

/// The `raw` folders under `dir`, at any depth.
fn raw_folders(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name == "raw") {
                found.push(path.clone());
            }
            raw_folders(&path, found);
        }
    }
}

#[test]
fn raw_samples_are_kept_only_packed() {
    let dir = runs_dir();
    let mut report = Vec::new();
    for run in runs(&dir) {
        let run_dir = dir.join(&run);
        let mut raw = Vec::new();
        raw_folders(&run_dir, &mut raw);
        let beside = if run_dir.join("raw.tar.xz").is_file() {
            "beside its raw.tar.xz: unpack into a scratch folder instead"
        } else {
            "not packed: bench/tools/pack-raw.sh RUN_DIR packs it"
        };
        for folder in raw {
            let shown = folder.strip_prefix(&dir).unwrap_or(&folder);
            report.push(format!("bench/runs/{}: {beside}", shown.display()));
        }
    }
    assert!(
        report.is_empty(),
        "raw/ folders under bench/runs:\n{}",
        report.join("\n")
    );
}
