//! When a new connection's first request passed each phase (connect, TLS handshake, first
//! response byte, done), kept per connection slot by the dispatch and booked into the
//! worker's phase histograms (`twelve_report::Phases`) when the first response completes.

/// One slot's marks, in ns on the worker's clock; 0 = not reached. Each is an event's time
/// (`Dispatch::on_event`): a receive stamp, or the return of the poll that saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    start_ns: u64,
    connected_ns: u64,
    tls_ns: u64,
    first_byte_ns: u64,
    /// The connection's first response is still to come.
    pending: bool,
}

impl Marks {
    /// A connect starts at `now_ns`.
    pub(crate) fn start(now_ns: u64) -> Self {
        Self {
            start_ns: now_ns,
            pending: true,
            ..Self::default()
        }
    }

    /// The client made other connects for `ns` after this one's call, before the poll that
    /// can see it done: on loopback, where the handshake is done within the call, that is the
    /// client's time and no phase's, so the phases count from later by that much.
    pub(crate) fn started_late(&mut self, ns: u64) {
        self.start_ns += ns;
    }

    /// The connect ended at `at_ns`.
    pub(crate) fn connected(&mut self, at_ns: u64) {
        self.connected_ns = at_ns;
    }

    /// The server's last handshake flight arrived at `at_ns`.
    pub(crate) fn handshaken(&mut self, at_ns: u64) {
        if self.pending && self.tls_ns == 0 {
            self.tls_ns = at_ns;
        }
    }

    /// Response bytes arrived at `at_ns`.
    pub(crate) fn bytes(&mut self, at_ns: u64) {
        if self.pending && self.first_byte_ns == 0 {
            self.first_byte_ns = at_ns;
        }
    }

    /// A response completed: `true` (once) when it is the connection's first.
    pub(crate) fn first_done(&mut self) -> bool {
        std::mem::take(&mut self.pending)
    }

    /// Records every phase reached, from the connect's start, into `p`.
    pub(crate) fn record(&self, p: &mut twelve_report::Phases, done_ns: u64) {
        let since = |t: u64| t.saturating_sub(self.start_ns);
        p.connect.saturating_record(since(self.connected_ns));
        if self.tls_ns > 0 {
            p.tls.saturating_record(since(self.tls_ns));
        }
        p.first_byte
            .saturating_record(since(self.first_byte_ns.max(self.connected_ns)));
        p.total.saturating_record(since(done_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_counts_from_the_connect_start_and_only_the_first_response_books() {
        let mut m = Marks::start(1_000);
        m.connected(1_100);
        m.handshaken(1_500);
        m.bytes(1_900);
        m.bytes(2_500);
        assert!(m.first_done());
        assert!(!m.first_done());
        let mut p = twelve_report::Phases::default();
        m.record(&mut p, 2_000);
        assert_eq!(p.connect.max(), 100);
        assert_eq!(p.tls.max(), 500);
        assert_eq!(p.first_byte.max(), 900);
        assert_eq!(p.total.max(), 1_000);
    }

    #[test]
    fn plain_http_records_no_tls_phase() {
        let mut m = Marks::start(0);
        m.connected(10);
        m.bytes(30);
        let mut p = twelve_report::Phases::default();
        m.record(&mut p, 40);
        assert!(p.tls.is_empty());
        assert_eq!(p.total.len(), 1);
    }

    /// The 60 ns of other connects the client made after this one's call, before the poll
    /// that saw it done, are in no phase.
    #[test]
    fn the_connects_made_after_its_own_are_in_no_phase() {
        let mut m = Marks::start(1_000);
        m.started_late(60);
        m.connected(1_160);
        m.handshaken(1_500);
        m.bytes(2_200);
        assert!(m.first_done());
        let mut p = twelve_report::Phases::default();
        m.record(&mut p, 2_400);
        assert_eq!(p.connect.max(), 100);
        assert_eq!(p.tls.max(), 440);
        assert_eq!(p.first_byte.max(), 1_140);
        assert_eq!(p.total.max(), 1_340);
    }
}
