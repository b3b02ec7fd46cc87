//! `postgres://user:password@host:port/database?host=/dir`: libpq's URL form, the part of it
//! a server's `--database` needs (libpq: "Connection URIs",
//! <https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS>).
//! A `host` that is a path (in the authority, percent-encoded, or as `?host=`) is a Unix socket
//! directory: the socket is `DIR/.s.PGSQL.PORT`.

use std::path::PathBuf;

/// Where and as whom to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub user: String,
    pub password: Option<String>,
    /// A host name or address, or a Unix socket directory (starts with `/`).
    pub host: String,
    pub port: u16,
    pub database: String,
}

/// A URL this client cannot use, with what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlError(pub String);

impl std::fmt::Display for UrlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UrlError {}

impl Target {
    /// Parses a `postgres://` or `postgresql://` URL. User defaults to `postgres`, host to
    /// `localhost`, port to 5432, database to the user's name.
    pub fn parse(url: &str) -> Result<Target, UrlError> {
        let err = |why: &str| {
            UrlError(format!(
                "{url:?}: {why}; expected postgres://user:password@host:port/database (?host=/dir for a Unix socket)"
            ))
        };
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .ok_or_else(|| err("not a postgres:// URL"))?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((u, p)) => (decode(u), Some(decode(p))),
                None => (decode(u), None),
            },
            None => (String::new(), None),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || !p.is_empty() => {
                let port = p.parse().map_err(|_| err("the port is not a number"))?;
                (h, port)
            }
            _ => (hostport, 5432),
        };
        let mut t = Target {
            user: if user.is_empty() {
                "postgres".into()
            } else {
                user
            },
            password,
            host: if host.is_empty() {
                "localhost".into()
            } else {
                decode(host.trim_start_matches('[').trim_end_matches(']'))
            },
            port,
            database: decode(database),
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "host" => t.host = decode(v),
                "port" => t.port = v.parse().map_err(|_| err("?port is not a number"))?,
                "user" => t.user = decode(v),
                "password" => t.password = Some(decode(v)),
                "dbname" => t.database = decode(v),
                // libpq's other parameters (sslmode, application_name, ...) change nothing here.
                _ => {}
            }
        }
        if t.database.is_empty() {
            t.database = t.user.clone();
        }
        Ok(t)
    }

    /// The Unix socket's path, when the host is a directory.
    pub fn socket_path(&self) -> Option<PathBuf> {
        self.host
            .starts_with('/')
            .then(|| PathBuf::from(&self.host).join(format!(".s.PGSQL.{}", self.port)))
    }

    /// Where it connects, for messages (never the password).
    pub fn describe(&self) -> String {
        match self.socket_path() {
            Some(p) => format!(
                "{} (database {}, user {})",
                p.display(),
                self.database,
                self.user
            ),
            None => format!(
                "{}:{} (database {}, user {})",
                self.host, self.port, self.database, self.user
            ),
        }
    }
}

/// Percent-decoding (RFC 3986 §2.1); a malformed escape stays as it is.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! parses {
        ($($name:ident: $url:expr => $user:expr, $pw:expr, $host:expr, $port:expr, $db:expr;)*) => {$(
            #[test]
            fn $name() {
                let t = Target::parse($url).unwrap();
                assert_eq!(
                    (t.user.as_str(), t.password.as_deref(), t.host.as_str(), t.port, t.database.as_str()),
                    ($user, $pw, $host, $port, $db)
                );
            }
        )*};
    }

    parses! {
        full: "postgres://bench:bench@localhost:5432/benchmark" => "bench", Some("bench"), "localhost", 5432, "benchmark";
        defaults: "postgres://" => "postgres", None, "localhost", 5432, "postgres";
        postgresql_scheme: "postgresql://u@db.example/x" => "u", None, "db.example", 5432, "x";
        socket_dir_in_query: "postgres://u@/hello_world?host=/tmp/pg" => "u", None, "/tmp/pg", 5432, "hello_world";
        socket_dir_encoded: "postgres://u@%2Ftmp%2Fpg:5433/db" => "u", None, "/tmp/pg", 5433, "db";
        encoded_password: "postgres://u:p%40ss@h/db" => "u", Some("p@ss"), "h", 5432, "db";
        ipv6: "postgres://u@[::1]:6000/db" => "u", None, "::1", 6000, "db";
    }

    #[test]
    fn socket_path_joins_dir_and_port() {
        let t = Target::parse("postgres://u@/d?host=/run/pg&port=6001").unwrap();
        assert_eq!(
            t.socket_path(),
            Some(PathBuf::from("/run/pg/.s.PGSQL.6001"))
        );
        assert_eq!(
            Target::parse("postgres://u@h/d").unwrap().socket_path(),
            None
        );
    }

    #[test]
    fn wrong_scheme_and_port_are_named() {
        let e = Target::parse("mysql://x").unwrap_err();
        assert!(e.0.contains("not a postgres:// URL"), "{e}");
        let e = Target::parse("postgres://h:port/db").unwrap_err();
        assert!(e.0.contains("port is not a number"), "{e}");
    }
}
