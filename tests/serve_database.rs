//! `twelve serve --database`: an unreachable database is one error line and exit code 2; a
//! reachable one (Debian's PostgreSQL, started by the test) turns TechEmpower's database
//! endpoints on beside /json, and they answer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;
use twelve_testkit::{Postgres, Reap, skip_or_fail};

#[test]
fn an_unreachable_database_is_one_error_naming_the_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .args([
            "--database",
            "postgres://u@/db?host=/nonexistent-twelve-socket-dir",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--database"), "{err}");
    assert!(
        err.contains("/nonexistent-twelve-socket-dir/.s.PGSQL.5432"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn a_bad_database_url_names_the_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database",
            "mysql://x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--database") && err.contains("not a postgres:// URL"),
        "{err}"
    );
}

#[test]
fn a_reachable_database_turns_the_endpoints_on() {
    let pg = match Postgres::start("serve") {
        Ok(pg) => pg,
        Err(e) => return skip_or_fail(format!("no PostgreSQL here: {e}")),
    };
    pg.psql(
        "postgres",
        "CREATE TABLE world (id integer PRIMARY KEY, randomnumber integer NOT NULL);
         INSERT INTO world SELECT x, x FROM generate_series(1, 10000) x;
         CREATE TABLE fortune (id integer PRIMARY KEY, message text NOT NULL);
         INSERT INTO fortune VALUES (1, 'a < b');
         CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, category text NOT NULL,
           price integer NOT NULL, quantity integer NOT NULL, active boolean NOT NULL,
           tags jsonb NOT NULL, rating_score integer NOT NULL, rating_count integer NOT NULL);",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .args(["--database", &pg.url("postgres"), "--drain-timeout", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let _reap = Reap::new(child.id());
    let addr = twelve_testkit::listening_addr(&mut child, "http");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /db HTTP/1.1\r\nHost: a\r\n\r\nGET /fortunes HTTP/1.1\r\nHost: a\r\n\r\nGET /json HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    let bodies: Vec<&str> = all.split("HTTP/1.1 ").skip(1).collect();
    assert_eq!(bodies.len(), 3, "{all}");
    assert!(
        bodies[0].starts_with("200 OK") && bodies[0].contains("\"randomNumber\":"),
        "{all}"
    );
    assert!(
        bodies[1].starts_with("200 OK") && bodies[1].contains("<td>a &lt; b</td>"),
        "{all}"
    );
    assert!(bodies[2].contains("Hello, World!"), "{all}");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}
