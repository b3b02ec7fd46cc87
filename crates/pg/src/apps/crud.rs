//! HttpArena's `crud` profile (github.com/MDA2AV/HttpArena,
//! `site/content/docs/test-profiles/h1/isolated/crud/`): a REST API over the `items` table.
//!
//! - `GET /crud/items?category=&page=&limit=`: one page of a category's items by id
//!   (defaults `electronics`, 1, 10; `limit` clamped to 1-50, `page` to 1 or more), as
//!   `{"items":[..],"total":N,"page":P,"limit":L}`, `total` being the page's item count (the
//!   profile's "load-more" rule).
//! - `GET /crud/items/{id}`: one item, through a cache with a 200 ms absolute TTL: `X-Cache:
//!   MISS` when it came from the database (and was cached), `HIT` when from the cache; 404
//!   when there is no such item.
//! - `POST /crud/items` with `{"id","name","category","price","quantity"}`: insert, or on an
//!   existing id update those fields (upsert); 201 with the item.
//! - `PUT /crud/items/{id}` with `{"name","price","quantity"}`: update; 200 with the item, 404
//!   when there is none. The id's cached entry is invalidated.
//!
//! The cache is the process's, not each worker's: HttpArena's check reads an item twice on two
//! connections and wants `MISS` then `HIT`, and with per-CPU listeners the two may land on
//! different workers. It is split into `SHARDS` maps, each behind its own mutex, so workers
//! rarely meet on a lock. A write made while a read was fetching the same row must not leave
//! that older row cached: every item id maps to one of `BUCKETS` (4,096) version counters; a
//! write bumps its id's counter once the database answered, and an entry is stored and served
//! only while the counter still holds the value read *before* its row was fetched.

use super::httparena::{item_json, items_list};
use crate::{Database, INT4, Param, Pool, Statement, TEXT};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use twelve_engine::{Method, Reply, Request, Router};

/// The collection's path.
pub const ITEMS_PATH: &str = "/crud/items";
/// One item's path prefix: `/crud/items/{id}`.
pub const ITEM_PREFIX: &str = "/crud/items/";

/// How long a cached item is served: the profile's absolute expiration.
pub const TTL: Duration = Duration::from_millis(200);

/// Version counters the item ids share (id modulo this).
const BUCKETS: usize = 4096;

/// The cache's shards (id modulo this), each behind its own lock.
const SHARDS: usize = 64;

/// Inserts into a shard between sweeps of its expired entries.
const SWEEP_EVERY: u32 = 1024;

const JSON: &str = "application/json";

const COLUMNS: &str =
    "id, name, category, price, quantity, active, tags, rating_score, rating_count";

/// The profile's statements, prepared on every connection.
#[derive(Clone, Copy, Debug)]
pub struct Statements {
    list: Statement,
    read: Statement,
    create: Statement,
    update: Statement,
}

/// Adds the profile's statements to `db`.
pub fn prepare(db: &mut Database) -> Statements {
    Statements {
        list: db.statement(
            &format!(
                "SELECT {COLUMNS} FROM items WHERE category = $1 ORDER BY id LIMIT $2 OFFSET $3"
            ),
            &[TEXT, INT4, INT4],
        ),
        read: db.statement(
            &format!("SELECT {COLUMNS} FROM items WHERE id = $1"),
            &[INT4],
        ),
        create: db.statement(
            &format!(
                "INSERT INTO items ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, true, '[]', 0, 0) \
                 ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, \
                 category = EXCLUDED.category, price = EXCLUDED.price, \
                 quantity = EXCLUDED.quantity RETURNING {COLUMNS}"
            ),
            &[INT4, TEXT, TEXT, INT4, INT4],
        ),
        update: db.statement(
            &format!(
                "UPDATE items SET name = $2, price = $3, quantity = $4 WHERE id = $1 \
                 RETURNING {COLUMNS}"
            ),
            &[INT4, TEXT, INT4, INT4],
        ),
    }
}

/// A POST's body.
#[derive(Deserialize)]
struct NewItem {
    id: i32,
    name: String,
    category: String,
    price: i32,
    quantity: i32,
}

