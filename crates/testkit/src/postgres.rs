//! A PostgreSQL server of a test's own: Debian's `postgresql` package, `initdb` into a
//! temporary directory, listening only on a Unix socket in that directory (no TCP port, so
//! tests never collide), trust authentication, stopped and its directory removed when dropped,
//! or when the test process ends without dropping it (a server in a `static`: see
//! [`Postgres::start`]'s watchdog). As root (CI), every
//! PostgreSQL program runs as the `postgres` user through `runuser`: the server refuses to run
//! as root.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running server (see the module doc).
#[derive(Debug)]
pub struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
    /// The watchdog (see [`Postgres::watchdog`]); the write end of its stdin closes when this
    /// is dropped or the process ends, however it ends.
    watchdog: Option<std::process::Child>,
}

impl Postgres {
    /// Starts a fresh server in a new temporary directory. `Err` says why it cannot run here
    /// (no `postgresql` package, no `postgres` user as root): the caller skips with it.
    pub fn start(name: &str) -> Result<Postgres, String> {
        let bin =
            find_bin().ok_or("no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)")?;
        let as_postgres = euid_is_root();
        let dir = std::env::temp_dir().join(format!("twelve-pg-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut pg = Postgres {
            bin,
            dir,
            as_postgres,
            watchdog: None,
        };
        if as_postgres {
            let owner = passwd_ids("postgres").ok_or("running as root and no postgres user")?;
            std::os::unix::fs::chown(&pg.dir, Some(owner.0), Some(owner.1))
                .map_err(|e| format!("chown {}: {e}", pg.dir.display()))?;
            let _ = std::fs::set_permissions(&pg.dir, std::fs::Permissions::from_mode(0o755));
        }
        let data = pg.dir.join("data");
        pg.run(
            "initdb",
            &[
                "-D",
                path(&data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
            ],
        )?;
        pg.watchdog = pg.watchdog();
        pg.ctl(&["start", "-w", "-l", path(&pg.dir.join("log"))])?;
        Ok(pg)
    }

    /// A shell that waits for EOF on its stdin, then stops the server and removes its
    /// directory: a server kept in a `static` is never dropped, and the kernel closes the pipe
    /// when the test process ends (std's pipes are close-on-exec, so no other child holds it).
    fn watchdog(&self) -> Option<std::process::Child> {
        let ctl = self.bin.join("pg_ctl");
        let data = self.dir.join("data");
        let stop = if self.as_postgres {
            "runuser -u postgres -- \"$1\" -D \"$2\" stop -m immediate"
        } else {
            "\"$1\" -D \"$2\" stop -m immediate"
        };
        let script = format!("cat >/dev/null; {stop} >/dev/null 2>&1; rm -rf \"$3\"");
        Command::new("sh")
            .args(["-c", &script, "watchdog"])
            .arg(&ctl)
            .arg(&data)
            .arg(&self.dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()
    }

    /// The directory of the server's socket (`.s.PGSQL.5432`).
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// A `postgres://` URL for `database` over the socket, as user `postgres`.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@/{database}?host={}",
            self.dir.display()
        )
    }

    /// Runs SQL through `psql` (stops at the first error) on `database`.
    pub fn psql(&self, database: &str, sql: &str) -> Result<String, String> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = self.dir.join(format!("sql-{n}.sql"));
        std::fs::write(&file, sql).map_err(|e| e.to_string())?;
        let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644));
        let out = self.run(
            "psql",
            &[
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                path(&self.dir),
                "-U",
                "postgres",
                "-d",
                database,
                "-f",
                path(&file),
            ],
        )?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Stops and starts the server again (`pg_ctl restart -m fast`: open connections are
    /// closed, as in a database restart in production).
    pub fn restart(&self) -> Result<(), String> {
        self.ctl(&[
            "restart",
            "-w",
            "-m",
            "fast",
            "-l",
            path(&self.dir.join("log")),
        ])
        .map(drop)
    }

    /// Stops the server (`-m fast`).
    pub fn stop(&self) -> Result<(), String> {
        self.ctl(&["stop", "-w", "-m", "fast"]).map(drop)
    }

    /// Starts a stopped server.
    pub fn start_again(&self) -> Result<(), String> {
        self.ctl(&["start", "-w", "-l", path(&self.dir.join("log"))])
            .map(drop)
    }

    fn ctl(&self, args: &[&str]) -> Result<Output, String> {
        let data = self.dir.join("data");
        let opts = format!("-k {} -c listen_addresses=''", self.dir.display());
        let mut all = vec!["-D", path(&data), "-o", &opts];
        all.extend_from_slice(args);
        self.run("pg_ctl", &all)
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<Output, String> {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{program} {args:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(out)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // The watchdog stops the server and removes the directory once its stdin closes;
        // without one (it could not be spawned), do both here.
        if let Some(mut w) = self.watchdog.take() {
            drop(w.stdin.take());
            let _ = w.wait();
        } else {
            let _ = self.ctl(&["stop", "-m", "immediate"]);
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap_or("/nonexistent")
}

/// The newest `/usr/lib/postgresql/N/bin` with an `initdb`.
fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
}

fn euid_is_root() -> bool {
    // /proc/self/status's `Uid:` line: real, effective, saved, filesystem.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The uid and gid of `user`, from /etc/passwd.
fn passwd_ids(user: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&user))
            .then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
    })
}
