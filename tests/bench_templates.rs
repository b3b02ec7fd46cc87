//! Request templates end to end: `twelve bench` with `{seq}` and `{rand}` placeholders against a
//! loopback server that records every request it reads, byte for byte.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// One request as the server read it: its request line and its body.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A server that answers every request with an empty 200 and records it; each connection on
/// its own thread, which ends when the client closes.
fn recording_server() -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let log = log.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while let Some((line, body, used)) = one_request(&buf) {
                        log.lock().unwrap().push((line, body));
                        buf.drain(..used);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                        if stream.write_all(ok).is_err() {
                            return;
                        }
                    }
                    match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    (port, seen)
}

/// The first whole request of `buf`: (request line, body, bytes used).
fn one_request(buf: &[u8]) -> Option<(String, String, usize)> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&buf[..end]).unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .map_or(0, |n| n.trim().parse().unwrap());
    let body = buf.get(end..end + length)?;
    let line = head.lines().next().unwrap().to_string();
    Some((
        line,
        String::from_utf8(body.to_vec()).unwrap(),
        end + length,
    ))
}

#[test]
fn every_request_gets_its_own_sequence_number_and_random_value() {
    let (port, seen) = recording_server();
    let url = format!("http://127.0.0.1:{port}/items/{{seq:1000}}?r={{rand:1:5}}");
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["bench", &url, "-m", "POST", "-b", r#"{"id":{seq:1000}}"#])
        .args(["-n", "300", "-c", "2", "-t", "1", "-p", "4", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"]["status"]["200"], 300, "{doc}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 300);
    let mut ids = Vec::new();
    let mut rands = [0u32; 6];
    for (line, body) in seen.iter() {
        // "POST /items/1234?r=3 HTTP/1.1", body {"id":1234}: one number per request.
        let target = line.split(' ').nth(1).unwrap();
        let (id, r) = target
            .strip_prefix("/items/")
            .and_then(|t| t.split_once("?r="))
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(body, &format!(r#"{{"id":{id}}}"#), "{line}");
        ids.push(id.parse::<u32>().unwrap());
        rands[r.parse::<usize>().unwrap()] += 1;
    }
    ids.sort_unstable();
    assert_eq!(
        ids,
        (1000..1300).collect::<Vec<_>>(),
        "each number exactly once"
    );
    assert_eq!(rands[0], 0);
    assert!(
        rands[1..].iter().all(|&n| n > 20),
        "every value of 1..=5 drawn: {rands:?}"
    );
}

#[test]
fn a_bad_placeholder_exits_2_before_any_load() {
    let out = Command::new(env!("CARGO_BIN_EXE_twelve"))
        .args(["bench", "http://127.0.0.1:9/{rand:9:1}", "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("{rand:9:1}") && err.contains("MIN is larger than MAX"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one sentence: {err}");
}