/// A PUT's body (other fields, `category` among them, are ignored).
#[derive(Deserialize)]
struct Change {
    name: String,
    price: i32,
    quantity: i32,
}

/// Adds the profile's four endpoints to `router`.
pub fn add_routes(router: Router, db: &Arc<Database>, s: Statements) -> Router {
    let (d1, d2, d3, d4) = (db.clone(), db.clone(), db.clone(), db.clone());
    router
        .get_async(ITEMS_PATH, move |req: &Request<'_, '_>, _: &[u8]| {
            let page = Page::of(req);
            let q = page.offset().map(|offset| {
                Pool::get(&d1).query(
                    s.list,
                    &[
                        Param::Text(&page.category),
                        Param::Int(page.limit),
                        Param::Int(offset),
                    ],
                )
            });
            async move {
                let rows = match q {
                    Some(q) => match q.await {
                        Ok(rows) => rows,
                        Err(e) => return Reply::text(e.status(), format!("{e}\n")),
                    },
                    None => crate::Rows::default(),
                };
                let (mut out, n) = items_list(&rows, 48);
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b",\"total\":");
                out.extend_from_slice(b.format(n).as_bytes());
                out.extend_from_slice(b",\"page\":");
                out.extend_from_slice(b.format(page.page).as_bytes());
                out.extend_from_slice(b",\"limit\":");
                out.extend_from_slice(b.format(page.limit).as_bytes());
                out.push(b'}');
                Reply::json(out)
            }
        })
        .get_async_prefix(ITEM_PREFIX, move |req: &Request<'_, '_>, _: &[u8]| {
            let id = item_id(req.path_bytes());
            let hit = id.and_then(cached);
            // The version is read before the row is asked for (see the module doc).
            let miss = match (id, &hit) {
                (Some(id), None) => {
                    let v = version(id);
                    Some((v, Pool::get(&d2).query(s.read, &[Param::Int(id)])))
                }
                _ => None,
            };
            async move {
                let Some(id) = id else {
                    return not_found();
                };
                if let Some(body) = hit {
                    return Reply::json(body).header("X-Cache", &b"HIT"[..]);
                }
                let Some((v, q)) = miss else {
                    return not_found();
                };
                match q.await {
                    Ok(rows) => {
                        let mut body = Vec::with_capacity(256);
                        match rows.get(0) {
                            Some(r) if item_json(r, &mut body) => {
                                store(id, v, &body);
                                Reply::json(body).header("X-Cache", &b"MISS"[..])
                            }
                            _ => not_found(),
                        }
                    }
                    Err(e) => Reply::text(e.status(), format!("{e}\n")),
                }
            }
        })
        .route_async(
            Method::Post,
            ITEMS_PATH,
            move |_: &Request<'_, '_>, body: &[u8]| {
                let q = serde_json::from_slice::<NewItem>(body).map(|it| {
                    let q = Pool::get(&d3).query(
                        s.create,
                        &[
                            Param::Int(it.id),
                            Param::Text(&it.name),
                            Param::Text(&it.category),
                            Param::Int(it.price),
                            Param::Int(it.quantity),
                        ],
                    );
                    (it.id, q)
                });
                async move {
                    match q {
                        Ok((id, q)) => written(id, q.await, 201),
                        Err(e) => bad_body(&e),
                    }
                }
            },
        )
        .route_async_prefix(
            Method::Put,
            ITEM_PREFIX,
            move |req: &Request<'_, '_>, body: &[u8]| {
                let id = item_id(req.path_bytes());
                let q = id.map(|id| {
                    serde_json::from_slice::<Change>(body).map(|c| {
                        Pool::get(&d4).query(
                            s.update,
                            &[
                                Param::Int(id),
                                Param::Text(&c.name),
                                Param::Int(c.price),
                                Param::Int(c.quantity),
                            ],
                        )
                    })
                });
                async move {
                    match (id, q) {
                        (Some(id), Some(Ok(q))) => written(id, q.await, 200),
                        (_, Some(Err(e))) => bad_body(&e),
                        _ => not_found(),
                    }
                }
            },
        )
}

