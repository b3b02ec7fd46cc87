//! TechEmpower's database tests (wiki, "Project Information / Framework Tests Overview",
//! tests 2, 3, 4 and 5), on the `World` (`id`, `randomNumber`: 10,000 rows, both `int4`) and
//! `Fortune` (`id`, `message`) tables:
//!
//! - `GET /db`: one random row of World as `{"id":N,"randomNumber":M}`.
//! - `GET /queries?queries=N` (or `?q=N`): N rows (1-500; a missing or bad N is 1, past the
//!   range is clamped), each its own query, as a JSON array. The N queries are pipelined.
//! - `GET /fortunes`: every Fortune row plus one added at request time, sorted by message, as
//!   an HTML table, escaped (`text/html; charset=utf-8`).
//! - `GET /updates?queries=N`: N rows read one by one, each given a new random number,
//!   written back in one `UPDATE` over two arrays (the rules allow batching the writes), in
//!   id order so that concurrent batches lock rows in the same order; the reads and the write
//!   are pipelined on one connection, the write behind the reads (as the leading
//!   TechEmpower entries do), so the request costs one round trip.
//!
//! A query that fails answers with its status ([`Error::status`]: 503 while the database is
//! unreachable, 500 when it refused) and a line saying why.

use super::{escape_html, random};
use crate::{Database, Error, INT4, INT4_ARRAY, Param, Pool, Rows, Statement};
use std::sync::Arc;
use twelve_engine::{Reply, Request, Router};

/// The tests' statements, prepared on every connection.
#[derive(Clone, Copy, Debug)]
pub struct Statements {
    world: Statement,
    fortunes: Statement,
    update: Statement,
}

/// Adds the tests' statements to `db`.
pub fn prepare(db: &mut Database) -> Statements {
    Statements {
        world: db.statement("SELECT id, randomnumber FROM world WHERE id = $1", &[INT4]),
        fortunes: db.statement("SELECT id, message FROM fortune", &[]),
        update: db.statement(
            "UPDATE world SET randomnumber = w.r FROM \
             (SELECT unnest($1::int4[]) AS id, unnest($2::int4[]) AS r) AS w \
             WHERE world.id = w.id",
            &[INT4_ARRAY, INT4_ARRAY],
        ),
    }
}

/// Adds `/db`, `/queries`, `/fortunes` and `/updates` to `router`.
pub fn add_routes(router: Router, db: &Arc<Database>, s: Statements) -> Router {
    let (d1, d2, d3, d4) = (db.clone(), db.clone(), db.clone(), db.clone());
    router
        .get_async("/db", move |_: &Request<'_, '_>, _: &[u8]| {
            let pool = Pool::get(&d1);
            let q = pool.query(s.world, &[Param::Int(random(1..=10_000))]);
            async move {
                match q.await {
                    Ok(rows) => {
                        let mut out = Vec::with_capacity(40);
                        world_json(&rows, &mut out);
                        Reply::json(out)
                    }
                    Err(e) => failed(e),
                }
            }
        })
        .get_async("/queries", move |req: &Request<'_, '_>, _: &[u8]| {
            let pool = Pool::get(&d2);
            let queries: Vec<_> = (0..count(req))
                .map(|_| pool.query(s.world, &[Param::Int(random(1..=10_000))]))
                .collect();
            async move {
                let mut out = Reply::buffer(2 + queries.len() * 36);
                out.push(b'[');
                for (i, q) in queries.into_iter().enumerate() {
                    match q.await {
                        Ok(rows) => {
                            if i > 0 {
                                out.push(b',');
                            }
                            world_json(&rows, &mut out);
                        }
                        Err(e) => return failed(e),
                    }
                }
                out.push(b']');
                Reply::json(out)
            }
        })
        .get_async("/fortunes", move |_: &Request<'_, '_>, _: &[u8]| {
            let q = Pool::get(&d3).query(s.fortunes, &[]);
            async move {
                match q.await {
                    Ok(rows) => Reply::new(200, "text/html; charset=utf-8", fortunes_html(&rows)),
                    Err(e) => failed(e),
                }
            }
        })
        .get_async("/updates", move |req: &Request<'_, '_>, _: &[u8]| {
            let (reads, write, worlds) = start_updates(&Pool::get(&d4), s, count(req));
            async move { updates(reads, write, worlds).await }
        })
}

/// The `queries` parameter (or `q`, the short name other entries' URLs use): 1-500, a
/// missing or non-numeric one 1.
pub fn count(req: &Request<'_, '_>) -> usize {
    let n = req
        .query_bytes()
        .and_then(|q| {
            q.split(|&b| b == b'&').find_map(|p| {
                p.strip_prefix(b"queries=")
                    .or_else(|| p.strip_prefix(b"q="))
            })
        })
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1);
    n.clamp(1, 500) as usize
}

