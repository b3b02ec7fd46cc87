//! The hostile suites' harness checks itself: each check must fail on the behaviour it exists
//! to catch, or a passing suite would prove nothing.

mod common;
use common::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

use std::time::Duration;

fn panics(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// `error_row` fails on a request the server answers with 200 and keeps open.
#[test]
fn error_row_fails_on_a_valid_request() {
    let srv = TestServer::start();
    assert!(panics(|| {
        error_row(&srv, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", &[200]);
    }));
    srv.finish();
}

/// `error_row` fails when the sentinel is answered (here: an error that keeps the
/// connection, a static 404, treated as if it were a framing error).
#[test]
fn error_row_fails_when_the_connection_stays_open() {
    let srv = TestServer::start();
    assert!(panics(|| {
        error_row(&srv, b"GET /missing HTTP/1.1\r\nHost: a\r\n\r\n", &[404]);
    }));
    srv.finish();
}

/// `finish` fails while a server-side connection is still open (so the fd check sees the
/// server's sockets), and passes once the client is gone.
#[test]
fn finish_fails_while_a_connection_is_open() {
    let mut config = test_config();
    config.timeouts.keep_alive = Duration::from_secs(30);
    let srv = TestServer::start_with(config);
    let mut c = srv.connect();
    c.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(c.response().status, 200);
    assert_eq!(srv.open_conn_fds(), 1);
    let outcome = panics(move || srv.finish());
    assert!(outcome, "finish passed with a connection open");
    drop(c);
}
