//! `--json` output validated against `report.schema.json` by a small, strict validator of the
//! schema keywords the file uses (an unknown keyword fails the test, so the two cannot drift).
mod common;

use serde_json::{Value, json};

/// Validates `v` against `schema`; `root` resolves `$ref`s. Returns the first error.
fn validate(v: &Value, schema: &Value, root: &Value, at: &str) -> Result<(), String> {
    let obj = schema
        .as_object()
        .ok_or(format!("{at}: schema not an object"))?;
    for (key, s) in obj {
        match key.as_str() {
            "$schema" | "$id" | "$defs" | "title" | "description" => {}
            "$ref" => {
                let name = s.as_str().unwrap().trim_start_matches("#/$defs/");
                validate(v, &root["$defs"][name], root, at)?;
            }
            "type" => {
                let ok = match s.as_str().unwrap() {
                    "object" => v.is_object(),
                    "array" => v.is_array(),
                    "string" => v.is_string(),
                    "integer" => v.is_u64() || v.is_i64(),
                    other => return Err(format!("{at}: unsupported type {other}")),
                };
                if !ok {
                    return Err(format!("{at}: {v} is not {s}"));
                }
            }
            "const" if v != s => return Err(format!("{at}: {v} != const {s}")),
            "const" => {}
            "enum" if !s.as_array().unwrap().contains(v) => {
                return Err(format!("{at}: {v} not in {s}"));
            }
            "enum" => {}
            "minimum" if v.as_i64().is_some_and(|n| n < s.as_i64().unwrap()) => {
                return Err(format!("{at}: {v} < {s}"));
            }
            "minimum" => {}
            "minItems"
                if v.as_array()
                    .is_some_and(|a| a.len() < s.as_u64().unwrap() as usize) =>
            {
                return Err(format!("{at}: fewer than {s} items"));
            }
            "minItems" => {}
            "pattern" => {
                let text = v.as_str().unwrap_or("");
                if !pattern(s.as_str().unwrap(), text) {
                    return Err(format!("{at}: {text:?} does not match {s}"));
                }
            }
            "required" => {
                for r in s.as_array().unwrap() {
                    if v.get(r.as_str().unwrap()).is_none() {
                        return Err(format!("{at}: missing required {r}"));
                    }
                }
            }
            "properties" => {
                for (name, sub) in s.as_object().unwrap() {
                    if let Some(field) = v.get(name) {
                        validate(field, sub, root, &format!("{at}.{name}"))?;
                    }
                }
            }
            "additionalProperties" => {
                let known = obj["properties"].as_object().unwrap();
                if let Some(fields) = v.as_object()
                    && let Some(extra) = fields.keys().find(|k| !known.contains_key(*k))
                {
                    return Err(format!("{at}: unexpected field {extra}"));
                }
            }
            "items" => {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    validate(item, s, root, &format!("{at}[{i}]"))?;
                }
            }
            "oneOf" => {
                let n = s
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|sub| validate(v, sub, root, at).is_ok())
                    .count();
                if n != 1 {
                    return Err(format!("{at}: {n} of oneOf match {v}"));
                }
            }
            other => return Err(format!("{at}: validator does not know keyword {other}")),
        }
    }
    Ok(())
}

/// The two patterns the schema uses, matched by hand (no regex engine needed).
fn pattern(p: &str, text: &str) -> bool {
    let word = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    match p {
        r"^[a-z_]+\.[a-z_]+$" => text
            .split_once('.')
            .is_some_and(|(a, b)| word(a) && word(b)),
        "^/(proc|sys)/" => text.starts_with("/proc/") || text.starts_with("/sys/"),
        other => panic!("schema uses a pattern this test does not know: {other}"),
    }
}

fn schema() -> Value {
    serde_json::from_str(twelve_doctor::REPORT_SCHEMA).expect("schema is JSON")
}

fn check_variant(variant: &str) {
    let report = common::report(variant);
    // Round-trip through text, as a consumer of `--json` sees it.
    let v: Value = serde_json::from_str(&report.to_json_pretty()).unwrap();
    let s = schema();
    validate(&v, &s, &s, "$").unwrap_or_else(|e| panic!("{variant}: {e}"));
}

macro_rules! valid {
    ($($name:ident: $variant:literal;)*) => {$(
        #[test]
        fn $name() {
            check_variant($variant);
        }
    )*};
}

valid! {
    json_of_this_host_is_valid: "this-host";
    json_of_multiqueue_is_valid: "multiqueue";
    json_of_conntrack_is_valid: "conntrack";
    json_of_audited_is_valid: "audited";
}

#[test]
fn json_of_the_running_host_is_valid() {
    let report = common::diagnose(std::path::Path::new("/"));
    let s = schema();
    validate(&report.to_json(), &s, &s, "$").unwrap();
}

macro_rules! invalid {
    ($($name:ident: $edit:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut v = common::report("this-host").to_json();
            let edit: fn(&mut Value) = $edit;
            edit(&mut v);
            let s = schema();
            assert!(validate(&v, &s, &s, "$").is_err(), "validator accepted {v:#}");
        }
    )*};
}

invalid! {
    rejects_missing_summary: |v| { v.as_object_mut().unwrap().remove("summary"); };
    rejects_unknown_status: |v| v["findings"][0]["status"] = json!("fine");
    rejects_bad_id: |v| v["summary"]["checks"][0]["id"] = json!("No Dots");
    rejects_extra_field: |v| v["findings"][0]["extra"] = json!(1);
    rejects_write_outside_proc_sys: |v| v["findings"][1]["actions"] =
        json!([{"kind": "write", "path": "/etc/passwd", "value": "x", "old": "y"}]);
    rejects_negative_count: |v| v["summary"]["ok"] = json!(-1);
}

#[test]
fn summary_serializes_as_the_schema_says() {
    let summary = serde_json::to_value(common::report("this-host").summary()).unwrap();
    let s = schema();
    validate(&summary, &s["$defs"]["summary"], &s, "summary").unwrap();
}