/// The answer to a write of item `id` whose statement returned `rows`: the item with
/// `status`, or 404 when no row was written; the id's cached entries are invalidated once the
/// database answered.
fn written(id: i32, rows: Result<crate::Rows, crate::Error>, status: u16) -> Reply {
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return Reply::text(e.status(), format!("{e}\n")),
    };
    invalidate(id);
    let mut body = Vec::with_capacity(256);
    match rows.get(0) {
        Some(r) if item_json(r, &mut body) => Reply::new(status, JSON, body),
        _ => not_found(),
    }
}

fn not_found() -> Reply {
    Reply::text(404, &b"404 no such item\n"[..])
}

fn bad_body(e: &serde_json::Error) -> Reply {
    Reply::text(
        400,
        format!("400 the body is not the expected JSON object: {e}\n"),
    )
}

/// A list request's parameters, with the profile's defaults and bounds.
#[derive(Debug, PartialEq, Eq)]
struct Page {
    category: String,
    page: i32,
    limit: i32,
}

impl Page {
    fn of(req: &Request<'_, '_>) -> Page {
        Page::parse(req.query_bytes().unwrap_or_default())
    }

    fn parse(query: &[u8]) -> Page {
        let mut p = Page {
            category: "electronics".to_owned(),
            page: 1,
            limit: 10,
        };
        for pair in query.split(|&b| b == b'&') {
            let (name, value) = match pair.iter().position(|&b| b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            let number = || std::str::from_utf8(value).ok()?.parse::<i32>().ok();
            match name {
                b"category" => p.category = percent_decode(value),
                b"page" => p.page = number().unwrap_or(1).max(1),
                b"limit" => p.limit = number().unwrap_or(10).clamp(1, 50),
                _ => {}
            }
        }
        p
    }

    /// The page's first row, `None` past the largest offset a query can take (no rows).
    fn offset(&self) -> Option<i32> {
        (self.page - 1).checked_mul(self.limit)
    }
}

/// A query value's `%XX` escapes and `+` (a space, in a form's encoding) decoded; invalid
/// UTF-8 is replaced.
fn percent_decode(v: &[u8]) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        match v[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < v.len() => match (hex(v[i + 1]), hex(v[i + 2])) {
                (Some(a), Some(b)) => {
                    out.push(a << 4 | b);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `{id}` of `/crud/items/{id}`: a positive decimal `int4`.
fn item_id(path: &[u8]) -> Option<i32> {
    let digits = path.strip_prefix(ITEM_PREFIX.as_bytes())?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits)
        .ok()?
        .parse::<i32>()
        .ok()
        .filter(|&id| id > 0)
}

/// The process's version counters (see the module doc).
static VERSIONS: [AtomicU32; BUCKETS] = [const { AtomicU32::new(0) }; BUCKETS];

fn bucket(id: i32) -> &'static AtomicU32 {
    &VERSIONS[id.unsigned_abs() as usize % BUCKETS]
}

/// Item `id`'s version now.
fn version(id: i32) -> u32 {
    // Acquire pairs with the writer's Release: a reader that sees the new version reads the
    // database after the write was answered.
    bucket(id).load(Ordering::Acquire)
}

/// Item `id` changed: every cached copy of it is stale from now on.
fn invalidate(id: i32) {
    bucket(id).fetch_add(1, Ordering::Release);
    shard(id).map().remove(&id);
}

/// A cached item.
struct Entry {
    expires: Instant,
    version: u32,
    body: Vec<u8>,
}

/// One shard of the cache.
struct Shard {
    map: Option<HashMap<i32, Entry>>,
    inserts: u32,
}

/// The process's cache (see the module doc); a shard's map is made on its first insert.
static CACHE: [Mutex<Shard>; SHARDS] = [const {
    Mutex::new(Shard {
        map: None,
        inserts: 0,
    })
}; SHARDS];

/// Item `id`'s shard, locked. A handler that panicked while holding it left a map that is
/// still whole (every update is one call), so a poisoned lock is used as it is.
fn shard(id: i32) -> ShardGuard {
    ShardGuard(
        CACHE[id.unsigned_abs() as usize % SHARDS]
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    )
}

struct ShardGuard(MutexGuard<'static, Shard>);

impl ShardGuard {
    fn map(&mut self) -> &mut HashMap<i32, Entry> {
        self.0.map.get_or_insert_with(HashMap::new)
    }
}

/// Item `id`'s JSON, if it is cached unexpired and no write came since.
fn cached(id: i32) -> Option<Vec<u8>> {
    let now = Instant::now();
    let mut s = shard(id);
    let e = s.map().get(&id)?;
    (e.expires > now && e.version == version(id)).then(|| e.body.clone())
}

/// Caches item `id`'s JSON, fetched at `version`, for [`TTL`], unless a write came since.
fn store(id: i32, version: u32, body: &[u8]) {
    let now = Instant::now();
    let mut s = shard(id);
    s.0.inserts += 1;
    if s.0.inserts >= SWEEP_EVERY {
        // Entries no one asks for again would stay forever: drop the expired ones.
        s.0.inserts = 0;
        s.map().retain(|_, e| e.expires > now);
    }
    if version != self::version(id) {
        return;
    }
    s.map().insert(
        id,
        Entry {
            expires: now + TTL,
            version,
            body: body.to_vec(),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! page {
        ($($name:ident: $query:expr => ($cat:expr, $page:expr, $limit:expr);)*) => {$(
            #[test]
            fn $name() {
                let want = Page { category: $cat.to_owned(), page: $page, limit: $limit };
                assert_eq!(Page::parse($query), want);
            }
        )*};
    }

    page! {
        list_defaults: b"" => ("electronics", 1, 10);
        list_given: b"category=office&page=3&limit=25" => ("office", 3, 25);
        list_limit_clamped_high: b"limit=500" => ("electronics", 1, 50);
        list_limit_clamped_low: b"limit=0" => ("electronics", 1, 1);
        list_page_at_least_one: b"page=-4" => ("electronics", 1, 10);
        list_malformed_numbers_are_defaults: b"page=x&limit=" => ("electronics", 1, 10);
        list_category_decoded: b"category=home%20%26+garden" => ("home & garden", 1, 10);
        list_bad_escape_kept: b"category=a%2" => ("a%2", 1, 10);
        list_other_parameters_ignored: b"x=1&category=toys" => ("toys", 1, 10);
    }

    #[test]
    fn an_offset_past_int4_is_no_page() {
        let p = Page::parse(b"page=2147483647&limit=50");
        assert_eq!(p.offset(), None);
        assert_eq!(Page::parse(b"page=3&limit=10").offset(), Some(20));
    }

    #[test]
    fn item_ids_are_positive_int4() {
        for (path, want) in [
            (&b"/crud/items/1"[..], Some(1)),
            (b"/crud/items/200001", Some(200_001)),
            (b"/crud/items/0", None),
            (b"/crud/items/", None),
            (b"/crud/items/-3", None),
            (b"/crud/items/12a", None),
            (b"/crud/items/99999999999", None),
        ] {
            assert_eq!(item_id(path), want, "{}", String::from_utf8_lossy(path));
        }
    }

    #[test]
    fn a_write_makes_every_cached_copy_stale() {
        let id = 77;
        let v = version(id);
        store(id, v, b"{}");
        assert_eq!(cached(id).as_deref(), Some(&b"{}"[..]));
        // A copy fetched before the write, stored after it, is stale at once.
        let before = version(id);
        invalidate(id);
        store(id, before, b"{\"old\":1}");
        assert_eq!(cached(id), None);
    }

    #[test]
    fn a_copy_one_worker_cached_is_a_hit_on_another() {
        let id = 78;
        let v = version(id);
        std::thread::spawn(move || store(id, v, b"{\"id\":78}"))
            .join()
            .unwrap();
        let hit = std::thread::spawn(move || cached(id)).join().unwrap();
        assert_eq!(hit.as_deref(), Some(&b"{\"id\":78}"[..]));
    }
}