/// The reads and the write of an update of `n` rows, queued at once on one connection
/// (a [`crate::Pipeline`]: PostgreSQL runs the write after the reads, and the request costs
/// one round trip), and the worlds to answer: each read row given a new random number. The
/// write is one `UPDATE` over two arrays (the rules allow batching the writes), in id order
/// so that concurrent batches lock rows in the same order, one entry per id (an id drawn
/// twice keeps its last number, as the answer says).
fn start_updates(
    pool: &Pool,
    s: Statements,
    n: usize,
) -> (Vec<crate::Query>, crate::Query, Vec<(i32, i32)>) {
    let pipeline = pool.pipeline();
    let worlds: Vec<(i32, i32)> = (0..n)
        .map(|_| (random(1..=10_000), random(1..=10_000)))
        .collect();
    let reads = worlds
        .iter()
        .map(|&(id, _)| pipeline.query(s.world, &[Param::Int(id)]))
        .collect();
    let (ids, numbers) = update_batch(&worlds);
    let write = pipeline.query(
        s.update,
        &[Param::IntArray(&ids), Param::IntArray(&numbers)],
    );
    (reads, write, worlds)
}

/// The `UPDATE`'s two arrays for `worlds` (id, new number): ids ascending, once each, with
/// the number drawn last for an id drawn more than once.
fn update_batch(worlds: &[(i32, i32)]) -> (Vec<i32>, Vec<i32>) {
    let mut batch: Vec<(usize, i32, i32)> = worlds
        .iter()
        .enumerate()
        .map(|(i, &(id, n))| (i, id, n))
        .collect();
    // By id, and for one id the latest draw first, so that dedup keeps it.
    batch.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
    batch.dedup_by_key(|w| w.1);
    batch.iter().map(|&(_, id, n)| (id, n)).unzip()
}

async fn updates(reads: Vec<crate::Query>, write: crate::Query, worlds: Vec<(i32, i32)>) -> Reply {
    for (q, &(id, _)) in reads.into_iter().zip(&worlds) {
        match q.await {
            // The rules ask that the row's randomNumber be read; the row must be the one
            // asked for.
            Ok(rows) => match rows.get(0).and_then(|r| Some((r.int(0)?, r.int(1)?))) {
                Some((got, _old)) if got == id => {}
                _ => return failed(Error::Protocol),
            },
            Err(e) => return failed(e),
        }
    }
    if let Err(e) = write.await {
        return failed(e);
    }
    let mut out = Reply::buffer(2 + worlds.len() * 36);
    out.push(b'[');
    for (i, &(id, n)) in worlds.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_world(id, n, &mut out);
    }
    out.push(b']');
    Reply::json(out)
}

fn failed(e: Error) -> Reply {
    Reply::text(e.status(), format!("{e}\n"))
}

fn world_json(rows: &Rows, out: &mut Vec<u8>) {
    let row = rows.get(0);
    let (id, n) = row
        .and_then(|r| Some((r.int(0)?, r.int(1)?)))
        .unwrap_or((0, 0));
    push_world(id, n, out);
}

fn push_world(id: i32, n: i32, out: &mut Vec<u8>) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(b.format(id).as_bytes());
    out.extend_from_slice(b",\"randomNumber\":");
    out.extend_from_slice(b.format(n).as_bytes());
    out.push(b'}');
}

/// The message TechEmpower (and HttpArena) add at request time.
pub const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

/// The fortunes page: the rows plus [`ADDED_FORTUNE`] (id 0), sorted by message (byte
/// order), each cell escaped.
pub fn fortunes_html(rows: &Rows) -> Vec<u8> {
    // The list on the stack when it fits (TechEmpower's table has 12 rows); a bigger table
    // costs an allocation.
    let mut stack: [(i32, &[u8]); 32] = [(0, b""); 32];
    let mut heap = Vec::new();
    let added = (0, ADDED_FORTUNE.as_bytes());
    let list: &mut [(i32, &[u8])] = if rows.len() < stack.len() {
        let mut k = 0;
        for r in rows.iter() {
            if let (Some(id), Some(m)) = (r.int(0), r.bytes(1)) {
                stack[k] = (id, m);
                k += 1;
            }
        }
        stack[k] = added;
        &mut stack[..=k]
    } else {
        heap.extend(rows.iter().filter_map(|r| Some((r.int(0)?, r.bytes(1)?))));
        heap.push(added);
        &mut heap
    };
    // Byte order is the order of the code points (UTF-8's design), as the test sorts.
    list.sort_unstable_by(|a, b| a.1.cmp(b.1));
    let mut out = Reply::buffer(256 + list.len() * 80);
    out.extend_from_slice(
        b"<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>",
    );
    let mut b = itoa::Buffer::new();
    for &mut (id, message) in list {
        out.extend_from_slice(b"<tr><td>");
        out.extend_from_slice(b.format(id).as_bytes());
        out.extend_from_slice(b"</td><td>");
        escape_html(message, &mut out);
        out.extend_from_slice(b"</td></tr>");
    }
    out.extend_from_slice(b"</table></body></html>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_update_batch_is_by_id_once_each_with_the_last_draw() {
        type Arrays = (Vec<i32>, Vec<i32>);
        let cases: &[(&[(i32, i32)], Arrays)] = &[
            (&[], (vec![], vec![])),
            (&[(7, 1)], (vec![7], vec![1])),
            (&[(9, 1), (3, 2), (5, 3)], (vec![3, 5, 9], vec![2, 3, 1])),
            // 4 drawn three times: its last number wins, wherever the draws fall.
            (
                &[(4, 10), (2, 20), (4, 30), (8, 40), (4, 50)],
                (vec![2, 4, 8], vec![20, 50, 40]),
            ),
            (&[(1, 5), (1, 6)], (vec![1], vec![6])),
        ];
        for (worlds, want) in cases {
            assert_eq!(&update_batch(worlds), want, "{worlds:?}");
        }
    }
}
