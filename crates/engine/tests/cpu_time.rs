//! `ServerHandle::cpu_time`: the server's worker threads are found and their time is read.
//! A test binary of its own, so that no other test's server runs in the process.
use twelve_engine::{Config, Server, apps};

#[test]
fn finds_the_servers_worker_thread_and_its_time() {
    let server = Server::new(Config::loopback(1), apps::techempower::router())
        .start()
        .unwrap();
    let time = server.cpu_time();
    server.shutdown();
    server.join();
    assert_eq!(time.threads, 1, "one worker thread named twelve-w*");
    // Setting up its listener and event loop took it some time on the CPU.
    assert!(!time.on_cpu.is_zero());
}
