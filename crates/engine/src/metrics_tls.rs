//! The TLS and protocol lines of `/metrics`: handshakes, resumptions, and failed sessions by
//! kind (a plaintext request to a TLS port, a garbage record, a failed handshake, a peer's
//! alert, a handshake cut short; a client that stalls mid-handshake is a header timeout);
//! requests by protocol, and HTTP/2's stream and connection errors by kind.

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

/// Appends requests by protocol and HTTP/2's errors by kind (every kind, zero when unseen).
pub(crate) fn write_protocols(s: &MetricsSnapshot, out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP twelve_protocol_requests_total Requests by protocol.\n# TYPE twelve_protocol_requests_total counter\ntwelve_protocol_requests_total{{protocol=\"http/1.1\"}} {}\ntwelve_protocol_requests_total{{protocol=\"h2\"}} {}",
        s.requests.saturating_sub(s.h2_requests),
        s.h2_requests
    );
    let _ = writeln!(
        out,
        "# HELP twelve_h2_connections_total Connections that spoke HTTP/2.\n# TYPE twelve_h2_connections_total counter\ntwelve_h2_connections_total {}",
        s.h2_conns
    );
    let _ = writeln!(
        out,
        "# HELP twelve_h2_errors_total HTTP/2 stream and connection errors by kind.\n# TYPE twelve_h2_errors_total counter"
    );
    for name in twelve_http::h2::Fault::NAMES {
        let n = s
            .h2_faults
            .iter()
            .find(|(k, _)| *k == name)
            .map_or(0, |&(_, n)| n);
        let _ = writeln!(out, "twelve_h2_errors_total{{kind=\"{name}\"}} {n}");
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

    #[test]
    fn protocol_lines_split_requests_and_list_every_h2_error_kind() {
        let s = MetricsSnapshot {
            requests: 10,
            h2_requests: 4,
            h2_faults: vec![("rapid_reset", 2)],
            ..MetricsSnapshot::default()
        };
        let mut out = String::new();
        write_protocols(&s, &mut out);
        assert!(out.contains("twelve_protocol_requests_total{protocol=\"http/1.1\"} 6\n"));
        assert!(out.contains("twelve_protocol_requests_total{protocol=\"h2\"} 4\n"));
        assert!(out.contains("twelve_h2_errors_total{kind=\"rapid_reset\"} 2\n"));
        assert!(out.contains("twelve_h2_errors_total{kind=\"preface\"} 0\n"));
    }
}
