//! HttpArena's database profiles (github.com/MDA2AV/HttpArena,
//! `site/content/docs/test-profiles/h1/isolated/`): `async-database` and `fortunes` (the
//! `crud` profile is `crud.rs`).
//!
//! - `GET /async-db?min=&max=&limit=`: the `items` with `price` between `min` and `max`
//!   (integers, defaults 10 and 50), at most `limit` (default 50, clamped to 1-50), as
//!   `{"items":[{"id","name","category","price","quantity","active","tags","rating":{"score",
//!   "count"}}...],"count":N}`. When the database cannot answer, the profile asks for the
//!   empty answer, `{"items":[],"count":0}` (the failure is still counted: `crate::stats`).
//! - `GET /fortunes`: as TechEmpower's ([`super::techempower::fortunes_html`]; HttpArena's
//!   table has 200 rows).

use super::techempower::fortunes_html;
use crate::{Database, INT4, Param, Pool, Row, Rows, Statement};
use std::sync::Arc;
use twelve_engine::{Reply, Request, Router};

/// The profiles' statements, prepared on every connection.
#[derive(Clone, Copy, Debug)]
pub struct Statements {
    items: Statement,
    fortunes: Statement,
}

/// Adds the profiles' statements to `db`.
pub fn prepare(db: &mut Database) -> Statements {
    Statements {
        items: db.statement(
            "SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count \
             FROM items WHERE price BETWEEN $1 AND $2 LIMIT $3",
            &[INT4, INT4, INT4],
        ),
        fortunes: db.statement("SELECT id, message FROM fortune", &[]),
    }
}

/// Adds `/async-db` and `/fortunes` to `router`.
pub fn add_routes(router: Router, db: &Arc<Database>, s: Statements) -> Router {
    let (d1, d2) = (db.clone(), db.clone());
    router
        .get_async("/async-db", move |req: &Request<'_, '_>, _: &[u8]| {
            let (min, max, limit) = range(req);
            let q = Pool::get(&d1).query(
                s.items,
                &[Param::Int(min), Param::Int(max), Param::Int(limit)],
            );
            async move {
                let rows = q.await.unwrap_or_default();
                Reply::json(items_json(&rows))
            }
        })
        .get_async("/fortunes", move |_: &Request<'_, '_>, _: &[u8]| {
            let q = Pool::get(&d2).query(s.fortunes, &[]);
            async move {
                match q.await {
                    Ok(rows) => Reply::new(200, "text/html; charset=utf-8", fortunes_html(&rows)),
                    Err(e) => Reply::text(e.status(), format!("{e}\n")),
                }
            }
        })
}

/// `min`, `max` and `limit` of the query, with the profile's defaults and clamp.
pub fn range(req: &Request<'_, '_>) -> (i32, i32, i32) {
    let param = |name: &[u8]| {
        req.query_bytes()?
            .split(|&b| b == b'&')
            .find_map(|p| p.strip_prefix(name)?.strip_prefix(b"="))
            .and_then(|v| std::str::from_utf8(v).ok()?.parse::<i32>().ok())
    };
    let min = param(b"min").unwrap_or(10);
    let max = param(b"max").unwrap_or(50);
    let limit = param(b"limit").unwrap_or(50).clamp(1, 50);
    (min, max, limit)
}

fn items_json(rows: &Rows) -> Vec<u8> {
    let (mut out, n) = items_list(rows, 16);
    out.extend_from_slice(b",\"count\":");
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.push(b'}');
    out
}

/// `{"items":[..]` of the rows that make a whole item (see [`item_json`]), with `room` more
/// bytes reserved for the fields the caller appends before its closing `}`; and how many.
pub(crate) fn items_list(rows: &Rows, room: usize) -> (Vec<u8>, usize) {
    let mut out = Reply::buffer(16 + room + rows.len() * 200);
    out.extend_from_slice(b"{\"items\":[");
    let mut n = 0;
    for r in rows.iter() {
        if n > 0 {
            out.push(b',');
        }
        if item_json(r, &mut out) {
            n += 1;
        } else if n > 0 {
            out.pop();
        }
    }
    out.push(b']');
    (out, n)
}

/// One `items` row (`id, name, category, price, quantity, active, tags, rating_score,
/// rating_count`) as the profiles' JSON object, appended to `out`; `false` (nothing
/// appended) if a field is NULL or of another type.
pub(crate) fn item_json(r: Row<'_>, out: &mut Vec<u8>) -> bool {
    let (Some(id), Some(name), Some(category), Some(price), Some(quantity)) =
        (r.int(0), r.text(1), r.text(2), r.int(3), r.int(4))
    else {
        return false;
    };
    let (Some(active), Some(tags), Some(score), Some(count)) =
        (r.bool(5), r.jsonb(6), r.int(7), r.int(8))
    else {
        return false;
    };
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(b.format(id).as_bytes());
    out.extend_from_slice(b",\"name\":");
    json_string(name, out);
    out.extend_from_slice(b",\"category\":");
    json_string(category, out);
    out.extend_from_slice(b",\"price\":");
    out.extend_from_slice(b.format(price).as_bytes());
    out.extend_from_slice(b",\"quantity\":");
    out.extend_from_slice(b.format(quantity).as_bytes());
    out.extend_from_slice(if active {
        b",\"active\":true"
    } else {
        b",\"active\":false"
    });
    // jsonb comes back as JSON text already.
    out.extend_from_slice(b",\"tags\":");
    out.extend_from_slice(tags.as_bytes());
    out.extend_from_slice(b",\"rating\":{\"score\":");
    out.extend_from_slice(b.format(score).as_bytes());
    out.extend_from_slice(b",\"count\":");
    out.extend_from_slice(b.format(count).as_bytes());
    out.extend_from_slice(b"}}");
    true
}

/// A JSON string (RFC 8259 §7): quotes, backslash and control characters escaped.
pub(crate) fn json_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s.as_bytes() {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            c if c < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 15)]);
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_quotes_backslashes_and_controls() {
        let mut out = Vec::new();
        json_string("a\"b\\c\n\u{1}é", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\u000a\\u0001é\""
        );
    }

    #[test]
    fn no_rows_is_the_empty_answer() {
        assert_eq!(items_json(&Rows::default()), b"{\"items\":[],\"count\":0}");
    }
}
