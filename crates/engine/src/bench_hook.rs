//! A hidden hook for benchmarks of one `Conn` fed reads directly, no socket, no backend, as
//! conn/tests.rs feeds one: benches/pipeline.rs, and the callgrind harness
//! (docs/results.md#user-space-per-request). Not part of the API.

use crate::config::Timeouts;
use crate::conn::{Conn, Ctx, Output, TimeoutsMs};
use crate::metrics::ServerMetrics;
use crate::pool::Pool;
use crate::response::Scratch;
use crate::router::Router;
use std::sync::Arc;
use twelve_http::Limits;

/// One connection and its worker context, answering whatever it is fed.
#[doc(hidden)]
pub struct PipelineBench {
    conn: Conn,
    ctx: Ctx,
}

impl PipelineBench {
    /// A connection on a worker with `router` (and `/metrics`, as `twelve serve` has).
    pub fn new(router: Router) -> Self {
        let all_metrics = Arc::new(ServerMetrics::new(&[0], 1));
        let router = crate::metrics_route::add_metrics_route(router, "/metrics", &all_metrics);
        let ctx = Ctx {
            router: Arc::new(router),
            limits: Limits::default(),
            timeouts: TimeoutsMs::from(&Timeouts::default()),
            all_metrics,
            me: 0,
            draining: false,
            high_water: 256 * 1024,
            pool: Pool::new(16 * 1024, 1024),
            scratch: Scratch::default(),
            conn_token: 0,
            handler_timeout_ms: 0,
        };
        Self {
            conn: Conn::new(0),
            ctx,
        }
    }

    /// Feeds `input` as one read and sends everything it answers, as a backend would;
    /// returns the response bytes.
    pub fn feed(&mut self, input: &[u8]) -> usize {
        // The backend refreshes the Date once per wake-up.
        twelve_http::refresh_date();
        let (conn, ctx) = (&mut self.conn, &mut self.ctx);
        let Some(buf) = conn.read_buf(ctx) else {
            return 0;
        };
        buf.extend_from_slice(input);
        conn.on_read(input.len(), 0, ctx);
        let mut sent = 0;
        while let Output::Bytes(b) = conn.output() {
            let n = b.len();
            sent += n;
            conn.on_sent(n, 0, ctx);
        }
        conn.drained(ctx);
        sent
    }
}
