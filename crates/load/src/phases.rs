//! When a new connection's first request passed each phase (connect, TLS handshake, first
//! response byte, done), kept per connection slot by the dispatch and booked into the
//! worker's phase histograms (`twelve_report::Phases`) when the first response completes.

/// One slot's marks, in ns on the worker's clock; 0 = not reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    start_ns: u64,
    connected_ns: u64,
    tls_ns: u64,
    first_byte_ns: u64,
    /// How long the connection's own events waited in the client before it handled them: a
    /// connect a poll reported, handled after others of the batch; the server's handshake
    /// flight, read after a nap. That is neither the network's time nor the server's, and no
    /// phase holds it (as no latency holds a response's read delay).
    waited_ns: u64,
    /// `waited_ns` when the connect and the handshake ended: the parts of it before each.
    connect_waited_ns: u64,
    tls_waited_ns: u64,
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

    /// The connect was seen done at `seen_ns` (the poll's return) and handled at `now_ns`.
    pub(crate) fn connected(&mut self, seen_ns: u64, now_ns: u64) {
        self.connected_ns = seen_ns;
        self.connect_waited_ns = self.waited_ns;
        self.waited_ns += now_ns.saturating_sub(seen_ns);
    }

    pub(crate) fn handshaken(&mut self, now_ns: u64) {
        if self.pending && self.tls_ns == 0 {
            self.tls_ns = now_ns;
            self.tls_waited_ns = self.waited_ns;
        }
    }

    /// The connection waited `ns` on the client: bytes of its first exchange not yet read, or
    /// (before the connect is seen) the connects the client made after its own.
    pub(crate) fn waited(&mut self, ns: u64) {
        if self.pending {
            self.waited_ns += ns;
        }
    }

    /// Response bytes arrived.
    pub(crate) fn bytes(&mut self, now_ns: u64) {
        if self.pending && self.first_byte_ns == 0 {
            self.first_byte_ns = now_ns;
        }
    }

    /// A response completed: `true` (once) when it is the connection's first.
    pub(crate) fn first_done(&mut self) -> bool {
        std::mem::take(&mut self.pending)
    }

    /// Records every phase reached, from the connect's start and less the client's own waits
    /// before it, into `p`.
    pub(crate) fn record(&self, p: &mut twelve_report::Phases, done_ns: u64) {
        let since = |t: u64| t.saturating_sub(self.start_ns);
        p.connect
            .saturating_record(since(self.connected_ns).saturating_sub(self.connect_waited_ns));
        if self.tls_ns > 0 {
            p.tls
                .saturating_record(since(self.tls_ns).saturating_sub(self.tls_waited_ns));
        }
        let first_byte = since(self.first_byte_ns.max(self.connected_ns));
        p.first_byte
            .saturating_record(first_byte.saturating_sub(self.waited_ns));
        p.total
            .saturating_record(since(done_ns).saturating_sub(self.waited_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_counts_from_the_connect_start_and_only_the_first_response_books() {
        let mut m = Marks::start(1_000);
        m.connected(1_100, 1_100);
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
        m.connected(10, 10);
        m.bytes(30);
        let mut p = twelve_report::Phases::default();
        m.record(&mut p, 40);
        assert!(p.tls.is_empty());
        assert_eq!(p.total.len(), 1);
    }

    /// The client's own waits are in no phase: 60 ns of other connects made after this one's
    /// call and before the poll, the connect handled 40 ns after the poll saw it (so the
    /// ClientHello left 40 ns late), and the server's handshake flight read 300 ns after it
    /// arrived (a nap), after which the held request left.
    #[test]
    fn the_clients_own_waits_are_taken_out_of_every_later_phase() {
        let mut m = Marks::start(1_000);
        // Other connects made after this one's, before the poll: 60 ns.
        m.waited(60);
        m.connected(1_160, 1_200);
        m.handshaken(1_500);
        m.waited(300);
        m.bytes(2_200);
        assert!(m.first_done());
        let mut p = twelve_report::Phases::default();
        m.record(&mut p, 2_400);
        assert_eq!(p.connect.max(), 160 - 60);
        assert_eq!(p.tls.max(), 500 - 100);
        assert_eq!(p.first_byte.max(), 1_200 - 400);
        assert_eq!(p.total.max(), 1_400 - 400);
        // Waits after the first response belong to no phase of this connection.
        m.waited(1_000);
        let mut q = twelve_report::Phases::default();
        m.record(&mut q, 2_400);
        assert_eq!(q.total.max(), 1_400 - 400);
    }
}
