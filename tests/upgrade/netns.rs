//! A network namespace of the test's own (`ip netns`), so that its TCP counters count only
//! the test's traffic; the server runs in it through `ip netns exec` (which execs, so the pid
//! is the server's), the client's threads join it with `setns`.

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

pub struct Netns {
    pub name: String,
}

/// TCP counters of a namespace, `"Tcp:OutRsts"`, `"TcpExt:ListenDrops"`, ...
pub type Counters = BTreeMap<String, u64>;

impl Netns {
    /// A fresh namespace with `lo` up and `tcp_migrate_req` as given, or why not.
    pub fn create(migrate_req: u8) -> Result<Self, String> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "twelve-up-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        run(&["ip", "netns", "add", &name])?;
        let ns = Self { name };
        ns.sh(&format!(
            "ip link set lo up && echo {migrate_req} > /proc/sys/net/ipv4/tcp_migrate_req"
        ))?;
        Ok(ns)
    }

    /// A command run inside the namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    pub fn sh(&self, script: &str) -> Result<String, String> {
        let out = self
            .command("sh")
            .args(["-c", script])
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("ip netns exec: {e}"))?;
        if !out.status.success() {
            return Err(format!("{script}: {}", out.status));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Moves the calling thread into the namespace.
    pub fn enter(&self) {
        let f = std::fs::File::open(format!("/run/netns/{}", self.name)).unwrap();
        rustix::thread::move_into_link_name_space(
            f.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .unwrap();
    }

    /// Runs `f` on a thread of its own inside the namespace; returns what it returned.
    pub fn enter_for<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    self.enter();
                    f()
                })
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    /// A closure that moves its thread into the namespace (for the client's threads).
    pub fn enterer(&self) -> impl Fn() + Send + Sync + Clone + 'static {
        let path = format!("/run/netns/{}", self.name);
        move || {
            let f = std::fs::File::open(&path).unwrap();
            rustix::thread::move_into_link_name_space(
                f.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .unwrap();
        }
    }

    /// The namespace's TCP counters now.
    pub fn counters(&self) -> Counters {
        let text = self.sh("cat /proc/net/snmp /proc/net/netstat").unwrap();
        parse_counters(&text)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Whatever a failed test left running in it: only this test's servers live there.
        let _ = run(&[
            "sh",
            "-c",
            &format!("ip netns pids {} | xargs -r kill -9", self.name),
        ]);
        let _ = run(&["ip", "netns", "del", &self.name]);
    }
}

fn run(argv: &[&str]) -> Result<(), String> {
    let status = Command::new(argv[0])
        .args(&argv[1..])
        .status()
        .map_err(|e| format!("{}: {e}", argv[0]))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{}: {status}", argv.join(" ")))
    }
}

/// `/proc/net/snmp` and `netstat` come as pairs of lines: `Tcp: names...`, `Tcp: values...`.
fn parse_counters(text: &str) -> Counters {
    let mut out = Counters::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let (Some((group, names)), Some((_, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = v.parse() {
                out.insert(format!("{group}:{n}"), v);
            }
        }
    }
    out
}

/// `after - before` for each counter the pass criteria name.
pub fn deltas(before: &Counters, after: &Counters) -> BTreeMap<&'static str, u64> {
    [
        "Tcp:OutRsts",
        "TcpExt:ListenDrops",
        "TcpExt:ListenOverflows",
        "TcpExt:TCPMigrateReqFailure",
    ]
    .into_iter()
    .map(|k| {
        let d = after.get(k).copied().unwrap_or(0) - before.get(k).copied().unwrap_or(0);
        (k, d)
    })
    .collect()
}
