//! A JSON Schema validator for the keywords the report's schemas use ($ref to $defs, type,
//! const, enum, minimum, maximum, items, prefixItems, minItems, maxItems, required,
//! properties, additionalProperties), written here rather than pulling a large validator
//! crate into the build.
use serde_json::Value;

/// Validates `v` against `s` (a part of `root`); pushes one line per violation onto `out`.
pub fn validate(root: &Value, s: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local refs only");
        validate(root, &root["$defs"][name], v, path, out);
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => panic!("bad type keyword at {path}"),
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "number" => v.is_number(),
            "integer" => v.is_u64() || v.is_i64(),
            other => panic!("unknown type {other}"),
        });
        if !ok {
            out.push(format!("{path}: {v} is not {types:?}"));
            return;
        }
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        out.push(format!("{path}: {v} != const {c}"));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        out.push(format!("{path}: {v} not in enum"));
    }
    if let (Some(min), Some(x)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64())
        && x < min
    {
        out.push(format!("{path}: {x} < minimum {min}"));
    }
    if let (Some(max), Some(x)) = (s.get("maximum").and_then(Value::as_f64), v.as_f64())
        && x > max
    {
        out.push(format!("{path}: {x} > maximum {max}"));
    }
    if let Some(arr) = v.as_array() {
        validate_array(root, s, arr, path, out);
    }
    if let Some(obj) = v.as_object() {
        validate_object(root, s, obj, path, out);
    }
}

fn validate_array(root: &Value, s: &Value, arr: &[Value], path: &str, out: &mut Vec<String>) {
    let n = arr.len() as u64;
    if s.get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|m| n < m)
    {
        out.push(format!("{path}: too few items"));
    }
    if s.get("maxItems")
        .and_then(Value::as_u64)
        .is_some_and(|m| n > m)
    {
        out.push(format!("{path}: too many items"));
    }
    let prefix = s.get("prefixItems").and_then(Value::as_array);
    for (i, item) in arr.iter().enumerate() {
        let p = format!("{path}[{i}]");
        match prefix.and_then(|p| p.get(i)) {
            Some(ps) => validate(root, ps, item, &p, out),
            None => {
                if let Some(is) = s.get("items") {
                    validate(root, is, item, &p, out);
                }
            }
        }
    }
}

fn validate_object(
    root: &Value,
    s: &Value,
    obj: &serde_json::Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) {
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let r = r.as_str().unwrap();
        if !obj.contains_key(r) {
            out.push(format!("{path}: missing {r}"));
        }
    }
    let props = s.get("properties").and_then(Value::as_object);
    for (k, val) in obj {
        let p = format!("{path}.{k}");
        match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
            (Some(ps), _) => validate(root, ps, val, &p, out),
            (None, Some(Value::Bool(false))) => {
                out.push(format!("{path}: unexpected property {k}"))
            }
            (None, Some(extra @ Value::Object(_))) => validate(root, extra, val, &p, out),
            (None, _) => {}
        }
    }
}
