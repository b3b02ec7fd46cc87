//! HttpArena's json processing profiles (json, json-comp, json-tls): `GET /json/{count}?m=M`
//! answers the dataset's first `count` items, each with `total = price × quantity × M`,
//! serialised by serde per request into the worker's response buffer (`Response::send_with`),
//! with no allocation: the page and its items are views over the dataset loaded at start.
//!
//! The rules (HttpArena `site/content/docs/test-profiles/h1/isolated/json-processing/`): the
//! body is serialised from live data on every request, `count` matches the items returned,
//! `Content-Type: application/json`. What they leave open: `m` absent is 1 (validate.sh's first
//! version sent none); `count` 0, a count or `m` that is not a decimal integer, or a total that
//! would overflow `i64` → 400; a count above the dataset's size returns the whole dataset,
//! with `count` saying how many.

use crate::{Request, Response};
use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use std::path::Path;
use std::sync::Arc;

/// The json profiles' path prefix: the count follows it.
pub const JSON_PREFIX: &str = "/json/";

/// One dataset item as HttpArena's `dataset.json` has it.
#[derive(Debug, Deserialize)]
struct Item {
    id: i64,
    name: String,
    category: String,
    price: i64,
    quantity: i64,
    active: bool,
    tags: Vec<String>,
    rating: Rating,
}

#[derive(Debug, Deserialize, Serialize)]
struct Rating {
    score: i64,
    count: i64,
}

/// The items of the json profiles, loaded once and shared by every worker (read only).
#[derive(Clone, Debug)]
pub struct Dataset {
    items: Arc<[Item]>,
    /// The largest `|price × quantity|`: a multiplier whose product with it fits in `i64`
    /// makes every total fit.
    max_product: i64,
}

impl Dataset {
    /// Reads a JSON array of items (HttpArena's `/data/dataset.json`). The error names the
    /// path and what was wrong.
    pub fn load(path: &Path) -> Result<Dataset, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        Dataset::from_json(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a JSON array of items; refuses an item whose `price × quantity` overflows.
    pub fn from_json(bytes: &[u8]) -> Result<Dataset, String> {
        let items: Vec<Item> = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let mut max_product = 0i64;
        for item in &items {
            let product = item
                .price
                .checked_mul(item.quantity)
                .and_then(i64::checked_abs)
                .ok_or_else(|| format!("item {}: price × quantity overflows", item.id))?;
            max_product = max_product.max(product);
        }
        Ok(Dataset {
            items: items.into(),
            max_product,
        })
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Answers `GET /json/{count}?m=M` (the router matched the prefix).
    pub(crate) fn answer(&self, req: &Request<'_, '_>, res: &mut Response<'_>) {
        let Some(page) = self.page(req.path_bytes(), req.query_bytes()) else {
            return res.send(400, "text/plain; charset=utf-8", &[], b"400 Bad Request\n");
        };
        res.send_with(200, "application/json", &[], |buf| {
            // Cannot fail: the writer is a Vec and every total was checked to fit.
            let _ = serde_json::to_writer(buf, &page);
        })
    }

    /// The page a path and query ask for; `None` when they are malformed (see the module docs).
    fn page(&self, path: &[u8], query: Option<&[u8]>) -> Option<Page<'_>> {
        let count = path.strip_prefix(JSON_PREFIX.as_bytes())?;
        let count = usize::try_from(super::int(count)?)
            .ok()
            .filter(|&c| c > 0)?;
        let m = match query {
            Some(q) => multiplier(q)?,
            None => 1,
        };
        self.max_product.checked_mul(m.checked_abs()?)?;
        Some(Page {
            items: &self.items[..count.min(self.items.len())],
            m,
        })
    }
}

/// The value of `m` in a query (1 when absent); `None` when malformed or repeated.
fn multiplier(query: &[u8]) -> Option<i64> {
    let mut m = None;
    for pair in query.split(|&c| c == b'&') {
        if let Some(value) = pair.strip_prefix(b"m=") {
            if m.is_some() {
                return None;
            }
            m = Some(super::int(value)?);
        } else if pair == b"m" {
            return None;
        }
    }
    Some(m.unwrap_or(1))
}

/// `{"items":[...],"count":N}`: a view over the dataset, serialised as it is walked.
struct Page<'a> {
    items: &'a [Item],
    m: i64,
}

