//! `Config::coalesce` over loopback: a worker that naps after small batches still answers
//! every request, in order, on every connection, and counts its naps; by default (`Auto`,
//! which naps only for database answers owed: crates/pg/tests) a plain HTTP worker never
//! naps. Both count the turns that served connections (`batches`).

mod common;
use common::*;
use std::time::Duration;

fn ask_many(srv: &TestServer, conns: usize, rounds: usize) {
    let mut clients: Vec<Client> = (0..conns).map(|_| srv.connect()).collect();
    for _ in 0..rounds {
        for c in &mut clients {
            c.send(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
        }
        for c in &mut clients {
            let r = c.response();
            assert_status(&r, &[200]);
            assert_eq!(r.body, b"x");
        }
    }
}

#[test]
fn napping_worker_answers_every_request_and_counts_its_naps() {
    let mut config = test_config();
    config.coalesce = twelve_engine::Coalesce::Always(Duration::from_micros(200));
    let srv = TestServer::start_with(config);
    ask_many(&srv, 3, 20);
    // Every round of three requests is a small batch: the worker napped after some of them.
    srv.wait_for("a nap", |m| m.naps > 0);
    assert_eq!(srv.metrics().requests, 60);
    srv.finish();
}

#[test]
fn by_default_a_plain_http_worker_never_naps() {
    let srv = TestServer::start();
    ask_many(&srv, 3, 20);
    srv.wait_for("the requests", |m| m.requests == 60);
    assert_eq!(srv.metrics().naps, 0);
    srv.finish();
}

#[test]
fn batches_count_the_turns_that_served_connections() {
    let srv = TestServer::start();
    // One connection, one request at a time: each request needs a wake-up of its own. A
    // turn is counted after its responses went out, so the last one may still be counting
    // when its answer arrives: wait for it (a count below 10 times out and fails).
    ask_many(&srv, 1, 10);
    let one = srv
        .wait_for("a batch per lone request", |m| {
            m.requests == 10 && m.batches >= 10
        })
        .batches;
    // Three connections asked together: never more batches than requests.
    ask_many(&srv, 3, 20);
    srv.wait_for("the requests", |m| m.requests == 70);
    let m = srv.metrics();
    assert!(
        m.batches > one && m.batches - one <= 60,
        "60 requests in {} batches",
        m.batches - one
    );
    srv.finish();
}
