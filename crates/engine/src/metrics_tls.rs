//! The TLS lines of `/metrics`: handshakes, resumptions, and failed sessions by kind (a
//! plaintext request to a TLS port, a garbage record, a failed handshake, a peer's alert, a
//! handshake cut short). A client that stalls mid-handshake is a header timeout.

use crate::metrics::MetricsSnapshot;
use std::fmt::Write;

/// Appends the TLS samples to a Prometheus text exposition. Every kind is written (zero
/// when unseen), so a dashboard's series exist before the first failure.
pub(crate) fn write_prometheus(s: &MetricsSnapshot, out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP twelve_tls_handshakes_total TLS handshakes completed.\n# TYPE twelve_tls_handshakes_total counter\ntwelve_tls_handshakes_total {}",
        s.tls_handshakes
    );
    let _ = writeln!(
        out,
        "# HELP twelve_tls_resumed_total TLS handshakes that resumed a session.\n# TYPE twelve_tls_resumed_total counter\ntwelve_tls_resumed_total {}",
        s.tls_resumed
    );
    let _ = writeln!(
        out,
        "# HELP twelve_tls_failures_total TLS sessions closed on bad input, by kind.\n# TYPE twelve_tls_failures_total counter"
    );
    for f in twelve_tls::Failure::ALL {
        let n = s
            .tls_failures
            .iter()
            .find(|(name, _)| *name == f.name())
            .map_or(0, |&(_, n)| n);
        let _ = writeln!(
            out,
            "twelve_tls_failures_total{{kind=\"{}\"}} {n}",
            f.name()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_line_and_counts_show() {
        let s = MetricsSnapshot {
            tls_handshakes: 5,
            tls_resumed: 3,
            tls_failures: vec![("plaintext", 2)],
            ..MetricsSnapshot::default()
        };
        let mut out = String::new();
        write_prometheus(&s, &mut out);
        assert!(out.contains("twelve_tls_handshakes_total 5\n"));
        assert!(out.contains("twelve_tls_resumed_total 3\n"));
        assert!(out.contains("twelve_tls_failures_total{kind=\"plaintext\"} 2\n"));
        assert!(out.contains("twelve_tls_failures_total{kind=\"bad_record\"} 0\n"));
        assert_eq!(
            out.matches("twelve_tls_failures_total{").count(),
            twelve_tls::Failure::ALL.len()
        );
    }
}