impl Serialize for Page<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut page = s.serialize_struct("Page", 2)?;
        page.serialize_field("items", &Priced(self))?;
        page.serialize_field("count", &self.items.len())?;
        page.end()
    }
}

/// The items of a page, each with its total.
struct Priced<'a>(&'a Page<'a>);

impl Serialize for Priced<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.items.len()))?;
        for item in self.0.items {
            seq.serialize_element(&WithTotal(item, self.0.m))?;
        }
        seq.end()
    }
}

/// One item and its `total` (checked to fit by [`Dataset::page`]).
struct WithTotal<'a>(&'a Item, i64);

impl Serialize for WithTotal<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let WithTotal(item, m) = *self;
        let mut out = s.serialize_struct("Item", 9)?;
        out.serialize_field("id", &item.id)?;
        out.serialize_field("name", &item.name)?;
        out.serialize_field("category", &item.category)?;
        out.serialize_field("price", &item.price)?;
        out.serialize_field("quantity", &item.quantity)?;
        out.serialize_field("active", &item.active)?;
        out.serialize_field("tags", &item.tags)?;
        out.serialize_field("rating", &item.rating)?;
        out.serialize_field("total", &(item.price * item.quantity * m))?;
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"[
        {"id":1,"name":"Alpha Widget","category":"electronics","price":328,"quantity":15,
         "active":true,"tags":["fast","new"],"rating":{"score":48,"count":127}},
        {"id":2,"name":"Pro \"Valve\"","category":"tools","price":-3,"quantity":5,
         "active":false,"tags":[],"rating":{"score":1,"count":2}}
    ]"#;

    fn body(path: &str, query: Option<&str>) -> Option<String> {
        let data = Dataset::from_json(TWO.as_bytes()).unwrap();
        let page = data.page(path.as_bytes(), query.map(str::as_bytes))?;
        Some(serde_json::to_string(&page).unwrap())
    }

    #[test]
    fn the_documented_example() {
        assert_eq!(
            body("/json/1", Some("m=3")).unwrap(),
            r#"{"items":[{"id":1,"name":"Alpha Widget","category":"electronics","price":328,"quantity":15,"active":true,"tags":["fast","new"],"rating":{"score":48,"count":127},"total":14760}],"count":1}"#
        );
    }

    macro_rules! pages {
        ($($name:ident: $path:expr, $query:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let got = body($path, $query).map(|b| {
                    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
                    let totals: Vec<i64> = v["items"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|i| i["total"].as_i64().unwrap())
                        .collect();
                    (v["count"].as_u64().unwrap(), totals)
                });
                assert_eq!(got, $want);
            }
        )*};
    }

    pages! {
        two_items_times_seven: "/json/2", Some("m=7") => Some((2, vec![34440, -105]));
        count_above_the_dataset_is_clamped: "/json/50", Some("m=1") => Some((2, vec![4920, -15]));
        m_absent_is_one: "/json/1", None => Some((1, vec![4920]));
        other_parameters_ignored: "/json/1", Some("x=1&m=2&y") => Some((1, vec![9840]));
        negative_multiplier: "/json/1", Some("m=-1") => Some((1, vec![-4920]));
        count_zero: "/json/0", Some("m=1") => None;
        count_not_a_number: "/json/x", Some("m=1") => None;
        count_empty: "/json/", Some("m=1") => None;
        count_negative: "/json/-1", Some("m=1") => None;
        count_with_more_path: "/json/1/2", Some("m=1") => None;
        m_malformed: "/json/1", Some("m=1x") => None;
        m_empty: "/json/1", Some("m=") => None;
        m_without_value: "/json/1", Some("m") => None;
        m_repeated: "/json/1", Some("m=1&m=2") => None;
        total_would_overflow: "/json/1", Some("m=9223372036854775807") => None;
        m_i64_min: "/json/1", Some("m=-9223372036854775808") => None;
    }

    #[test]
    fn names_are_escaped() {
        assert!(
            body("/json/2", None)
                .unwrap()
                .contains(r#""name":"Pro \"Valve\"""#)
        );
    }

    #[test]
    fn an_overflowing_item_is_refused_at_load() {
        let bad = r#"[{"id":9,"name":"x","category":"y","price":9223372036854775807,"quantity":2,
            "active":true,"tags":[],"rating":{"score":1,"count":1}}]"#;
        assert_eq!(
            Dataset::from_json(bad.as_bytes()).unwrap_err(),
            "item 9: price × quantity overflows"
        );
    }
}
