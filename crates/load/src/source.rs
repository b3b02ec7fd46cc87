//! Source addresses a run spreads its connections over (`--source 127.0.0.2-127.0.0.40`).
//!
//! One source address reaches one target address and port through at most the ephemeral
//! port range (about 28,000 ports by default), and TIME_WAIT from earlier runs holds ports
//! for a minute: the classic EADDRNOTAVAIL of repeated runs. Each further source address
//! brings a port range of its own (on loopback every 127.0.0.0/8 address is local).
use crate::config::ConfigError;
use std::net::{IpAddr, Ipv4Addr};

/// The most addresses a `--source` list may name (a /16 of IPv4).
const MAX_SOURCES: usize = 65_536;

/// Parses a comma-separated list of addresses and IPv4 ranges (`A-B`, inclusive).
pub fn parse_sources(text: &str) -> Result<Vec<IpAddr>, ConfigError> {
    let bad = |why: &str| ConfigError(format!("--source {text}: {why}"));
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (Ipv4Addr, Ipv4Addr) = match (a.trim().parse(), b.trim().parse()) {
                    (Ok(a), Ok(b)) => (a, b),
                    _ => {
                        return Err(bad(
                            "a range is two IPv4 addresses, e.g. 127.0.0.2-127.0.0.40",
                        ));
                    }
                };
                let (a, b) = (u32::from(a), u32::from(b));
                if a > b {
                    return Err(bad("a range must go up (first-last)"));
                }
                if (b - a) as usize >= MAX_SOURCES {
                    return Err(bad("more than 65536 addresses"));
                }
                out.extend((a..=b).map(|n| IpAddr::V4(Ipv4Addr::from(n))));
            }
            None => {
                out.push(part.parse().map_err(|_| {
                    bad("expected addresses or ranges, e.g. 127.0.0.2-127.0.0.40,::1")
                })?)
            }
        }
        if out.len() > MAX_SOURCES {
            return Err(bad("more than 65536 addresses"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! sources {
        ($name:ident, $text:expr, err $says:expr) => {
            #[test]
            fn $name() {
                let err = parse_sources($text).unwrap_err().to_string();
                assert!(err.contains($says), "{err}");
            }
        };
        ($name:ident, $text:expr, $n:expr, $first:expr, $last:expr) => {
            #[test]
            fn $name() {
                let got = parse_sources($text).unwrap();
                assert_eq!(got.len(), $n);
                assert_eq!(got[0].to_string(), $first);
                assert_eq!(got[got.len() - 1].to_string(), $last);
            }
        };
    }

    sources!(one_address, "127.0.0.2", 1, "127.0.0.2", "127.0.0.2");
    sources!(
        range_is_inclusive,
        "127.0.0.2-127.0.0.40",
        39,
        "127.0.0.2",
        "127.0.0.40"
    );
    sources!(
        range_crosses_an_octet,
        "10.0.0.250-10.0.1.5",
        12,
        "10.0.0.250",
        "10.0.1.5"
    );
    sources!(
        list_of_ranges_and_v6,
        "127.0.0.2-127.0.0.3, ::1",
        3,
        "127.0.0.2",
        "::1"
    );
    sources!(backwards_range, "127.0.0.9-127.0.0.2", err "--source 127.0.0.9-127.0.0.2: a range must go up");
    sources!(not_an_address, "localhost", err "--source localhost: expected addresses");
    sources!(huge_range, "10.0.0.0-10.2.0.0", err "more than 65536");
}
