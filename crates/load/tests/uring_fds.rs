//! The io_uring engine closes what it opens while the run goes on: with a new connection per
//! request, the process never holds more than a few sockets per connection slot. (Its own
//! test binary, so that the descriptor count of the process is this run's alone.)
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use twelve_load::{ClientIo, Config, Stop, Target};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

#[test]
fn a_new_connection_per_request_leaves_no_socket_behind() {
    if let Err(e) = twelve_sys::uring::ring::probe() {
        return twelve_testkit::skip_or_fail(format!("io_uring unavailable here ({e})"));
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                let mut got = Vec::new();
                // One request, one answer, then wait for the client's close: a client that
                // never closes keeps this socket, and its own, open.
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                let _ = stream.read(&mut buf);
            });
        }
    });
    let before = open_fds();
    let done = Arc::new(AtomicBool::new(false));
    let most = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (done, most) = (done.clone(), most.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(open_fds(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let mut c = Config::new(vec![Target::parse(&format!("http://{addr}/")).unwrap()]);
    c.io = ClientIo::Uring;
    c.keep_alive = false;
    c.connections = 4;
    c.worker_cpus = vec![None];
    c.stop = Stop::Requests(2000);
    let r = twelve_load::run(&c, |_| {}).unwrap().result;
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert_eq!(r.requests(), 2000, "{:?}", r.merged_errors());
    // 4 slots, each with at most a socket being closed and a new one; the server's side of
    // each, and the ring's own descriptors: far below the 2,000 a leak would reach.
    let most = most.load(Ordering::Relaxed);
    assert!(
        most < before + 64,
        "{most} descriptors open at once (from {before})"
    );
}
