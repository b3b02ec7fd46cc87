//! The phases of the first request on each new connection, as curl's `-w` timings count
//! them: each from the start of the connect, to the TCP connection (connect), to the end of
//! the TLS handshake (tls), to the first byte of the response (first byte), to its last byte
//! (total). Each phase has its own HDR histogram; `--close` makes every request such a
//! request, and so shows what a handshake costs (the `ab` without `-k` case over TLS).
use crate::format::latency_us;
use crate::latency::{Percentiles, new_histogram};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::fmt::Write;

/// One worker's (or the merged) phase histograms, in ns.
#[derive(Debug, Clone)]
pub struct Phases {
    /// Connect start to connected.
    pub connect: Histogram<u64>,
    /// Connect start to TLS handshake done (`https://` only).
    pub tls: Histogram<u64>,
    /// Connect start to the first byte of the response.
    pub first_byte: Histogram<u64>,
    /// Connect start to the response complete.
    pub total: Histogram<u64>,
}

impl Default for Phases {
    fn default() -> Self {
        Self {
            connect: new_histogram(),
            tls: new_histogram(),
            first_byte: new_histogram(),
            total: new_histogram(),
        }
    }
}

impl Phases {
    /// Adds another worker's histograms without loss.
    pub fn add(&mut self, other: &Phases) {
        // Same bounds everywhere (`new_histogram`), so `add` cannot fail.
        let _ = self.connect.add(&other.connect);
        let _ = self.tls.add(&other.tls);
        let _ = self.first_byte.add(&other.first_byte);
        let _ = self.total.add(&other.total);
    }

    /// No request on a new connection was measured.
    pub fn is_empty(&self) -> bool {
        self.total.is_empty()
    }

    /// Percentiles of each phase, µs.
    pub fn summary(&self) -> PhaseSummary {
        let of = |h: &Histogram<u64>| (!h.is_empty()).then(|| Percentiles::of(h));
        PhaseSummary {
            connect: of(&self.connect),
            tls: of(&self.tls),
            first_byte: of(&self.first_byte),
            total: of(&self.total),
        }
    }
}

/// Percentiles of each phase; `None` for a phase with no value (tls on plain HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseSummary {
    /// Connect start to connected.
    pub connect: Option<Percentiles>,
    /// Connect start to TLS handshake done.
    pub tls: Option<Percentiles>,
    /// Connect start to first response byte.
    pub first_byte: Option<Percentiles>,
    /// Connect start to response complete.
    pub total: Option<Percentiles>,
}

/// The text report's phase table; nothing when no new-connection request was measured.
pub fn write_text(o: &mut String, p: &PhaseSummary) {
    let Some(total) = &p.total else {
        return;
    };
    let _ = writeln!(
        o,
        "  New-connection phases ({} first requests, each phase from connect start)",
        total.count
    );
    let _ = writeln!(
        o,
        "    {:<12}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "Phase", "Avg", "p50", "p90", "p99", "Max"
    );
    let rows = [
        ("connect", &p.connect),
        ("tls", &p.tls),
        ("first byte", &p.first_byte),
        ("total", &p.total),
    ];
    for (name, q) in rows {
        if let Some(q) = q {
            let _ = writeln!(
                o,
                "    {name:<12}{:>10}{:>10}{:>10}{:>10}{:>10}",
                latency_us(q.mean_us),
                latency_us(q.p50_us),
                latency_us(q.p90_us),
                latency_us(q.p99_us),
                latency_us(q.max_us)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_counts_and_the_table_shows_each_recorded_phase() {
        let mut a = Phases::default();
        let mut b = Phases::default();
        for (p, base) in [(&mut a, 1_000), (&mut b, 2_000)] {
            p.connect.saturating_record(base);
            p.first_byte.saturating_record(base * 3);
            p.total.saturating_record(base * 4);
        }
        a.add(&b);
        let s = a.summary();
        assert_eq!(s.total.unwrap().count, 2);
        assert!(s.tls.is_none());
        let mut o = String::new();
        write_text(&mut o, &s);
        assert!(o.contains("2 first requests"), "{o}");
        assert!(o.contains("connect") && o.contains("first byte") && o.contains("total"));
        assert!(!o.contains("tls"), "{o}");
    }

    #[test]
    fn no_new_connection_request_writes_nothing() {
        let mut o = String::new();
        write_text(&mut o, &Phases::default().summary());
        assert!(o.is_empty());
    }
}
